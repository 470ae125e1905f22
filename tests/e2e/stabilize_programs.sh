#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Real programs, unmodified and dynamically linked, under lever stabilize
# --heap (their every malloc goes through the shuffling heap) give the same
# output as a bare run. sort, gzip, sed, awk and tar are on every Debian
# system; xz, bzip2 and python3 are installed by scripts/install-deps.sh (the
# test is skipped, never passed, without them). Then lever's threaded test
# programs.
set -uo pipefail
build=$(cd "$1" && pwd)
. "$2/tests/e2e/lib/skip.sh"
need xz xz-utils
need bzip2 bzip2
need python3 python3
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$tmp"

# input: 200,000 pseudo-random lines, made without any tool under test
awk 'BEGIN { x = 12345; for (i = 0; i < 200000; i++) {
	x = (x * 1103515245 + 12345) % 2147483648; printf "%d line %x %s\n", x % 100000, x, substr("abcdefghij", 1 + x % 10) } }' \
	>input.txt

# same_output NAME COMMAND...: stdout of COMMAND bare and under lever (two seeds) must match
same_output() {
	local name=$1
	shift
	"$@" >bare.out 2>/dev/null
	local bare_status=$?
	for seed in 11 12; do
		"$lever" stabilize --heap --seed=$seed -- "$@" >lever.out 2>/dev/null
		local status=$?
		if [ $status -ne $bare_status ]; then
			fail "$name: exit status $status under lever, $bare_status bare"
		elif ! cmp -s bare.out lever.out; then
			fail "$name: output differs under lever (seed $seed)"
		fi
	done
	echo "ok: $name ($(wc -c <bare.out) bytes of output)"
}

same_output "sort -n" sort -n input.txt
same_output "sort -k3,3 -k1,1n (many keys)" sort -k3,3 -k1,1n input.txt
same_output "gzip -c | gzip -dc" sh -c 'gzip -9c input.txt | gzip -dc | md5sum'
same_output "gzip -c" gzip -6c input.txt
same_output "sed" sed -e 's/line \([0-9a-f]*\)/\1-LINE/' -e '/^9/d' input.txt
same_output "awk (associative arrays)" awk '{ n[$3]++; s[$3] += $1 } END { for (k in n) print k, n[k], s[k] }' input.txt
split -l 20000 input.txt part.
same_output "tar" sh -c 'tar -cf - part.* | tar -tvf - | awk "{ print \$3, \$6 }"'
for tool in xz bzip2 python3; do
	case $tool in
	xz) same_output "xz" sh -c 'xz -3c input.txt | xz -dc | md5sum; xz -3c input.txt | wc -c' ;;
	bzip2) same_output "bzip2" bzip2 -c input.txt ;;
	python3) same_output "python3 (dicts, sorting)" python3 -c '
import collections
c = collections.Counter(l.split()[2] for l in open("input.txt"))
d = {i: str(i) * 3 for i in range(100000)}
print(sorted(c.items()), len(d), sum(len(v) for v in d.values()))' ;;
	esac
done

# lever's own threaded test programs (built with the tests): 1000 threads,
# producer/consumer, fork+exec, C++ threads, exiting threads
for p in threads1000 prodcons pingpong fork_exec cxx_threads exit_thread rwlock_barrier_sem; do
	prog=$build/tests/programs/causal/$p
	[ -x "$prog" ] || { fail "$prog was not built"; continue; }
	same_output "$p" "$prog"
done

[ $fails -eq 0 ] && echo "stabilize_programs: all checks pass"
exit $((fails > 0))
