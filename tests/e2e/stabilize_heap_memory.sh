#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The shuffling heap gives freed memory back (spec §4.2 base allocator):
# heap_return allocates and frees 1 GiB in 16 rounds of 64 MiB, each in
# objects of another size class, and measures its own peak resident size.
# A heap that keeps every class's freed memory peaks near 1 GiB; the limit
# (320 MiB) leaves room for the 256-object shuffling buffers of the big
# classes and the per-class caches. glibc's malloc runs the same program as a
# sanity check of the program itself.
# Many classes, few objects each (issue 14 point 14): heap_classes keeps a
# few dozen objects (549 KiB) live in each of 40 size classes and measures
# how much its resident size grew: glibc about 0.6 MiB, the shuffling heap
# about 1.1 MiB since the small classes share pages; one that gave each
# class 256 KiB of pages of its own grew by 3.3 MiB. The limit is 1.5 MiB.
# A heap-only run does not map capstone either (the code part's decoder, about
# 3.2 MiB resident once relocated): runtime/code_capstone.c opens it only when
# code randomization starts. Nor the code part's other libraries (libelf,
# libdw and the compression libraries it links, libgcc_s; 0.9 MiB resident
# whatever the heap, issue 14 point 14): they come with
# liblever-stabilizer-code.so, which the runtime opens only for --code. The
# same for a --stack run (its section lookup reads the ELF headers itself).
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
prog=$build/tests/programs/stabilizer/heap_return
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$prog" 320 || fail "glibc's malloc: heap_return exceeds its limit (status $?)"
"$lever" stabilize --heap --seed=1 -- "$prog" 320 ||
	fail "lever stabilize --heap: freed memory is not given back (status $?)"

classes=$build/tests/programs/stabilizer/heap_classes
"$classes" 1536 || fail "glibc's malloc: heap_classes exceeds its limit (status $?)"
for seed in 1 2 3; do
	"$lever" stabilize --heap --seed=$seed -- "$classes" 1536 ||
		fail "lever stabilize --heap, seed $seed: 40 classes of a few objects cost too much memory (status $?)"
done

maps=$("$lever" stabilize --heap --seed=1 -- cat /proc/self/maps) ||
	fail "lever stabilize --heap -- cat /proc/self/maps failed"
grep -q 'liblever-stabilizer' <<<"$maps" || fail "the runtime is not in the program's maps"
if grep 'libcapstone' <<<"$maps"; then
	fail "a heap-only run maps capstone (code randomization is off)"
fi
# cat alone maps none of these (checked bare, so that a system whose cat
# links one of them does not fail the runtime)
code_libs='liblever-stabilizer-code|libdw[.-]|libelf[.-]|libz[.]|liblzma|libbz2|libzstd|libgcc_s'
bare=$(cat /proc/self/maps | grep -E "$code_libs" | sed 's/.* //' | sort -u)
for part in heap stack; do
	maps=$("$lever" stabilize --$part --seed=1 -- cat /proc/self/maps 2>/dev/null) ||
		fail "lever stabilize --$part -- cat /proc/self/maps failed"
	grep -q 'liblever-stabilizer' <<<"$maps" || fail "--$part: the runtime is not in the program's maps"
	extra=$(grep -E "$code_libs" <<<"$maps" | sed 's/.* //' | sort -u | comm -23 - <(echo "$bare"))
	[ -z "$extra" ] ||
		fail "a --$part run maps the code part's libraries (code randomization is off):" $extra
done
# and --code does open it (cat was not built for it: the part then says why
# it stays off, after its library was loaded)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
maps=$("$lever" stabilize --code --seed=1 -- cat /proc/self/maps 2>"$err")
grep -q 'liblever-stabilizer-code' <<<"$maps" || {
	cat "$err"
	fail "--code: the code part's library is not loaded"
}
grep 'not available' "$err" && fail "--code: the code part is not available"

[ $fails -eq 0 ] && echo "stabilize_heap_memory: all checks pass"
exit $((fails > 0))
