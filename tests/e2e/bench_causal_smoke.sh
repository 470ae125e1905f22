#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/causal smoke test: the harness's --quick mode builds two of the bench
# programs (one of them with its shared library), measures their true
# speedups, profiles them with lever and Coz, and writes the report tables.
# Checks that it runs end to end, what the report contains, and that lever
# causal report agrees with analyze.py on the same profiles; never timings or
# accuracy. Also checks analyze.py's own prediction on a profile with a
# known answer.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# analyze.py on a known profile: p_0 = 1000/10 = 100 ns, p_50 = 1000/20 = 50 ns
# (speedup 0.5); latency: W_0 = 4*1000/8 = 500, W_50 = 2*1000/8 = 250 (0.5).
printf 'startup\ttime=1\n' >"$tmp/known.coz"
for rep in 1 2 3; do
	printf 'experiment\tselected=/x/a.c:7\tspeedup=0.00\tduration=1000\tselected-samples=1\n' >>"$tmp/known.coz"
	printf 'throughput-point\tname=t\tdelta=10\n' >>"$tmp/known.coz"
	printf 'latency-point\tname=r\tarrivals=8\tdepartures=8\tdifference=4\n' >>"$tmp/known.coz"
	printf 'experiment\tselected=/x/a.c:7\tspeedup=0.50\tduration=1000\tselected-samples=1\n' >>"$tmp/known.coz"
	printf 'throughput-point\tname=t\tdelta=20\n' >>"$tmp/known.coz"
	printf 'latency-point\tname=r\tarrivals=8\tdepartures=8\tdifference=2\n' >>"$tmp/known.coz"
done
python3 "$src/bench/causal/analyze.py" predict --min-speedups 2 "$tmp/known.coz" >"$tmp/known.json"
if python3 - "$tmp/known.json" <<'PY'; then ok "analyze.py predict: known throughput and latency speedups"; else fail "analyze.py predict on a known profile"; fi
import json, sys
d = json.load(open(sys.argv[1]))
got = {(s["point"], s["kind"]): s for s in d["series"]}
for key in (("t", "throughput"), ("r", "latency")):
    s = got[key]
    assert s["line"] == "/x/a.c:7", s
    pts = {p["line_speedup"]: p for p in s["points"]}
    assert abs(pts[0.5]["program_speedup"] - 0.5) < 1e-9, pts
    assert pts[0.5]["experiments"] == 3 and pts[0.0]["program_speedup"] == 0, pts
    assert abs(s["slope"] - 1.0) < 1e-9, s
PY

# Usage errors
"$src/bench/causal/run.sh" -p no_such_program -w "$tmp/w" "$build" >"$tmp/err" 2>&1
[ $? = 2 ] && grep -q "no program matches" "$tmp/err" && ok "unknown program: exit 2" ||
	fail "unknown program should exit 2 with a message"

# The quick run, two programs
if ! "$src/bench/causal/run.sh" --quick -p critical_path,library -w "$tmp/w" -o "$tmp/causal.md" \
	"$build" >"$tmp/run.log" 2>&1; then
	fail "run.sh --quick failed"
	tail -30 "$tmp/run.log"
fi
report=$tmp/causal.md
for f in lever/critical_path coz/critical_path lever/library coz/library lever/libbenchwork.so; do
	[ -x "$tmp/w/$f" ] || [ -f "$tmp/w/$f" ] && ok "built $f" || fail "$f was not built"
done
[ -s "$report" ] || { fail "no report"; exit 1; }
grep -q '^| program | kind | lever MAE | Coz MAE' "$report" && ok "accuracy summary table" ||
	fail "no accuracy summary table"
for p in critical_path library; do
	grep -qE "^\| $p \| throughput \| [0-9.]+ \|" "$report" && ok "$p: a lever MAE" ||
		fail "$p: no lever MAE in the summary"
	grep -q "^### $p (\`$p.c:[0-9]*\`" "$report" && ok "$p: per-level table" ||
		fail "$p: no per-level table"
	# each level has a row with a true speedup and a lever prediction
	for lvl in 0 50 100; do
		awk -v p="### $p " -v l="| $lvl% |" 'index($0, p) == 1 { on = 1; next }
			/^### / { on = 0 } on && index($0, l) == 1 { print }' "$report" |
			grep -qE "^\| $lvl% \| [+-][0-9.]+ \| [^|]* \| [+-][0-9.]+ \|" &&
			ok "$p: level $lvl% has truth and lever prediction" ||
			fail "$p: level $lvl% lacks truth or lever prediction"
	done
	grep -qE "^\| $p \| [0-9.]+ \| [0-9.]+ \|" "$report" && ok "$p: overhead row" ||
		fail "$p: no overhead row"
done
# lever causal report's uncorrected speedups and analyze.py's independent
# computation of the same numbers from the same profiles must agree: the
# cross-check's max difference is near zero for every program (0.1 points
# leaves room for rounding only; a wrong formula on either side is off by
# whole points).
cross=$(grep -o "cross-check: max difference [0-9.]* points" "$report" | awk '{ print $4 }')
if [ "$(echo "$cross" | grep -c .)" -lt 2 ]; then
	fail "expected a cross-check line for each of the 2 programs, got: $(echo $cross)"
elif echo "$cross" | awk '$1 > 0.1 { bad = 1 } END { exit !bad }'; then
	fail "lever causal report and analyze.py disagree: max differences $(echo $cross) points"
	grep "cross-check" "$report"
else
	ok "report vs analyze.py cross-check: max differences $(echo $cross) points (<= 0.1)"
fi
[ -s "$tmp/w/data/critical_path.coz.coz" ] && ok "Coz wrote a profile" || fail "Coz wrote no profile"

[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
