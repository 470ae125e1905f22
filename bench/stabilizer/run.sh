#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Stabilizer's evaluation (paper §5, spec stabilizer.md §7) on real programs
# built from Debian sources with lever cc (bench/stabilizer/programs.sh):
#
#   table1    Table 1: per program, runs with one-time randomization vs runs
#             re-randomized (all three parts), interleaved; the largest run of
#             each cell dropped (as the authors' R scripts); Shapiro-Wilk per
#             cell, Brown-Forsythe between them, sd ratio: lever compare --suite
#   overhead  Fig. 6: link-randomized builds run plain (the baseline, several
#             link seeds) vs the same builds under heap, code, stack and all
#             three, re-randomized, interleaved; overhead = time(config) /
#             mean(time(link)) per program, median and worst across programs,
#             and counters of the worst program's runs (perf stat, code copies)
#   suite     §6: -O2 vs -O3 link-randomized builds under all randomizations,
#             interleaved; lever compare --suite with the within-subjects ANOVA
#
# All analysis is lever's own (lever compare --suite on CSV suite files,
# doc/formats/samples.md); this script runs the programs and assembles the
# report, bench/results/stabilizer.md, keeping the raw data beside it.
#
# usage: bench/stabilizer/run.sh [BUILD_DIR] [OPTIONS]   (see --help)
set -euo pipefail
export LC_ALL=C # $EPOCHREALTIME and awk with a decimal point
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck source=tables.sh
. "$here/tables.sh"

usage() {
	cat <<EOF
usage: bench/stabilizer/run.sh [BUILD_DIR] [OPTIONS]

Stabilizer's evaluation on the programs of bench/stabilizer/programs.sh:
Table 1 (normality), overhead per randomization, -O2 vs -O3 suite.
BUILD_DIR is lever's build directory (default: build).

  --parts LIST         table1,overhead,suite (default: all three)
  --programs LIST      comma-separated program names (default: all of
                       programs.sh's LEVER_PROGRAMS)
  --quick              2 programs, 5 runs per cell, 3 per overhead config
  --build-only         only build the variants the parts need (cached in
                       --work), e.g. before taking the benchmark lock
  -n, --runs N         runs per cell for table1 and suite (default 30)
  --suite-runs N       runs per cell for suite (default 15, or --runs if smaller)
  --overhead-runs N    runs per configuration for overhead (default 5)
  --link-seeds K       link-randomized builds per program and level: seeds
                       1..K, used in turn (default 3)
  --interval DUR       re-randomization interval of lever stabilize (default
                       50ms: bench runs take 1-2 s, so 20-40 periods a run)
  --overhead-interval DUR
                       the interval of the overhead part (default 500ms:
                       the runtime's default and the paper's; its cost per
                       period is fixed, so its share is ~1/interval)
  --cpus LIST          run every timed run under taskset -c LIST (the
                       runtime's threads included): no migrations, and on a
                       VM whose vCPUs' speeds differ and change (here by up
                       to 1.4x, one then the other) every run shares one
  --size SIZE          workload size of programs_run: bench (default) or ci
  --work DIR           where programs are fetched and built (default
                       /tmp/lever-stabilizer-bench)
  --out FILE           the report (default bench/results/stabilizer.md)
  --raw DIR            raw data (default: FILE without .md, plus -raw)
  --programs-sh FILE   the programs interface to source (default
                       bench/stabilizer/programs.sh; tests use a stand-in)
  -h, --help           show this help
EOF
}

build=build
parts=table1,overhead,suite
programs=
runs=30
suite_runs=
overhead_runs=5
link_seeds=3
interval=50ms
overhead_interval=500ms
cpus=
size=bench
work=/tmp/lever-stabilizer-bench
out=$top/bench/results/stabilizer.md
raw=
programs_sh=$here/programs.sh
quick=0
build_only=0
argv_text="$0 $*"

if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	build=$1
	shift
fi
while [ $# -gt 0 ]; do
	case $1 in
	--parts) parts=$2 && shift ;;
	--programs) programs=$2 && shift ;;
	--quick) quick=1 ;;
	--build-only) build_only=1 ;;
	-n | --runs) runs=$2 && shift ;;
	--suite-runs) suite_runs=$2 && shift ;;
	--overhead-runs) overhead_runs=$2 && shift ;;
	--link-seeds) link_seeds=$2 && shift ;;
	--interval) interval=$2 && shift ;;
	--overhead-interval) overhead_interval=$2 && shift ;;
	--cpus) cpus=$2 && shift ;;
	--size) size=$2 && shift ;;
	--work) work=$2 && shift ;;
	--out) out=$2 && shift ;;
	--raw) raw=$2 && shift ;;
	--programs-sh) programs_sh=$2 && shift ;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "run.sh: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
	shift
