#!/usr/bin/env bash
# Code randomization (runtime/code*.c) end to end: test programs built with
# the flags the runtime requires, by gcc and clang at -O0 and -O2, give the
# same output with their functions moved (re-randomized every millisecond)
# as without; the code really runs elsewhere, at addresses that change
# between periods and between seeds; perf map, fork, one-time mode, and a
# clear refusal for a binary not linked with --emit-relocs.
set -euo pipefail
build=$1 src=$2
progs=$src/tests/programs/stabilizer_code
driver=$build/tests/programs/stabilizer_code/libstabilizer_code_driver.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-g -ffunction-sections -fno-omit-frame-pointer -fno-jump-tables -fcf-protection=none -Wl,--emit-relocs"
fail=0
. "$src/tests/e2e/lib/skip.sh"
need gdb gdb
# the decode cache of this test's binaries (later runs of a binary load it)
export LEVER_STABILIZE_CACHE=$tmp/cache

randomized() { # log seed program args...
	local log=$1 seed=$2
	shift 2
	LD_PRELOAD=$driver LEVER_STABILIZE_CODE=1 LEVER_STABILIZE_SEED=$seed \
		LEVER_STABILIZE_INTERVAL_NS=${INTERVAL:-1000000} LEVER_STABILIZE_VERBOSE=1 \
		LEVER_STABILIZE_CODE_LOG=$log "$@"
}

check_same() { # name binary
	local name=$1 bin=$2 log=$tmp/$1.log
	"$bin" >"$tmp/$name.bare" 2>&1
	rm -f "$log"
	if ! randomized "$log" 1 "$bin" >"$tmp/$name.rnd" 2>"$tmp/$name.err"; then
		echo "FAIL $name: exit status under code randomization"; cat "$tmp/$name.err"; fail=1; return
	fi
	if ! cmp -s "$tmp/$name.bare" "$tmp/$name.rnd"; then
		echo "FAIL $name: output differs"; diff "$tmp/$name.bare" "$tmp/$name.rnd" | head; fail=1; return
	fi
	local copies periods
	copies=$(grep -vc '^#' "$log" || true)
	periods=$(grep -v '^#' "$log" | cut -d' ' -f1 | sort -u | wc -l)
	if [ "$copies" -lt 3 ] || [ "$periods" -lt 2 ]; then
		echo "FAIL $name: only $copies copies in $periods periods"; cat "$tmp/$name.err"; fail=1; return
	fi
	if [ "$name" != "${name#threads}" ] && ! grep -q " step$" "$log"; then
		echo "FAIL $name: step (thread-local accesses) was never moved"; fail=1; return
	fi
	echo "ok $name: same output, $copies copies over $periods periods"
}

for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "FAIL: $cc missing"; exit 1; }
	cxx=g++; [ $cc = clang ] && cxx=clang++
	for opt in -O0 -O2; do
		for p in fnptr recursive threads backtrace forked addresses; do
			$cc $opt $flags -pthread "$progs/$p.c" -o "$tmp/$p-$cc$opt"
		done
		for p in exceptions stl; do
			$cxx $opt $flags -pthread "$progs/$p.cpp" -o "$tmp/$p-$cc$opt"
		done
		for p in fnptr recursive threads backtrace forked exceptions stl; do
			check_same "$p-$cc$opt" "$tmp/$p-$cc$opt"
		done
	done
done

# The trap keeps every register (GCC's -fipa-ra callers rely on it): a caller
# in assembly checks ten registers around each call of a leaf that moves.
gcc -O2 $flags "$progs/registers.c" -o "$tmp/registers"
check_same registers "$tmp/registers"
if ! grep -q ' registers_leaf$' "$tmp/registers.log"; then
	echo "FAIL registers: registers_leaf was never moved"; fail=1
fi

# A thread that blocks every signal (as liblzma's do) keeps every old copy
# alive: the area fills, re-randomization pauses, and a function first
# called after that gets a copy at its fixed home instead of aborting.
gcc -O2 $flags -pthread "$progs/blocked.c" -o "$tmp/blocked"
"$tmp/blocked" >"$tmp/blocked.bare"
if ! randomized "$tmp/blocked.log" 3 "$tmp/blocked" >"$tmp/blocked.rnd" 2>"$tmp/blocked.err" ||
	! cmp -s "$tmp/blocked.bare" "$tmp/blocked.rnd" ||
	! grep -q "the code area is full" "$tmp/blocked.err" ||
	! grep -Eq " [1-9][0-9]* copies at home, [1-9][0-9]* re-randomizations skipped" \
		"$tmp/blocked.err"; then
	echo "FAIL blocked: a full code area"; cat "$tmp/blocked.err"; fail=1
