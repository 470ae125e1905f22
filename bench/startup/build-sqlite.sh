#!/bin/sh
# Build the sqlite3 shell from Debian's source package, with full debug info,
# as the target of the start-up cost benchmark (issue 2).
#
#   bench/startup/build-sqlite.sh [CACHE_DIR]
#
# CACHE_DIR (default $LEVER_STARTUP_CACHE, else /work/scratch/startup) gets:
#   src/sqlite3-<ver>/       apt-get source sqlite3 (bookworm: 3.40.1)
#   amalg/                   configure + `make sqlite3.c shell.c` (needs tclsh)
#   bin/sqlite3-dwarf4       -O2 -g -gdwarf-4 -gno-variable-location-views
#                            (the only debug flavour Coz 0.2.2 can read)
#   bin/sqlite3-dwarf5       -O2 -g (GCC 12 default: DWARF 5), lever only
#   bin/sizes.txt            .debug_* byte totals of each binary
# Both variants also get -fno-omit-frame-pointer.  The -D options are those of
# Debian's debian/rules, so the binary is the one Debian ships, modulo debug
# flags and being linked statically against its own amalgamation.
#
# Idempotent: a binary already present is not rebuilt (delete it to force).
# Needs deb-src entries in apt's sources; as root, adds them for bookworm main
# if `apt-get source` cannot find the package.
set -eu

CACHE=${1:-${LEVER_STARTUP_CACHE:-/work/scratch/startup}}
CC=${CC:-gcc}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$CACHE/src" "$CACHE/bin"
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
	echo "build-sqlite: installing:$missing" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
}

# --- 1. source ------------------------------------------------------------
SRC=$(ls -d "$CACHE"/src/sqlite3-*/ 2>/dev/null | head -n 1 || true)
if [ -z "$SRC" ]; then
	need_pkg dpkg-dev tcl gcc make
	if ! apt-get source --print-uris sqlite3 >/dev/null 2>&1; then
		echo "build-sqlite: no deb-src entry; adding one for bookworm main" >&2
		$SUDO sh -c 'cat > /etc/apt/sources.list.d/lever-bench-src.sources' <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		$SUDO apt-get update -qq
	fi
	(cd "$CACHE/src" && apt-get source sqlite3)
	SRC=$(ls -d "$CACHE"/src/sqlite3-*/ | head -n 1)
fi
SRC=${SRC%/}

# --- 2. amalgamation --------------------------------------------------------
AM="$CACHE/amalg"
if [ ! -f "$AM/sqlite3.c" ] || [ ! -f "$AM/shell.c" ]; then
	need_pkg tcl gcc make
	mkdir -p "$AM"
	(cd "$AM" && "$SRC/configure" --disable-tcl >configure.log 2>&1 &&
		make -j"$JOBS" sqlite3.c shell.c >make.log 2>&1) || {
		echo "build-sqlite: amalgamation failed; see $AM/configure.log, $AM/make.log" >&2
		exit 1
	}
fi

# --- 3. the shell, two debug flavours -------------------------------
DEFS="-DSQLITE_SECURE_DELETE -DSQLITE_ENABLE_COLUMN_METADATA
 -DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS3_PARENTHESIS
 -DSQLITE_ENABLE_RTREE=1 -DSQLITE_SOUNDEX=1 -DSQLITE_ENABLE_UNLOCK_NOTIFY
 -DSQLITE_OMIT_LOOKASIDE=1 -DSQLITE_ENABLE_DBSTAT_VTAB
 -DSQLITE_ALLOW_ROWID_IN_VIEW -DSQLITE_ENABLE_UPDATE_DELETE_LIMIT=1
 -DSQLITE_ENABLE_LOAD_EXTENSION -DSQLITE_ENABLE_JSON1
 -DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_THREADSAFE=1
 -DSQLITE_ENABLE_FTS3_TOKENIZER=1 -DSQLITE_USE_URI=1
 -DSQLITE_MAX_SCHEMA_RETRY=25 -DSQLITE_ENABLE_PREUPDATE_HOOK
 -DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_STMTVTAB
 -DSQLITE_MAX_VARIABLE_NUMBER=250000
 -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_MATH_FUNCTIONS"
BASE="-O2 -fno-strict-aliasing -fno-omit-frame-pointer"
LIBS="-lpthread -ldl -lm"

build_one() { # name, debug flags
	out="$CACHE/bin/$1"
	[ -x "$out" ] && return 0
	echo "build-sqlite: $1: $CC $BASE $2 ..." >&2
	# shellcheck disable=SC2086
	(cd "$AM" && $CC $BASE $2 $DEFS -I. -o "$out.tmp" sqlite3.c shell.c $LIBS)
	mv "$out.tmp" "$out"
	echo "$CC $BASE $2 $(echo $DEFS) -I. -o $1 sqlite3.c shell.c $LIBS" >"$out.cmd"
}

# Run the builds two at a time; each is a single ~9 MB translation unit.
build_one sqlite3-dwarf4 "-g -gdwarf-4 -gno-variable-location-views" &
p1=$!
build_one sqlite3-dwarf5 "-g" &
p2=$!
wait $p1
wait $p2

# --- 4. sizes ---------------------------------------------------------------
debug_bytes() { # sum of .debug_* section sizes (mawk has no strtonum)
	s=0
	for h in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' | awk '$1 ~ /^\.debug_/ {print $5}'); do
		s=$((s + 0x$h))
	done
	echo $s
}
{
	for b in sqlite3-dwarf4 sqlite3-dwarf5; do
		f="$CACHE/bin/$b"
		printf '%s file=%s debug=%s\n' "$b" "$(stat -c %s "$f")" "$(debug_bytes "$f")"
	done
} >"$CACHE/bin/sizes.txt"
cat "$CACHE/bin/sizes.txt"
