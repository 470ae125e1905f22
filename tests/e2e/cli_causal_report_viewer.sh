#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever causal report --method=coz-viewer (doc/causal-report.md "Coz's
# viewer's method"): on a lever profile of critical_path, every point of
# every line equals an independent awk computation of Coz's viewer's numbers
# (sums per line and speedup, period = duration / delta against the 0%
# aggregate, at least 5 visits, within [-1, 2]); the JSON says the method,
# the table has the viewer's columns, and bad uses of the option are refused.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"
src=$(cd "$2" && pwd)
command -v jq >/dev/null || { echo "FAIL: jq is missing (scripts/install-deps.sh)"; exit 1; }
export LC_ALL=C
prof=$src/tests/e2e/data/critical_path.coz

"$lever" causal report --method=coz-viewer --json "$prof" >"$tmp/v.json" 2>"$tmp/err" ||
	fail "--json: exit $?: $(cat "$tmp/err")"
jq -e '.method == "coz-viewer" and .phase_correction == false and .trim == false
	and .viewer_min_points == 10 and (.series | length) == 2' "$tmp/v.json" >/dev/null ||
	fail "JSON header: $(jq -c '{method, phase_correction, viewer_min_points}' "$tmp/v.json")"
# line a (22) leads by the viewer's impact too
jq -e '.series[0].line | endswith("critical_path.c:22")' "$tmp/v.json" >/dev/null ||
	fail "line a is not first"
"$lever" causal report --json "$prof" | jq -e '.method == "lever"' >/dev/null ||
	fail "the default method is not lever"

# The viewer's points, computed independently from the records.
awk -F'\t' '
function val(k,   i, n, kv) {
	for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2)
	return ""
}
$1 == "experiment" { sel = val("selected"); pct = int(val("speedup") * 100 + 0.5); dur = val("duration") }
$1 == "throughput-point" { d[sel, pct] += val("delta"); t[sel, pct] += dur; seen[sel, pct] = 1 }
END {
	for (k in seen) {
		split(k, a, SUBSEP)
		if (d[a[1], 0] < 5 || d[k] < 5) continue
		b = t[a[1], 0] / d[a[1], 0]
		y = (b - t[k] / d[k]) / b
		if (y >= -1 && y <= 2) printf "%s %d %.6f\n", a[1], a[2], y
	}
}' "$prof" | sort >"$tmp/awk.txt"
jq -r '.series[] | .line as $l | .points[] | "\($l) \(.line_speedup * 100 | round) \(.program_speedup)"' \
	"$tmp/v.json" | awk '{ printf "%s %d %.6f\n", $1, $2, $3 }' | sort >"$tmp/lever.txt"
[ -s "$tmp/awk.txt" ] || fail "the awk computation found no points"
diff "$tmp/awk.txt" "$tmp/lever.txt" >"$tmp/diff" ||
	fail "points differ from the viewer's computation: $(head -5 "$tmp/diff")"
echo "ok: $(wc -l <"$tmp/lever.txt") points equal the viewer's computation"

# the table: the viewer's columns and a note of the method
"$lever" causal report --method=coz-viewer "$prof" >"$tmp/v.txt" 2>&1 || fail "table: exit $?"
grep -q 'method: coz-viewer' "$tmp/v.txt" || fail "table: no method line"
grep -q 'impact  *max  *points' "$tmp/v.txt" || fail "table: no viewer columns"
awk 'length > 80 { exit 1 }' "$tmp/v.txt" || fail "table over 80 columns"

# bad uses
"$lever" causal report --method=bogus "$prof" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "coz-viewer" "$tmp/err" || fail "--method=bogus: $(cat "$tmp/err")"
"$lever" causal report --method=coz-viewer --html "$tmp/x.html" "$prof" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && [ ! -e "$tmp/x.html" ] || fail "--method=coz-viewer --html was not refused"
"$lever" causal report --help | grep -q -- '--method' || fail "--help has no --method"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok: cli_causal_report_viewer"
