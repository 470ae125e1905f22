#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever causal as a launcher: options become LEVER_CAUSAL_* variables, the runtime
# is appended to LD_PRELOAD, the program is exec'd (its exit status is lever's),
# 127/126 when it cannot be run, 1 when the runtime is missing. A stand-in
# runtime (an empty shared library) keeps this independent of the real one.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"

echo 'int lever_stand_in;' >"$tmp/stub.c"
cc -shared -fPIC -o "$tmp/liblever-causal.so" "$tmp/stub.c" || exit 1
cc -shared -fPIC -o "$tmp/other.so" "$tmp/stub.c" || exit 1
export LEVER_RUNTIME_DIR=$tmp
# In the ASan build, lever itself starts with other.so preloaded ahead of the
# ASan runtime, which ASan refuses by default; that order is the point here.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
cd "$tmp"

# settings reach the program
LEVER_CAUSAL_FIXED_LINE=stale.c:1 LD_PRELOAD=$tmp/other.so \
	"$lever" causal -o out.coz -b MAIN -b 'lib%' -s "%/src/%" --progress a.c:3 --progress b.c:4 \
	--sampled-progress c.c:5 --end-to-end --fixed-speedup 40 --sampler=timer -v \
	--follow-children --zero-probability 0.25 --speedup-step 10 --experiment-length 0.2s \
	--cooloff 5 --min-visits 7 --sample-period 500us --batch 4 --seed 99 -- env >env.txt
status=$?
[ $status -eq 0 ] || fail "env under lever exited $status"
want() { grep -qxF -- "$1" env.txt && echo "ok: $1" || fail "missing $1 in the environment"; }
want "LEVER_CAUSAL_ACTIVE=1"
want "LEVER_CAUSAL_OUTPUT=$tmp/out.coz"
want "LEVER_CAUSAL_BINARY_SCOPE=MAIN	lib%"
want "LEVER_CAUSAL_SOURCE_SCOPE=%/src/%"
want "LEVER_CAUSAL_PROGRESS=a.c:3	b.c:4"
want "LEVER_CAUSAL_SAMPLED_PROGRESS=c.c:5"
want "LEVER_CAUSAL_END_TO_END=1"
want "LEVER_CAUSAL_FIXED_SPEEDUP=40"
want "LEVER_CAUSAL_SAMPLER=timer"
want "LEVER_CAUSAL_VERBOSE=1"
want "LEVER_CAUSAL_FOLLOW_CHILDREN=1"
want "LEVER_CAUSAL_ZERO_PROBABILITY=0.25"
want "LEVER_CAUSAL_SPEEDUP_STEP=10"
want "LEVER_CAUSAL_EXPERIMENT_MS=200"
want "LEVER_CAUSAL_COOLOFF_MS=5"
want "LEVER_CAUSAL_MIN_VISITS=7"
want "LEVER_CAUSAL_SAMPLE_PERIOD_US=500"
want "LEVER_CAUSAL_BATCH=4"
want "LEVER_CAUSAL_SEED=99"
want "LD_PRELOAD=$tmp/other.so $tmp/liblever-causal.so"
grep -q '^LEVER_CAUSAL_FIXED_LINE=' env.txt && fail "a stale setting leaked through"
[ -f out.coz ] || fail "the profile file was not created"

# defaults, Coz's '---' and the 'run' spelling
for sep in -- ---; do
	"$lever" causal $sep env >env.txt || fail "lever causal $sep env"
	want "LEVER_CAUSAL_OUTPUT=$tmp/profile.coz"
	want "LD_PRELOAD=$tmp/liblever-causal.so"
done
"$lever" causal run --- env >env.txt || fail "lever causal run --- env"
want "LEVER_CAUSAL_ACTIVE=1"
"$lever" causal -vv -- env >env.txt || fail "lever causal -vv -- env"
want "LEVER_CAUSAL_VERBOSE=2"
# PROGRAM may also follow the options without a separator
"$lever" causal --seed 3 env >env.txt || fail "lever causal --seed 3 env"
want "LEVER_CAUSAL_SEED=3"

# the program's exit status and arguments pass through
"$lever" causal -- sh -c 'exit 7' 2>/dev/null
[ $? -eq 7 ] && echo "ok: exit status 7 passes through" || fail "exit status not passed through"
out=$("$lever" causal -- printf '%s|' a 'b c' --) && [ "$out" = "a|b c|--|" ] &&
	echo "ok: arguments pass through" || fail "arguments: '$out'"

# cannot run the program / the runtime
expect() { # STATUS PATTERN CMD...
	local want=$1 pattern=$2 got
	shift 2
	"$@" >out.txt 2>&1
	got=$?
	if [ $got -eq "$want" ] && grep -qE -- "$pattern" out.txt; then
		echo "ok: $* -> $got"
	else
		fail "$* -> $got (want $want /$pattern/): $(cat out.txt)"
	fi
}
expect 127 "cannot run no-such-program" "$lever" causal -- no-such-program
touch not-executable
expect 126 "cannot run ./not-executable" "$lever" causal -- ./not-executable
expect 1 "runtime not found" env LEVER_RUNTIME_DIR=$tmp/nowhere "$lever" causal -- true
expect 1 "cannot write the profile" "$lever" causal -o /nonexistent/dir/p.coz -- true

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
