#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The cost of `lever annotate record --branches` per branch executed
# (doc/annotate-record.md "Branches"): a trap (int3, SIGTRAP, the runtime's
# handler emulating the branch, sigreturn) per conditional branch run in a
# probed function. tests/programs/annotate/probe_branch_loop.c calls spin(N),
# one jnz run N times, CALLS times and prints the wall time per branch of
# that loop. Variants, interleaved in a fresh random order every round:
#   bare       no lever
#   probe      spin probed (live patch), every call recorded, no --branches
#   branches   the same with --branches
# The cost per branch is branches - probe (the probe's per-call cost divided
# by N is in both). The runtime calibrates that cost at start-up and
# subtracts it from the recorded time of the calls: recorded_us is the mean
# time the record holds for a call of spin (N branches each); its excess over
# the probe variant's, divided by N, is what the subtraction leaves per branch.
#
# usage: bench/annotate_branches/run.sh BUILD_DIR [ROUNDS] [CALLS] [N]
# writes bench/annotate_branches/raw.csv and prints the table.
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [ROUNDS] [CALLS] [N]}" && pwd)
rounds=${2:-7} calls=${3:-2000} n=${4:-100}
here=$(cd "$(dirname "$0")" && pwd)
lever=$build/bin/lever prog=$build/tests/programs/annotate/probe_branch_loop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$here/raw.csv
{
	echo "# bench/annotate_branches/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) rounds=$rounds calls=$calls n=$n"
	echo "# $(uname -r); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# uptime before: $(uptime)"
	echo "round,variant,ns_per_branch,recorded_us"
} >"$out"
for r in $(seq 1 "$rounds"); do
	for v in $(printf '%s\n' bare probe branches | shuf); do
		case $v in
		bare) line=$("$prog" "$calls" "$n") ;;
		probe) line=$("$lever" annotate record --rate=all -f spin -o "$tmp/r" -- \
			"$prog" "$calls" "$n" 2>/dev/null) ;;
		branches) line=$("$lever" annotate record --branches --rate=all -f spin -o "$tmp/r" -- \
			"$prog" "$calls" "$n" 2>/dev/null)
			# every call recorded its n outcomes (64 kept, the rest counted)
			want=$((n > 64 ? n - 64 : 0))
			got=$(awk -v w="+$want" '$1 == "C" && index($0, w) { c++ } END { print c + 0 }' "$tmp/r/record")
			[ "$want" = 0 ] || [ "$got" = "$calls" ] ||
				{ echo "branches: $got of $calls calls have their $n outcomes" >&2; exit 1; } ;;
		esac
		rec=
		[ "$v" = bare ] || rec=$(awk '$1 == "C" { for (i = 5; i <= NF; i++) if ($i ~ /^time=/) {
			sub(/time=/, "", $i); s += $i; k++ } } END { printf "%.3f", s / k }' "$tmp/r/record")
		echo "$r,$v,$(echo "$line" | awk '{ print $6 }'),$rec" >>"$out"
	done
done
echo "# uptime after: $(uptime)" >>"$out"
grep '^#' "$out"
awk -F, -v per="$n" '$1 !~ /^#/ && NR > 1 { v[$2, ++n[$2]] = $3; u[$2, n[$2]] = $4 }
	function medu(name,   i, j, t, k, x) { k = n[name]; for (i = 1; i <= k; i++) x[i] = u[name, i]
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return x[int((k + 1) / 2)] }
	function med(name,   i, j, t, k, x) { k = n[name]; for (i = 1; i <= k; i++) x[i] = v[name, i]
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return x[int((k + 1) / 2)] }
	END { b = med("bare"); p = med("probe"); q = med("branches")
		printf "| variant | ns per branch executed (median of %d rounds) |\n|---|---|\n", n["bare"]
		printf "| bare | %.2f |\n| probe, no --branches | %.2f |\n| --branches | %.1f |\n", b, p, q
		printf "| cost of a recorded branch outcome | %.0f ns (%.2f us) |\n", q - p, (q - p) / 1000
		up = medu("probe"); uq = medu("branches")
		printf "\nrecorded time of a call of spin (%d branches): %.3f us with --branches, %.3f us without;\n", per, uq, up
		printf "left after the subtraction of the calibrated trap cost: %.1f ns per branch\n", (uq - up) * 1000 / per }' "$out"
