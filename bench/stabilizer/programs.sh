#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The eight real programs of Stabilizer's correctness test and timing
# experiments: Debian's sources, fetched with `apt-get source`, built with
# `lever cc` through their own build systems, each with a deterministic
# workload. This file is the one place that knows them. Source it for the
# functions, or run it as a command (see usage below or --help).
#
#   LEVER_PROGRAMS                     the eight names
#   programs_fetch WORK NAME           Debian source into WORK/src
#   programs_build WORK NAME VARIANT   build into WORK/VARIANT/NAME, print
#                                      the main binary's path
#   programs_run NAME BIN SIZE OUTFILE run the workload (SIZE ci or bench),
#                                      its deterministic output to OUTFILE;
#                                      returns the workload's exit status
#
# VARIANT: lever (CC=lever-cc, -O2), lever-O3 (-O3), and either with
# -link=SEED (LEVER_CC_RANDOMIZE_LINK=SEED): when the tree of the variant
# without -link is built, it is copied and only relinked.
#
# Environment:
#   LEVER_BUILD              lever's build directory (default: build of the
#                            repository this file is in); its bin/ goes first
#                            in PATH for lever-cc
#   LEVER_PROGRAMS_LAUNCHER  words put before every process of a workload,
#                            e.g. "lever stabilize --code --seed=1 --"
#   LEVER_PROGRAMS_JOBS      make -j for builds (default 2)
#   PROGRAMS_VERBOSE=1       build logs go to stderr too

LEVER_PROGRAMS=(bzip2 xz zstd sqlite3 lua lz4 bc gzip)

PROGRAMS_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

programs_die() {
	printf 'programs.sh: %s\n' "$*" >&2
	return 1
}

# Debian source package of each program.
programs_package() {
	case $1 in
	bzip2) echo bzip2 ;;
	xz) echo xz-utils ;;
	zstd) echo libzstd ;;
	sqlite3) echo sqlite3 ;;
	lua) echo lua5.4 ;;
	lz4) echo lz4 ;;
	bc) echo bc ;;
	gzip) echo gzip ;;
	*) programs_die "unknown program '$1' (one of: ${LEVER_PROGRAMS[*]})" ;;
	esac
}

programs_lever_build() {
	local b=${LEVER_BUILD:-$PROGRAMS_HERE/../../build}
	[ -x "$b/bin/lever-cc" ] || {
		programs_die "no lever-cc in $b/bin (build lever first, or set LEVER_BUILD)"
		return 1
	}
	(cd "$b" && pwd)
}

