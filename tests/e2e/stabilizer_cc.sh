#!/bin/bash
# lever cc / lever c++: arguments pass through; programs built with GCC and
# clang, at -O0 and -O2, behave as plain builds (C, C++ with exceptions,
# threads), with and without the runtime's stack pads; the pads really move
# the frames (two seeds, two distances; re-randomization changes them while
# the program runs); --randomize-link gives a different function order per
# seed and the same output.
# usage: stabilizer_cc.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
LEVER=$BUILD/bin/lever
LEVER_CC=$BUILD/bin/lever-cc
LEVER_CXX=$BUILD/bin/lever-c++
PROGS=$SRC/tests/programs/stabilizer_cc
SHIM=$BUILD/tests/programs/stabilizer_cc/libstack_pads_shim.so
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0
. "$SRC/tests/e2e/lib/skip.sh"
need ld.lld lld

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

pass() {
	echo "ok: $*"
}

# Run a program with the stack part of the runtime (test start-up), seed $1.
padded() {
	local seed=$1
	shift
	timeout 60 env LD_PRELOAD=$SHIM LEVER_STABILIZE_STACK=1 LEVER_STABILIZE_SEED=$seed \
		LEVER_STABILIZE_ONE_TIME=1 "$@"
}

# --- arguments pass through ---------------------------------------------

if [ "$("$LEVER_CC" --version)" = "$(cc --version)" ]; then
	pass "--version is the compiler's"
else
	fail "lever-cc --version differs from cc --version"
fi
if [ "$("$LEVER_CC" -v 2>&1)" = "$(cc -v 2>&1)" ] && [ "$("$LEVER_CXX" -dumpmachine)" = "$(c++ -dumpmachine)" ]; then
	pass "-v and -dumpmachine are the compiler's"
else
	fail "lever-cc -v or lever-c++ -dumpmachine differ from the compiler's"
fi
printf '#define X 42\nint f(void) { return X; }\n' >"$WORK/pp.c"
if cmp -s <("$LEVER_CC" -E "$WORK/pp.c") <(cc -E "$WORK/pp.c") &&
	cmp -s <("$LEVER_CC" -M "$WORK/pp.c") <(cc -M "$WORK/pp.c") &&
	cmp -s <(echo 'int y = __LINE__;' | "$LEVER" cc -E -x c -) <(echo 'int y = __LINE__;' | cc -E -x c -); then
	pass "-E, -M and stdin preprocessing are the compiler's"
else
	fail "-E/-M output differs from cc's"
fi
if "$LEVER_CC" --help | grep -q -- '--randomize-link' && "$LEVER" help cc | grep -q -- '--no-stack-pads'; then
	pass "--help"
else
	fail "lever cc --help"
fi
for opt in --randomize-link --no-stack-pads --lever-verbose --help LEVER_CC LEVER_CXX \
	LEVER_CC_RANDOMIZE_LINK LEVER_CC_STACK_PADS LEVER_CC_VERBOSE LEVER_RUNTIME_DIR; do
	"$LEVER_CC" --help | grep -q -- "$opt" || fail "--help does not mention $opt"
done
"$LEVER_CC" --randomize-link=x1 -c "$WORK/pp.c" -o "$WORK/x.o" 2>"$WORK/err"
[ $? -eq 2 ] && grep -q 'bad seed' "$WORK/err" || fail "--randomize-link=x1 is not a usage error"
LEVER_CC_RANDOMIZE_LINK=sometimes "$LEVER_CC" -c "$WORK/pp.c" -o "$WORK/x.o" 2>"$WORK/err"
[ $? -eq 2 ] && grep -q "want 'random' or a seed" "$WORK/err" || fail "bad LEVER_CC_RANDOMIZE_LINK is not a usage error"
"$LEVER_CC" -c "$WORK/pp.c" -o "$WORK/nopads.o" --no-stack-pads &&
	LEVER_CC_STACK_PADS=0 "$LEVER_CC" -c "$WORK/pp.c" -o "$WORK/nopads2.o" &&
	! readelf -S "$WORK/nopads.o" | grep -q lever_stack_pads &&
	! readelf -S "$WORK/nopads2.o" | grep -q lever_stack_pads &&
	readelf -S "$WORK/nopads.o" | grep -q '\.text\.f' ||
	fail "--no-stack-pads / LEVER_CC_STACK_PADS=0"
