#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The table of bench/layout/designed.sh from its raw data (default
# bench/results/layout-designed-raw), as Markdown on standard output.
#
#   bench/layout/table.sh [RAW_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
raw=${1:-$here/../results/layout-designed-raw}
python3 - "$raw" <<'PY'
import json, sys, os
raw = sys.argv[1]
def load(name):
    with open(os.path.join(raw, name)) as f:
        return json.load(f)
def row(label, d, ratio_of_b):
    a, b, s = d["a"], d["b"], d["speedup"]
    med_a, med_b = a["median"], b["median"]
    if ratio_of_b:  # overhead: time(B) / time(A)
        ratio = "%.3f" % (med_b / med_a)
    else:           # speedup: mean(A) / mean(B), with its bootstrap interval
        ratio = "%.3f [%.3f, %.3f]" % (s["estimate"], s["low"], s["high"])
    return "| %s | %d / %d | %.3f ± %.3f | %.3f ± %.3f | %s | %s, p = %.3g |" % (
        label, a["n"], b["n"], med_a, a["mad"], med_b, b["mad"], ratio,
        d["test"]["name"], d["test"]["p"])
print("| comparison (A vs B) | runs | median A ± MAD (s) | median B ± MAD (s) | ratio | test |")
print("|---|---|---|---|---|---|")
print(row("original vs suggested layout, --randomize=heap,code,stack (speedup A/B, 95% CI)",
          load("layout.json"), False))
print(row("the same, user+sys CPU time under lever stabilize (seed i for both; speedup A/B)",
          load("layout-cpu.json"), False))
print(row("bare vs lever cc --layout, not recording (time B/A)", load("overhead-idle.json"), True))
print(row("bare vs lever cc --layout, recording at the default rate (time B/A)",
          load("overhead-recording.json"), True))
print(row("bare vs lever cc --layout, not recording, user+sys CPU time (B/A)",
          load("overhead-cpu-idle.json"), True))
print(row("bare vs lever cc --layout, recording, user+sys CPU time (B/A)",
          load("overhead-cpu-recording.json"), True))
print()
for name in ("layout.json", "layout-cpu.json", "overhead-idle.json", "overhead-recording.json",
             "overhead-cpu-idle.json", "overhead-cpu-recording.json"):
    print("- %s: %s" % (name, load(name)["verdict"]))
for name in ("setup.txt", "uptime-before.txt", "uptime-after.txt"):
    with open(os.path.join(raw, name)) as f:
        print("- %s: %s" % (name, " / ".join(l.strip() for l in f if l.strip())))
PY
