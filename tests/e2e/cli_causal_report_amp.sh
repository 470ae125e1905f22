#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever causal report on a real load-amplified sweep with line experiments
# (tests/e2e/data/amp_sweep.coz, recorded on a shared 2-core VM with
#   lever causal sweep --arrival-speedup=0,2ms -n 3 --experiment-length=50ms \
#     --seed 7 -- tests/programs/amp/prodcons -c 2 -n 400 -t 4000 --consume=spin
# and the build directory's prefix cut from the paths):
#  - --json: the scalability curve per progress point (levels, load, values
#    and relative values with their intervals) and each line's curves per
#    load, each the same as the report of that load's experiments alone
#    (its own same-load 0% baseline);
#  - --html: a scalability chart, one chart per line with a curve per load;
#  - the table's AMP section fits 80 columns;
#  - AMP alone (no line sped up): the curve, no per-load curves.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
data=$src/tests/e2e/data/amp_sweep.coz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v jq >/dev/null || { echo "FAIL: jq is missing (scripts/install-deps.sh)"; exit 1; }
export LC_ALL=C

levels=$(grep -o 'arrival-speedup=[0-9]*' "$data" | cut -d= -f2 | sort -nu | tr '\n' ' ')
[ "$(echo $levels | wc -w)" -ge 2 ] || { echo "FAIL: the data has fewer than 2 levels"; exit 1; }

# ---- JSON: the scalability curve
"$lever" causal report --json "$data" >"$tmp/r.json" 2>"$tmp/err" || fail "--json: $(cat "$tmp/err")"
jq -e --argjson n "$(echo $levels | wc -w)" '
	.lever_causal_report == 2 and (.series | length > 0)
	and .scalability.baseline_arrival_speedup_ns == 0
	and .scalability.baseline_period_ns > 0
	and (.scalability.levels | length == $n)
	and ([.scalability.levels[].arrival_speedup_ns] == ([.scalability.levels[].arrival_speedup_ns] | sort))
	and (.scalability.points | length > 0)
	and all(.scalability.points[]; (.loads | length == $n) and (.unit == "visits/s" or .unit == "ns"))
	and all(.scalability.points[].loads[];
		.runs >= 2 and .value > 0 and .ci[0] <= .value and .value <= .ci[1]
		and .relative_ci[0] <= .relative and .relative <= .relative_ci[1]
		and .load >= 0 and .load < 1 and .period_ns > 0)
	and all(.scalability.points[]; .loads[0].relative == 1 and .loads[0].load == 0)
	and all(.scalability.levels[1:][]; .load > 0)' "$tmp/r.json" >/dev/null ||
	fail "scalability: $(jq -c .scalability "$tmp/r.json")"
echo "ok: --json scalability ($(jq -c '[.scalability.points[0].loads[] | {d: .arrival_speedup_ns, load, relative}]' "$tmp/r.json"))"

# ---- JSON: per-load curves, each against its own same-load baseline
jq -e '(.load_curves | length > 0)
	and all(.load_curves[]; (.curves | length >= 1)
		and ([.curves[].arrival_speedup_ns] == ([.curves[].arrival_speedup_ns] | sort | unique))
		and all(.curves[]; .points[0].line_speedup == 0 and .points[0].program_speedup == 0
			and (.points | length >= 5)))
	and any(.load_curves[]; .curves | length >= 2)' "$tmp/r.json" >/dev/null ||
	fail "load_curves: $(jq -c '[.load_curves[] | {line, point, n: (.curves | length)}]' "$tmp/r.json")"
compared=0
for d in $levels; do
	# the profile cut to this level's experiments: its series are the curves at d
	awk -F'\t' -v d="$d" '
		$1 == "experiment" { keep = index($0, "\tarrival-speedup=" d "\t") > 0 }
		$1 == "throughput-point" || $1 == "latency-point" { if (keep) print; next }
		$1 != "experiment" || keep' "$data" >"$tmp/level.coz"
	"$lever" causal report --json "$tmp/level.coz" 2>/dev/null |
		jq -c '[.series[] | {line, point, slope, points: [.points[] | [.line_speedup, .program_speedup]]}] | sort_by(.line, .point)' \
		>"$tmp/alone.json"
	jq -c --argjson d "$d" '[.load_curves[] | {line, point} + (.curves[] | select(.arrival_speedup_ns == $d)
		| {slope, points: [.points[] | [.line_speedup, .program_speedup]]})] | sort_by(.line, .point)' \
		"$tmp/r.json" >"$tmp/curves.json"
	cmp -s "$tmp/alone.json" "$tmp/curves.json" ||
		fail "curves at $d differ from that level alone: $(cat "$tmp/curves.json") vs $(cat "$tmp/alone.json")"
	[ "$(cat "$tmp/curves.json")" != "[]" ] && compared=$((compared + 1))