# A compiler failure is lever cc's failure.
echo 'int main(void) { return undefined_thing; }' >"$WORK/bad.c"
"$LEVER_CC" -c "$WORK/bad.c" -o "$WORK/bad.o" 2>/dev/null && fail "a compile error exited 0"
"$LEVER_CC" --randomize-link=1 "$WORK/bad.c" -o "$WORK/bad" 2>/dev/null && fail "a compile error in a randomized link exited 0"
# A response file holding -c and -o: compiled, not linked.
printf -- '-c "%s" -o "%s"\n' "$WORK/pp.c" "$WORK/pp.o" >"$WORK/args.rsp"
if "$LEVER_CC" -O2 "@$WORK/args.rsp" && readelf -S "$WORK/pp.o" | grep -q lever_stack_pads &&
	readelf -h "$WORK/pp.o" | grep -q REL; then
	pass "response file: compiled with the stack pads, not linked"
else
	fail "response file with -c"
fi
# -S: the plugin's alloca shows in the assembly.
if "$LEVER_CC" -O2 -S "$PROGS/frames.c" -o "$WORK/frames.s" && grep -q '__lever_stack_pads' "$WORK/frames.s"; then
	pass "-S shows the stack pad code"
else
	fail "-S output has no stack pad code"
fi

# --- programs behave as plain builds, with and without pads -----------------

for compiler in gcc clang; do
	for opt in -O0 -O2; do
		tag="$compiler $opt"
		cxx=$([ $compiler = gcc ] && echo g++ || echo clang++)
		d=$WORK/$compiler$opt
		mkdir -p "$d"
		if ! LEVER_CC=$compiler "$LEVER_CC" $opt -g "$PROGS/frames.c" -o "$d/frames" ||
			! LEVER_CXX=$cxx "$LEVER_CXX" $opt -g "$PROGS/exceptions.cpp" -o "$d/exceptions" ||
			! LEVER_CC=$compiler "$LEVER_CC" $opt -g -pthread "$PROGS/threads.c" -o "$d/threads"; then
			fail "$tag: build"
			continue
		fi
		$compiler $opt "$PROGS/frames.c" -o "$d/frames.plain" &&
			$cxx $opt "$PROGS/exceptions.cpp" -o "$d/exceptions.plain" &&
			$compiler $opt -pthread "$PROGS/threads.c" -o "$d/threads.plain" || {
			fail "$tag: plain build"
			continue
		}
		for f in frames exceptions threads; do
			if ! readelf -S "$d/$f" | grep -q 'lever_stack_pads' ||
				! readelf -S "$d/$f" | grep -q '\.rela\.text'; then
				fail "$tag: $f has no stack pad section or no .rela.text (--emit-relocs)"
			fi
		done
		expect=$("$d/frames.plain" compute 20)
		[ "$("$d/frames" compute 20)" = "$expect" ] || fail "$tag: frames output differs without runtime"
		[ "$(padded 1 "$d/frames" compute 20)" = "$expect" ] || fail "$tag: frames output differs with pads"
		expect=$("$d/exceptions.plain")
		[ "$("$d/exceptions")" = "$expect" ] || fail "$tag: exceptions output differs without runtime"
		[ "$(padded 7 "$d/exceptions")" = "$expect" ] || fail "$tag: exceptions output differs with pads"
		expect=$("$d/threads.plain")
		[ "$("$d/threads")" = "$expect" ] || fail "$tag: threads output differs without runtime"
		got=$(timeout 60 env LD_PRELOAD=$SHIM LEVER_STABILIZE_STACK=1 LEVER_STABILIZE_SEED=3 \
			LEVER_STABILIZE_INTERVAL_NS=1000000 "$d/threads")
		[ "$got" = "$expect" ] || fail "$tag: threads output differs with pads re-randomized every 1 ms"

		# Frames move: unpadded the distance is the same in every run; each
		# seed gives its own distance, the same one every time.
		plain1=$("$d/frames" distance)
		plain2=$("$d/frames" distance)
		seed1=$(padded 1 "$d/frames" distance)
		seed1b=$(padded 1 "$d/frames" distance)
		seed2=$(padded 2 "$d/frames" distance)
		echo "  $tag: main-to-depth-8 distance: unpadded $plain1, seed 1 $seed1, seed 2 $seed2"
		if [ "$plain1" != "$plain2" ] || [ "$seed1" != "$seed1b" ]; then
			fail "$tag: distance not reproducible ($plain1/$plain2, $seed1/$seed1b)"
		elif [ "$seed1" = "$seed2" ] || [ "$seed1" = "$plain1" ] || [ "$seed2" = "$plain1" ]; then
			fail "$tag: pads do not move the frames"
		elif [ $(((seed1 - plain1) % 16)) -ne 0 ] || [ $((seed1 - plain1)) -lt 0 ] ||
			[ $((seed1 - plain1)) -gt $((10 * 4080)) ]; then
			fail "$tag: padding $((seed1 - plain1)) is not 10 pads of 0..4080 bytes in steps of 16"
		fi
		got=$(timeout 60 env LD_PRELOAD=$SHIM LEVER_STABILIZE_STACK=1 LEVER_STABILIZE_SEED=5 \
			LEVER_STABILIZE_INTERVAL_NS=2000000 "$d/frames" watch 5000)
		[ "$got" = changed ] || fail "$tag: re-randomization did not change the frames in 5 s"
		# Not built with lever cc: the runtime says so and steps aside.
		got=$(padded 1 "$d/frames.plain" compute 5 2>"$d/err")
		if [ "$got" != "$("$d/frames.plain" compute 5)" ] || ! grep -q 'not built with lever cc' "$d/err"; then
			fail "$tag: a plain program under the stack pads runtime"
		fi
		pass "$tag: C, C++ exceptions, threads; frames move with the seed"
	done
