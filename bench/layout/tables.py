#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tables of bench/layout/{overhead,skid}.sh from their raw data.

  tables.py overhead bench/results/layout-overhead-raw > bench/results/layout-overhead.md
  tables.py skid     bench/results/layout-skid-raw     > bench/results/layout-skid.md

Overhead: per round, the ratio record / bare of each time; the table gives
the median ratio with a distribution-free 95% interval for the median
(order statistics of the binomial(n, 1/2), as for a sign test), and the
medians of the times themselves. Deterministic: the same raw data give the
same table.
"""
import csv
import math
import statistics
import sys


def read(raw):
    with open(f"{raw}/runs.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    with open(f"{raw}/machine.txt") as f:
        machine = [line.rstrip("\n") for line in f]
    return rows, machine


def median_interval(values, level=0.95):
    """Median and the widest order-statistic interval covering it with >= level."""
    v = sorted(values)
    n = len(v)
    if n < 6:
        return statistics.median(v), None, None
    # largest k with P(Binomial(n, 1/2) < k) <= (1 - level) / 2
    alpha = (1 - level) / 2
    cdf, k = 0.0, 0
    while True:
        p = math.comb(n, k) * 0.5**n
        if cdf + p > alpha:
            break
        cdf += p
        k += 1
    if k == 0:
        return statistics.median(v), None, None
    return statistics.median(v), v[k - 1], v[n - k]


def pct(x):
    return f"{(x - 1) * 100:+.2f}%"


def overhead(raw):
    rows, machine = read(raw)
    out = ["# Collection overhead of `lever layout record --source=clock` (default rate)", ""]
    out.append(
        "Program: tests/programs/layout/record_hot, random reads of one field over 64 MiB "
        "(memory-bound) and over 1 MiB (cache-resident). Interleaved rounds (order alternating), "
        "raw data in `layout-overhead-raw/`, table by `bench/layout/tables.py overhead`. "
        "Overhead: the median of the per-round ratios recorded / bare, with a "
        "distribution-free 95% interval for that median."
    )
    for mib in sorted({r["mib"] for r in rows}, key=int, reverse=True):
        by_round = {}
        for r in rows:
            if r["mib"] == mib:
                by_round.setdefault(r["round"], {})[r["mode"]] = r
        pairs = [v for v in by_round.values() if "bare" in v and "record" in v]
        out.append("")
        out.append(f"## {mib} MiB, {len(pairs)} rounds")
        out.append("")
        out.append("| time | bare (median) | recorded (median) | overhead (median ratio) | 95% interval |")
        out.append("| --- | --- | --- | --- | --- |")
        for key, name in (
            ("loop_cpu_ns", "loop CPU time (includes the sampling interrupts)"),
            ("loop_ns", "loop wall time"),
            ("command_ns", "whole command (lever start-up, resolving, static part, writing)"),
        ):
            bare = [int(p["bare"][key]) for p in pairs]
            rec = [int(p["record"][key]) for p in pairs]
            ratios = [b / a for a, b in zip(bare, rec)]
            m, lo, hi = median_interval(ratios)
            interval = f"{pct(lo)} .. {pct(hi)}" if lo is not None else "n/a (too few rounds)"
            out.append(
                f"| {name} | {statistics.median(bare) / 1e6:.1f} ms | {statistics.median(rec) / 1e6:.1f} ms "
                f"| {pct(m)} | {interval} |"
            )
        samples = [int(p["record"]["samples"]) for p in pairs]
        cpu = [int(p["record"]["loop_cpu_ns"]) for p in pairs]
        out.append("")
        out.append(
            f"Samples per recorded run: median {statistics.median(samples):.0f} "
            f"(about {statistics.median(s / (c / 1e9) for s, c in zip(samples, cpu)):.0f} per CPU second of the loop)."
        )
        fast = [v for v in by_round.values() if "bare" in v and "record10k" in v]
        if fast:
            ratios = [int(v["record10k"]["loop_cpu_ns"]) / int(v["bare"]["loop_cpu_ns"]) for v in fast]
            m, lo, hi = median_interval(ratios)
            rate = statistics.median(
                int(v["record10k"]["samples"]) / (int(v["record10k"]["loop_cpu_ns"]) / 1e9) for v in fast
            )
            scale = 1000 / rate
            out.append("")
            out.append(
                f"At -F 10000 ({rate:.0f} samples per CPU second), loop CPU time {pct(m)} "
                + (f"(95% {pct(lo)} .. {pct(hi)})" if lo is not None else "")
                + f"; scaled to 1000 per second (x {scale:.3f}): **{(m - 1) * scale * 100:+.2f}%**"
                + (f" (95% {(lo - 1) * scale * 100:+.2f}% .. {(hi - 1) * scale * 100:+.2f}%)" if lo is not None else "")
                + "."
            )
    out.append("")
    out.append("Machine (`uptime` before and after the rounds; a `# note:` line, if any, from the script's NOTE):")
    out.append("")
    out += [f"    {line}" for line in machine]
    return "\n".join(out) + "\n"


def skid(raw):
    rows, machine = read(raw)
    out = ["# Where `clock` samples land: the stalling load or the next instruction", ""]
    out.append(
        "Program: tests/programs/layout/record_hot, whose only stalling instruction is its load of "
        "`hot` (the truth). `--skid=previous` charges a sample to the instruction before the "
        "interrupted pc; `--skid=none` to the interrupted pc. Raw data in `layout-skid-raw/`, "
        "table by `bench/layout/tables.py skid`."
    )
    out.append("")
    out.append("| --skid | rounds | samples (median) | at a memory instruction | on the load of hot (median share, min..max) |")
    out.append("| --- | --- | --- | --- | --- |")
    for mode in ("previous", "none"):
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        s = [int(r["samples"]) for r in rs]
        mem = [int(r["memory_samples"]) / int(r["samples"]) for r in rs]
        hot = [int(r["at_hot_load"]) / int(r["samples"]) for r in rs]
        out.append(
            f"| {mode} | {len(rs)} | {statistics.median(s):.0f} | {statistics.median(mem) * 100:.1f}% "
            f"| {statistics.median(hot) * 100:.1f}% ({min(hot) * 100:.1f}..{max(hot) * 100:.1f}%) |"
        )
    out.append("")
    out.append("Machine:")
    out.append("")
    out += [f"    {line}" for line in machine]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("overhead", "skid"):
        sys.exit("usage: tables.py overhead|skid RAW_DIR")
    sys.stdout.write(overhead(sys.argv[2]) if sys.argv[1] == "overhead" else skid(sys.argv[2]))


if __name__ == "__main__":
    main()