done
# (the comparison has teeth: at least two levels have curves, and they differ)
[ "$compared" -ge 2 ] || fail "fewer than 2 levels with per-load curves"
jq -e '[.load_curves[] | select(.curves | length >= 2) | .curves[0].slope != .curves[1].slope] | any' \
	"$tmp/r.json" >/dev/null || fail "per-load curves are all the same"
echo "ok: --json load_curves ($(jq '.load_curves | length' "$tmp/r.json") lines), each equal to its level's own report"

# ---- HTML
"$lever" causal report --html "$tmp/r.html" "$data" >"$tmp/table" 2>"$tmp/err" || fail "--html: $(cat "$tmp/err")"
grep -q "^HTML report: $tmp/r.html" "$tmp/table" || fail "the table does not name the page"
charts=$(grep -c '<svg' "$tmp/r.html")
want=$((1 + $(jq '.load_curves | length' "$tmp/r.json")))
[ "$charts" = "$want" ] || fail "html: $charts charts, want $want"
grep -q '<section id="scalability">' "$tmp/r.html" || fail "html: no scalability section"
grep -q 'offered load (% shorter inter-arrival time)' "$tmp/r.html" || fail "html: no load axis"
grep -q '<h2>Causal profiles per load</h2>' "$tmp/r.html" || fail "html: no per-load charts"
grep -q 'aria-label="Predicted program speedup against line speedup for ' "$tmp/r.html" ||
	fail "html: charts without an accessible label"
for d in $levels; do
	name=$(jq -r --argjson d "$d" '.scalability.levels[] | select(.arrival_speedup_ns == $d) |
		"\(if $d == 0 then "0" elif $d >= 1000000 then "\($d / 1000000) ms" else "\($d / 1000) us" end)"' "$tmp/r.json")
	grep -q "<title>$name (load [0-9]*%)</title>" "$tmp/r.html" || fail "html: no legend for $name"
done
grep -Eq 'src=|href=|@import' "$tmp/r.html" && fail "html: fetches something"
echo "ok: --html ($charts charts: scalability + one per line, a curve per load)"

# ---- the table: the AMP section fits 80 columns
"$lever" causal report "$data" >"$tmp/table" 2>/dev/null
sed '/^== arrival speedup/,$d' "$tmp/table" | awk 'length > 80 { print; bad = 1 } END { exit bad }' ||
	fail "AMP table wider than 80 columns"
grep -c '^== arrival speedup' "$tmp/table" | grep -qx "$(echo $levels | wc -w)" ||
	fail "table: not one profile per level"
echo "ok: table (AMP section within 80 columns, one profile per level)"

# ---- AMP alone: only the 0% experiments (as with --fixed-speedup=0)
awk -F'\t' '$1 == "experiment" { keep = index($0, "\tspeedup=0.00\t") > 0 }
	$1 == "throughput-point" || $1 == "latency-point" { if (keep) print; next }
	$1 != "experiment" || keep' "$data" >"$tmp/alone.coz"
"$lever" causal report --json --html "$tmp/alone.html" "$tmp/alone.coz" >"$tmp/alone.json" 2>/dev/null
jq -e '.load_curves == null and (.scalability.levels | length >= 2)' "$tmp/alone.json" >/dev/null ||
	fail "AMP alone: $(jq -c '{load_curves, l: (.scalability.levels | length)}' "$tmp/alone.json")"
[ "$(grep -c '<svg' "$tmp/alone.html")" = 1 ] || fail "AMP alone: not one chart"
grep -q 'the scalability curve is the whole report' "$tmp/alone.html" || fail "AMP alone: page text"
echo "ok: AMP alone (the curve only)"

exit $((fails > 0))