done
if [ $quick = 1 ]; then
	runs=5
	overhead_runs=3
fi
suite_runs=${suite_runs:-$((runs < 15 ? runs : 15))}
for v in "$runs" "$suite_runs" "$overhead_runs" "$link_seeds"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || {
		echo "run.sh: run and seed counts must be positive integers" >&2
		exit 2
	}
done
[ "$runs" -ge 4 ] && [ "$suite_runs" -ge 4 ] && [ "$overhead_runs" -ge 2 ] || {
	echo "run.sh: need --runs >= 4 (one is dropped, Shapiro-Wilk needs 3) and --overhead-runs >= 2" >&2
	exit 2
}

build=$(cd "$build" && pwd)
lever=$build/bin/lever
[ -x "$lever" ] || {
	echo "run.sh: no $lever; build lever first" >&2
	exit 1
}
[ -f "$programs_sh" ] || {
	echo "run.sh: no $programs_sh (the programs interface); skipping the Stabilizer evaluation" >&2
	exit 1
}
programs_sh=$(cd "$(dirname "$programs_sh")" && pwd)/$(basename "$programs_sh")
export PATH=$build/bin:$PATH LEVER_BUILD=$build
# shellcheck source=/dev/null
source "$programs_sh"

if [ -n "$programs" ]; then
	IFS=, read -r -a selected <<<"$programs"
else
	selected=("${LEVER_PROGRAMS[@]}")
	[ $quick = 1 ] && selected=("${selected[@]:0:2}")
fi
for p in "${selected[@]}"; do
	printf '%s\n' "${LEVER_PROGRAMS[@]}" | grep -qx -- "$p" || {
		echo "run.sh: unknown program '$p' (known: ${LEVER_PROGRAMS[*]})" >&2
		exit 2
	}
done
has_part() { [[ ",$parts," == *",$1,"* ]]; }
for p in ${parts//,/ }; do
	case $p in table1 | overhead | suite) ;; *)
		echo "run.sh: unknown part '$p' (table1, overhead, suite)" >&2
		exit 2
		;;
	esac
done

mkdir -p "$work" "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
raw=${raw:-${out%.md}-raw}
rm -rf "$raw"
mkdir -p "$raw/output"
work=$(cd "$work" && pwd)

note() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# ------------------------------------------------------------ builds

declare -A bin
build_variant() { # program variant
	local path
	path=$(programs_build "$work" "$1" "$2" | tail -n 1)
	[ -x "$path" ] || {
		echo "run.sh: programs_build $1 $2 gave no executable ('$path')" >&2
		exit 1
	}
	bin[$1/$2]=$path
}

build_programs() {
	local p s t0=$SECONDS
	for p in "${selected[@]}"; do
		note "fetch and build $p"
		programs_fetch "$work" "$p" >&2
		# the base builds first: programs.sh then only relinks for each link seed
		build_variant "$p" lever
		if has_part suite; then build_variant "$p" lever-O3; fi
		for s in $(seq "$link_seeds"); do
			if has_part overhead || has_part suite; then build_variant "$p" "lever-link=$s"; fi
			if has_part suite; then build_variant "$p" "lever-O3-link=$s"; fi
		done
	done
	build_seconds=$((SECONDS - t0))
}

# ------------------------------------------------------------ running

# Each run goes through programs.sh's LEVER_PROGRAMS_LAUNCHER: the words put
# before every process of the workload, here `lever stabilize OPTIONS
# --seed=N --` (nothing for bare runs), with `perf stat` in front when the
# counters are wanted (LEVER_BENCH_PERF: the file to append them to).
launcher() { # options seed
	local words=
	[ -n "$cpus" ] && words="taskset -c $cpus"
	if [ -n "${LEVER_BENCH_PERF:-}" ]; then
		words="$words perf stat -x, --append -o $LEVER_BENCH_PERF -e task-clock,page-faults,context-switches --"
	fi
	[ -n "$1" ] && words="$words $lever stabilize $1 --seed=$2 --"
	printf '%s\n' "$words"
}

