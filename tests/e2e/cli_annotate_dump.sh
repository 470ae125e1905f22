#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever annotate dump (doc/annotate.md): a synthetic record as CSV and JSON,
# read back with Python's csv and json modules (what pandas and R read too)
# and compared value by value with the record's own lines; -f selection, -o,
# and clear errors (exit 2) for a missing symbol, a bad record, a bad format
# and an unwritable output.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

expect 0 'usage: lever annotate dump' "$lever" annotate dump --help
expect 0 'dump: ' "$lever" annotate --help
check 'synth' "$lever" annotate synth --calls 40 --seed 5 -o "$tmp/r.rec"
check 'dump csv to a file' "$lever" annotate dump "$tmp/r.rec" -o "$tmp/all.csv"
check 'dump json to stdout' bash -c "'$lever' annotate dump --format=json '$tmp/r.rec' >'$tmp/all.json'"

# every call of the record, with every metric and feature value, in both forms
cat >"$tmp/compare.py" <<'PY'
import csv, json, math, sys
rec, csv_path, json_path = sys.argv[1:4]
symbols, features, calls, branches = {}, {}, [], set()
for line in open(rec):
    f = line.rstrip("\n").split(" ")
    if f[0] == "S":
        symbols[f[1]] = " ".join(f[2:])
    elif f[0] == "F":
        features[(f[1], f[2])] = " ".join(f[4:])
        if f[3] == "branch":
            branches.add(" ".join(f[4:]))
    elif f[0] == "C":
        row = {"symbol": symbols[f[1]], "id": int(f[2]), "parent": int(f[3])}
        for kv in f[4:]:
            k, v = kv.split("=", 1)
            if k.isdigit():
                k = features[(f[1], k)]
                v = {"?": None, "-": None}.get(v, v)
            # a branch's cell is its outcome string as recorded
            row[k] = None if v is None else v if k in branches else float(v)
        calls.append(row)
rows = list(csv.DictReader(open(csv_path)))
objs = json.load(open(json_path))
assert len(rows) == len(calls) == len(objs), (len(rows), len(calls), len(objs))
for want, got_csv, got_json in zip(calls, rows, objs):
    assert set(got_csv) == set(got_json), (set(got_csv), set(got_json))
    for key in got_csv:
        c, j = got_csv[key], got_json[key]
        w = want.get(key)
        if key == "symbol":
            assert c == j == w, (c, j, w)
        elif key in ("id", "parent"):
            assert int(c) == j == w, (key, c, j, w)
        elif w is None:
            assert c == "" and j is None, (key, c, j)
        elif key in branches:
            assert c == j == w, (key, c, j, w)
        else:
            assert float(c) == j == w, (key, c, j, w)
print(len(calls), "calls,", len(rows[0]), "columns: identical")
PY
check 'CSV and JSON hold exactly the record' python3 "$tmp/compare.py" "$tmp/r.rec" "$tmp/all.csv" "$tmp/all.json"

expect 0 '^symbol,id,parent,time,mem,t$' "$lever" annotate dump -f test_quad_int "$tmp/r.rec"
check 'one symbol: its 40 calls' test "$(grep -c '^test_quad_int' "$tmp/out")" = 40
check 'one symbol: nothing else' test "$(wc -l <"$tmp/out")" = 41

# errors
expect 2 "no symbol 'nope' in the record" "$lever" annotate dump -f nope "$tmp/r.rec"
expect 2 "no symbol 'nope'" "$lever" annotate dump -f nope -o "$tmp/x.csv" "$tmp/r.rec"
check 'no half table left behind' test ! -e "$tmp/x.csv"
printf 'lever-annotate-record 1\nS 0 f\nC 0 1 0 time=x\n' >"$tmp/bad.rec"
expect 2 'bad.rec:3: bad value' "$lever" annotate dump "$tmp/bad.rec"
expect 2 "--format: 'xml' is not csv or json" "$lever" annotate dump --format=xml "$tmp/r.rec"
expect 2 'expected one RECORD' "$lever" annotate dump
expect 2 "$tmp/no/such/dir/x.csv: No such file" "$lever" annotate dump -o "$tmp/no/such/dir/x.csv" "$tmp/r.rec"
expect 2 'No such file' "$lever" annotate dump "$tmp/absent.rec"
if [ -w /dev/full ]; then
	expect 2 'No space left on device' "$lever" annotate dump "$tmp/r.rec" -o /dev/full
	check 'a device is never removed after a failure' test -c /dev/full
fi

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
