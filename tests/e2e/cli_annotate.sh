#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever annotate end to end (doc/annotate.md): synth -> derive -> check as a
# CI gate (an unchanged run passes; a run with an input-dependent slowdown
# injected into one function fails, and only that function), predict, JSON,
# and clear errors (exit 2) for bad records and annotation files.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

expect 0 'lever annotate derive RECORD' "$lever" annotate --help
expect 0 'usage: lever annotate' "$lever" help annotate
expect 2 'usage: lever annotate' "$lever" annotate
expect 2 "unknown subcommand 'frob'" "$lever" annotate frob
expect 2 'no function to probe: give -f SYMBOL' "$lever" annotate record -- true

check 'synth' "$lever" annotate synth --calls 600 --seed 11 -o "$tmp/base.rec"
check 'synth again' "$lever" annotate synth --calls 600 --seed 12 -o "$tmp/again.rec"
expect 0 'cross-validated R2' "$lever" annotate derive "$tmp/base.rec"
cp "$tmp/out" "$tmp/base.ann"
check 'A.15 has its two branch scopes' grep -q '\[a <= 10\] Norm(' "$tmp/base.ann"
check 'A.19 is a main trend' grep -q 'M Norm(' "$tmp/base.ann"

# an unchanged run conforms
expect 0 'PASS test_quad_int' "$lever" annotate check "$tmp/base.ann" "$tmp/again.rec"
check 'no function fails on an unchanged run' bash -c "! grep -q '^FAIL' '$tmp/out'"

# test_quad_int (symbol 10) 3% slower per call, growing with t: caught
awk '$1 == "C" && $2 == 10 { for (i = 5; i <= NF; i++) if ($i ~ /^time=/) {
	split($i, kv, "="); $i = "time=" kv[2] * 1.03 } } { print }' \
	"$tmp/again.rec" >"$tmp/slow.rec"
expect 1 'FAIL test_quad_int' "$lever" annotate check "$tmp/base.ann" "$tmp/slow.rec"
check 'only the slowed function fails' test "$(grep -c '^FAIL' "$tmp/out")" = 1

expect 0 'mean' "$lever" annotate predict "$tmp/base.ann" test_quad_int t=100
expect 1 'no scope holds' "$lever" annotate predict "$tmp/base.ann" test_quad_int
expect 0 '"class": "nlogn"' "$lever" annotate derive --json -f test_nlogn_int "$tmp/base.rec"
check 'JSON parses' python3 -c "import json,sys; json.load(open('$tmp/out'))"

# --html: one self-contained page, a chart per scope and feature
expect 0 'Norm' "$lever" annotate derive -f test_linear_branches -f test_random_clustering \
	--html "$tmp/a.html" "$tmp/base.rec"
check 'HTML has the two scopes charts and the mixture' \
	test "$(grep -o '<svg' "$tmp/a.html" | wc -l)" -ge 3
check 'HTML fetches nothing' bash -c "! grep -qE '(src|href)=\"?https?:' '$tmp/a.html'"
check 'HTML has the annotation text' grep -q '\[a &lt;= 10\] Norm(' "$tmp/a.html"

# errors
printf 'lever-annotate-record 1\nS 0 f\nC 0 1 0 time=x\n' >"$tmp/bad.rec"
expect 2 'bad.rec:3: bad value' "$lever" annotate derive "$tmp/bad.rec"
printf 'f().time {\nannotations:\nNorm(1 +, 2);\n}\n' >"$tmp/bad.ann"
expect 2 'bad.ann:3:' "$lever" annotate check "$tmp/bad.ann" "$tmp/base.rec"
expect 2 "no symbol 'nope'" "$lever" annotate derive -f nope "$tmp/base.rec"
# usage errors come from the option table (src/cli/options.h), one per subcommand
expect 2 "--min-det: 'x' is not a number 0..1" "$lever" annotate derive --min-det x "$tmp/base.rec"
expect 2 "--cv: '1' is not 0 .off. or a number of folds" "$lever" annotate derive --cv 1 "$tmp/base.rec"
expect 2 "--correlation-threshold: '0' is not a number above 0" \
	"$lever" annotate derive --correlation-threshold 0 "$tmp/base.rec"
expect 2 "--metric: 'x' is not a metric" "$lever" annotate derive -m x "$tmp/base.rec"
expect 2 "--good-pvalue: '0' is not a probability" \
	"$lever" annotate derive --good-pvalue 0 "$tmp/base.rec"
expect 2 "--max-interaction-features: '33' is not a whole number 1..32" \
	"$lever" annotate derive --max-interaction-features 33 "$tmp/base.rec"
expect 2 'expected one RECORD' "$lever" annotate derive
expect 2 "unknown option '--frob'" "$lever" annotate derive --frob "$tmp/base.rec"
expect 2 "--alpha: '1' is not a probability above 0, below 1" \
	"$lever" annotate check --alpha 1 "$tmp/base.ann" "$tmp/base.rec"
expect 2 "--min-points: '1' is not" "$lever" annotate check --min-points 1 "$tmp/base.ann" "$tmp/base.rec"
expect 2 'expected ANNOTATIONS RECORD' "$lever" annotate check "$tmp/base.ann"
expect 2 "--metric: 'x' is not a metric" "$lever" annotate predict -m x "$tmp/base.ann" f
expect 2 "--shape: 'x' is not appendix-a or wide" "$lever" annotate synth --shape x -o "$tmp/x.rec"
expect 2 "--features: '2' is not" "$lever" annotate synth --features 2 -o "$tmp/x.rec"
expect 2 'expected -o RECORD' "$lever" annotate synth
# values the old parser took still parse: exponents for p-values, wait_time, options after operands
expect 0 'Norm' "$lever" annotate derive -f test_linear_int --good-pvalue 1e-9 --cv 0 \
	"$tmp/base.rec" --no-clustering
expect 0 'no call has the metric wait' "$lever" annotate derive -m wait_time "$tmp/base.rec"
expect 0 'mean' "$lever" annotate predict "$tmp/base.ann" test_quad_int --metric time t=100
expect 0 'PASS' "$lever" annotate check --alpha 5e-3 "$tmp/base.ann" "$tmp/again.rec"
# every subcommand's --help is generated from its table
expect 0 '--max-interaction-features N' "$lever" annotate derive --help
expect 0 'Exit status 0: every function conforms' "$lever" annotate check --help
expect 0 'FEATURE=VALUE' "$lever" annotate predict --help
expect 0 '--shape appendix-a|wide' "$lever" annotate synth --help
# a record cut by a killed writer is read, with a warning
head -c -7 "$tmp/base.rec" >"$tmp/cut.rec"
expect 0 'cut short' "$lever" annotate derive -f test_linear_int "$tmp/cut.rec"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
