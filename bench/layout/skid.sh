#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The bias of the `clock` source (issue 17): a cpu-clock sample's pc is the
# next instruction to run, not the one that stalled (spec autocpa.md §5.2).
# record_hot's only stalling instruction is its load of `hot`, so the truth
# is known: every memory sample belongs to that load. Each round records it
# with --skid=previous (the default: the instruction before the sampled pc)
# and with --skid=none (the sampled pc itself), interleaved, and counts the
# share of samples each puts on the load. Raw data to
# bench/results/layout-skid-raw/, the table to bench/results/layout-skid.md.
#   bench/layout/skid.sh BUILD [ROUNDS [STEPS]]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
steps=${3:-20000000}
here=$(cd "$(dirname "$0")" && pwd)
results=$here/../results
raw=$results/layout-skid-raw
lever=$build/bin/lever
prog=$build/tests/programs/layout/record_hot
mkdir -p "$raw"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the load of hot: the instruction of sum_hot that reads 0x30(...)
hot_pc=$(objdump -d --no-show-raw-insn "$prog" | awk '/^[0-9a-f]+ <sum_hot[^>]*>:$/ { f = 1 } f && !done && /0x30\(/ { sub(":", "", $1); print "0x" $1; done = 1 }')
{
	echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; load of hot at $hot_pc"
	echo "# before: $(uptime)"
} >"$raw/machine.txt"
printf 'round\tmode\tsamples\tmemory_samples\tat_hot_load\n' >"$raw/runs.tsv"
for r in $(seq 1 "$rounds"); do
	for mode in previous none; do
		"$lever" layout record --source=clock --skid=$mode --force -o "$tmp/r.record" -- \
			"$prog" "$steps" >/dev/null 2>&1
		awk -F'\t' -v r="$r" -v m="$mode" -v pc="$hot_pc" '
			$1 == "stat" && $2 == "samples" { s = $3 }
			$1 == "stat" && $2 == "memory-samples" { mem = $3 }
			$1 == "module" { other = 1 }
			!other && $1 == "sample" && $2 == pc { hot += $3 }
			END { printf "%s\t%s\t%d\t%d\t%d\n", r, m, s, mem, hot }' "$tmp/r.record" >>"$raw/runs.tsv"
	done
done
echo "# after: $(uptime)" >>"$raw/machine.txt"
/usr/bin/python3 "$here/tables.py" skid "$raw" >"$results/layout-skid.md"
cat "$results/layout-skid.md"
