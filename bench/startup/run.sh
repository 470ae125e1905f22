#!/bin/bash
# Start-up cost of `lever causal` against `coz run` (issue 2): time from exec
# to the program's first useful work, on binaries with large debug info.
#
#   bench/startup/run.sh [-o OUT.md] [-r RUNS] [-t TARGETS] BUILD [CACHE_DIR]
#   bench/startup/run.sh -R [-o OUT.md]     (the report from the raw data only)
#
# BUILD      lever build directory (BUILD/bin/lever, BUILD/lib/lever/
#            liblever-causal.so).  If lever or its runtime is missing, the
#            lever rows are skipped and the report says so.
# CACHE_DIR  where the targets are built (default $LEVER_STARTUP_CACHE, else
#            /work/scratch/startup); missing ones are built by
#            build-sqlite.sh / build-python.sh beside this script (apt-get
#            source, so deb-src is needed; those scripts add it as root).
# -o OUT     report (default bench/results/startup.md in this checkout)
# -r RUNS    measured runs per command (default 10; warm-up 2)
# -t LIST    targets, comma-separated: sqlite3,python (default both)
# -R         report only: rebuild OUT from its raw data (bench/results/
#            regenerate.sh does), nothing is run
#
# Raw data: OUT without .md plus -raw (bench/results/startup-raw/, or
# STARTUP_RAW): hyperfine's JSON exports (hf-TARGET-ROUND.json), the probe
# times (probe-TARGET.tsv: command, clock before the start, clock printed),
# lever's -v lines (lever-v-TARGET.tsv), each target's binary facts
# (info-TARGET), and the report's machine and command-line sections as they
# were at the run (header.md, commands.md, meta).
#
# Each target exists twice: built with -gdwarf-4 -gno-variable-location-views
# (the only debug format Coz 0.2.2 handles: DWARF 5 aborts it, DWARF 4 with
# location views makes it record nothing) and with GCC's default DWARF 5
# (lever only).  Commands, per target:
#   bare4 / bare5   the binary alone
#   coz             coz run --- BIN4 ARGS        (Debian's coz-profiler)
#   coz-preload     libcoz.so by LD_PRELOAD, no Python launcher (what
#                   `coz run` costs beyond its launcher)
#   lever4 / lever5 BUILD/bin/lever causal -- BIN ARGS
# Three measurements:
#  1. wall time, exec to exit (hyperfine; the commands are interleaved in
#     rounds of RUNS/ROUNDS runs each so drift hits all of them alike);
#  2. exec to first user code: the program prints the wall clock as its first
#     act (sqlite3: a SELECT of julianday('now'), ms resolution; python: 
#     time.time()), minus the clock read just before the command is started;
#     commands alternate run by run.  Coz starts sampling after building its
#     line map and before main, so this bounds its exec-to-first-sample;
#  3. lever's own report: with -v the runtime prints
#     "lever: first sample at <N> us after exec" (and "... line map ready after
#     <N> us"); collected over RUNS runs when present.  These runs use a
#     workload of ~50 ms CPU (SAMPLED below), since `select 1;` ends before
#     the first 1 ms sample is due and so prints no such line.
# start-up cost = tool's time - the bare binary's time; the ratio column is
# lever's cost / coz's cost.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT="$REPO/bench/results/startup.md"
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
TARGETS=sqlite3,python
REPORT_ONLY=0
while getopts "o:r:t:Rh" opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	t) TARGETS=$OPTARG ;;
	R) REPORT_ONLY=1 ;;
	*) sed -n '2,52p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
RAW=${STARTUP_RAW:-${OUT%.md}-raw}

# ---------------------------------------------------------------- report
# Everything below reads RAW only, so that -R rebuilds the same report.
report() {
	local targets lever_ok
	targets=$(sed -n 's/^targets=//p' "$RAW/meta")
	lever_ok=$(sed -n 's/^lever_ok=//p' "$RAW/meta")
	cat "$RAW/header.md"
	python3 "$HERE/report.py" "$RAW" "$targets" "$lever_ok"
	cat "$RAW/commands.md"
}
if [ $REPORT_ONLY = 1 ]; then
	[ -f "$RAW/meta" ] || { echo "run.sh: no raw data in $RAW" >&2; exit 1; }
	report >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	echo "run.sh: wrote $OUT from $RAW" >&2
	exit 0
