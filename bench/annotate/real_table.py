#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The overhead table of bench/annotate/real.sh: per program, wall and CPU
# (user+sys) seconds of whole runs bare and under `lever annotate record`
# (default rate), rounds interleaved; the median of the per-round ratios
# recorded/bare with a seeded bootstrap 95% interval of that median.
import random
import statistics
import sys


def interval(ratios):
    rng = random.Random(1)
    boots = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                   for _ in range(2000))
    return boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]


def main(path):
    runs = {}
    loads = []
    with open(path) as f:
        next(f)
        for line in f:
            prog, r, mode, wall, cpu, load1 = line.split()
            runs.setdefault(prog, {}).setdefault(r, {})[mode] = (float(wall), float(cpu))
            loads.append(float(load1))
    print("| program | rounds | bare wall s | recorded wall s | wall ratio (95%) "
          "| bare CPU s | recorded CPU s | CPU ratio (95%) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for prog, rounds in runs.items():
        full = [v for v in rounds.values() if "bare" in v and "recorded" in v]
        if not full:
            continue
        cells = [prog, str(len(full))]
        for k in (0, 1):
            bare = [v["bare"][k] for v in full]
            rec = [v["recorded"][k] for v in full]
            ratios = [v["recorded"][k] / v["bare"][k] for v in full if v["bare"][k] > 0]
            lo, hi = interval(ratios)
            cells += [f"{statistics.median(bare):.2f}", f"{statistics.median(rec):.2f}",
                      f"{statistics.median(ratios):.3f} ({lo:.3f}..{hi:.3f})"]
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"load average (1 min) during the rounds: {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "overhead.tsv")
