#!/usr/bin/env bash
# Command-line progress points: --progress FILE:LINE is counted by a breakpoint
# (hardware if it fires here, else a uprobe; LEVER_CAUSAL_BREAKPOINTS=uprobe
# forces the uprobe) and must count the same visits as the source-level point
# on the next line, experiment by experiment (off by at most the one visit in
# flight at a snapshot); --sampled-progress counts samples in a line.
set -euo pipefail
build=$1 src=$2
prog=$build/tests/programs/causal_known/critical_path
srcfile=$src/tests/programs/causal_known/critical_path.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
join_line=$(grep -n "pthread_join(b" "$srcfile" | cut -d: -f1)
loop_line=$(grep -n "LINE:a" "$srcfile" | cut -d: -f1)

for mode in auto uprobe; do
	out=$tmp/$mode.coz
	LEVER_CAUSAL_BREAKPOINTS=$mode "$build/bin/lever" causal -v -o "$out" \
		--progress "critical_path.c:$join_line" --sampled-progress "critical_path.c:$loop_line" \
		-- "$prog" 80 15000000 >"$tmp/stdout" 2>"$tmp/stderr"
	grep -q "^80 rounds$" "$tmp/stdout"
	grep -q "progress point critical_path.c:$join_line: .*breakpoint" "$tmp/stderr" || {
		echo "FAIL ($mode): no breakpoint placed"; cat "$tmp/stderr"; exit 1; }
	[ $mode = uprobe ] && ! grep -q "uprobe breakpoint" "$tmp/stderr" && {
		echo "FAIL: LEVER_CAUSAL_BREAKPOINTS=uprobe did not use a uprobe"; exit 1; }
	awk -F'\t' -v counted="name=critical_path.c:$join_line" \
		-v sampled="name=critical_path.c:$loop_line" -v mode=$mode '
		$1 == "experiment" { n++ }
		$1 == "throughput-point" {
			split($3, d, "=")
			if ($2 == counted) c[n] = d[2]
			else if ($2 == sampled) s += d[2]
			else src[n] = d[2]
		}
		END {
			for (i = 1; i <= n; i++) {
				diff = c[i] - src[i]
				if (diff < -1 || diff > 1) { printf "FAIL (%s): experiment %d counted %d, source %d\n", mode, i, c[i], src[i]; exit 1 }
				total += c[i]
			}
			if (n == 0 || total == 0 || s == 0) { printf "FAIL (%s): %d experiments, %d counted visits, %d sampled\n", mode, n, total, s; exit 1 }
			printf "ok %s: %d experiments, %d counted visits match the source point, %d samples in the sampled line\n", mode, n, total, s
		}' "$out"
done
