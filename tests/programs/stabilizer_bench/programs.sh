# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash
# A stand-in for bench/stabilizer/programs.sh with the same interface, for the
# smoke test of bench/stabilizer/run.sh (tests/e2e/stabilizer_bench.sh): two
# "programs" from bench_work.c, built with lever cc in seconds instead of
# Debian sources in minutes. Needs lever-cc on PATH (run.sh puts it there).
LEVER_PROGRAMS=(calls allocs)
stand_in_src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bench_work.c

programs_fetch() { # WORK NAME: nothing to fetch
	mkdir -p "$1"
}

# WORK NAME VARIANT: lever, lever-link=SEED, lever-O3, lever-O3-link=SEED;
# prints the binary's path; cached. The "O3" builds are -O2 plus two of
# -O3's additions: with full -O3, bench_work calls ran over 1000 times slower
# under lever stabilize --code with the code trap that clobbered r11 (fixed on
# branch stab-progs, 820eb12); plain -O3 can come back once that is merged.
programs_build() {
	local work=$1 name=$2 variant=$3 flags=(-O2) out
	out=$work/$name-${variant//=/}
	case $variant in
	lever) ;;
	lever-link=*) flags+=("--randomize-link=${variant#lever-link=}") ;;
	lever-O3) flags=(-O2 -finline-functions -fipa-cp-clone) ;;
	lever-O3-link=*)
		flags=(-O2 -finline-functions -fipa-cp-clone "--randomize-link=${variant#lever-O3-link=}")
		;;
	*)
		echo "programs_build: unknown variant '$variant'" >&2
		return 1
		;;
	esac
	[ -x "$out" ] || lever-cc "${flags[@]}" "$stand_in_src" -o "$out" >&2 || return 1
	echo "$out"
}

# NAME BIN SIZE OUTFILE: ci runs take some 10 ms, bench runs some 100 ms;
# LEVER_PROGRAMS_LAUNCHER: words put before the process (as programs.sh).
programs_run() {
	local rounds=2
	[ "$3" = bench ] && rounds=20
	# shellcheck disable=SC2086 # the launcher is a list of words
	${LEVER_PROGRAMS_LAUNCHER:-} "$2" "$1" "$rounds" >"$4"
}
