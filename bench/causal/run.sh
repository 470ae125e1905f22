#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/causal: accuracy and overhead of `lever causal`, side by side with Coz
# (Debian's coz-profiler 0.2.2), on the programs in bench/causal/programs.
#
#   bench/causal/run.sh [--quick] [-p PROGRAMS] [-o OUT.md] [-w WORKDIR] [-b BUILD2] BUILD
#
# BUILD        lever build directory (BUILD/bin/lever, BUILD/lib/lever/)
# --quick      CI-sized smoke run (seconds per program): 3 speedup levels,
#              3 truth runs, short profiles, 1 overhead round
# -p LIST      programs, comma-separated (default: all seven)
# -o OUT       the report (default bench/results/causal.md; --quick: WORKDIR/causal.md)
# -w WORKDIR   binaries, profiles and raw data (default BUILD/bench-causal);
#              the default report's raw data (WORKDIR/data) is also copied to
#              bench/results/causal-raw, to be committed with it
# -b BUILD2    also profile with a second lever build, in the same cycles
#              (before/after comparisons of the runtime; reported as lever2)
# --no-overhead / --no-accuracy   skip one half
# --report-only  recompute the predictions and the report from the profiles
#              and data kept in WORKDIR/data by an earlier run, or else in
#              bench/results/causal-raw (after a change to lever causal
#              report; nothing is built or run)
#
# Accuracy, per program:
#  1. two builds: lever's (-g -O2) and Coz's (-g -O2 -gdwarf-4
#     -gno-variable-location-views, the only DWARF Coz 0.2.2 reads), both with
#     frame pointers, both including Debian's /usr/include/coz.h;
#  2. the TRUE effect: the program run at --scale 1-s for each line speedup s
#     (repeated; median); program speedup = 1 - T_s/T_0 (throughput) or
#     (W_0 - W_s)/W_0 (mean latency the program measures);
#  3. lever causal and coz run, both with --fixed-line on the chosen line and
#     --fixed-speedup at each level; each tool's runs append to one profile.
#     Steps 2 and 3 are interleaved: in each of CYCLES cycles through the
#     levels (order rotated per cycle), each level gets its truth runs, one
#     lever run and one Coz run;
#  4. predictions from `lever causal report --json` for BOTH profiles (lever
#     reads Coz's format), or, while that option does not exist, from
#     analyze.py's own computation of the same numbers (spec coz.md §10);
#     analyze.py always computes it too, as a cross-check; and Coz's profile
#     once more with --method=coz-viewer: what Coz's own viewer shows;
#  5. absolute error per level and the mean absolute error per tool.
# Overhead, per program, the paper's four configurations, run alternately:
#  bare; start-up only (lever --sampler=none; Coz: see README); sampling with
#  0% speedups (--fixed-speedup 0); full profiling. Wall time, as ratios to
#  bare; experiments per minute from the full runs' profiles.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0 out="" work="" only="" do_acc=1 do_ovh=1 build2="" report_only=0
usage() { sed -n '4,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	-p) only=$2; shift ;;
	-o) out=$2; shift ;;
	-w) work=$2; shift ;;
	-b) build2=$(cd "$2" && pwd); shift ;;
	--no-overhead) do_ovh=0 ;;
	--no-accuracy) do_acc=0 ;;
	--report-only) report_only=1 ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || usage
build=$(cd "$1" && pwd)
lever=$build/bin/lever
[ -x "$lever" ] || { echo "run.sh: $lever is missing; build lever first" >&2; exit 1; }
lever2=${build2:+$build2/bin/lever}
[ -z "$lever2" ] || [ -x "$lever2" ] || { echo "run.sh: $lever2 is missing" >&2; exit 1; }
for tool in coz gcc python3; do
	command -v $tool >/dev/null || {
		echo "run.sh: $tool is missing (scripts/install-deps.sh --bench)" >&2
		exit 1
	}
done
[ -f /usr/include/coz.h ] || { echo "run.sh: /usr/include/coz.h is missing (coz-profiler)" >&2; exit 1; }
work=${work:-$build/bench-causal}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ -z "$out" ]; then
	if [ $quick = 1 ]; then out=$work/causal.md; else out=$repo/bench/results/causal.md; fi
fi

# name|kind|point|calibration rounds (all programs: --rounds R --scale S)
table="critical_path|throughput|round|40
pipeline|throughput|item|150
contention|throughput|round|150
phases|throughput|round|40
latency|latency|request|300
hash|throughput|batch|3000
library|throughput|round|30"
programs=()
while IFS='|' read -r name _; do
	if [ -z "$only" ] || [[ ",$only," == *",$name,"* ]]; then programs+=("$name"); fi