done

# --- shared objects: linked, and opened/closed with dlopen ------------------
d=$WORK/dso
mkdir -p "$d"
if "$LEVER_CC" -O2 -fPIC -shared "$PROGS/dso_lib.c" -o "$d/libdso_lib.so" &&
	"$LEVER_CC" -O2 "$PROGS/dso_main.c" -L"$d" -ldso_lib -Wl,-rpath,"$d" -o "$d/linked" &&
	"$LEVER_CC" -O2 -DOPEN_AT_RUN_TIME "$PROGS/dso_main.c" -o "$d/opener"; then
	l0=$("$d/linked")
	l1=$(padded 1 "$d/linked")
	l2=$(padded 2 "$d/linked")
	o0=$("$d/opener" dlopen "$d/libdso_lib.so")
	o1=$(timeout 60 env LD_PRELOAD=$SHIM LEVER_STABILIZE_STACK=1 LEVER_STABILIZE_SEED=1 \
		LEVER_STABILIZE_INTERVAL_NS=1000000 "$d/opener" dlopen "$d/libdso_lib.so")
	rc=$?
	echo "  shared object: linked $l0 / seed 1 $l1 / seed 2 $l2; dlopen'ed $o0 / seed 1 $o1"
	if [ "$l1" = "$l2" ] || [ "$l1" = "$l0" ] || [ "$o1" = "$o0" ] || [ $rc -ne 0 ]; then
		fail "shared objects: pads do not move their frames, or dlclose under the runtime failed"
	else
		pass "shared objects (linked and dlopen'ed/dlclose'd) are padded"
	fi
	# A randomized link of a shared object: its functions in their own order.
	lib_functions() { nm -n "$1" | awk '$2 == "T" { print $3 }' | tr '\n' ' '; }
	"$LEVER_CC" -O2 -fPIC -shared "$PROGS/dso_lib.c" "$PROGS/link_a.c" -o "$d/libfixed.so"
	if "$LEVER_CC" --randomize-link=3 -O2 -fPIC -shared "$PROGS/dso_lib.c" "$PROGS/link_a.c" \
		-o "$d/libdso_lib.so" && [ "$("$d/linked")" = "$l0" ] &&
		[ "$(lib_functions "$d/libdso_lib.so")" != "$(lib_functions "$d/libfixed.so")" ]; then
		pass "--randomize-link of a shared object"
	else
		fail "--randomize-link of a shared object"
	fi
else
	fail "shared object build"
fi

# --- LTO: GCC runs the plugin at link time, clang before writing bitcode ----
for compiler in gcc clang; do
	d=$WORK/lto-$compiler
	mkdir -p "$d"
	if LEVER_CC=$compiler "$LEVER_CC" -O2 -flto -c "$PROGS/frames.c" -o "$d/frames.o" &&
		LEVER_CC=$compiler "$LEVER_CC" -O2 -flto "$d/frames.o" -o "$d/frames"; then
		s1=$(padded 1 "$d/frames" distance)
		s2=$(padded 2 "$d/frames" distance)
		if [ "$s1" != "$s2" ] && [ "$(padded 1 "$d/frames" compute 15)" = "$("$d/frames" compute 15)" ]; then
			pass "$compiler -flto: padded ($s1, $s2)"
		else
			fail "$compiler -flto: frames do not move ($s1, $s2)"
		fi
	else
		fail "$compiler -flto: build"
	fi
