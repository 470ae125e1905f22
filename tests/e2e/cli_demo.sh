#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# make demo's script runs end to end (few rounds: this checks the plumbing, not the curve).
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
out=$(DEMO_ROUNDS=150 DEMO_TRUTH_ROUNDS=5 DEMO_TRUTH_REPS=1 bash "$src/examples/demo.sh" "$build" 2>&1)
echo "$out"
grep -q 'figure1: 150 rounds' <<<"$out"
grep -q '^lever causal report: 1 run, [0-9]* experiments' <<<"$out"
grep -q 'progress points: round (throughput)' <<<"$out"
grep -q '100% shorter' <<<"$out"
# the report comes last, with the HTML page it wrote
tail -1 <<<"$out" | grep -q "^HTML report: $build/examples/figure1.html$"
# (150 rounds may leave no line with a full curve, so no chart: check the page itself)
grep -q '<title>lever causal report</title>' "$build/examples/figure1.html"