done <<<"$table"
[ ${#programs[@]} -gt 0 ] || { echo "run.sh: no program matches -p $only" >&2; exit 2; }
field() { grep "^$1|" <<<"$table" | cut -d'|' -f"$2"; }

if [ $quick = 1 ]; then
	levels=(0 50 100) truth_per_cycle=3 truth_s=0.4 profile_s=2 cycles=1 ovh_reps=1 ovh_s=1.5
else
	levels=(0 25 50 75 100) truth_per_cycle=${TRUTH_PER_CYCLE:-3} truth_s=${TRUTH_S:-0.5}
	profile_s=${PROFILE_S:-2} cycles=${CYCLES:-6} ovh_reps=${OVH_REPS:-3} ovh_s=${OVH_S:-2.5}
fi
truth_reps=$((truth_per_cycle * cycles))
data=$work/data
if [ $report_only = 1 ]; then
	# a fresh checkout has no WORKDIR: start from the committed raw data
	if [ ! -f "$data/meta.txt" ] && [ -f "$repo/bench/results/causal-raw/meta.txt" ]; then
		mkdir -p "$data"
		cp -r "$repo/bench/results/causal-raw/." "$data"/
	fi
	[ -f "$data/meta.txt" ] || { echo "run.sh: no earlier run's data in $data" >&2; exit 1; }
else
	rm -rf "$data"
fi
mkdir -p "$data" "$work/lever" "$work/coz"

# ---------------------------------------------------------------- build
cflags=(-O2 -Wall -fno-omit-frame-pointer -I"$here/programs")
build_copy() { # DIR EXTRA_FLAGS...
	local dir=$1
	shift
	# a frame pointer from the first instruction on, or the frame-pointer
	# call chain skips the in-scope caller's line (see libwork.c)
	gcc "${cflags[@]}" -fno-shrink-wrap -fno-optimize-sibling-calls "$@" -fPIC -shared \
		-o "$dir/libbenchwork.so" "$here/programs/libwork.c"
	for p in "${programs[@]}"; do
		local extra=()
		[ "$p" = library ] && extra=(-L"$dir" -lbenchwork -Wl,-rpath,"$dir")
		gcc "${cflags[@]}" "$@" -o "$dir/$p" "$here/programs/$p.c" "${extra[@]}" -ldl -pthread
	done
}
if [ $report_only = 0 ]; then
	echo "== building the programs in $work/{lever,coz}"
	build_copy "$work/lever" -g
	build_copy "$work/coz" -g -gdwarf-4 -gno-variable-location-views
fi

line_of() { grep -n 'LINE:chosen' "$here/programs/$1.c" | cut -d: -f1; }
now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.6f", b - a }'; }
# The measured value of one run's output: mean latency or elapsed time.
value_of() { # KIND OUTPUT
	if [ "$1" = latency ]; then
		sed -n 's/.* latency_ms=\([0-9.]*\).*/\1/p' <<<"$2"
	else
		sed -n 's/.* elapsed_s=\([0-9.]*\).*/\1/p' <<<"$2"
	fi
}
# Rounds for a bare run of about SECONDS, from one calibration run, and at
# least MIN (default 4).
calibrate() { # PROG CAL_ROUNDS SECONDS [MIN]
	local o e
	o=$("$work/lever/$1" --rounds "$2")
	e=$(sed -n 's/.* elapsed_s=\([0-9.]*\).*/\1/p' <<<"$o")
	awk -v r="$2" -v e="$e" -v s="$3" -v min="${4:-4}" \
		'BEGIN { n = int(r * s / e + 0.5); print n < min ? min : n }'
}
# A profile run is at one speedup, and `lever causal report` drops a speedup
# with fewer than 5 visits (its --min-visits), the 0% baseline included,
# which leaves no prediction at all. A run's experiments see only part of its
# rounds (none before the first experiment, nor in the last one, cut short
# by the exit): 10 rounds gave 3-4 visits (library, --quick, calibrated
# during a load burst). Four times the minimum keeps every level.
profile_min_rounds=20
# The level order of repetition REP: rotated, so each level runs early and late.
rotated() { # REP
	local n=${#levels[@]} i
	for ((i = 0; i < n; i++)); do printf '%s ' "${levels[$(((i + $1) % n))]}"; done
}

# The machine's load: 1-minute load average and CPU pressure (PSI "some",
# 60 s average: the share of time some runnable task waited for a CPU).
load_mark() { # PROG start|end
	local psi
	psi=$(sed -n 's/^some avg10=[0-9.]* avg60=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || true)
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(cut -d' ' -f1 /proc/loadavg)" "${psi:--}" >>"$data/load.tsv"
}

# ---------------------------------------------------------------- accuracy
accuracy() { # PROG
	local p=$1 kind point line rounds_t rounds_p o v c lvl scale
	kind=$(field "$p" 2) point=$(field "$p" 3) line=$(line_of "$p")
	rounds_t=$(calibrate "$p" "$(field "$p" 4)" "$truth_s")
	rounds_p=$(calibrate "$p" "$(field "$p" 4)" "$profile_s" "$profile_min_rounds")
	echo "== $p: chosen line $p.c:$line, $kind point '$point'; truth runs of $rounds_t rounds, profile runs of $rounds_p"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$kind" "$point" "$p.c:$line" "$rounds_t" "$rounds_p" >>"$data/programs.tsv"
	load_mark "$p" start
	# Truth runs and both tools' profile runs are interleaved in time, level by
	# level and cycle by cycle, so that the machine's drifting load (it is
	# shared) falls alike on what is measured and on what is predicted.
	for ((c = 0; c < cycles; c++)); do
		for lvl in $(rotated $c); do
			scale=$(awk -v l="$lvl" 'BEGIN { printf "%g", 1 - l / 100 }')
			for ((k = 0; k < truth_per_cycle; k++)); do
				o=$("$work/lever/$p" --rounds "$rounds_t" --scale "$scale")
				v=$(value_of "$kind" "$o")
				printf '%s\t%s\t%s\t%s\n' "$p" "$lvl" "$c.$k" "$v" >>"$data/truth.tsv"
			done
			"$lever" causal -o "$data/$p.lever.coz" --fixed-line "$p.c:$line" --fixed-speedup "$lvl" \
				-- "$work/lever/$p" --rounds "$rounds_p" >>"$data/$p.lever.out" 2>&1 ||
				echo "lever causal failed on $p at $lvl% (see $data/$p.lever.out)" >&2
			(cd "$data" && coz run --fixed-line "$here/programs/$p.c:$line" --fixed-speedup "$lvl" \
				-o "$data/$p.coz.coz" --- "$work/coz/$p" --rounds "$rounds_p") >>"$data/$p.coz.out" 2>&1 ||
				echo "coz run failed on $p at $lvl% (see $data/$p.coz.out)" >&2
			[ -z "$lever2" ] ||
				"$lever2" causal -o "$data/$p.lever2.coz" --fixed-line "$p.c:$line" --fixed-speedup "$lvl" \
					-- "$work/lever/$p" --rounds "$rounds_p" >>"$data/$p.lever2.out" 2>&1 ||
				echo "lever2 causal failed on $p at $lvl% (see $data/$p.lever2.out)" >&2
		done
	done
	load_mark "$p" end
	predict "$p"
}

# Both tools' predictions from their profiles, and analyze.py's cross-check.
predict() { # PROG
	local p=$1 tool prof
	for tool in lever coz ${lever2:+lever2}; do
		prof=$data/$p.$tool.coz
		[ -f "$prof" ] || : >"$prof"
		if [ "$json" = 1 ]; then
			"$lever" causal report --json --top 0 --min-speedups 2 "$prof" >"$data/$p.$tool.json" 2>"$data/$p.$tool.report.err" || true
		else
			python3 "$here/analyze.py" predict --min-speedups 2 "$prof" >"$data/$p.$tool.json"
		fi
		python3 "$here/analyze.py" predict --min-speedups 2 "$prof" >"$data/$p.$tool.check.json"
	done
	# Coz's profile as Coz's own viewer shows it (no phase correction, no
	# trimming): the column "Coz MAE (its viewer's method)"
	if [ "$viewer" = 1 ]; then
		"$lever" causal report --json --method=coz-viewer "$data/$p.coz.coz" \
			>"$data/$p.cozview.json" 2>"$data/$p.cozview.report.err" || true
		python3 "$here/analyze.py" predict --coz-viewer "$data/$p.coz.coz" >"$data/$p.cozview.check.json"
	fi
}

# ---------------------------------------------------------------- overhead
# One run of CONFIG, wall time from here; appends "prog config rep seconds experiments".
overhead_run() { # PROG CONFIG REP ROUNDS
	local p=$1 cfg=$2 rep=$3 rounds=$4 t0 dt exps=0 prof=$data/ovh-$1-$2-$3.coz
	rm -f "$prof"
	t0=$(now)
	case $cfg in
	bare) "$work/lever/$p" --rounds "$rounds" >/dev/null ;;
	bare0) "$work/lever/$p" --rounds 0 >/dev/null ;;
	bare-coz) "$work/coz/$p" --rounds "$rounds" >/dev/null ;;
	lever-startup) "$lever" causal --sampler=none -o "$prof" -- "$work/lever/$p" --rounds "$rounds" >/dev/null 2>&1 ;;
	lever-sampling) "$lever" causal --fixed-speedup 0 -o "$prof" -- "$work/lever/$p" --rounds "$rounds" >/dev/null 2>&1 ;;
	lever-full) "$lever" causal -o "$prof" -- "$work/lever/$p" --rounds "$rounds" >/dev/null 2>&1 ;;
	coz-startup0) (cd "$data" && coz run -o "$prof" --- "$work/coz/$p" --rounds 0) >/dev/null 2>&1 ;;
	coz-sampling) (cd "$data" && coz run --fixed-speedup 0 -o "$prof" --- "$work/coz/$p" --rounds "$rounds") >/dev/null 2>&1 ;;
	coz-full) (cd "$data" && coz run -o "$prof" --- "$work/coz/$p" --rounds "$rounds") >/dev/null 2>&1 ;;
	esac
	dt=$(elapsed_since "$t0")
	[ -f "$prof" ] && exps=$(grep -c '^experiment' "$prof" || true)
	printf '%s\t%s\t%s\t%s\t%s\n' "$p" "$cfg" "$rep" "$dt" "${exps:-0}" >>"$data/overhead.tsv"
	rm -f "$prof"
}