done

# --- the whole runtime, when this build has `lever stabilize` ------------------
if "$LEVER" help 2>/dev/null | grep -q '^  stabilize '; then
	d=$WORK/gcc-O2
	s1=$("$LEVER" stabilize --stack --one-time --seed=1 -- "$d/frames" distance)
	s2=$("$LEVER" stabilize --stack --one-time --seed=2 -- "$d/frames" distance)
	if [ -n "$s1" ] && [ "$s1" != "$s2" ]; then
		pass "lever stabilize --stack moves the frames ($s1, $s2)"
	else
		fail "lever stabilize --stack: distances '$s1' '$s2'"
	fi
fi

# --- link-order randomization ---------------------------------------------------
functions() { nm -n "$1" | awk '$2 == "T" && $3 ~ /^[abc][0-9]$/ { print $3 }' | tr '\n' ' '; }
L=$WORK/link
mkdir -p "$L"
for f in link_a link_b link_c link_main; do
	cc -O2 -c "$PROGS/$f.c" -o "$L/$f.plain.o"
done
cc "$L"/link_*.plain.o -o "$L/plain"
expect=$("$L/plain")
cd "$L" || exit 1
for f in link_a link_b link_c link_main; do
	"$LEVER_CC" -O2 -c "$PROGS/$f.c" -o "$L/$f.o" || fail "compile $f"
done
"$LEVER_CC" --randomize-link=1 link_main.o link_a.o link_b.o link_c.o -o seed1 &&
	"$LEVER_CC" --randomize-link=1 link_main.o link_a.o link_b.o link_c.o -o seed1b &&
	"$LEVER_CC" --randomize-link=2 link_main.o link_a.o link_b.o link_c.o -o seed2 &&
	LEVER_CC_RANDOMIZE_LINK=3 "$LEVER_CC" link_main.o link_a.o link_b.o link_c.o -o env3 &&
	LEVER_CC=clang "$LEVER_CC" --randomize-link=4 -O2 "$PROGS"/link_{main,a,b,c}.c -o src4 &&
	LEVER_CC=clang "$LEVER_CC" --randomize-link=4 -O2 -fuse-ld=gold "$PROGS"/link_{main,a,b,c}.c -o gold4 &&
	"$LEVER_CC" link_main.o link_a.o link_b.o link_c.o -o fixed ||
	fail "randomized links"
LEVER_CC=clang "$LEVER_CC" --randomize-link=4 -O2 -fuse-ld=lld "$PROGS"/link_{main,a,b,c}.c -o lld4 ||
	fail "randomized link with lld"
for p in seed1 seed1b seed2 env3 src4 gold4 lld4 fixed; do
	[ "$("./$p")" = "$expect" ] || fail "link order $p: output differs"
done
echo "  unrandomized: $(functions fixed)"
echo "  seed 1:       $(functions seed1)"
echo "  seed 2:       $(functions seed2)"
echo "  env seed 3:   $(functions env3)"
echo "  clang, sources, seed 4: $(functions src4)"
echo "  gold, seed 4: $(functions gold4)"
echo "  lld, seed 4:  $(functions lld4)"
# Every linker keeps one .text, holding all the functions.
for p in seed1 gold4 lld4; do
	[ "$(readelf -SW "$p" | grep -c ' \.text ')" = 1 ] || fail "$p: not exactly one .text"
	nm "$p" | awk '$2 == "T" && $3 ~ /^[abc][0-9]$/' | wc -l | grep -q '^24$' || fail "$p: functions missing"
done
if [ "$(functions seed1)" != "$(functions seed1b)" ]; then
	fail "the same seed gave two function orders"
elif [ "$(functions seed1)" = "$(functions seed2)" ] || [ "$(functions seed1)" = "$(functions fixed)" ] ||
	[ "$(functions env3)" = "$(functions seed1)" ] || [ "$(functions src4)" = "$(functions fixed)" ] ||
	[ "$(functions gold4)" = "$(functions fixed)" ] || [ "$(functions lld4)" = "$(functions fixed)" ]; then
	fail "function order did not change with the seed"
else
	pass "--randomize-link: one function order per seed (ld, gold, lld, env, from sources), same output"
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all passed"
