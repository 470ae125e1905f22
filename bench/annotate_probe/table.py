#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The table of bench/annotate_probe (issue 15, must show 1) from raw.csv:
per variant the median ns per call of the loop with its min-max over the
rounds, the probe's cost (median minus the uninstrumented median of the same
build kind), the ratio to the uninstrumented program, the cost as a ratio
to uftrace's cost of the same run, and the process's CPU time per call (with
the runtime's own threads; uftrace's recorder process is not in it)."""
import csv
import statistics
import sys


def main(path):
    rows = {}
    proc = {}
    comments = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                comments.append(line.rstrip())
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if r["ns_per_call"]:
                rows.setdefault(r["variant"], []).append(float(r["ns_per_call"]))
            if r.get("process_ns_per_call"):
                proc.setdefault(r["variant"], []).append(float(r["process_ns_per_call"]))
    base = statistics.median(rows["base"])
    pg = statistics.median(rows.get("pg-base", rows["base"]))
    print("\n".join(comments))
    print()
    uftrace = statistics.median(rows["uftrace"]) - pg if "uftrace" in rows else None
    print("| variant | rounds | ns/call median | min-max | probe cost ns/call "
          "| ratio to base | cost / uftrace's | process CPU ns/call |")
    print("|---|---|---|---|---|---|---|---|")
    for v in ["base", "sled", "sled-all", "sled-all-nw", "sled-all-wi", "sled-5f", "sled-all-5f", "live",
              "live-all", "uprobe-all", "pg-base", "uftrace"]:
        if v not in rows:
            continue
        xs = rows[v]
        m = statistics.median(xs)
        ref = pg if v == "uftrace" else base
        plain = v in ("base", "pg-base")
        cost = "-" if plain else f"{m - ref:.1f}"
        vs = "-" if plain or not uftrace or uftrace <= 0 else f"{(m - ref) / uftrace:.2f}x"
        pm = f"{statistics.median(proc[v]):.2f}" if v in proc else "-"
        print(f"| {v} | {len(xs)} | {m:.2f} | {min(xs):.2f}-{max(xs):.2f} | {cost} "
              f"| {m / base:.1f}x | {vs} | {pm} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "raw.csv")