fi
[ $# -ge 1 ] || { echo "usage: $0 [-o OUT] [-r RUNS] [-t TARGETS] BUILD [CACHE_DIR]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
CACHE=${2:-${LEVER_STARTUP_CACHE:-/work/scratch/startup}}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
ROUNDS=${ROUNDS:-5}
[ "$RUNS" -lt $((2 * ROUNDS)) ] && ROUNDS=$((RUNS / 2))
[ "$ROUNDS" -ge 1 ] || ROUNDS=1
PER_ROUND=$(((RUNS + ROUNDS - 1) / ROUNDS))

for tool in hyperfine coz python3 readelf; do
	command -v $tool >/dev/null || {
		echo "run.sh: $tool is missing (apt-get install hyperfine coz-profiler python3 binutils)" >&2
		exit 1
	}
done
LIBCOZ=$(dpkg -L coz-profiler 2>/dev/null | grep '/libcoz\.so$' | head -n 1 || true)
[ -n "$LIBCOZ" ] || LIBCOZ=/usr/lib/coz-profiler/libcoz.so

# ---------------------------------------------------------------- targets
declare -A BIN4 BIN5 ARGS PROBE SAMPLED
IFS=, read -r -a TLIST <<<"$TARGETS"
for t in "${TLIST[@]}"; do
	case $t in
	sqlite3)
		BIN4[$t]=$CACHE/bin/sqlite3-dwarf4
		BIN5[$t]=$CACHE/bin/sqlite3-dwarf5
		ARGS[$t]=":memory: 'select 1;'"
		PROBE[$t]=":memory: \"select printf('%.6f',(julianday('now')-2440587.5)*86400.0);\""
		SAMPLED[$t]=":memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000) SELECT count(*) FROM c;'"
		[ -x "${BIN4[$t]}" ] && [ -x "${BIN5[$t]}" ] || "$HERE/build-sqlite.sh" "$CACHE"
		;;
	python)
		BIN4[$t]=$CACHE/py-dwarf4/python
		BIN5[$t]=$CACHE/py-dwarf5/python
		ARGS[$t]="-c pass"
		PROBE[$t]="-c 'import time; print(\"%.6f\" % time.time())'"
		SAMPLED[$t]="-c 'sum(range(2000000))'"
		[ -x "${BIN4[$t]}" ] && [ -x "${BIN5[$t]}" ] || "$HERE/build-python.sh" "$CACHE"
		;;
	*) echo "run.sh: unknown target $t" >&2; exit 2 ;;
	esac
done

# ---------------------------------------------------------------- lever
LEVER="$BUILD/bin/lever"
LEVER_OK=0
LEVER_NOTE=""
if [ ! -x "$LEVER" ]; then
	LEVER_NOTE="$LEVER does not exist"
elif ! "$LEVER" causal -o /dev/null -- /bin/true >/dev/null 2>"$CACHE/.lever-check.err"; then
	LEVER_NOTE="\`lever causal -- /bin/true\` failed: $(head -n 2 "$CACHE/.lever-check.err" | tr '\n' ' ')"
else
	LEVER_OK=1
fi
[ $LEVER_OK = 1 ] || echo "run.sh: lever rows skipped: $LEVER_NOTE" >&2

mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
RAW=$(mkdir -p "$RAW" && cd "$RAW" && pwd)
rm -f "$RAW"/*
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lever-startup.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" # coz and lever write ./profile.coz (so does coz-preload, below)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

debug_bytes() { # sum of the .debug_* section sizes
	local s=0 name size
	while read -r name size; do
		s=$((s + 0x$size))
	done < <(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' | awk '$1 ~ /^\.debug_/ {print $1, $5}')
	echo $s
}
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# Command lines of a target, in a fixed order: name<TAB>command.
commands() { # target, args
	local t=$1 a=$2
	printf 'bare4\t%s %s\n' "${BIN4[$t]}" "$a"
	printf 'bare5\t%s %s\n' "${BIN5[$t]}" "$a"
	printf 'coz\tcoz run --- %s %s\n' "${BIN4[$t]}" "$a"
	printf 'coz-preload\tenv LD_PRELOAD=%s COZ_BINARY_SCOPE=MAIN COZ_SOURCE_SCOPE=%% COZ_PROGRESS_POINTS= COZ_OUTPUT=profile-preload.coz %s %s\n' \
		"$LIBCOZ" "${BIN4[$t]}" "$a"
	if [ $LEVER_OK = 1 ]; then
		printf 'lever4\t%s causal -- %s %s\n' "$LEVER" "${BIN4[$t]}" "$a"
		printf 'lever5\t%s causal -- %s %s\n' "$LEVER" "${BIN5[$t]}" "$a"
	fi
}

# ---------------------------------------------------------------- measure
for t in "${TLIST[@]}"; do
	echo "run.sh: $t" >&2
	mapfile -t CMDS < <(commands "$t" "${ARGS[$t]}")
	mapfile -t PCMDS < <(commands "$t" "${PROBE[$t]}")

	# sanity: does coz build its line map for this binary?
	rm -f profile.coz
	eval "coz run --- ${BIN4[$t]} ${ARGS[$t]}" >/dev/null 2>"$WORK/coz-$t.err" || true
	{
		echo "binary_dwarf4=${BIN4[$t]}"
		echo "binary_dwarf5=${BIN5[$t]}"
		echo "size4=$(stat -c %s "${BIN4[$t]}") debug4=$(debug_bytes "${BIN4[$t]}")"
		echo "size5=$(stat -c %s "${BIN5[$t]}") debug5=$(debug_bytes "${BIN5[$t]}")"
		if grep -q 'Including lines from executable' "$WORK/coz-$t.err"; then
			echo "coz_map=yes"
		else
			echo "coz_map=no ($(grep -v 'is not in scope' "$WORK/coz-$t.err" | tail -n 1 | tr -d '\033' | cut -c1-120))"
		fi
		echo "coz_profile=$(grep -c '^runtime' profile.coz 2>/dev/null || echo 0) runtime record(s)"
	} >"$RAW/info-$t"

	# 1. wall time, hyperfine, interleaved rounds
	for ((r = 1; r <= ROUNDS; r++)); do
		w=0
		[ "$r" = 1 ] && w=$WARMUP
		hf=(hyperfine -N -r "$PER_ROUND" -w "$w" --style none -i --export-json "$RAW/hf-$t-$r.json")
		args=()
		for c in "${CMDS[@]}"; do args+=(-n "${c%%$'\t'*}" "${c#*$'\t'}"); done
		"${hf[@]}" "${args[@]}" >/dev/null 2>>"$WORK/hyperfine.err"
	done

	# 2. exec to first user code, alternating run by run
	: >"$RAW/probe-$t.tsv"
	for ((i = 0; i < RUNS; i++)); do
		for c in "${PCMDS[@]}"; do
			name=${c%%$'\t'*}
			cmd=${c#*$'\t'}
			t0=$EPOCHREALTIME
			v=$(eval "$cmd" 2>/dev/null | tail -n 1) || true
			printf '%s\t%s\t%s\n' "$name" "$t0" "$v" >>"$RAW/probe-$t.tsv"
		done
	done

	# 3. lever's own "first sample at N us after exec"
	: >"$RAW/lever-v-$t.tsv"
	if [ $LEVER_OK = 1 ]; then
		for ((i = 0; i < RUNS; i++)); do
			for v in 4 5; do
				b=${BIN4[$t]}
				[ $v = 5 ] && b=${BIN5[$t]}
				eval "\"$LEVER\" causal -v -- $b ${SAMPLED[$t]}" 2>&1 >/dev/null |
					sed -n 's/.*first sample at \([0-9]*\) us after exec.*/exec\t\1/p;
					        s/.*first sample at \([0-9]*\) us after the runtime started; line map ready after \([0-9]*\) us.*/rt\t\1\t\2/p' |
					sed "s/^/lever$v\t/" >>"$RAW/lever-v-$t.tsv" || true
			done
		done
	fi
done

# ---------------------------------------------------------------- raw report sections
{
	echo "# Start-up cost: lever causal vs coz run"
	echo
	echo "Generated by \`bench/startup/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); raw data in"
	echo "\`$(basename "$RAW")/\` beside this file, from which \`bench/startup/run.sh -R\` rebuilds it."
	echo
	echo "## Machine"
	echo
	echo "- CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores visible"
	echo "- memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "- OS: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
	echo "- compiler: $(gcc --version | head -n 1)"
	echo "- coz-profiler $(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null), $(hyperfine --version)"
	echo "- lever: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown), build $BUILD"
	[ $LEVER_OK = 1 ] || echo "- **lever rows skipped**: $LEVER_NOTE"
	echo "- runs: $RUNS per command (hyperfine, $ROUNDS interleaved rounds, $WARMUP warm-up runs in the first)"
	echo "- load average (1, 5, 15 min): $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end ($(nproc) vCPUs; shared with other work unless it says 0.0: a rerun on an idle machine is due)"
	[ -z "${STARTUP_NOTE:-}" ] || echo "- note: $STARTUP_NOTE"
} >"$RAW/header.md"
{
	echo
	echo "## Command lines"
	echo
	for t in "${TLIST[@]}"; do
		echo "$t:"
		echo
		commands "$t" "${ARGS[$t]}" | sed 's/^\([^\t]*\)\t\(.*\)/- \1: `\2`/'
		echo
		echo "$t, first-user-code probe: the same with arguments \`${PROBE[$t]}\`"
		echo
		echo "$t, lever -v runs: \`lever causal -v -- BIN ${SAMPLED[$t]}\`"
		echo
	done
	echo "Start-up cost = the command's mean minus the mean of the bare binary with"
	echo "the same debug info (bare4 for coz, coz-preload and lever4; bare5 for lever5)."
	echo "Coz can only read the DWARF 4 binary, so both lever rows are compared with"
	echo "coz's cost on DWARF 4."
} >"$RAW/commands.md"
printf 'targets=%s\nlever_ok=%s\n' "$TARGETS" "$LEVER_OK" >"$RAW/meta"
report >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "run.sh: wrote $OUT (raw data: $RAW)" >&2
