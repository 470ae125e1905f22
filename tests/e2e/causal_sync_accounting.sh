#!/usr/bin/env bash
# Delay accounting around blocking calls (paper §3.4.1: pay before waking,
# skip after being woken).
#  1. prodcons (mutex + condition variables) with the consumers' work line
#     fixed at 50%: every experiment names that line and has a positive,
#     unwrapped effective duration, and the progress point moved.
#  2. pingpong, two threads in strict turns through a condition variable:
#     speeding line a (2/3 of each round) up by 50% must predict about 33%,
#     line b (1/3) about 17%. A woken thread that paid its waker's delays again
#     would predict ~0%; one that skipped delays it owed would predict more.
#     0% and 50% experiments are interleaved in one run (--speedup-step 50),
#     so changing machine load affects both alike. Bands are wide: this checks
#     behaviour, not accuracy.
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
			--seed=*) envs+=(LEVER_CAUSAL_SEED="${o#*=}") ;;
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

# ---- 2. pingpong: known answers ----
pingpong_src=$src/tests/programs/causal/pingpong.c
predicted() { # SAMPLER TAG -> "speedup50 speedup100" predicted program speedups
	local sampler=$1 tag=$2 out=$tmp/pingpong-$1-$2.coz line
	line=$(line_of "$pingpong_src" "$tag")
	profile "$out" "$sampler" "pingpong.c:$line" --speedup-step=50 --experiment-length=50 \
		--seed=11 -- "$progs/pingpong" 1600 >"$tmp/stdout" 2>"$tmp/stderr" || return 1
	awk -f "$src/tests/e2e/lib/profile_speedups.awk" "$out" |
		awk -v l="pingpong.c:$line" 'index($1, l) && $2 == 50 { print $3 }'
}

in_band() { # VALUE LOW HIGH
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'
}

for sampler in perf timer; do
	a=$(predicted "$sampler" a) || true
	b=$(predicted "$sampler" b) || true
	if ! in_band "$a" 15 50; then
		fail "pingpong ($sampler): line a at 50% predicts '${a}'%, expected about 33% [15, 50]"
	elif ! in_band "$b" 3 32; then
		fail "pingpong ($sampler): line b at 50% predicts '${b}'%, expected about 17% [3, 32]"
	elif ! awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > b) }'; then
		fail "pingpong ($sampler): line a ($a%) should matter more than line b ($b%)"
	else
		echo "ok pingpong ($sampler): 50% on line a predicts $a% (ideal 33%)," \
			"on line b $b% (ideal 17%)"
	fi
done

if [ $failures != 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "delay accounting around blocking calls is consistent"
