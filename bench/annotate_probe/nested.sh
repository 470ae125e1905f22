#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# How well lever annotate record subtracts the probe's own time from the
# calls that enclose probed calls (doc/annotate-record.md, "Metrics"):
# outer() calls inner() 1000 times (tests/programs/annotate/probe_nested.c);
# the median time recorded for outer with only outer probed, against outer
# with inner probed too (1000 nested probed calls inside each outer call),
# in interleaved rounds. Equal medians: the subtraction is exact; the
# difference per nested call is its error.
#
# usage: bench/annotate_probe/nested.sh BUILD_DIR [ROUNDS]
# writes bench/annotate_probe/nested.csv and prints the table.
set -euo pipefail
build=$(cd "${1:?usage: nested.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-9}
here=$(cd "$(dirname "$0")" && pwd)
lever=$build/bin/lever prog=$build/tests/programs/annotate/probe_nested_sled
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median_outer() { # RECORD -> median µs of outer's calls
	awk '$1 == "S" && $3 == "outer" { s = $2 } $1 == "C" && $2 == s {
		for (i = 5; i <= NF; i++) if ($i ~ /^time=/) { sub(/time=/, "", $i); print $i } }' "$1" |
		sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

out=$here/nested.csv
{
	echo "# bench/annotate_probe/nested.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) rounds=$rounds"
	echo "# uptime before: $(uptime)"
	echo "round,variant,outer_median_us"
} >"$out"
for r in $(seq 1 "$rounds"); do
	for v in $(printf '%s\n' alone nested | shuf); do
		# LEVER_ANNOTATE_WRITER passes through (=idle: a SCHED_IDLE writer)
		if [ "$v" = alone ]; then
			"$lever" annotate record --no-features --rate=all -f outer -o "$tmp/r" -- "$prog" 200 1000 >/dev/null 2>&1
		else
			"$lever" annotate record --no-features --rate=all -f outer -f inner -o "$tmp/r" -- "$prog" 200 1000 >/dev/null 2>&1
		fi
		echo "$r,$v,$(median_outer "$tmp/r/record")" >>"$out"
	done
done
echo "# uptime after: $(uptime)" >>"$out"
grep '^#' "$out"
awk -F, 'NR > 1 && $1 !~ /^#/ && $2 == "alone" { a[++na] = $3 } NR > 1 && $1 !~ /^#/ && $2 == "nested" { b[++nb] = $3 }
	function med(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return x[int((n + 1) / 2)] }
	END { ma = med(a, na); mb = med(b, nb)
		printf "| outer alone | outer with 1000 probed inner calls | error per nested call |\n|---|---|---|\n"
		printf "| %.3f us (min %.3f, max %.3f) | %.3f us (min %.3f, max %.3f) | %.1f ns |\n", ma, a[1], a[na], mb, b[1], b[nb], (mb - ma) }' "$out"