overhead() { # PROG
	local p=$1 rounds cfgs
	rounds=$(calibrate "$p" "$(field "$p" 4)" "$ovh_s")
	echo "== $p: overhead, runs of $rounds rounds (~${ovh_s} s bare), $ovh_reps round(s) of 9 configurations"
	cfgs=(bare lever-startup coz-startup0 lever-sampling coz-sampling lever-full coz-full bare0 bare-coz)
	for ((rep = 0; rep < ovh_reps; rep++)); do
		for cfg in "${cfgs[@]}"; do overhead_run "$p" "$cfg" "$rep" "$rounds"; done
	done
}

# The committed report keeps its raw data beside it, so that
# bench/results/regenerate.sh can rebuild it (analyze.py tables causal-raw):
# after a full run and after --report-only alike (which rewrites the
# predictions and meta.txt's "recomputed" line).
keep_raw() {
	[ "$out" = "$repo/bench/results/causal.md" ] || return 0
	[ "$data" -ef "$repo/bench/results/causal-raw" ] && return 0
	rm -rf "$repo/bench/results/causal-raw"
	cp -r "$data" "$repo/bench/results/causal-raw"
	echo "== raw data: $repo/bench/results/causal-raw"
}

viewer=0
"$lever" causal report --help 2>&1 | grep -q -- '--method' && viewer=1
if [ $report_only = 1 ]; then
	json=0
	"$lever" causal report --help 2>&1 | grep -q -- --json && json=1
	while IFS=$'\t' read -r p _; do predict "$p"; done <"$data/programs.tsv"
	sed -i '/^recomputed\t/d' "$data/meta.txt"
	printf 'recomputed\t%s with %s (checkout %s)\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
		"$("$lever" --version 2>/dev/null | head -n1)" \
		"$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)" >>"$data/meta.txt"
	python3 "$here/analyze.py" tables "$data" >"$out"
	keep_raw
	cat "$out"
	echo "== report: $out"
	exit 0
