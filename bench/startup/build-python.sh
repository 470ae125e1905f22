#!/bin/sh
# Build the CPython 3.11 interpreter from Debian's source package, with full
# debug info: the benchmark's target with more than 20 MB of DWARF (the
# sqlite3 shell has under 8 MB; see README.md).
#
#   bench/startup/build-python.sh [CACHE_DIR]
#
# CACHE_DIR (default $LEVER_STARTUP_CACHE, else /work/scratch/startup) gets:
#   src/python3.11-<ver>/   apt-get source python3.11
#   py-dwarf4/python        OPT=-O3 ... -g -gdwarf-4 -gno-variable-location-views
#   py-dwarf5/python        OPT=-O3 ... -g (GCC 12 default: DWARF 5)
#   py-sizes.txt            .debug_* byte totals
# Only `make python` (the interpreter with its built-in modules, no shared
# extension modules).  The interpreter runs from its build directory and finds
# the standard library in the source tree.  -O3 is CPython's own default OPT.
# Idempotent: a binary already present is not rebuilt.
set -eu

CACHE=${1:-${LEVER_STARTUP_CACHE:-/work/scratch/startup}}
CC=${CC:-gcc}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$CACHE/src"
CACHE=$(cd "$CACHE" && pwd)

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

need_pkg() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "build-python: installing:$missing" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
}

SRC=$(ls -d "$CACHE"/src/python3.11-*/ 2>/dev/null | head -n 1 || true)
if [ -z "$SRC" ]; then
	need_pkg dpkg-dev gcc make zlib1g-dev libffi-dev
	if ! apt-get source --print-uris python3.11 >/dev/null 2>&1; then
		echo "build-python: no deb-src entry; adding one for bookworm main" >&2
		$SUDO sh -c 'cat > /etc/apt/sources.list.d/lever-bench-src.sources' <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		$SUDO apt-get update -qq
	fi
	(cd "$CACHE/src" && apt-get source python3.11)
	SRC=$(ls -d "$CACHE"/src/python3.11-*/ | head -n 1)
fi
SRC=${SRC%/}

BASE="-DNDEBUG -fwrapv -O3 -Wall -fno-omit-frame-pointer"
build_one() { # dir, debug flags
	d="$CACHE/$1"
	[ -x "$d/python" ] && return 0
	need_pkg gcc make zlib1g-dev
	echo "build-python: $1: OPT=\"$BASE $2\"" >&2
	mkdir -p "$d"
	(cd "$d" && CC=$CC "$SRC/configure" --without-ensurepip >configure.log 2>&1 &&
		make -j"$JOBS" python OPT="$BASE $2" >make.log 2>&1) || {
		echo "build-python: $1 failed; see $d/configure.log, $d/make.log" >&2
		exit 1
	}
	echo "$SRC/configure --without-ensurepip && make python OPT=\"$BASE $2\"" >"$d/build.cmd"
}
build_one py-dwarf4 "-g -gdwarf-4 -gno-variable-location-views"
build_one py-dwarf5 "-g"

debug_bytes() { # sum of .debug_* section sizes
	s=0
	for h in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' | awk '$1 ~ /^\.debug_/ {print $5}'); do
		s=$((s + 0x$h))
	done
	echo $s
}
for b in py-dwarf4 py-dwarf5; do
	printf '%s file=%s debug=%s\n' "$b" "$(stat -c %s "$CACHE/$b/python")" "$(debug_bytes "$CACHE/$b/python")"
done >"$CACHE/py-sizes.txt"
cat "$CACHE/py-sizes.txt"
