#!/bin/bash
# lever-cc / lever-c++ as the compiler of a build system: CC=lever-cc with a
# plain Makefile (also with LEVER_CC_RANDOMIZE_LINK), and a CMake project
# configured with CMAKE_C_COMPILER=lever-cc and CMAKE_CXX_COMPILER=lever-c++
# (CMake's compiler detection runs through lever cc).
# usage: stabilizer_cc_build.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
PROJECT=$SRC/tests/programs/stabilizer_cc/project
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

lever_built() {
	readelf -S "$1" | grep -q lever_stack_pads && readelf -S "$1" | grep -q '\.rela\.text'
}

expect="hello from a lever cc build: 5050"

# make, CC=lever-cc from PATH
cp -r "$PROJECT" "$WORK/make"
if PATH=$BUILD/bin:$PATH make -s -C "$WORK/make" CC=lever-cc >"$WORK/make.log" 2>&1 &&
	[ "$("$WORK/make/hello")" = "$expect" ] && lever_built "$WORK/make/hello"; then
	echo "ok: make CC=lever-cc"
else
	cat "$WORK/make.log"
	fail "make CC=lever-cc"
fi
# ... and with the link randomized through the environment
make -s -C "$WORK/make" clean
if LEVER_CC_RANDOMIZE_LINK=random LEVER_CC_VERBOSE=1 make -s -C "$WORK/make" CC="$BUILD/bin/lever-cc" \
	>"$WORK/make2.log" 2>&1 && [ "$("$WORK/make/hello")" = "$expect" ] &&
	grep -q 'link order seed' "$WORK/make2.log" && grep -q -- '-Wl,-T,' "$WORK/make2.log"; then
	echo "ok: make CC=lever-cc LEVER_CC_RANDOMIZE_LINK=random"
else
	cat "$WORK/make2.log"
	fail "make with LEVER_CC_RANDOMIZE_LINK"
fi

# CMake
if cmake -S "$PROJECT" -B "$WORK/cmake" -DCMAKE_C_COMPILER="$BUILD/bin/lever-cc" \
	-DCMAKE_CXX_COMPILER="$BUILD/bin/lever-c++" >"$WORK/cmake.log" 2>&1 &&
	cmake --build "$WORK/cmake" >>"$WORK/cmake.log" 2>&1 &&
	[ "$("$WORK/cmake/hello")" = "$expect" ] &&
	[ "$("$WORK/cmake/hello_cxx")" = "$(printf 'a=3\nb=1\nc=1')" ] &&
	lever_built "$WORK/cmake/hello" && lever_built "$WORK/cmake/hello_cxx"; then
	grep -E 'compiler identification' "$WORK/cmake.log"
	echo "ok: cmake with CMAKE_C_COMPILER=lever-cc, CMAKE_CXX_COMPILER=lever-c++"
else
	cat "$WORK/cmake.log"
	fail "cmake"
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all passed"