fi
json=0
"$lever" causal report --help 2>&1 | grep -q -- --json && json=1
echo "== predictions from: $([ $json = 1 ] && echo 'lever causal report --json' || echo 'analyze.py (lever causal report has no --json yet)')"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
lever_version=$("$lever" --version 2>/dev/null | head -n1)
lever_version="${lever_version:-lever} (checkout $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown))"
lever2_version=${lever2:+$("$lever2" --version 2>/dev/null | head -n1)}
t_start=$(now)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
if awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 0.5) }'; then
	echo "run.sh: warning: load average $load_before: the machine is not idle, and the truth" \
		"runs and profiles will carry its noise (see README.md)" >&2
	[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" != 1 ] ||
		echo "run.sh: warning: autogroup scheduling is on: nice does not shield these runs" \
			"from other sessions' work" >&2
fi
if [ $do_acc = 1 ]; then for p in "${programs[@]}"; do accuracy "$p"; done; fi
if [ $do_ovh = 1 ]; then for p in "${programs[@]}"; do overhead "$p"; done; fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

cat >"$data/meta.txt" <<EOF
started	$started
duration_s	$(elapsed_since "$t_start")
mode	$([ $quick = 1 ] && echo quick || echo full)
cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) vCPUs
kernel	$(uname -r)
os	$(. /etc/os-release && echo "$PRETTY_NAME")
gcc	$(gcc --version | head -n1)
coz	coz-profiler $(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null || echo unknown)
lever	$lever_version, $build
lever2	${build2:+$lever2_version, $build2}
predictions	$([ $json = 1 ] && echo 'lever causal report --json' || echo 'bench/causal/analyze.py (no --json in lever causal report yet)')
load	$load_before at start, $load_after at end (1/5/15-min load averages)
levels	${levels[*]}
truth_reps	$truth_reps
cycles	$cycles
ovh_reps	$ovh_reps
EOF
python3 "$here/analyze.py" tables "$data" >"$out"
keep_raw
cat "$out"
echo "== report: $out"