else
	echo "ok blocked: same output with the area full ($(grep -o '[0-9]* copies at home' \
		"$tmp/blocked.err"), $(grep -o '[0-9]* re-randomizations skipped' "$tmp/blocked.err"))"
fi

# The W^X fallback for kernels that refuse /proc/self/mem writes: a shared
# mapping with a read-write alias (privatized in fork()ed children).
for p in fnptr threads forked exceptions; do
	bin=$tmp/$p-gcc-O2
	"$bin" >"$tmp/$p.dual.bare" 2>&1
	if ! LEVER_STABILIZE_CODE_WRITE=dual randomized "$tmp/$p.dual.log" 5 "$bin" \
		>"$tmp/$p.dual" 2>"$tmp/$p.dual.err" ||
		! cmp -s "$tmp/$p.dual.bare" "$tmp/$p.dual" ||
		! grep -q "dual mapping" "$tmp/$p.dual.err"; then
		echo "FAIL $p with the dual-mapping fallback"; cat "$tmp/$p.dual.err"; fail=1
	else
		echo "ok $p-gcc-O2 with the dual-mapping fallback:" \
			"$(grep -vc '^#' "$tmp/$p.dual.log") copies"
	fi
done

# The decode cache: the first run of a binary decodes and stores its
# conclusions by build ID, the next loads the same ones; a damaged file is
# decoded again and rewritten; "off" and a binary without a build ID decode
# every time and store nothing.
cache_run() { # dir name binary -> the start line without the area address
	LEVER_STABILIZE_CACHE=$1 randomized "$tmp/cache.log" 9 "$3" >"$tmp/$2.out" 2>"$tmp/$2.err" ||
		return 1
	cmp -s "$tmp/$2.out" "$tmp/exceptions-gcc-O2.bare" || return 1
	grep "relocatable (" "$tmp/$2.err" | sed 's/ area [0-9a-f]* / area /'
}
bin=$tmp/exceptions-gcc-O2
cdir=$tmp/cache-check
first=$(cache_run "$cdir" c1 "$bin") || first=
cfile=$(ls "$cdir"/*.code 2>/dev/null || true)
second=$(cache_run "$cdir" c2 "$bin") || second=
if [[ $first != *"decoded now" || $second != *"decoded earlier (decode cache)" ]] ||
	[ "${first%, decoded*}" != "${second%, decoded*}" ] || [ -z "$cfile" ] ||
	[ "$(basename "$cfile")" != "$(readelf -n "$bin" | awk '/Build ID/ { print $3 }').code" ]; then
	echo "FAIL decode cache: first '$first', second '$second', file '$cfile'"; fail=1
else
	size=$(stat -c %s "$cfile")
	byte=$(od -An -tu1 -j $((size / 2)) -N1 "$cfile")
	printf "\\x$(printf %02x $((byte ^ 255)))" |
		dd of="$cfile" bs=1 seek=$((size / 2)) conv=notrunc status=none
	third=$(cache_run "$cdir" c3 "$bin") || third=
	fourth=$(cache_run "$cdir" c4 "$bin") || fourth=
	off=$(cache_run off c5 "$bin") || off=
	gcc -O2 $flags -Wl,--build-id=none "$progs/fnptr.c" -o "$tmp/no-build-id"
	LEVER_STABILIZE_CACHE=$tmp/cache-none randomized "$tmp/cache.log" 9 "$tmp/no-build-id" \
		>/dev/null 2>&1 || true
	if [[ $third != *"decoded now" || $fourth != *"decoded earlier (decode cache)" ||
		$off != *"decoded now" ]] || [ "${third%, decoded*}" != "${first%, decoded*}" ] ||
		[ "$(ls "$cdir")" != "$(basename "$cfile")" ] || [ -e "$tmp/cache-none" ]; then
		echo "FAIL decode cache: damaged '$third', then '$fourth', off '$off';" \
			"files: $(ls "$cdir" "$tmp/cache-none" 2>&1 | tr '\n' ' ')"
		fail=1
	else
		echo "ok decode cache: stored by build ID ($size bytes), loaded with the same" \
			"conclusions, a damaged file decoded again and rewritten, off and no build ID decode"
	fi
fi

# Where the code runs. Bare: in the text. Randomized: outside, moving.
addr=$tmp/addresses-gcc-O2
"$addr" >"$tmp/addr.bare"
grep -q "^first [0-9a-f]* in_text=1$" "$tmp/addr.bare"
randomized "$tmp/a1.log" 11 "$addr" >"$tmp/addr.1" 2>/dev/null
randomized "$tmp/a2.log" 22 "$addr" >"$tmp/addr.2" 2>/dev/null
INTERVAL=1000000000000 LEVER_STABILIZE_ONE_TIME=1 randomized "$tmp/a3.log" 33 "$addr" \
	>"$tmp/addr.3" 2>/dev/null
field() { awk -v k="$1" -v n="$2" '$1 == k { print $n }' "$3"; }
if [ "$(grep -c 'in_text=0' "$tmp/addr.1")" != 2 ]; then
	echo "FAIL: randomized code still returns into the text"; cat "$tmp/addr.1"; fail=1
elif [ "$(field first 2 "$tmp/addr.1")" = "$(field second 2 "$tmp/addr.1")" ]; then
	echo "FAIL: the return address did not change across re-randomizations"; cat "$tmp/addr.1"
	fail=1
elif [ "$(field first 2 "$tmp/addr.1")" = "$(field first 2 "$tmp/addr.2")" ]; then
	echo "FAIL: two seeds give the same address"; cat "$tmp/addr.1" "$tmp/addr.2"; fail=1
elif [ "$(field first 2 "$tmp/addr.3")" != "$(field second 2 "$tmp/addr.3")" ] ||
	grep -q in_text=1 "$tmp/addr.3"; then
	echo "FAIL: one-time randomization moved the code twice or not at all"; cat "$tmp/addr.3"
	fail=1
else
	echo "ok addresses: $(field first 2 "$tmp/addr.1") then $(field second 2 "$tmp/addr.1")" \
		"(seed 11), $(field first 2 "$tmp/addr.2") (seed 22), one-time stays put"
fi

# The perf map names the copies the log reports.
pid=$(sed -n 's/^# lever stabilizer code log v1 pid \([0-9]*\):.*/\1/p' "$tmp/a1.log")
map=/tmp/perf-$pid.map
copy=$(awk '$4 == "caller" { print $2; exit }' "$tmp/a1.log")
if [ -z "$copy" ] || ! grep -q "^$copy [0-9a-f]* caller$" "$map"; then
	echo "FAIL: $map has no entry for caller's copy $copy"; fail=1
else
	echo "ok perf map: $(grep -c . "$map") entries in $map"
fi
rm -f "$map" /tmp/perf-"$pid".map

# gdb names frames in copies and unwinds through them (GDB JIT interface).
# Displaced stepping off: gdb steps threads over breakpoints in a scratch
# copy at _start, which the main thread has not run yet when the
# re-randomization thread (started by a constructor) hits one.
cat >"$tmp/gdb.cmd" <<GDB
set pagination off
set startup-with-shell off
set displaced-stepping off
set environment LD_PRELOAD $driver
set environment LEVER_STABILIZE_CODE 1
set environment LEVER_STABILIZE_INTERVAL_NS 1000000
handle SIG$(($(kill -l SIGRTMAX) - 2)) nostop noprint pass
break nanosleep if \$_thread == 1
run
bt 2
bt -4
kill
GDB
timeout 120 gdb -q -batch -x "$tmp/gdb.cmd" "$tmp/recursive-gcc-O2" >"$tmp/gdb.out" 2>&1 || true
if grep -q "^#1 .* in deep" "$tmp/gdb.out" && grep -q " in main ()" "$tmp/gdb.out" &&
	grep -q " in _start ()" "$tmp/gdb.out" && ! grep -q "in ?? ()" "$tmp/gdb.out"; then
	echo "ok gdb: $(grep -c '^#' "$tmp/gdb.out") frames named, from a copy of deep to _start"
else
	echo "FAIL: gdb does not see through copies"; grep "^#" "$tmp/gdb.out"; fail=1
fi

# Not linked with --emit-relocs: one clear line, and the program runs unchanged.
gcc -O2 "$progs/fnptr.c" -o "$tmp/plain"
"$tmp/plain" >"$tmp/plain.bare"
randomized "$tmp/plain.log" 1 "$tmp/plain" >"$tmp/plain.rnd" 2>"$tmp/plain.err"
if ! cmp -s "$tmp/plain.bare" "$tmp/plain.rnd" || ! grep -q "emit-relocs" "$tmp/plain.err"; then
	echo "FAIL: a binary without --emit-relocs"; cat "$tmp/plain.err"; fail=1
else
	echo "ok without --emit-relocs: $(cat "$tmp/plain.err")"
fi
for f in "$tmp"/*.log; do
	p=$(sed -n 's/^# lever stabilizer code log v1 pid \([0-9]*\):.*/\1/p' "$f")
	[ -n "$p" ] && rm -f /tmp/perf-"$p".map
done
exit $fail
