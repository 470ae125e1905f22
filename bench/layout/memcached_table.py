#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The overhead table of bench/layout/memcached.sh: memcaslap throughput of
# memcached bare and under `lever layout record --source=clock` (mode
# `clock`: the default, one event per CPU where it opens; mode `per-task`:
# with --per-task, per-thread inherited events, what an unprivileged user
# gets), per round (rounds interleaved), as the median of the per-round
# ratios recorded/bare with a bootstrap 95% interval of that median
# (seeded: the table is reproducible from the committed overhead.tsv).
import random
import statistics
import sys

LABELS = {"clock": "clock", "per-task": "clock --per-task", "clock-500": "clock -F 500"}


def interval(ratios):
    rng = random.Random(1)
    boots = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                   for _ in range(2000))
    return boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]


def main(path):
    rows = {}
    loads = []
    with open(path) as f:
        next(f)
        for line in f:
            r, mode, tps, load1 = line.split()
            rows.setdefault(r, {})[mode] = float(tps)
            loads.append(float(load1))
    modes = [m for m in LABELS if any(m in v for v in rows.values())]
    if not modes:
        sys.exit("memcached_table: no recorded round in " + path)
    bare = [v["bare"] for v in rows.values() if "bare" in v]
    print("| mode | rounds | bare TPS (median) | recorded TPS (median) | ratio recorded/bare (median) | 95% bootstrap | load average (1 min) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    per_round = []
    for m in modes:
        ratios = [v[m] / v["bare"] for v in rows.values()
                  if m in v and "bare" in v and v["bare"] > 0]
        if not ratios:
            sys.exit(f"memcached_table: no complete round of {m} in {path}")
        lo, hi = interval(ratios)
        rec = [v[m] for v in rows.values() if m in v]
        print(f"| {LABELS[m]} | {len(ratios)} | {statistics.median(bare):.0f} "
              f"| {statistics.median(rec):.0f} "
              f"| {statistics.median(ratios):.3f} | {lo:.3f}..{hi:.3f} "
              f"| {min(loads):.1f}-{max(loads):.1f} |")
        per_round.append(f"per round ({LABELS[m]} / bare): "
                         + ", ".join(f"{x:.3f}" for x in ratios))
    print()
    for line in per_round:
        print(line)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "overhead.tsv")
