#!/usr/bin/env bash
# Known answers of the causal profiler on tests/programs/causal_known/critical_path:
# speeding up work_b's line changes nothing (work_a, twice as long, bounds
# every round), speeding up work_a's line speeds the program up. By how much
# depends on the machine: on these 2-vCPU VMs the two loops slow each other
# down, so really halving work_a gains ~30%, not the 50% of an ideal machine,
# and run times drift by +-20% from one run to the next. Margins are therefore
# wide, runs long enough for ~20 experiments per bucket; this checks
# behaviour (virtual speedup works, delays land on the right threads), not
# accuracy, which bench/causal measures against real runs.
set -euo pipefail
build=$1 src=$2
prog=$build/tests/programs/causal_known/critical_path
srcfile=$src/tests/programs/causal_known/critical_path.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line_of() { grep -n "LINE:$1" "$srcfile" | cut -d: -f1; }
la=$(line_of a) lb=$(line_of b)

# Every check here returns explicitly: verdict runs under `if !`, where bash
# ignores `set -e`, so a failing command would otherwise go unnoticed.
profile_line() { # LINE SAMPLER -> prints "speedup program_speedup visits" rows
	local line=$1 sampler=$2 out=$tmp/p-$1-$2.coz status=0 rows
	"$build/bin/lever" causal -o "$out" --fixed-line "critical_path.c:$line" \
		--speedup-step 50 --experiment-length 300 --sampler="$sampler" --seed 7 -- \
		"$prog" 700 15000000 >"$tmp/stdout" 2>"$tmp/stderr" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "FAIL: lever causal ($sampler, line $line) exited $status" >&2
		sed 's/^/    /' "$tmp/stderr" >&2
		return 1
	fi
	if ! grep -q "^700 rounds$" "$tmp/stdout"; then
		echo "FAIL: the program did not print '700 rounds' ($sampler, line $line):" >&2
		sed 's/^/    /' "$tmp/stdout" >&2
		return 1
	fi
	rows=$(awk -f "$src/tests/e2e/lib/profile_speedups.awk" "$out" |
		awk -v key="critical_path.c:$line" '$1 == key || substr($1, length($1) - length(key)) == "/" key {
			$1 = ""; print substr($0, 2) }') || return 1
	if [ -z "$rows" ]; then
		echo "FAIL: no experiments on critical_path.c:$line in the profile ($sampler)" >&2
		return 1
	fi
	echo "$rows"
}

# Program speedup over all experiments at line speedups >= 50% (pooled by
# visits, which halves the noise of a single bucket); sets $got; returns 1
# (after saying why) if it is outside [LOW, HIGH].
check() { # NAME ROWS LOW HIGH
	got=$(echo "$2" | awk '$1 >= 50 { s += $2 * $3; v += $3 } END { if (v) printf "%.2f", s / v }')
	if [ -z "$got" ]; then
		echo "miss $1: no experiments at line speedups >= 50%"; echo "$2"; return 1
	fi
	if ! awk -v g="$got" -v lo="$3" -v hi="$4" 'BEGIN { exit !(g >= lo && g <= hi) }'; then
		echo "miss $1: program speedup at line speedups >= 50% is $got%, expected [$3, $4]"
		echo "$2"; return 1
	fi
	echo "ok $1: program speedup at line speedups >= 50% = $got%"
}

# One sampler's verdict: line a clearly positive, line b near zero, a >> b.
verdict() { # SAMPLER
	local sampler=$1 a b got_a
	a=$(profile_line "$la" "$sampler") || return 1
	check "line a ($sampler)" "$a" 15 80 || return 1
	got_a=$got
	b=$(profile_line "$lb" "$sampler") || return 1
	# The timer sampler sees 4 ms ticks here (HZ=250), so its estimates of a
	# 5 ms loop are coarser: a wider band for line b.
	if [ "$sampler" = perf ]; then
		check "line b ($sampler)" "$b" -25 25 || return 1
	else
		check "line b ($sampler)" "$b" -40 40 || return 1
	fi
	if ! awk -v a="$got_a" -v b="$got" 'BEGIN { exit !(a - b >= 15) }'; then
		echo "miss ($sampler): line a ($got_a%) should predict clearly more than line b ($got%)"
		return 1
	fi
}

# The VM's speed drifts; a miss is measured once more before it counts as a
# failure (a broken profiler misses both times).
for sampler in perf timer; do
	if ! verdict $sampler; then
		echo "measuring $sampler again"
		verdict $sampler || { echo "FAIL ($sampler): missed twice"; exit 1; }
	fi
done
