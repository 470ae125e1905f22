#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever stabilize as a launcher: options become LEVER_STABILIZE_* variables,
# the runtime is appended to LD_PRELOAD (after what was there), the program's
# exit status is lever's, usage errors exit 2, a missing program 127, a
# missing runtime 1; -v prints the seed, and parts this build lacks are
# reported in one line while the program runs without them.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
runtime=$build/lib/lever/liblever-stabilizer.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
cd "$tmp"

"$lever" stabilize --help >help.txt || fail "--help exited non-zero"
for opt in --heap --code --stack --one-time --interval --seed --verbose --help; do
	grep -q -- "$opt" help.txt || fail "--help does not mention $opt"
done

# settings reach the program (env prints its environment; the runtime hands
# exec'd children a derived seed, so only the presence of the seed is checked)
echo 'int other_preload;' >stub.c
cc -shared -fPIC -o other.so stub.c || exit 1
LEVER_STABILIZE_CODE=1 LD_PRELOAD=$tmp/other.so \
	"$lever" stabilize --heap --one-time --interval=250ms --seed=42 -- env >env.txt
status=$?
[ $status -eq 0 ] || fail "env under lever exited $status"
want() { grep -qxF -- "$1" env.txt && echo "ok: $1" || fail "missing $1 in the environment"; }
want "LEVER_STABILIZE_HEAP=1"
want "LEVER_STABILIZE_CODE=0"
want "LEVER_STABILIZE_STACK=0"
want "LEVER_STABILIZE_ONE_TIME=1"
want "LEVER_STABILIZE_INTERVAL_NS=250000000"
want "LD_PRELOAD=$tmp/other.so $(realpath "$runtime")"
grep -q '^LEVER_STABILIZE_SEED=[0-9][0-9]*$' env.txt || fail "no LEVER_STABILIZE_SEED"

# no part flag: all three parts run
"$lever" stabilize -v -- env >env.txt 2>err.txt || fail "lever stabilize -v env failed"
want "LEVER_STABILIZE_HEAP=1"
want "LEVER_STABILIZE_CODE=1"
want "LEVER_STABILIZE_STACK=1"
grep -q '^lever stabilize: seed [0-9]* (repeat this layout with --seed=' err.txt ||
	fail "-v does not print the seed"
grep -q 'heap shuffled' err.txt || fail "-v does not say the heap is shuffled"
grep -q 'not available in this build' err.txt && fail "a part is missing from this build"

# --seed is printed back and reproduces the runtime's seed
"$lever" stabilize --heap -v --seed=12345 -- true 2>err.txt || fail "true failed"
grep -q 'pid [0-9]* seed 12345:' err.txt || fail "the runtime does not report seed 12345"

# exit status, errors
"$lever" stabilize --heap -- sh -c 'exit 7'
[ $? -eq 7 ] || fail "the program's exit status is not lever's"
"$lever" stabilize --heap -- /nonexistent/program 2>/dev/null
[ $? -eq 127 ] || fail "a missing program does not exit 127"
for bad in "--interval=0" "--interval=2h" "--interval=abc" "--seed=-1" "--seed=x" "--bogus" ""; do
	"$lever" stabilize $bad ${bad:+--} ${bad:+true} 2>/dev/null
	[ $? -eq 2 ] || fail "'lever stabilize $bad' is not a usage error"
done
LEVER_RUNTIME_DIR=$tmp/none "$lever" stabilize -- true 2>err.txt
[ $? -eq 1 ] || fail "a missing runtime does not exit 1"
grep -q 'runtime not found' err.txt || fail "a missing runtime is not explained"
# the code part's library missing (a runtime directory with the preloaded
# library alone): --code says the part is not available, the program runs
mkdir -p "$tmp/core-only"
cp "$runtime" "$tmp/core-only/"
LEVER_RUNTIME_DIR=$tmp/core-only "$lever" stabilize --code -- sh -c 'sh -c "exit 5"; exit $?' 2>err.txt
[ $? -eq 5 ] || fail "without the code library, the program does not run under --code"
grep -q 'code randomization is not available in this build' err.txt ||
	fail "a missing code library is not explained"
[ "$(grep -c 'not available' err.txt)" = 1 ] || fail "the missing code library is reported more than once"

[ $fails -eq 0 ] && echo "stabilize_cli: all checks pass"
exit $((fails > 0))