# apt-get source needs deb-src lines: add them for the mirror the deb lines
# use when there are none (needs root), then apt-get update.
programs_ensure_deb_src() {
	if grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || {
		programs_die "apt has no deb-src lines and adding them needs root"
		return 1
	}
	local mirror
	mirror=$(grep -rhs '^URIs:\|^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
		/etc/apt/sources.list.d/*.list 2>/dev/null | grep -o 'http[^ ]*debian/\?$' | head -1)
	mirror=${mirror:-http://deb.debian.org/debian}
	printf 'programs.sh: adding deb-src for %s (bookworm main)\n' "$mirror" >&2
	cat >/etc/apt/sources.list.d/lever-deb-src.sources <<EOF
Types: deb-src
URIs: $mirror
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt-get update -qq
}

# The unpacked source tree of NAME in WORK/src, or nothing.
programs_source_dir() {
	local pkg
	pkg=$(programs_package "$2") || return 1
	ls -d "$1/src/$pkg"-[0-9]*/ 2>/dev/null | head -1
}

programs_fetch() {
	local work=$1 name=$2 pkg
	pkg=$(programs_package "$name") || return 1
	mkdir -p "$work/src"
	(
		# One apt-get source at a time in WORK/src (builds may run in parallel).
		flock 9
		[ -n "$(programs_source_dir "$work" "$name")" ] && exit 0
		programs_ensure_deb_src || exit 1
		cd "$work/src" && apt-get source -qq "$pkg" >"fetch-$pkg.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ -z "$(programs_source_dir "$work" "$name")" ]; then
			cat "fetch-$pkg.log" >&2
			programs_die "cannot fetch the Debian source of $name (apt-get source $pkg)"
			exit 1
		fi
	) 9>"$work/src/.lock"
}

# Debian's patches leave some inputs of generated files (m4, Makefile.am,
# yacc/lex sources) newer than the files generated from them; mark the
# generated ones up to date instead of needing autotools, bison and flex.
programs_touch_generated() {
	touch aclocal.m4
	touch configure
	find . -name Makefile.in -exec touch {} +
	for h in config.h.in config.hin lib/config.hin; do [ -f "$h" ] && touch "$h"; done
	return 0
}

# Per program: build_NAME DIR OPT (in DIR, the copied source tree; OPT the
# -O flag), link_NAME DIR OPT (only the final link, the objects exist),
# binaries_NAME (the final binaries, relative to DIR; the first is the main).

binaries_bzip2() { echo bzip2; }
bzip2_flags() { echo "-Wall -Winline $1 -g -D_FILE_OFFSET_BITS=64"; }
build_bzip2() {
	make CC=lever-cc CFLAGS="$(bzip2_flags "$2")" libbz2.a bzip2.o && link_bzip2 "$@"
}
# Upstream's link: libbz2.a into the executable (Debian links the shared
# library instead), so code randomization covers the compressor too.
link_bzip2() {
	# shellcheck disable=SC2046 # the flags are words
	lever-cc $(bzip2_flags "$2") -o bzip2 bzip2.o libbz2.a
}

binaries_xz() { echo src/xz/xz; }
build_xz() {
	programs_touch_generated
	# Static liblzma in xz: code randomization covers the main executable.
	./configure CC=lever-cc CFLAGS="-g $2" --disable-shared --disable-nls --disable-doc \
		--disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links \
		--disable-scripts &&
		make -C lib && make -C src/liblzma && make -C src/xz
}
link_xz() { make -C src/xz; }

binaries_zstd() { echo programs/zstd; ls -d programs/obj/*/zstd 2>/dev/null; }
zstd_make() {
	# CFLAGS from the environment: the Makefile's `CFLAGS ?=` takes it and
	# still appends its own flags. No optional compression libraries.
	CFLAGS=$1 make -C programs zstd CC=lever-cc HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0
}
build_zstd() { zstd_make "$2"; }
link_zstd() { zstd_make "$2"; }

binaries_sqlite3() { printf '%s\n' speedtest1 sqlite3; }
build_sqlite3() {
	programs_touch_generated
	# The shell links the static library; the amalgamation needs tclsh.
	./configure CC=lever-cc CFLAGS="-g $2" --disable-shared --disable-tcl \
		--disable-readline --disable-editline &&
		make sqlite3 && link_sqlite3 "$@"
}
# speedtest1 against the same library as the shell: the Makefile's own
# speedtest1 rule compiles the amalgamation a second time.
link_sqlite3() {
	[ -f sqlite3 ] || make sqlite3 || return 1
	lever-cc -g $2 -I. -o speedtest1 test/speedtest1.c .libs/libsqlite3.a -lm -ldl -lpthread
}

# Debian's lua5.4 build needs libtool and compiles everything twice (C and
# C++); this is upstream's `make linux` (src/Makefile), C only: the same
# flags, -Os for the parser as upstream, lua linked with the objects.
binaries_lua() { echo src/lua; }
lua_makefile() {
	cat <<'EOF'
CC = lever-cc -std=gnu99
CFLAGS = -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $(OPT) -g
CORE_O = lapi.o lcode.o lctype.o ldebug.o ldo.o ldump.o lfunc.o lgc.o llex.o lmem.o \
	lobject.o lopcodes.o lparser.o lstate.o lstring.o ltable.o ltm.o lundump.o lvm.o lzio.o
LIB_O = lauxlib.o lbaselib.o lcorolib.o ldblib.o liolib.o lmathlib.o loadlib.o loslib.o \
	lstrlib.o ltablib.o lutf8lib.o linit.o
lua: lua.o $(CORE_O) $(LIB_O)
	$(CC) $(CFLAGS) -Wl,-E -o $@ $^ -lm -ldl
%.o: %.c
	$(CC) $(CFLAGS) -c $< -o $@
llex.o lparser.o lcode.o: OPT += -Os
EOF
}
build_lua() {
	# Written by Debian's rules (luaconf.h includes it).
	printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
		"$(gcc -print-multiarch)" >src/lua5.4-deb-multiarch.h
	lua_makefile >src/lever-programs.mk && make -C src -f lever-programs.mk OPT="$2" lua
}
link_lua() { make -C src -f lever-programs.mk OPT="$2" lua; }

binaries_lz4() { echo programs/lz4; }
# Debian's programs/Makefile links -L../lib -llz4: only the static library
# is built, so liblz4 is inside lz4 (code randomization covers it).
build_lz4() {
	CFLAGS="$2 -g" make -C lib liblz4.a CC=lever-cc && link_lz4 "$@"
}
link_lz4() { CFLAGS="$2 -g" make -C programs lz4 CC=lever-cc; }

binaries_bc() { echo bc/bc; }
build_bc() {
	programs_touch_generated
	touch bc/bc.c bc/scan.c # patched along with bc.y and scan.l
	./configure CC=lever-cc CFLAGS="-g $2" && make -C lib && make -C bc
}
link_bc() { make -C bc; }

binaries_gzip() { echo gzip; }
build_gzip() {
	programs_touch_generated
	./configure CC=lever-cc CFLAGS="-g $2" && make -C lib && make version.h gzip
}
link_gzip() { make gzip; }

# lever, lever-O3, lever-link=SEED, lever-O3-link=SEED -> opt and seed.
programs_parse_variant() {
	local variant=$1
	case $variant in
	lever | lever-link=*) variant_opt=-O2 ;;
	lever-O3 | lever-O3-link=*) variant_opt=-O3 ;;
	*)
		programs_die "unknown variant '$variant' (lever, lever-O3, lever-link=SEED, lever-O3-link=SEED)"
		return 1
		;;
	esac
	variant_seed=
	variant_base=${variant%%-link=*}
	if [ "$variant_base" != "$variant" ]; then
		variant_seed=${variant#*-link=}
		[[ $variant_seed =~ ^[0-9]+$ ]] || {
			programs_die "link seed '$variant_seed' is not a number"
			return 1
		}
	fi
}

programs_build() {
	local work=$1 name=$2 variant=$3 variant_opt variant_seed variant_base
	local lever dest src base log main rc
	programs_package "$name" >/dev/null || return 1
	programs_parse_variant "$variant" || return 1
	lever=$(programs_lever_build) || return 1
	work=$(mkdir -p "$work" && cd "$work" && pwd)
	dest=$work/$variant/$name
	main=$dest/$(binaries_$name | head -1)
	if [ -f "$dest/.lever-built" ] && [ -x "$main" ]; then
		echo "$main"
		return 0
	fi
	programs_fetch "$work" "$name" || return 1
	src=$(programs_source_dir "$work" "$name")
	base=$work/$variant_base/$name
	log=$dest.build.log
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	(
		export PATH=$lever/bin:$PATH MAKEFLAGS=-j${LEVER_PROGRAMS_JOBS:-2}
		unset LEVER_CC_RANDOMIZE_LINK CFLAGS CPPFLAGS LDFLAGS
		[ -n "$variant_seed" ] && export LEVER_CC_RANDOMIZE_LINK=$variant_seed
		if [ -n "$variant_seed" ] && [ -f "$base/.lever-built" ]; then
			# Same objects, new link: copy the tree, drop the binaries.
			cp -a "$base" "$dest" && cd "$dest" || exit 1
			binaries_$name | xargs rm -f
			link_$name "$dest" "$variant_opt"
		else
			cp -a "$src" "$dest" && cd "$dest" || exit 1 # -a: keep timestamps
			build_$name "$dest" "$variant_opt"
		fi
	) >"$log" 2>&1
	rc=$?
	[ "${PROGRAMS_VERBOSE:-0}" = 1 ] && cat "$log" >&2
	if [ $rc -ne 0 ] || [ ! -x "$main" ]; then
		tail -n 30 "$log" >&2
		programs_die "building $name ($variant) failed; full log: $log"
		return 1
	fi
	date -u +%FT%TZ >"$dest/.lever-built"
	echo "$main"
}

# A deterministic text of about BYTES bytes: words drawn by the Park-Miller
# generator (products below 2^53, so exact in every awk's doubles), with
# numbers and line breaks, so it compresses like text.
programs_make_input() {
	local bytes=$1 out=$2
	[ -s "$out" ] && return 0
	awk -v bytes="$bytes" 'BEGIN {
		n = split("the of and to in is that for it as was with be by on not he this " \
			"are or his from at which but have an they you were her she there been one " \
			"stabilizer layout cache random heap stack code function memory address " \
			"performance measurement interval seed program compiler linker table page " \
			"0 1 2 3 4 5 6 7 8 9 10 16 32 64 128 256 512 1024 4096 65536", w, " ")
		x = 12345; len = 0; col = 0
		while (len < bytes) {
			x = (x * 16807) % 2147483647
			word = w[int(x / 1024) % n + 1]
			if (x % 7 == 0)
				word = word sprintf("%d", x % 100000)
			printf "%s", word; len += length(word) + 1; col += length(word) + 1
			if (col > 60 + x % 17) { printf "\n"; col = 0 } else printf " "
		}
		printf "\n"
	}' >"$out.tmp" && mv "$out.tmp" "$out"
}

# Run one process of a workload through the launcher, if any.
programs_exec() {
	# shellcheck disable=SC2086 # the launcher is a list of words
	${LEVER_PROGRAMS_LAUNCHER:-} "$@"
}

# Input sizes: ci runs take at most ~0.3 s, bench runs ~1-2 s on the
# 2-core machine of the lever project.
programs_input_bytes() {
	local name=$1 size=$2
	case $name:$size in
	bzip2:ci) echo 400000 ;; bzip2:bench) echo 12000000 ;;
	xz:ci) echo 400000 ;; xz:bench) echo 8000000 ;;
	zstd:ci) echo 2000000 ;; zstd:bench) echo 40000000 ;;
	lz4:ci) echo 1000000 ;; lz4:bench) echo 20000000 ;;
	gzip:ci) echo 1000000 ;; gzip:bench) echo 16000000 ;;
	*) echo 0 ;;
	esac
}

# Compress INPUT with the given command into OUTFILE, decompress it again
# and check the round trip. The compressed bytes are the output that must be
# the same under every layout.
programs_round_trip() {
	local input=$1 outfile=$2 size=$3 decompress=$4
	shift 4
	programs_exec "$@" <"$input" >"$outfile" || return
	[ "$size" = bench ] && return 0 # bench: one measured process
	programs_exec $decompress <"$outfile" | cmp -s - "$input" || {
		printf 'programs.sh: %s: the round trip does not give back the input\n' "$1" >&2
		return 1
	}
}

programs_run() {
	local name=$1 bin=$2 size=$3 outfile=$4 inputs bytes input dir
	case $size in
	ci | bench) ;;
	*)
		programs_die "size '$size' is not ci or bench"
		return 2
		;;
	esac
	[ -x "$bin" ] || {
		programs_die "$name: no executable $bin"
		return 2
	}
	inputs=${LEVER_PROGRAMS_INPUTS:-${TMPDIR:-/tmp}/lever-programs-inputs}
	mkdir -p "$inputs"
	bytes=$(programs_input_bytes "$name" "$size")
	input=$inputs/text-v2-$bytes
	[ "$bytes" -gt 0 ] && { programs_make_input "$bytes" "$input" || return 2; }
	dir=$(dirname "$bin")
	case $name in
	bzip2) programs_round_trip "$input" "$outfile" "$size" "$bin -d -c" "$bin" -9 -c ;;
	xz)
		# Threaded: blocks of 64 KiB compressed by two threads.
		programs_round_trip "$input" "$outfile" "$size" "$bin -d -c -T2" \
			"$bin" -6 -c -T2 --block-size=65536
		;;
	zstd)
		# Threaded: two workers, 512 KiB jobs (two or more per run).
		programs_round_trip "$input" "$outfile" "$size" "$bin -q -d -c" \
			"$bin" -q -c -7 -T2 -B524288
		;;
	lz4) programs_round_trip "$input" "$outfile" "$size" "$bin -q -d -c" "$bin" -q -9 -c ;;
	gzip) programs_round_trip "$input" "$outfile" "$size" "$bin -d -c" "$bin" -9 -n -c ;;
	sqlite3) programs_run_sqlite3 "$bin" "$dir/sqlite3" "$size" "$outfile" ;;
	lua)
		local n=25000
		[ "$size" = bench ] && n=180000
		programs_exec "$bin" "$PROGRAMS_HERE/workloads/lua.lua" $n >"$outfile"
		;;
	bc)
		local digits=350
		[ "$size" = bench ] && digits=750
		programs_bc_script $digits | programs_exec "$bin" -q -l >"$outfile"
		;;
	*) programs_package "$name" >/dev/null || return 2 ;;
	esac
}

# pi, e, a square root, a logarithm and a power series to DIGITS digits.
programs_bc_script() {
	cat <<EOF
scale = $1
pi = 4 * a(1)
pi
e(1)
sqrt(2)
l(10)
define f(n) { auto i, s; s = 0; for (i = 1; i <= n; i++) s += 1 / (i * i); return s; }
f($1)
s(1) + c(1)
quit
EOF
}

# speedtest1 (its timings removed, its --verify hash kept) and an SQL script
# through the shell.
programs_run_sqlite3() {
	local speedtest=$1 shell=$2 size=$3 outfile=$4 n=12 rc
	[ "$size" = bench ] && n=60
	programs_exec "$speedtest" --memdb --verify --size $n --testset main >"$outfile.raw"
	rc=$?
	sed -e 's/\.\.\.*  *[0-9][0-9.]*s$/.../' -e '/^ *TOTAL/d' "$outfile.raw" >"$outfile"
	rm -f "$outfile.raw"
	[ $rc -eq 0 ] || return $rc
	[ "$size" = bench ] && return 0
	programs_sqlite3_script 3000 | programs_exec "$shell" -batch :memory: >>"$outfile"
}

programs_sqlite3_script() {
	cat <<EOF
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INT, name TEXT, val REAL);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $1)
INSERT INTO t SELECT i, i % 37, printf('n%08d', (i * 7919) % 100003), (i * 31 % 1009) / 7.0 FROM c;
CREATE INDEX t_grp ON t(grp, val);
SELECT grp, count(*), printf('%.6f', sum(val)), min(name), max(name) FROM t GROUP BY grp ORDER BY grp;
SELECT id, name, rank() OVER (PARTITION BY grp ORDER BY val DESC, id) AS r FROM t WHERE grp = 5 ORDER BY r, id LIMIT 20;
SELECT json_group_array(name) FROM (SELECT name FROM t ORDER BY name LIMIT 15);
CREATE TABLE log(id INT, old REAL, new REAL);
CREATE TRIGGER t_upd AFTER UPDATE ON t BEGIN INSERT INTO log VALUES (old.id, old.val, new.val); END;
SELECT count(*), sum(length(name)) FROM t WHERE name GLOB 'n0000*' OR name LIKE '%99%';
UPDATE t SET val = val * 2 WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), printf('%.4f', avg(val)), total(id) FROM t;
SELECT count(*), printf('%.4f', sum(new - old)) FROM log;
PRAGMA integrity_check;
EOF
}

programs_usage() {
	cat <<EOF
Usage: programs.sh list
       programs.sh fetch WORK NAME
       programs.sh build WORK NAME VARIANT
       programs.sh run NAME BIN SIZE OUTFILE

The eight real programs of Stabilizer's tests and experiments, from Debian
sources, built with lever cc: ${LEVER_PROGRAMS[*]}.

  list      print the names, one per line
  fetch     apt-get source of NAME into WORK/src (adds deb-src lines if apt
            has none; needs root then)
  build     build NAME into WORK/VARIANT/NAME (cached) and print the path of
            its main binary. VARIANT: lever (-O2), lever-O3 (-O3),
            lever-link=SEED, lever-O3-link=SEED (LEVER_CC_RANDOMIZE_LINK=SEED;
            relinks the variant without -link when it is built)
  run       run NAME's workload with BIN; SIZE is ci (at most ~0.3 s) or
            bench (~1-2 s, one measured process). The output that must be
            the same under every layout goes to OUTFILE; the exit status is
            the workload's

Environment: LEVER_BUILD (lever's build directory, default ./build of the
repository), LEVER_PROGRAMS_LAUNCHER (words put before each process of a
workload, e.g. "lever stabilize --code --seed=1 --"), LEVER_PROGRAMS_JOBS
(make -j, default 2), LEVER_PROGRAMS_INPUTS (where generated inputs are
cached, default \$TMPDIR/lever-programs-inputs), PROGRAMS_VERBOSE=1 (build
logs to stderr).
EOF
}

programs_main() {
	local cmd=${1:-}
	[ $# -gt 0 ] && shift
	case $cmd in
	-h | --help | help)
		programs_usage
		return 0
		;;
	list) printf '%s\n' "${LEVER_PROGRAMS[@]}" ;;
	fetch)
		[ $# -eq 2 ] || { programs_usage >&2 && return 2; }
		programs_fetch "$@"
		;;
	build)
		[ $# -eq 3 ] || { programs_usage >&2 && return 2; }
		programs_build "$@"
		;;
	run)
		[ $# -eq 4 ] || { programs_usage >&2 && return 2; }
		programs_run "$@"
		;;
	*)
		programs_usage >&2
		return 2
		;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -o pipefail
	programs_main "$@"
	exit
fi
