#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The table of bench/annotate_features: per case, the median ns per
evaluation over the rounds, with the range of the middle half (25th-75th
percentile) and min-max. usage: table.py RESULTS.csv"""
import csv
import statistics
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
order, by = [], {}
for r in rows:
    if r["case"] not in by:
        order.append(r["case"])
    by.setdefault(r["case"], []).append(float(r["ns"]))
print("| program | median ns/eval | 25-75% | min-max | rounds |")
print("|---|---|---|---|---|")
for c in order:
    v = sorted(by[c])
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0], v[0], v[0]]
    print("| %s | %.1f | %.1f-%.1f | %.1f-%.1f | %d |"
          % (c, statistics.median(v), q[0], q[2], v[0], v[-1], len(v)))
