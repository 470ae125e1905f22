#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Collection overhead of `lever layout record --source=clock` at its default
# rate (1000 samples per CPU second) against the bare program (issue 17,
# must-show 3, goal <= 2%). The program is tests/programs/layout/record_hot,
# which prints its loop's wall and CPU time (CPU time includes the sampling
# interrupts; wall time includes everything the machine does to it). Runs
# are interleaved, the order alternating each round, so that load drifts hit
# both alike. Raw data to bench/results/layout-overhead-raw/, the table
# (medians of the per-round ratios with distribution-free 95% intervals) to
# bench/results/layout-overhead.md by bench/layout/tables.py.
#   bench/layout/overhead.sh BUILD [ROUNDS [STEPS]]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-10}
steps=${3:-20000000}
here=$(cd "$(dirname "$0")" && pwd)
results=$here/../results
raw=$results/layout-overhead-raw
lever=$build/bin/lever
prog=$build/tests/programs/layout/record_hot
mkdir -p "$raw"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s%N; }
run() { # MODE ROUND ORDER
	local t0 t1 line
	t0=$(now)
	if [ "$1" = bare ]; then
		"$prog" "$steps" >"$tmp/out"
	else
		"$lever" layout record --source=clock --force -o "$tmp/r.record" -- "$prog" "$steps" \
			>"$tmp/out" 2>"$tmp/err"
	fi
	t1=$(now)
	line=$(grep '^loop_ns ' "$tmp/out")
	set -- "$1" "$2" "$3" $line
	local samples=-
	[ "$1" = record ] && samples=$(awk -F'\t' '$1 == "stat" && $2 == "samples" { print $3 }' "$tmp/r.record")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$1" "$5" "$7" "$((t1 - t0))" "$samples" >>"$raw/runs.tsv"
}
{
	echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; lever $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "# before: $(uptime)"
} >"$raw/machine.txt"
printf 'round\torder\tmode\tloop_ns\tloop_cpu_ns\tcommand_ns\tsamples\n' >"$raw/runs.tsv"
"$prog" 1000000 >/dev/null # warm the page cache
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		run bare "$r" 1
		run record "$r" 2
	else
		run record "$r" 1
		run bare "$r" 2
	fi
done
echo "# after: $(uptime)" >>"$raw/machine.txt"
/usr/bin/python3 "$here/tables.py" overhead "$raw" >"$results/layout-overhead.md"
cat "$results/layout-overhead.md"
