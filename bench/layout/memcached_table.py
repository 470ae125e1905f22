#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The overhead table of bench/layout/memcached.sh: memcaslap throughput of
# memcached bare and under `lever layout record --source=clock`, per round
# (rounds interleaved), as the median of the per-round ratios recorded/bare
# with a bootstrap 95% interval of that median (seeded: the table is
# reproducible from the committed overhead.tsv).
import random
import statistics
import sys


def main(path):
    rows = {}
    loads = []
    with open(path) as f:
        next(f)
        for line in f:
            r, mode, tps, load1 = line.split()
            rows.setdefault(r, {})[mode] = float(tps)
            loads.append(float(load1))
    ratios = [v["clock"] / v["bare"] for v in rows.values()
              if "clock" in v and "bare" in v and v["bare"] > 0]
    if not ratios:
        sys.exit("memcached_table: no complete round in " + path)
    rng = random.Random(1)
    boots = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                   for _ in range(2000))
    lo, hi = boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]
    bare = [v["bare"] for v in rows.values() if "bare" in v]
    clock = [v["clock"] for v in rows.values() if "clock" in v]
    print("| rounds | bare TPS (median) | clock TPS (median) | ratio clock/bare (median) | 95% bootstrap | load average (1 min) |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(f"| {len(ratios)} | {statistics.median(bare):.0f} | {statistics.median(clock):.0f} "
          f"| {statistics.median(ratios):.3f} | {lo:.3f}..{hi:.3f} "
          f"| {min(loads):.1f}-{max(loads):.1f} |")
    print()
    print("per round (clock/bare): " + ", ".join(f"{x:.3f}" for x in ratios))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "overhead.tsv")
