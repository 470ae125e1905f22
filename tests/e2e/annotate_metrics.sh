#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The eight metrics of `lever annotate record` end to end (spec/freud.md
# §4.2.2, doc/annotate-metrics.md), through liblever-annotate.so on
# tests/programs/annotate/metrics_known.c, whose functions do known amounts
# of each: mem exact, the others at least what the function did (lower
# bounds: load can only add), wait and hold within time. The program checks
# its own errno and return values (exit 0). An executable with its own
# malloc gets one clear line saying mem cannot see it.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"

if ! "$lever" annotate record --help >/dev/null 2>&1; then
	skip_test "lever annotate record is not built in this tree (branch ann-probe)"
fi
fargs=(-f alloc_bytes -f hold_lock -f wait_lock -f spin_cpu -f touch_pages -f sleep_often)
all=time,cpu,mem,wait,hold,pfaults,Pfaults,cs

expect 0 '18 calls recorded of 18' "$lever" annotate record "${fargs[@]}" --metrics $all \
	--rate all -o "$tmp/r" -- "$dir/metrics_known" 3
check 'dump' "$lever" annotate dump "$tmp/r/record" -o "$tmp/r.csv"
cat >"$tmp/check.py" <<'PY'
import csv, sys
calls = {}
for r in csv.DictReader(open(sys.argv[1])):
    calls.setdefault(r["symbol"], []).append(r)
# function: (metric, its lower bound in round r = 1, 2, 3, exact?)
want = {"alloc_bytes": ("mem", lambda r: 1000 * r, True),
        "hold_lock": ("hold", lambda r: 5000 * r, False),
        "wait_lock": ("wait", lambda r: 5000 * r, False),
        "spin_cpu": ("cpu", lambda r: 5000 * r - 50, False),
        "touch_pages": ("pfaults", lambda r: 16 * r, False),
        "sleep_often": ("cs", lambda r: 3 * r, False)}
fails = 0
for fn, (metric, bound, exact) in want.items():
    rows = calls.get(fn, [])
    got = [float(x[metric]) for x in rows]
    ok = len(rows) == 3 and all((g == bound(r) if exact else g >= bound(r))
                                for r, g in zip((1, 2, 3), got))
    print("%s: %s %s %s" % ("ok" if ok else "FAIL", fn, metric,
                            " ".join("%g" % g for g in got)))
    fails += not ok
for fn, rows in calls.items():
    for x in rows:
        ok = all(x[m] != "" for m in ("time", "cpu", "mem", "wait", "hold", "pfaults",
                                      "Pfaults", "cs"))
        ok = ok and float(x["wait"]) <= float(x["time"]) and float(x["hold"]) <= float(x["time"])
        if not ok:
            print("FAIL: %s: a metric missing, or wait/hold above time: %s" % (fn, x))
            fails += 1
sys.exit(1 if fails else 0)
PY
check 'each metric at least what the function did (mem exactly)' python3 "$tmp/check.py" "$tmp/r.csv"

# an allocator the executable defines itself: said once, clearly
expect 0 'the program defines malloc itself' "$lever" annotate record -f alloc_bytes \
	--metrics mem --rate all -o "$tmp/own" -- "$dir/metrics_own_malloc" 1
check 'said once' test "$(grep -c 'defines malloc itself' "$tmp/out")" = 1
expect 0 'recorded' "$lever" annotate record -f alloc_bytes --metrics time --rate all \
	-o "$tmp/own2" -- "$dir/metrics_own_malloc" 1
check 'not said when mem is not asked for' bash -c "! grep -q 'defines malloc' '$tmp/out'"
expect 0 'recorded' "$lever" annotate record -f alloc_bytes --metrics mem --rate all \
	-o "$tmp/plain" -- "$dir/metrics_known" 1
check 'not said for the C library allocator' bash -c "! grep -q 'defines malloc' '$tmp/out'"

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
