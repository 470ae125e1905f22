#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The allocation API under the shuffling heap (heap_api: alignment of every
# function, realloc, calloc zeroing and overflow, malloc_usable_size, threads
# freeing each other's objects, fork in a threaded program). The bare run
# checks the checks against glibc.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
prog=$build/tests/programs/stabilizer/heap_api
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$prog" || fail "heap_api fails on glibc's malloc: the checks are wrong"
for seed in 1 2; do
	"$lever" stabilize --heap --seed=$seed -- "$prog" || fail "heap_api fails under lever (seed $seed)"
done
# with the heap off the runtime forwards everything to glibc
"$lever" stabilize --code -- "$prog" 2>/dev/null || fail "heap_api fails with the heap off"

[ $fails -eq 0 ] && echo "stabilize_heap_api: all checks pass"
exit $((fails > 0))