seed_counter=0
# One timed run: program, binary, stabilize options (empty: bare), config
# label, CSV to append "program,seconds,label" to.
timed_run() {
	local p=$1 real=$2 opts=$3 label=$4 csv=$5 t0 t1 outfile words
	seed_counter=$((seed_counter + 1))
	words=$(launcher "$opts" "$seed_counter")
	outfile=$raw/output/$p.$label.out
	t0=$EPOCHREALTIME
	if ! LEVER_PROGRAMS_LAUNCHER=$words programs_run "$p" "$real" "$size" "$outfile" >/dev/null 2>"$raw/output/$p.$label.err"; then
		echo "run.sh: $p ($label, seed $seed_counter) failed:" >&2
		tail -n 5 "$raw/output/$p.$label.err" >&2
		exit 1
	fi
	t1=$EPOCHREALTIME
	printf '%s,%s,%s,%s,%s\n' "$p" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')" \
		"$label" "$seed_counter" "${real#"$work"/}" >>"$csv"
	# a randomization must not change what the program computes
	if [ -f "$raw/output/$p.reference" ]; then
		cmp -s "$outfile" "$raw/output/$p.reference" || echo "$p $label seed $seed_counter" >>"$raw/output-differs"
	else
		cp "$outfile" "$raw/output/$p.reference" 2>/dev/null || true
	fi
}

