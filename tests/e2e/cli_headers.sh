#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# include/lever.h and include/coz.h compile cleanly as C and C++ (gcc, clang;
# -Wall -Wextra -Werror -pedantic), link without -ldl, do nothing without lever,
# and find lever's runtime when run under it.
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/t.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "coz.h"
#include "lever.h"

static int visit(int argc)
{
	for (int i = 0; i < 3; i++) {
		LEVER_PROGRESS;
		LEVER_PROGRESS_NAMED("named");
		LEVER_BEGIN("req");
		LEVER_END("req");
		LEVER_ARRIVAL("arrivals");
		COZ_PROGRESS;
		COZ_PROGRESS_NAMED("coz-named");
		COZ_BEGIN("coz-req");
		COZ_END("coz-req");
		COZ_ARRIVAL;
		COZ_PRE_BLOCK;
		COZ_POST_BLOCK(1);
		COZ_CATCH_UP;
		if (argc > 99)
			COZ_PROGRESS;
		else
			LEVER_PROGRESS;
	}
	return lever_get_counter_(LEVER_COUNTER_THROUGHPUT, "named") != 0;
}

int main(int argc, char **argv)
{
	coz_counter_t *unused = 0;

	(void)argv;
	(void)unused;
	printf("runtime %s\n", visit(argc) ? "found" : "absent");
	return 0;
}
C
cp "$tmp/t.c" "$tmp/t.cpp"
flags="-Wall -Wextra -Werror -pedantic -Wshadow -Wundef -I$src/include"
for cc in gcc clang; do
	for std in c99 c11 gnu11 c17; do
		$cc -std=$std $flags -Wstrict-prototypes -Wmissing-prototypes "$tmp/t.c" \
			-o "$tmp/t" 2>"$tmp/err" || { fail "$cc -std=$std: $(cat "$tmp/err")"; continue; }
		[ "$("$tmp/t")" = "runtime absent" ] && echo "ok: $cc -std=$std" ||
			fail "$cc -std=$std: not a no-op without lever"
	done
done
for cxx in g++ clang++; do
	for std in c++11 c++14 c++17 c++20; do
		$cxx -std=$std $flags -Wold-style-cast "$tmp/t.cpp" -o "$tmp/tpp" 2>"$tmp/err" ||
			{ fail "$cxx -std=$std: $(cat "$tmp/err")"; continue; }
		[ "$("$tmp/tpp")" = "runtime absent" ] && echo "ok: $cxx -std=$std" ||
			fail "$cxx -std=$std: not a no-op without lever"
	done
done

# under lever, the macros reach the runtime (no -ldl at link time)
if [ -f "$build/lib/lever/liblever-causal.so" ]; then
	gcc -g -O2 $flags "$tmp/t.c" -o "$tmp/t" || fail "build for lever"
	out=$(cd "$tmp" && "$lever" causal -o "$tmp/p.coz" -- "$tmp/t" 2>"$tmp/err")
	[ "$out" = "runtime found" ] && echo "ok: runtime found under lever causal" ||
		fail "under lever: '$out' $(cat "$tmp/err")"
else
	fail "no runtime at $build/lib/lever/liblever-causal.so (the build makes it)"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
