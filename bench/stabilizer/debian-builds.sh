#!/usr/bin/env bash
# Real programs built with lever-cc: Debian's sources of bzip2, zstd and
# xz-utils, each built through its own build system with CC=lever-cc (make,
# make, autoconf/libtool), then its own test suite, then a compress/decompress
# round trip run under the stack pads of Stabilizer's runtime (two seeds,
# pads redrawn every 10 ms). bzip2 is built once more with a randomized link
# (LEVER_CC_RANDOMIZE_LINK) and must behave the same. Not part of `make bench`
# (slow: several minutes on two cores); run it by hand:
#
#   bench/stabilizer/debian-builds.sh [BUILD_DIR] [WORK_DIR] [PACKAGE...]
#
# BUILD_DIR is lever's build (default build), WORK_DIR where the sources are
# fetched and built (default /tmp/lever-debian-builds), PACKAGE one or more of
# bzip2 zstd xz-utils (default all). Fetching needs deb-src lines; if apt has
# none, this adds them for the mirror the deb lines use (needs root), then
# runs apt-get update. Prints one line per step and a summary table.
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
work=${2:-/tmp/lever-debian-builds}
shift $(($# < 2 ? $# : 2))
packages=("$@")
[ ${#packages[@]} -eq 0 ] && packages=(bzip2 zstd xz-utils)
export PATH=$build/bin:$PATH
export MAKEFLAGS=-j2
mkdir -p "$work"
summary=()

note() { printf '%s\n' "$*"; }
record() { summary+=("| $1 | $2 | $3 |"); }

# The stack part of the runtime: `lever stabilize --stack` when this build has
# it, else the test start-up of runtime/stack.c (tests/programs/stabilizer_cc).
padded() {
	local seed=$1
	shift
	if lever help | grep -q '^  stabilize '; then
		lever stabilize --stack --seed="$seed" --interval=10 -- "$@"
	else
		env LD_PRELOAD="$build/tests/programs/stabilizer_cc/libstack_pads_shim.so" \
			LEVER_STABILIZE_STACK=1 LEVER_STABILIZE_SEED="$seed" \
			LEVER_STABILIZE_INTERVAL_NS=10000000 "$@"
	fi
}

ensure_deb_src() {
	if grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	local mirror
	mirror=$(grep -rhs '^URIs:\|^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
		/etc/apt/sources.list.d/*.list 2>/dev/null | grep -o 'http[^ ]*debian/\?$' | head -1)
	mirror=${mirror:-http://deb.debian.org/debian}
	note "adding deb-src for $mirror (bookworm main)"
	cat >/etc/apt/sources.list.d/lever-deb-src.sources <<EOF
Types: deb-src
URIs: $mirror
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt-get update -qq
}

# Fresh source tree of package $1 in $work/$2.
fresh_tree() {
	local pkg=$1 dest=$2 dir
	if ! ls -d "$work/src/$pkg"-*/ >/dev/null 2>&1 && ! ls -d "$work/src/lib$pkg"-*/ >/dev/null 2>&1; then
		mkdir -p "$work/src"
		(cd "$work/src" && apt-get source -qq "$pkg" >/dev/null 2>&1) || return 1
	fi
	dir=$(ls -d "$work/src/$pkg"-*/ "$work/src/lib$pkg"-*/ 2>/dev/null | head -1)
	rm -rf "${work:?}/$dest"
	cp -a "$dir" "$work/$dest" # -a: timestamps, or automake wants to rerun
}

lever_built() {
	local sections
	sections=$(readelf -SW "$1") || return 1
	grep -q lever_stack_pads <<<"$sections" && grep -q '\.rela\.text' <<<"$sections"
}

# A few MB of mixed text and binary data, the same every time.
make_sample() {
	[ -s "$work/sample" ] && return 0
	{
		cat /usr/share/common-licenses/GPL-3 /usr/include/*.h
		head -c 2000000 "$build/bin/lever"
		seq 1 200000
	} >"$work/sample"
}

# Round trip with the program built by lever-cc, padded with two seeds.
round_trip() {
	local name=$1 compress=$2 decompress=$3 ok=yes seed
	make_sample
	for seed in 1 2; do
		padded $seed $compress <"$work/sample" >"$work/sample.$name.$seed" &&
			padded $seed $decompress <"$work/sample.$name.$seed" | cmp -s - "$work/sample" || ok=no
	done
	cmp -s "$work/sample.$name.1" "$work/sample.$name.2" || ok=no # same output whatever the pads
	[ $ok = yes ] && echo pass || echo FAIL
}

build_bzip2() {
	local dest=$1
	fresh_tree bzip2 "$dest" || return 1
	(cd "$work/$dest" && make CC=lever-cc >build.log 2>&1 && make CC=lever-cc check >check.log 2>&1)
}

run_bzip2() {
	local t0 rc
	t0=$(date +%s)
	build_bzip2 bzip2
	rc=$?
	local d=$work/bzip2
	record bzip2 "make CC=lever-cc; make check" "$([ $rc -eq 0 ] && echo pass || echo FAIL) ($(($(date +%s) - t0)) s)"
	[ $rc -eq 0 ] || return 1
	lever_built "$d/bzip2" && record bzip2 "binary has stack pads + .rela.text" pass ||
		record bzip2 "binary has stack pads + .rela.text" FAIL
	record bzip2 "round trip under stack pads (seeds 1, 2)" \
		"$(round_trip bzip2 "$d/bzip2 -9" "$d/bzip2 -d")"
	t0=$(date +%s)
	LEVER_CC_RANDOMIZE_LINK=1 build_bzip2 bzip2-link1
	rc=$?
	LEVER_CC_RANDOMIZE_LINK=2 build_bzip2 bzip2-link2 || rc=1
	record bzip2 "LEVER_CC_RANDOMIZE_LINK=1 and =2: make check" \
		"$([ $rc -eq 0 ] && echo pass || echo FAIL) ($(($(date +%s) - t0)) s)"
	local o1 o2
	o1=$(nm -n "$work/bzip2-link1/bzip2" | awk '$2 ~ /[tT]/ { print $3 }' | md5sum)
	o2=$(nm -n "$work/bzip2-link2/bzip2" | awk '$2 ~ /[tT]/ { print $3 }' | md5sum)
	[ "$o1" != "$o2" ] && record bzip2 "function order differs between link seeds" pass ||
		record bzip2 "function order differs between link seeds" FAIL
}

run_zstd() {
	local t0 rc d=$work/zstd
	t0=$(date +%s)
	fresh_tree zstd zstd || return 1
	(cd "$d" && make CC=lever-cc CXX=lever-c++ zstd >build.log 2>&1 &&
		make CC=lever-cc CXX=lever-c++ check >check.log 2>&1)
	rc=$?
	record zstd "make zstd; make check" "$([ $rc -eq 0 ] && echo pass || echo FAIL) ($(($(date +%s) - t0)) s)"
	[ $rc -eq 0 ] || return 1
	lever_built "$d/programs/zstd" && record zstd "binary has stack pads + .rela.text" pass ||
		record zstd "binary has stack pads + .rela.text" FAIL
	record zstd "round trip under stack pads (seeds 1, 2)" \
		"$(round_trip zstd "$d/programs/zstd -q -19 -c" "$d/programs/zstd -q -d -c")"
}

run_xz() {
	local t0 rc d=$work/xz
	t0=$(date +%s)
	fresh_tree xz-utils xz || return 1
	# Debian's patches leave m4 files newer than the generated files (its build
	# runs autoreconf); mark those up to date instead of needing automake.
	(cd "$d" && touch aclocal.m4 && touch configure && find . -name Makefile.in -exec touch {} + &&
		touch config.h.in &&
		./configure CC=lever-cc >configure.log 2>&1 && make >build.log 2>&1 &&
		make check >check.log 2>&1)
	rc=$?
	record xz-utils "./configure CC=lever-cc; make; make check" \
		"$([ $rc -eq 0 ] && echo pass || echo FAIL) ($(($(date +%s) - t0)) s)"
	[ $rc -eq 0 ] || return 1
	local xz=$d/src/xz/.libs/xz lib=$d/src/liblzma/.libs
	[ -x "$xz" ] || xz=$d/src/xz/xz
	lever_built "$xz" && lever_built "$lib/liblzma.so" &&
		record xz-utils "xz and liblzma.so have stack pads + .rela.text" pass ||
		record xz-utils "xz and liblzma.so have stack pads + .rela.text" FAIL
	record xz-utils "round trip under stack pads (seeds 1, 2)" \
		"$(LD_LIBRARY_PATH=$lib round_trip xz "$xz -6 -c" "$xz -d -c")"
}

ensure_deb_src || {
	note "no deb-src and cannot add it"
	exit 1
}
for p in "${packages[@]}"; do
	note "== $p"
	case $p in
	bzip2) run_bzip2 ;;
	zstd) run_zstd ;;
	xz-utils) run_xz ;;
	*) note "unknown package $p" ;;
	esac
done
printf '\n| package | step | result |\n|---|---|---|\n'
printf '%s\n' "${summary[@]}"
printf '%s\n' "${summary[@]}" | grep -q FAIL && exit 1
exit 0