# Interleave: round i runs each configuration once, the order rotated by i.
interleaved() { # program rounds csv then "label|binary-variant|options" ...
	local p=$1 rounds=$2 csv=$3 i j k n variant cfg
	shift 3
	local configs=("$@")
	n=${#configs[@]}
	# one untimed run first: the workload's input is made and cached
	IFS='|' read -r label variant cfg <<<"${configs[0]}"
	variant=${variant//@/1}
	LEVER_PROGRAMS_LAUNCHER= programs_run "$p" "${bin[$p/$variant]}" "$size" "$raw/output/$p.warmup" \
		>/dev/null 2>&1 || true
	for i in $(seq 0 $((rounds - 1))); do
		for j in $(seq 0 $((n - 1))); do
			k=$(((i + j) % n))
			IFS='|' read -r label variant cfg <<<"${configs[$k]}"
			variant=${variant//@/$((i % link_seeds + 1))}
			timed_run "$p" "${bin[$p/$variant]}" "$cfg" "$label" "$csv"
		done
	done
}

# CSV suite file for lever compare: drop the seed column into a comment-free copy.
suite_csv() { # raw.csv -> suite.csv
	{
		echo "benchmark,time,config"
		cut -d, -f1-3 "$1"
	} >"${1%.raw.csv}.csv"
}

rerand="--interval=$interval"
perf_ok=0
perf stat -x, -o /dev/null -e task-clock,page-faults,context-switches -- true 2>/dev/null && perf_ok=1

# ------------------------------------------------------------ parts

run_table1() {
	local p t0=$SECONDS
	: >"$raw/table1.raw.csv"
	for p in "${selected[@]}"; do
		note "table1: $p, $runs runs one-time and $runs re-randomized, interleaved"
		interleaved "$p" "$runs" "$raw/table1.raw.csv" \
			"one-time|lever|--one-time" "re-randomized|lever|$rerand"
	done
	suite_csv "$raw/table1.raw.csv"
	# the same calls as bench/results/regenerate.sh's (tables.sh), in the raw
	# directory, so that what they print names no path of this machine
	stabilizer_table1 "$lever" "$raw" >"$raw/table1.md"
	(cd "$raw" && "$lever" compare --suite table1.csv --configs one-time,re-randomized \
		--drop-max) >"$raw/table1.txt"
	table1_seconds=$((SECONDS - t0))
}

overhead_configs=(heap code stack all)
overhead_opts() {
	case $1 in
	all) echo "--interval=$overhead_interval" ;;
	*) echo "--$1 --interval=$overhead_interval" ;;
	esac
}

run_overhead() {
	local p c t0=$SECONDS configs
	: >"$raw/overhead.raw.csv"
	configs=("link|lever-link=@|")
	for c in "${overhead_configs[@]}"; do configs+=("$c|lever-link=@|$(overhead_opts "$c")"); done
	for p in "${selected[@]}"; do
		note "overhead: $p, $overhead_runs runs each of link, heap, code, stack, all, interleaved"
		interleaved "$p" "$overhead_runs" "$raw/overhead.raw.csv" "${configs[@]}"
	done
	suite_csv "$raw/overhead.raw.csv"
	for c in "${overhead_configs[@]}"; do
		"$lever" compare --suite "$raw/overhead.csv" --configs "link,$c" --json >"$raw/overhead-$c.json"
		"$lever" compare --suite "$raw/overhead.csv" --configs "link,$c" \
			--export-markdown "$raw/overhead-$c.md" >"$raw/overhead-$c.txt"
	done
	overhead_causes
	overhead_seconds=$((SECONDS - t0))
}

# The worst program under all three: which single part costs most, and the
# counters of one run of each configuration (perf stat; code copies made).
overhead_causes() {
	local worst c f copies
	worst=$(jq -r '.time_ratio.max_benchmark' "$raw/overhead-all.json")
	: >"$raw/overhead-worst.txt"
	for c in link "${overhead_configs[@]}"; do
		f=$raw/overhead-worst-$c.perf
		local opts=""
		[ "$c" != link ] && opts=$(overhead_opts "$c")
		rm -f "$raw/code-log" "$f"
		LEVER_BENCH_PERF=$([ $perf_ok = 1 ] && echo "$f") LEVER_STABILIZE_CODE_LOG=$raw/code-log \
			timed_run "$worst" "${bin[$worst/lever-link=1]}" "$opts" "$c" "$raw/overhead-worst.csv"
		copies=$( [ -f "$raw/code-log" ] && wc -l <"$raw/code-log" || echo 0)
		[ -f "$f" ] || echo "# no perf" >"$f"
		# summed over the workload's processes
		awk -F, -v c="$c" -v copies="$copies" '
			$3 == "task-clock" { tc += $1; n++ } $3 == "page-faults" { pf += $1 }
			$3 == "context-switches" { cs += $1 }
			END { if (n) printf "| %s | %.1f | %d | %d | %d |\n", c, tc, pf, cs, copies
			      else printf "| %s | - | - | - | %d |\n", c, copies }' "$f" \
			>>"$raw/overhead-worst.txt"
	done
	worst_program=$worst
}

run_suite() {
	local p t0=$SECONDS
	: >"$raw/suite.raw.csv"
	for p in "${selected[@]}"; do
		note "suite: $p, $suite_runs runs each of -O2 and -O3 (link seeds 1..$link_seeds) under all randomizations, interleaved"
		interleaved "$p" "$suite_runs" "$raw/suite.raw.csv" \
			"O2|lever-link=@|$rerand" "O3|lever-O3-link=@|$rerand"
	done
	suite_csv "$raw/suite.raw.csv"
	stabilizer_suite_text "$lever" "$raw" >"$raw/suite.txt"
	(cd "$raw" && "$lever" compare --suite suite.csv --configs O2,O3 --drop-max \
		--export-markdown suite.md >/dev/null)
	suite_seconds=$((SECONDS - t0))
}

# ------------------------------------------------------------ report

# The table itself: bench/stabilizer/tables.sh (shared with
# bench/results/regenerate.sh, which rebuilds it from the raw data).
overhead_table() {
	stabilizer_overhead_table "$raw"
}

overhead_worst_text() {
	local p=$worst_program best_part ratio part r
	best_part=
	ratio=0
	for part in heap code stack; do
		r=$(jq -r --arg p "$p" '.benchmarks[] | select(.benchmark == $p) | .time_ratio' "$raw/overhead-$part.json")
		if awk -v a="$r" -v b="$ratio" 'BEGIN { exit !(a > b) }'; then
			ratio=$r
			best_part=$part
		fi
	done
	printf 'Worst program with all three parts: **%s** (%.3f). Its largest single part is **%s** (%.3f alone).\n\n' \
		"$p" "$(jq -r '.time_ratio.max' "$raw/overhead-all.json")" "$best_part" "$ratio"
	printf 'One run of %s (link seed 1) per configuration under `perf stat -e task-clock,page-faults,context-switches`; code copies = lines of the runtime'"'"'s code log (`LEVER_STABILIZE_CODE_LOG`):\n\n' "$p"
	printf '| config | task-clock ms | page faults | context switches | code copies |\n|---|--:|--:|--:|--:|\n'
	cat "$raw/overhead-worst.txt"
}

machine() {
	printf -- '- machine: %s, %s CPUs (%s), %s\n' "$(uname -srm)" "$(nproc)" \
		"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
		"$(grep -m1 MemTotal /proc/meminfo | awk '{ printf "%.1f GiB RAM", $2 / 1048576 }')"
	printf -- '- date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf -- '- timed runs %s\n' \
		"$([ -n "$cpus" ] && echo "pinned to CPU(s) $cpus (\`taskset -c $cpus\`), the runtime's threads too" || echo "not pinned")"
	printf -- '- lever: %s (%s)\n' "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$build"
	printf -- '- programs.sh: %s (%s)\n' "$programs_sh" \
		"$(git -C "$(dirname "$programs_sh")" log -1 --format=%h -- "$programs_sh" 2>/dev/null || echo 'not in git')"
	printf -- '- programs: %s; workload size %s\n' "${selected[*]}" "$size"
	printf -- '- command: `%s`\n' "$argv_text"
	printf -- '- raw data: `%s` (CSV suite files; the raw ones have the seed and binary of each run as 4th and 5th columns, lever compare outputs, perf counters)\n' "$raw"
}

write_report() {
	{
		echo "# Stabilizer evaluation: Table 1, overhead, -O2 vs -O3"
		echo
		echo "Written by \`bench/stabilizer/run.sh\`; the analysis is \`lever compare --suite\` on the CSV files in the raw data directory."
		echo "Times are the wall time of each run of \`programs_run\` (bash \`\$EPOCHREALTIME\` around it; at size bench that is one process of the program), after one untimed run per program and part."
		echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
		echo
		machine
		printf -- '- re-randomization interval: %s (`lever stabilize --interval=%s`), %s in the overhead part; build time %s s\n' \
			"$interval" "$interval" "$overhead_interval" "${build_seconds:-0}"
		if [ -s "$raw/output-differs" ]; then
			printf -- '- **outputs differing from the first run of the program: %s runs** (%s; list in `output-differs`): a randomization changed what the program computes\n' \
				"$(wc -l <"$raw/output-differs")" "$(awk '{ print $1 " " $2 }' "$raw/output-differs" | sort | uniq -c | awk '{ printf "%s%s %s x%s", NR > 1 ? ", " : "", $2, $3, $1 }')"
		else
			printf -- '- every run wrote the same output as the first run of its program\n'
		fi
		if has_part table1; then
			echo
			echo "## Table 1: normality, one-time vs re-randomized (paper §5.1)"
			echo
			echo "$runs runs per cell, one-time (\`lever stabilize --one-time\`, heap, code and stack) and re-randomized (\`lever stabilize $rerand\`) interleaved, each with a fresh seed, on the \`lever\` build of each program; the largest run of each cell dropped, as the authors' R scripts did. ${table1_seconds} s."
			echo
			echo "\`lever compare --suite table1.csv --configs one-time,re-randomized --drop-max --export-markdown table1.md\`:"
			echo
			cat "$raw/table1.md"
		fi
		if has_part overhead; then
			echo
			echo "## Overhead per randomization (paper §5.2, Fig. 6)"
			echo
			echo "time(config) / mean(time(link)) per program, where link = the link-randomized builds (seeds 1..$link_seeds, used in turn) run bare, and each configuration runs the same builds under \`lever stabilize\` re-randomized every $overhead_interval (\`--interval=$overhead_interval\`): heap = \`--heap\`, code = \`--code\`, stack = \`--stack\`, all = all three. $overhead_runs runs per configuration, interleaved; no run dropped. ${overhead_seconds} s. Paper: median 6.7% (all), below 40% for every benchmark."
			echo
			overhead_table
			echo
			overhead_worst_text
			echo
			echo "Per configuration: \`lever compare --suite overhead.csv --configs link,CONFIG\` (overhead-CONFIG.md in the raw data)."
		fi
		if has_part suite; then
			echo
			echo "## -O2 vs -O3 under Stabilizer (paper §6)"
			echo
			echo "$suite_runs runs per cell of the \`lever-link=N\` (-O2) and \`lever-O3-link=N\` builds (link seeds 1..$link_seeds in turn), all under \`lever stabilize $rerand\`, interleaved; the largest run of each cell dropped. ${suite_seconds} s."
			echo
			echo "\`lever compare --suite suite.csv --configs O2,O3 --drop-max\`:"
			echo
			echo '```'
			cat "$raw/suite.txt"
			echo '```'
		fi
	} >"$out"
}

t_start=$SECONDS
build_programs
if [ $build_only = 1 ]; then
	note "built in $build_seconds s (--build-only)"
	exit 0
fi
planned=0
has_part table1 && planned=$((planned + 2 * runs * ${#selected[@]}))
has_part overhead && planned=$((planned + 5 * overhead_runs * ${#selected[@]} + 5))
has_part suite && planned=$((planned + 2 * suite_runs * ${#selected[@]}))
note "built in $build_seconds s; $planned timed runs to go"
if has_part table1; then run_table1; fi
if has_part overhead; then run_overhead; fi
if has_part suite; then run_suite; fi
write_report
note "done in $((SECONDS - t_start)) s: $out"
