#!/usr/bin/env bash
# Known answers of the causal profiler on tests/programs/causal_known/critical_path:
# speeding up work_a's loop line by 50% or 100% speeds the program up by ~50%
# (work_b then bounds each round); speeding up work_b's line changes nothing.
# Margins are wide: this checks behaviour (virtual speedup works, delays land
# on the right threads), not accuracy, which bench/causal measures.
set -euo pipefail
build=$1 src=$2
prog=$build/tests/programs/causal_known/critical_path
srcfile=$src/tests/programs/causal_known/critical_path.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line_of() { grep -n "LINE:$1" "$srcfile" | cut -d: -f1; }
la=$(line_of a) lb=$(line_of b)

profile_line() { # LINE SAMPLER -> prints "speedup program_speedup visits" rows
	local line=$1 sampler=$2 out=$tmp/p-$1-$2.coz
	"$build/bin/lever" causal -o "$out" --fixed-line "critical_path.c:$line" \
		--speedup-step 50 --sampler="$sampler" --seed 7 -- "$prog" 200 15000000 >"$tmp/stdout"
	grep -q "^200 rounds$" "$tmp/stdout"
	awk -f "$src/tests/e2e/lib/profile_speedups.awk" "$out" | grep "critical_path.c:$line " |
		cut -d' ' -f2-
}

check() { # NAME ROWS SPEEDUP LOW HIGH
	local got
	got=$(echo "$2" | awk -v s="$3" '$1 == s { print $2 }')
	if [ -z "$got" ]; then
		echo "FAIL $1: no data at ${3}% speedup"; echo "$2"; exit 1
	fi
	if ! awk -v g="$got" -v lo="$4" -v hi="$5" 'BEGIN { exit !(g >= lo && g <= hi) }'; then
		echo "FAIL $1: program speedup at ${3}% is $got%, expected [$4, $5]"; echo "$2"; exit 1
	fi
	echo "ok $1: program speedup at ${3}% = $got%"
}

for sampler in perf timer; do
	a=$(profile_line "$la" $sampler)
	check "line a ($sampler)" "$a" 50 28 70
	b=$(profile_line "$lb" $sampler)
	check "line b ($sampler)" "$b" 50 -12 12
done
