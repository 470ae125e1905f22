#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The table of bench/annotate_metrics/clock_cost.c's raw CSV: per method the
# median ns per read over the rounds, with a distribution-free 95% interval
# of the median (order statistics of the binomial(n, 1/2)).
import csv, math, sys
from collections import defaultdict

def median_interval(xs):
    xs = sorted(xs)
    n = len(xs)
    med = (xs[(n - 1) // 2] + xs[n // 2]) / 2
    # largest k with P(Bin(n,1/2) < k) <= 0.025
    k, cum = 0, 0.0
    while True:
        p = math.comb(n, k) / 2 ** n
        if cum + p > 0.025:
            break
        cum += p
        k += 1
    lo, hi = xs[max(k - 1, 0)], xs[min(n - k, n - 1)]
    return med, lo, hi

rows = defaultdict(list)
order = []
for r in csv.DictReader(open(sys.argv[1])):
    if r["method"] not in rows:
        order.append(r["method"])
    rows[r["method"]].append(float(r["ns_per_read"]))
print("| method | median ns/read | 95% interval | rounds |")
print("|---|---:|---|---:|")
for m in order:
    med, lo, hi = median_interval(rows[m])
    print(f"| {m} | {med:.1f} | {lo:.1f} – {hi:.1f} | {len(rows[m])} |")
