#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Two threads' objects share no cache line under the shuffling heap
# (heap_lane.c: each thread heap carves from a lane arena with windows of its
# own). heap_threads has two threads allocate objects of 16-512 bytes in
# lock step and counts the 64-byte lines that objects of both touch: with
# one set of lanes for all threads, about 5% of the lines were shared, and
# two threads writing their own objects wrote the same lines (removing that
# saved 8% of malloc_heavy's CPU time on two threads). glibc's malloc (an
# arena per thread) runs it as the control; three seeds under the heap.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
prog=$build/tests/programs/stabilizer/heap_threads
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$prog" 20000 0 || fail "glibc's malloc: the two threads' objects share lines"
for seed in 1 2 3; do
	"$lever" stabilize --heap --seed=$seed -- "$prog" 20000 0 ||
		fail "lever stabilize --heap, seed $seed: the two threads' objects share cache lines"
done
[ $fails -eq 0 ] && echo "stabilize_heap_threads: all checks pass"
exit $((fails > 0))
