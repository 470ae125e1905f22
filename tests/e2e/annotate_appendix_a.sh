#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 15, must-show 2: the seed's Appendix A micro-benchmark (spec/freud.md
# §6.6; tests/programs/annotate/appendix_a*), recorded by `lever annotate
# record -f` on each of its twenty functions, unmodified (-O2 -g, no sled).
#
# 1. --cost=mem, every call (--rate all), metrics time and mem, and the
#    branch outcomes (--branches): each function has the features the spec
#    names, mem equals the function's cost model of its recorded features on
#    every call (features and metric exact), and `lever annotate derive
#    --metric mem --cv 10` finds the spec's model class and scopes, A.15 and
#    A.16's two from their branch outcomes (Algorithm 1), with a 10-fold
#    cross-validated R^2 >= 0.99 for each (annotate_appendix_a.py has the
#    table). A.19's main trend (heuristic M) needs more calls per value of
#    its input than 151 give: it is recorded alone for 600 calls and derived
#    with --heuristics-any-metric (M is for time-like metrics by default;
#    bytes have outlying calls too).
# 2. --cost=sleep on a short range, metric time: every call's time is at
#    least the sleeps its inputs ask for (usleep never sleeps less), so the
#    time metric is in microseconds and inclusive. A lower bound only: the
#    machine may be loaded.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
prog=$build/tests/programs/annotate/appendix_a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"

functions="test_linear_int test_linear_int_pointer test_linear_float test_global_feature
test_linear_charptr test_linear_structs test_linear_classes test_linear_fitinregister
test_linear_vector test_derived_class test_quad_int test_nlogn_int test_quad_int_wn
test_interaction_linear_quad test_linear_branches test_linear_branches_one_f test_multi_enum
test_grand_derived_class2 test_linear_main_component test_random_clustering"
fargs=()
for f in $functions; do fargs+=(-f "$f"); done

if ! "$lever" annotate record --help >/dev/null 2>&1; then
	skip_test "lever annotate record is not built in this tree (branch ann-probe)"
fi

# 1. the cost model in bytes: exact
max=300 step=2
check 'record appendix_a --cost=mem --branches' "$lever" annotate record "${fargs[@]}" \
	--metrics time,mem --branches --rate all -o "$tmp/mem" -- "$prog" --cost=mem --max=$max \
	--step=$step
check 'dump it as JSON' "$lever" annotate dump --format=json "$tmp/mem/record" -o "$tmp/mem.json"
"$lever" annotate derive --metric mem --json --cv 10 "$tmp/mem/record" >"$tmp/derive.json" \
	2>"$tmp/derive.err"
check 'derive --metric mem' test -s "$tmp/derive.json"
check 'record A.19 alone, 600 calls' "$lever" annotate record -f test_linear_main_component \
	--metrics mem --rate all -o "$tmp/a19" -- "$prog" --cost=mem \
	--only=test_linear_main_component --max=1198
"$lever" annotate derive --metric mem --heuristics-any-metric --json --cv 10 \
	"$tmp/a19/record" >"$tmp/a19.json" 2>"$tmp/a19.err"
check 'derive A.19 --heuristics-any-metric' test -s "$tmp/a19.json"
check 'features, exact mem, derived models (spec §6.6)' python3 \
	"$src/tests/e2e/annotate_appendix_a.py" "$tmp/mem/record" "$tmp/mem.json" \
	"$tmp/derive.json" $max $step "$tmp/a19.json"

# 2. the time metric: at least what the program sleeps, in µs
check 'record appendix_a --cost=sleep (short)' "$lever" annotate record "${fargs[@]}" \
	--metrics time --rate all -o "$tmp/sleep" -- "$prog" --cost=sleep --max=12 --step=4
check 'dump it' "$lever" annotate dump "$tmp/sleep/record" -o "$tmp/sleep.csv"
cat >"$tmp/sleep.py" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
# function: (feature column, sleep in µs as a function of it)
floor = {"test_linear_int": ("t", lambda t: 250 * t),
         "test_quad_int": ("t", lambda t: t * t),
         "test_linear_structs": ("bs->useful", lambda u: 150 * u)}
seen, bad = set(), []
for r in rows:
    fn = r["symbol"].split("(")[0]
    if fn in floor and r.get(floor[fn][0], "") != "":
        seen.add(fn)
        want = floor[fn][1](float(r[floor[fn][0]]))
        if float(r["time"]) < want:
            bad.append((fn, r[floor[fn][0]], r["time"], want))
print("time below the sleeps:", bad[:5] if bad else "none", "; functions:", sorted(seen))
sys.exit(1 if bad or len(seen) != len(floor) else 0)
PY
check 'time >= the sleeps, in µs, on every call' python3 "$tmp/sleep.py" "$tmp/sleep.csv"

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
