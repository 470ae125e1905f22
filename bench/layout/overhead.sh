#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Collection overhead of `lever layout record --source=clock` at its default
# rate (1000 samples per CPU second) against the bare program (issue 17,
# must-show 3, goal <= 2%). The program is tests/programs/layout/record_hot,
# which prints its loop's wall and CPU time (CPU time includes the sampling
# interrupts; wall time includes everything the machine does to it), in two
# shapes: random reads over 64 MiB (memory-bound, 20 M steps) and over
# 1 MiB (cache-resident, 100 M steps; less disturbed by other programs'
# memory traffic). Runs are interleaved, the order rotating each round,
# so that load drifts hit all alike. On a loaded machine the 1000 Hz
# overhead drowns in the noise; the cache-resident shape is therefore also
# recorded at 10 kHz (-F 10000), whose overhead is ten times larger and, as
# the cost per sample does not depend on the rate, gives the 1000 Hz figure
# divided by ten with an interval ten times narrower. Raw data to bench/results/layout-overhead-raw/, the table
# (medians of the per-round ratios with distribution-free 95% intervals) to
# bench/results/layout-overhead.md by bench/layout/tables.py.
#   bench/layout/overhead.sh BUILD [ROUNDS]
# env: NOTE, a line on the conditions of the run kept in machine.txt.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-10}
shapes="20000000:64 100000000:1" # STEPS:MIB
here=$(cd "$(dirname "$0")" && pwd)
results=$here/../results
raw=$results/layout-overhead-raw
lever=$build/bin/lever
prog=$build/tests/programs/layout/record_hot
mkdir -p "$raw"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s%N; }
run() { # MODE ROUND ORDER STEPS MIB
	local t0 t1 line mode=$1 round=$2 order=$3 steps=$4 mib=$5
	t0=$(now)
	if [ "$mode" = bare ]; then
		"$prog" "$steps" "$mib" >"$tmp/out"
	else
		local freq=1000
		[ "$mode" = record10k ] && freq=10000
		"$lever" layout record --source=clock -F $freq --force -o "$tmp/r.record" -- \
			"$prog" "$steps" "$mib" >"$tmp/out" 2>"$tmp/err"
	fi
	t1=$(now)
	line=$(grep '^loop_ns ' "$tmp/out")
	set -- $line
	local samples=-
	[ "$mode" != bare ] && samples=$(awk -F'\t' '$1 == "stat" && $2 == "samples" { print $3 }' "$tmp/r.record")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$order" "$mib" "$mode" "$2" "$4" "$((t1 - t0))" \
		"$samples" >>"$raw/runs.tsv"
}
{
	echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; lever $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "# before: $(uptime)"
	[ -z "${NOTE:-}" ] || echo "# note: $NOTE"
} >"$raw/machine.txt"
printf 'round\torder\tmib\tmode\tloop_ns\tloop_cpu_ns\tcommand_ns\tsamples\n' >"$raw/runs.tsv"
"$prog" 1000000 >/dev/null # warm the page cache
for r in $(seq 1 "$rounds"); do
	for shape in $shapes; do
		modes=(bare record)
		[ "${shape#*:}" = 1 ] && modes+=(record10k)
		# rotate the order by the round
		n=${#modes[@]}
		for k in $(seq 0 $((n - 1))); do
			run "${modes[$(((k + r) % n))]}" "$r" $((k + 1)) "${shape%:*}" "${shape#*:}"
		done
	done
done
echo "# after: $(uptime)" >>"$raw/machine.txt"
/usr/bin/python3 "$here/tables.py" overhead "$raw" >"$results/layout-overhead.md"
cat "$results/layout-overhead.md"
