#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 14 point 12: messages that name the real cause. Each check below failed
# with the messages lever printed before (no word, "try --sampler=timer",
# "build with -g", a warning and random lines, "Unknown error 524", one warning
# per process, "status 139").
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
cd "$tmp"

# A program with a progress point that runs for a few hundred ms.
cat >work.c <<'C'
#include <lever.h>
volatile unsigned long sink;
static void step(void)
{
	for (int i = 0; i < 20000; i++)
		sink += i;
}
int main(void)
{
	for (int n = 0; n < 20000; n++) {
		step();
		LEVER_PROGRESS;
	}
	return 0;
}
C
# A line whose only instruction is lock-prefixed (lock addq).
cat >lockline.c <<'C'
#include <pthread.h>
static long counter;
static void *work(void *arg)
{
	for (int i = 0; i < 200000; i++) {
		__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
	}
	return arg;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, work, 0);
	work(0);
	pthread_join(t, 0);
	return 0;
}
C
printf '#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n' >segv.c
cc -g -O1 -I"$src/include" -o work work.c || exit 1
cc -g -O1 -pthread -o lockline lockline.c || exit 1
cc -o segv segv.c || exit 1
printf '#!/bin/sh\nexec ./work "$@"\n' >wrapper.sh && chmod +x wrapper.sh

# 1. env and a wrapper script: only the wrapper would be profiled
"$lever" causal -o env.coz -- env FOO=1 ./work 2>err.txt
grep -q -- '--follow-children' err.txt && ok "env: points to --follow-children" ||
	fail "env FOO=1 ./work: no hint at --follow-children: $(cat err.txt)"
"$lever" causal -o script.coz -- ./wrapper.sh 2>err.txt
grep -q 'is a script' err.txt && grep -q -- '--follow-children' err.txt &&
	ok "script: points to --follow-children" || fail "wrapper script: $(cat err.txt)"
# and the remedy works: the program env execs is profiled
"$lever" causal --follow-children -o follow.coz -- env FOO=1 ./work 2>err.txt
grep -q '^experiment' follow.coz && ok "--follow-children profiles what env runs" ||
	fail "--follow-children: no experiment in the profile: $(cat err.txt)"

# 2. no samples: the real reason, not the sampler
"$lever" causal -o cat.coz -- cat /dev/null 2>err.txt
if grep -q 'try --sampler=timer' err.txt || ! grep -q 'CPU time' err.txt; then
	fail "cat: $(cat err.txt)"
else
	ok "cat: $(grep 'no samples' err.txt)"
fi
"$lever" causal -o sh.coz -- sh -c './work; true' 2>err.txt
if grep -q 'try --sampler=timer' err.txt || ! grep -q 'child processes' err.txt; then
	fail "sh -c: $(cat err.txt)"
else
	ok "sh -c: $(grep 'no samples' err.txt)"
fi

# 3. a source scope that matches nothing: say so, and list the program's files
"$lever" causal -o s.coz -s '%/nosuch/%' -- ./work 2>err.txt
status=$?
if [ $status -ne 2 ] || grep -q 'build with -g' err.txt || ! grep -q 'matches none' err.txt ||
	! grep -q "$tmp/work.c" err.txt; then
	fail "-s matching nothing: exit $status: $(cat err.txt)"
else
	ok "-s matching nothing: exit 2, lists work.c"
fi

# 4. --fixed-line on a line the program does not have is an error
"$lever" causal -o f.coz --fixed-line nosuch.c:5 -- ./work 2>err.txt
status=$?
[ $status -eq 2 ] && grep -q "$tmp/work.c" err.txt && ! grep -q '^experiment' f.coz 2>/dev/null &&
	ok "--fixed-line nosuch.c:5: exit 2" || fail "--fixed-line nosuch.c:5: exit $status: $(cat err.txt)"
"$lever" causal -o f.coz --fixed-line work.c:5 --fixed-speedup 0 --experiment-length 20 -- ./work 2>err.txt
[ $? -eq 0 ] && ok "--fixed-line work.c:5 runs" || fail "--fixed-line work.c:5: $(cat err.txt)"

# 5. a uprobe the kernel refuses on a lock-prefixed instruction
LEVER_CAUSAL_BREAKPOINTS=uprobe "$lever" causal -o l.coz --progress lockline.c:6 -- ./lockline 2>err.txt
if grep -q 'Unknown error' err.txt || ! grep -q 'cannot place a uprobe' err.txt; then
	fail "--progress on a lock-prefixed line: $(cat err.txt)"
else
	ok "lock-prefixed line: $(grep -o 'cannot place a uprobe[^;]*' err.txt)"
fi

# 6. counts are whole numbers
for opt in --batch --min-visits --seed; do
	"$lever" causal $opt 1e3 -- ./work 2>err.txt
	[ $? -eq 2 ] && ok "$opt 1e3 refused" || fail "$opt 1e3 accepted"
done

# 7. Stabilizer's warnings once per run, not once per process of a pipeline
"$lever" stabilize -- sh -c '/bin/echo x | /bin/cat | /bin/cat >/dev/null' 2>err.txt
code=$(grep -c 'code randomization off' err.txt)
stack=$(grep -c 'stack padding' err.txt)
[ "$code" -eq 1 ] && [ "$stack" -eq 1 ] && ok "pipeline: each warning once" ||
	fail "pipeline: code warning $code times, stack warning $stack times"

# 8. a signal death in words
"$lever" causal sweep --arrival-speedup=0 -n 1 -o sweep.coz -- ./segv 2>err.txt
status=$?
[ $status -eq 139 ] && grep -q 'killed by SIGSEGV' err.txt && ! grep -q 'status 139' err.txt &&
	ok "sweep: killed by SIGSEGV" || fail "sweep of a crashing program: exit $status: $(cat err.txt)"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all message checks passed"
