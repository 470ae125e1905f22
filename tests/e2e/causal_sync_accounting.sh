#!/usr/bin/env bash
# Delay accounting around blocking calls (paper §3.4.1: pay before waking,
# skip after being woken).
#  1. prodcons (mutex + condition variables) with the consumers' work line
#     fixed at 50%: every experiment names that line and has a positive,
#     unwrapped effective duration, and the progress point moved.
#  2. pingpong, two threads in strict turns: handing the turn over through
#     a condition variable, the waiting thread skips the pauses the working
#     thread's line adds (almost no delay inserted); spinning instead, it
#     must pay them (about as much delay inserted as pauses credited).
#
# Usage: causal_sync_accounting.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
progs=$build/tests/programs/causal
lever=$build/bin/lever
runtime=$build/lib/lever/liblever-causal.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}

line_of() { # FILE TAG
	grep -n "/\* LINE:$2 \*/" "$1" | cut -d: -f1
}

# profile OUT SAMPLER FIXED_LINE SPEEDUP_OPTS... -- PROGRAM [ARGS...]
profile() {
	local out=$1 sampler=$2 fixed=$3
	shift 3
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	if [ -x "$lever" ]; then
		timeout 60 "$lever" causal -o "$out" --sampler="$sampler" --fixed-line "$fixed" \
			"${opts[@]}" -- "$@"
	else
		local envs=() o
		for o in "${opts[@]}"; do
			case $o in
			--fixed-speedup=*) envs+=(LEVER_CAUSAL_FIXED_SPEEDUP="${o#*=}") ;;
			--speedup-step=*) envs+=(LEVER_CAUSAL_SPEEDUP_STEP="${o#*=}") ;;
			--experiment-length=*) envs+=(LEVER_CAUSAL_EXPERIMENT_MS="${o#*=}") ;;
			esac
		done
		timeout 60 env "${envs[@]}" LEVER_CAUSAL_ACTIVE=1 LEVER_CAUSAL_OUTPUT="$out" \
			LEVER_CAUSAL_SAMPLER="$sampler" LEVER_CAUSAL_FIXED_LINE="$fixed" \
			LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$runtime" "$@"
	fi
}

# ---- 1. prodcons at a fixed 50% ----
prodcons_src=$src/tests/programs/causal/prodcons.c
work_line=$(line_of "$prodcons_src" work)
for sampler in perf timer; do
	out=$tmp/prodcons-$sampler.coz
	if ! profile "$out" "$sampler" "prodcons.c:$work_line" --fixed-speedup=50 \
		-- "$progs/prodcons" >"$tmp/stdout" 2>"$tmp/stderr"; then
		fail "prodcons ($sampler): did not run to completion"
		head -n 5 "$tmp/stderr"
		continue
	fi
	if ! report=$(awk -F'\t' -v want="prodcons.c:$work_line" '
		function val(f) { sub(/^[^=]*=/, "", f); return f }
		$1 == "experiment" {
			n++; sel = val($2); sp = val($3); dur = val($4); ss = val($5)
			if (substr(sel, length(sel) - length(want) + 1) != want) bad = bad " line " sel
			if (sp != "0.50") bad = bad " speedup " sp
			if (dur !~ /^[0-9]+$/ || dur + 0 <= 0 || dur + 0 > 1e11) bad = bad " duration " dur
			samples += ss
		}
		$1 == "throughput-point" { for (i = 2; i <= NF; i++) if ($i ~ /^delta=/) visits += val($i) }
		END {
			if (n == 0) { print "no experiment"; exit 1 }
			if (bad != "") { print n " experiments, bad:" bad; exit 1 }
			if (samples == 0 || visits == 0) { print "no selected samples or no visits"; exit 1 }
			print n " experiments, " samples " selected samples, " visits " visits"
		}' "$out"); then
		fail "prodcons ($sampler): $report"
		grep '^experiment' "$out" | head -n 5
		continue
	fi
	echo "ok prodcons ($sampler) at 50% on line $work_line: $report, all durations positive"
done

# ---- 2. pingpong: woken threads skip, spinning threads pay ----
# Line a at 100% (d = one sampling period per sample). Handing the turn over
# with a condition variable, the waiting thread is always blocked in a wrapped
# call while line a runs, so it skips every pause: almost no delay is
# inserted although many pauses are credited. Handing it over by spinning
# (invisible to lever), the waiting thread runs all the time and must pay
# them all. The inserted total comes from the runtime's -v summary.
pingpong_src=$src/tests/programs/causal/pingpong.c
a_line=$(line_of "$pingpong_src" a)

# delay_ratio SAMPLER MODE -> inserted delay / credited pauses, in percent
delay_ratio() {
	local sampler=$1 mode=$2 out=$tmp/pingpong-$1-$2.coz inserted credited
	rm -f "$out"
	LEVER_CAUSAL_VERBOSE=1 profile "$out" "$sampler" "pingpong.c:$a_line" \
		--fixed-speedup=100 -v -- "$progs/pingpong" 2400 200000 "$mode" \
		>"$tmp/stdout" 2>"$tmp/stderr" || return 1
	inserted=$(sed -n 's/.* \([0-9][0-9]*\) ms of delays inserted.*/\1/p' "$tmp/stderr")
	period_ns=$(sed -n 's/^startup.*\tperiod=\([0-9]*\).*/\1/p' "$out" | head -n 1)
	credited=$(awk -F'\t' -v p="${period_ns:-1000000}" '$1 == "experiment" {
		sub(/^selected-samples=/, "", $5); s += $5 } END { printf "%.0f", s * p / 1e6 }' "$out")
	if [ -z "$inserted" ] || [ "${credited:-0}" -lt 50 ]; then
		echo "no data (inserted '$inserted' ms, credited '$credited' ms)" >&2
		return 1
	fi
	echo "$((100 * inserted / credited)) $inserted $credited"
}

for sampler in perf timer; do
	if ! r=$(delay_ratio "$sampler" wait 2>&1); then
		fail "pingpong wait ($sampler): $r"
	elif set -- $r && [ "$1" -gt 30 ]; then
		fail "pingpong wait ($sampler): $2 ms of delays inserted for $3 ms of pauses;" \
			"threads woken through a condition variable should have skipped them"
	else
		echo "ok pingpong wait ($sampler): $2 ms of delays inserted for $3 ms of pauses" \
			"(woken threads skip)"
	fi
	if ! r=$(delay_ratio "$sampler" spin 2>&1); then
		fail "pingpong spin ($sampler): $r"
	elif set -- $r && [ "$1" -lt 50 ]; then
		fail "pingpong spin ($sampler): only $2 ms of delays inserted for $3 ms of pauses;" \
			"a spinning thread must pay them"
	else
		echo "ok pingpong spin ($sampler): $2 ms of delays inserted for $3 ms of pauses" \
			"(spinning threads pay)"
	fi
done

if [ $failures != 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "delay accounting around blocking calls is consistent"
