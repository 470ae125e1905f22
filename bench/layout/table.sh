#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The table of bench/layout/designed.sh from its raw data (default
# bench/results/layout-designed-raw), as Markdown on standard output.
#
# The statistics are recomputed from the samples, not read from the kept
# JSON: `lever compare --samples` on each comparison's times (the CPU times
# of the *.txt files; the wall times in the run JSON's values, with the run's
# seed, so that the bootstrap interval is the same), so that every number
# is a function of the times measured.
#
#   bench/layout/table.sh [RAW_DIR] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
raw=$(cd "${1:-$here/../results/layout-designed-raw}" && pwd)
lever=$(cd "${2:-$here/../../build}" && pwd)/bin/lever
[ -x "$lever" ] || { echo "table.sh: $lever is missing; build first" >&2; exit 1; }
python3 - "$raw" "$lever" <<'PY'
import functools, json, os, subprocess, sys, tempfile
raw, lever = sys.argv[1], sys.argv[2]
# the CPU-time comparisons: their samples, one value a line
CPU = {"layout-cpu.json": ("layout-cpu-original.txt", "layout-cpu-suggested.txt"),
       "overhead-cpu-idle.json": ("overhead-cpu-bare.txt", "overhead-cpu-idle.txt"),
       "overhead-cpu-recording.json": ("overhead-cpu-bare.txt", "overhead-cpu-recording.txt")}
tmp_dir = tempfile.TemporaryDirectory()
tmp = tmp_dir.name
@functools.lru_cache(maxsize=None)
def load(name):
    """The comparison NAME recomputed from its samples."""
    with open(os.path.join(raw, name)) as f:
        kept = json.load(f)
    seed = []
    if name in CPU:
        a, b = (os.path.join(raw, x) for x in CPU[name])
    else:
        a, b = os.path.join(tmp, name + ".a"), os.path.join(tmp, name + ".b")
        for path, side in ((a, "a"), (b, "b")):
            with open(path, "w") as f:
                f.writelines("%r\n" % v for v in kept[side]["values"])
        seed = ["--seed", str(kept["randomization"]["seed"])]
    out = subprocess.run([lever, "compare", "--samples", "--json"] + seed + [a, b],
                         check=True, capture_output=True, text=True, cwd=tmp).stdout
    return json.loads(out)
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
