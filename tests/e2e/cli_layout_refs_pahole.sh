#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The struct layouts `lever layout refs --all-structs` reads from DWARF
# have the offsets and sizes pahole (dwarves) shows: on static_types.c, on
# the C++ classes of static_types_cxx.cc (pahole -C per class: pahole 1.24
# prints no C++ program whole), and on a real program, lever itself.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
progs=$build/tests/programs/layout_static
compare=$src/tests/e2e/lib/layout_pahole_compare.py
. "$src/tests/e2e/lib/skip.sh"
need pahole dwarves
need python3 python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

check() { # NAME BINARY MIN_COMPARED [PAHOLE_OUTPUT]
	"$lever" layout refs -q --no-cache --all-structs "$2" >"$tmp/$1.rec" || {
		fail "$1: refs failed"
		return
	}
	if [ $# -ge 4 ]; then
		cp "$4" "$tmp/$1.pahole"
	else
		pahole "$2" >"$tmp/$1.pahole" 2>/dev/null
	fi
	python3 "$compare" "$tmp/$1.rec" "$tmp/$1.pahole" "$3" || fail "$1: layouts differ from pahole"
}

[ -x "$progs/static_types" ] && check static_types "$progs/static_types" 7
if [ -x "$progs/static_types_cxx" ]; then
	for c in Shape Pair2 Base; do pahole -C "$c" "$progs/static_types_cxx" 2>/dev/null; done >"$tmp/cxx.pahole"
	check static_types_cxx "$progs/static_types_cxx" 3 "$tmp/cxx.pahole"
fi
check lever "$lever" 100

[ "$fails" -eq 0 ] && echo "cli_layout_refs_pahole: ok"
exit $((fails > 0))
