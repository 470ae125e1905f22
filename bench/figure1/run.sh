#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/figure1: the Coz paper's Figure 1 check. lever's predicted program
# speedup for line a and line b of examples/figure1 at line speedups 0, 25,
# 50, 75 and 100% (fixed-line, fixed-speedup runs, so every level gets the
# same number of experiments), next to the true effect of really shortening
# loop a or loop b by that much (figure1 --a-scale / --b-scale).
#
#   bench/figure1/run.sh [BUILD_DIR] [CYCLES] [ROUNDS]
#
# Profiling runs and ground-truth runs are interleaved cycle by cycle so that
# the machine's drift lands on both. As root the runs get SCHED_FIFO priority
# (chrt -f 20) to shield them from other load on a shared machine; the real
# effect and the prediction are measured under the same conditions.
# Writes bench/results/figure1.md (FIGURE1_OUT to write elsewhere) and keeps
# its raw data in bench/results/figure1-raw/ (the two profiles, every
# ground-truth time, the header's facts; FIGURE1_RAW=DIR to keep them
# elsewhere); FIGURE1_REPORT_ONLY=DIR rebuilds
# the table from such a directory alone (bench/results/regenerate.sh does).
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
cycles=${2:-4}
rounds=${3:-400}
here=$(cd "$(dirname "$0")" && pwd)
lever=$build/bin/lever
prog=$build/examples/figure1
src=$here/../../examples/figure1/figure1.c
out=${FIGURE1_OUT:-$here/../results/figure1.md}
raw=${FIGURE1_RAW:-$here/../results/figure1-raw}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# rebuilding the table runs lever causal report only; a new run needs figure1
need=("$lever")
[ -n "${FIGURE1_REPORT_ONLY:-}" ] || need+=("$prog")
for f in "${need[@]}"; do
	[ -x "$f" ] || { echo "figure1: $f is missing; build first" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "figure1: needs jq (scripts/install-deps.sh)" >&2; exit 1; }

# FIGURE1_LEVER_ARGS: more `lever causal` options, e.g. --pause=spin (issue 18's
# sleep-vs-spin measurement: run once with each, FIGURE1_OUT apart)
read -r -a lever_args <<<"${FIGURE1_LEVER_ARGS:-}"
prio=()
if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null; then
	prio=(chrt -f 20)
fi
line_of() { grep -n "/\* line $1 \*/" "$src" | cut -d: -f1; }
la=$(line_of a)
lb=$(line_of b)
speedups=(0 25 50 75 100)
scales=(1 0.75 0.5 0.25 0)
declare -A truth

ms_per_round() { sed -n 's/.*, \([0-9.]*\) ms\/round/\1/p'; }
if [ -n "${FIGURE1_REPORT_ONLY:-}" ]; then
	cp "$FIGURE1_REPORT_ONLY"/line*.coz "$FIGURE1_REPORT_ONLY"/truth "$FIGURE1_REPORT_ONLY"/meta "$work"/
	meta() { sed -n "s/^$1=//p" "$work/meta"; }
	start=$(meta start) load0=$(meta load0) load1=$(meta load1) cycles=$(meta cycles)
	rounds=$(meta rounds) cpus=$(meta cpus) cpu=$(meta cpu) prio=($(meta prio))
	read -r -a lever_args <<<"$(meta lever_args)"
	while read -r key values; do truth[$key]=" $values"; done <"$work/truth"
else
start=$(date -u '+%Y-%m-%d %H:%M UTC')
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cpus=$(nproc) cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
for ((c = 0; c < cycles; c++)); do
	echo "figure1: cycle $((c + 1))/$cycles" >&2
	for s in "${speedups[@]}"; do
		for l in "$la" "$lb"; do
			"${prio[@]}" "$lever" causal "${lever_args[@]}" -o "$work/line$l.coz" --fixed-line "figure1.c:$l" \
				--fixed-speedup "$s" -- "$prog" --rounds "$rounds" >/dev/null 2>&1
		done
		# one more baseline per level: half of all experiments are the 0% reference
		for l in "$la" "$lb"; do
			"${prio[@]}" "$lever" causal "${lever_args[@]}" -o "$work/line$l.coz" --fixed-line "figure1.c:$l" \
				--fixed-speedup 0 -- "$prog" --rounds "$((rounds / 4))" >/dev/null 2>&1
		done
	done
	for s in "${scales[@]}"; do
		t=$("${prio[@]}" "$prog" --rounds "$rounds" --a-scale "$s" | ms_per_round)
		truth[a$s]="${truth[a$s]:-} $t"
		[ "$s" = 1 ] && continue
		t=$("${prio[@]}" "$prog" --rounds "$rounds" --b-scale "$s" | ms_per_round)
		truth[b$s]="${truth[b$s]:-} $t"
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# the raw data, kept with the table
printf 'start=%s\nload0=%s\nload1=%s\ncycles=%s\nrounds=%s\ncpus=%s\ncpu=%s\nprio=%s\nlever_args=%s\n' \
	"$start" "$load0" "$load1" "$cycles" "$rounds" "$cpus" "$cpu" "${prio[*]:-}" "${lever_args[*]:-}" >"$work/meta"
for key in "${!truth[@]}"; do echo "$key${truth[$key]}"; done | sort >"$work/truth"
rm -rf "$raw"
mkdir -p "$raw"
cp "$work"/line*.coz "$work/truth" "$work/meta" "$raw"/
fi

# the raw data's note= line (what the table alone would not say), if any
meta_note() { [ -z "${FIGURE1_REPORT_ONLY:-}" ] || sed -n 's/^note=//p' "$FIGURE1_REPORT_ONLY/meta"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median <<<"${truth[a1]}")
truth[b1]=${truth[a1]}
true_speedup() { # truth key -> "+x.y% (t ms)"
	local t
	t=$(median <<<"${truth[$1]}")
	awk -v t="$t" -v b="$base" 'BEGIN { printf "%+.1f%% (%.2f ms)", (1 - t / b) * 100, t }'
}
point() { # JSON FILE, LINE, SPEEDUP% -> "value [lo, hi] (n)"
	jq -r --argjson x "$3" --arg l "figure1.c:$2" '
		.series[] | select(.line | endswith($l)) | .points[]
		| select((.line_speedup * 100 | round) == $x)
		| "\(.program_speedup * 100 * 10 | round / 10) [\(.ci[0] * 100 * 10 | round / 10), \(.ci[1] * 100 * 10 | round / 10)] (\(.experiments))"' "$1"
}
fitted() { # JSON FILE, LINE, SPEEDUP% -> "value [lo, hi]" of the fitted curve
	jq -r --argjson x "$3" --arg l "figure1.c:$2" '
		.series[] | select(.line | endswith($l)) | .points[]
		| select((.line_speedup * 100 | round) == $x)
		| "\(.fit * 100 * 10 | round / 10) [\(.fit_ci[0] // 0 | . * 100 * 10 | round / 10), \(.fit_ci[1] // 0 | . * 100 * 10 | round / 10)]"' "$1"
}
for l in "$la" "$lb"; do
	"$lever" causal report --json "$work/line$l.coz" >"$work/line$l.json"
done
# both lines in one report: the ranking a reader of `lever causal report` sees
"$lever" causal report --json "$work/line$la.coz" "$work/line$lb.coz" >"$work/both.json"
"$lever" causal report --top 0 "$work/line$la.coz" "$work/line$lb.coz" >"$work/both.txt"
# the checks of issue 18's must-show 4, from the numbers in the table
checks() {
	local worst=0 s t f d
	for i in "${!speedups[@]}"; do
		s=${speedups[$i]}
		t=$(median <<<"${truth[a${scales[$i]}]}")
		f=$(jq -r --argjson x "$s" --arg l "figure1.c:$la" '.series[] | select(.line | endswith($l))
			| .points[] | select((.line_speedup * 100 | round) == $x) | .fit' "$work/both.json")
		d=$(awk -v t="$t" -v b="$base" -v f="$f" 'BEGIN { d = (1 - t / b) * 100 - f * 100; print d < 0 ? -d : d }')
		worst=$(awk -v a="$worst" -v b="$d" 'BEGIN { print (b > a) ? b : a }')
	done
	printf -- '- line a: fitted curve vs truth, largest gap over the speedups: %.1f points (goal: 2)\n' "$worst"
	jq -r --arg l "figure1.c:$lb" '.series[] | select(.line | endswith($l)) | .fit
		| "- line b: fitted effect at 100% \(.effect * 1000 | round / 10)% [\(.effect_ci[0] * 1000 | round / 10), \(.effect_ci[1] * 1000 | round / 10)]: "
		+ (if .effect_ci[0] <= 0 and .effect_ci[1] >= 0 then "holds 0" else "does not hold 0" end)' "$work/both.json"
	jq -r '"- ranking (default, by impact): " + ([.series[].line | sub(".*/"; "")] | join(", "))' "$work/both.json"
}

{
	echo "# bench/figure1: Figure 1 of the Coz paper, predicted vs real"
	echo
	echo "Generated by \`bench/figure1/run.sh $cycles cycles, $rounds rounds\` on $start."
	echo "Machine: $cpus CPUs, $cpu."
	echo "Load average at start / end: $load0 / $load1. Priority: ${prio[*]:-normal}."
	[ ${#lever_args[@]} -eq 0 ] || echo "More \`lever causal\` options: \`${lever_args[*]}\`."
	[ -z "$(meta_note)" ] || echo "Note: $(meta_note)."
	echo
	echo "Each cycle: for every line speedup, \`lever causal --fixed-line figure1.c:L"
	echo "--fixed-speedup S -- figure1 --rounds $rounds\` for line a (:$la) and line b (:$lb), plus a"
	echo "shorter 0% run for each; then the real program with loop a or b really shortened"
	echo "(\`figure1 --rounds $rounds --a-scale 1-S\` or \`--b-scale 1-S\`). Predictions are \`lever causal report --json\`"
	echo "(95% bootstrap intervals, experiments in brackets); truth is the median ms/round over"
	echo "the cycles, program speedup = 1 - T_S/T_0."
	echo
	echo "\"point\" is the measured program speedup at that line speedup; \"fitted\" is the"
	echo "report's fitted curve there (y = slope * min(x, knee): it can level off), with the"
	echo "interval of its bootstrap refits."
	echo
	echo "| line speedup | line a: true | point | fitted | line b: true | point | fitted |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	for i in "${!speedups[@]}"; do
		s=${speedups[$i]}
		ta=$(true_speedup "a${scales[$i]}")
		tb=$(true_speedup "b${scales[$i]}")
		echo "| $s% | $ta | $(point "$work/line$la.json" "$la" "$s") | $(fitted "$work/both.json" "$la" "$s") | $tb | $(point "$work/line$lb.json" "$lb" "$s") | $(fitted "$work/both.json" "$lb" "$s") |"
	done
	echo
	echo "Checks (issue 18, must-show 4):"
	echo
	checks
	echo
	echo "\`lever causal report\` on the two profiles:"
	echo
	echo '```'
	sed "s|$work/||g" "$work/both.txt"
	echo '```'
	echo
	echo "Truth, every run (ms/round): "
	for s in "${scales[@]}"; do echo "- a-scale $s:${truth[a$s]}"; done
	for s in "${scales[@]:1}"; do echo "- b-scale $s:${truth[b$s]}"; done
} >"$out"
cat "$out"
