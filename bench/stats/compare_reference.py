#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference values for tests/unit/test_stats_compare.c (the two-sample
decision, src/stats/compare.c), computed with SciPy/NumPy.

Run with Debian's Python (python3-scipy):

    /usr/bin/python3 bench/stats/compare_reference.py

and copy the printed values into the test; each line names the SciPy call
that produced it. The data sets are the test's, written out in full.
"""
import numpy as np
import scipy
from scipy import stats

A = [1.012, 1.034, 0.998, 1.021, 1.005, 1.027, 1.016, 0.993, 1.030, 1.009, 1.019, 1.002]
B = [0.981, 0.995, 0.972, 0.989, 0.978, 1.001, 0.985, 0.969, 0.993, 0.976, 0.987, 0.983]
C = [1.001, 1.011, 1.003, 1.022, 1.008, 1.004, 1.452, 1.033, 1.015, 1.006, 1.904, 1.026]


def show(name, value):
    print(f"{name} = {value!r}")


print(f"# SciPy {scipy.__version__}, NumPy {np.__version__}")
for name, x in (("A", A), ("B", B), ("C", C)):
    x = np.array(x)
    show(f"{name}: np.mean", np.mean(x))
    show(f"{name}: np.std(ddof=1)", np.std(x, ddof=1))
    show(f"{name}: np.median", np.median(x))
    w = stats.shapiro(x)
    show(f"{name}: stats.shapiro W", w.statistic)
    show(f"{name}: stats.shapiro p", w.pvalue)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
    show(f"{name}: stats.t.interval(0.95) low", lo)
    show(f"{name}: stats.t.interval(0.95) high", hi)

r = stats.ttest_ind(A, B, equal_var=False)
show("A,B: stats.ttest_ind(equal_var=False) t", r.statistic)
show("A,B: stats.ttest_ind(equal_var=False) p", r.pvalue)
va, vb = np.var(A, ddof=1) / len(A), np.var(B, ddof=1) / len(B)
show("A,B: Welch-Satterthwaite df", (va + vb) ** 2 / (va**2 / (len(A) - 1) + vb**2 / (len(B) - 1)))
r = stats.ttest_ind(A, B, equal_var=True)
show("A,B: stats.ttest_ind(equal_var=True) t", r.statistic)
show("A,B: stats.ttest_ind(equal_var=True) p", r.pvalue)
r = stats.levene(A, B, center="median")
show("A,B: stats.levene(center='median') F", r.statistic)
show("A,B: stats.levene(center='median') p", r.pvalue)
show("A,B: mean(A)/mean(B)", np.mean(A) / np.mean(B))
r = stats.mannwhitneyu(A, C, alternative="two-sided", method="exact")
show("A,C: stats.mannwhitneyu(method='exact') U", r.statistic)
show("A,C: stats.mannwhitneyu(method='exact') p", r.pvalue)
show("A,C: mean(A)/mean(C)", np.mean(A) / np.mean(C))

# ---------------------------------------------------------------- a suite
# tests/unit/test_measure_suite.c: four benchmarks, configurations A and B,
# three runs each. With two configurations the within-subjects ANOVA's F is
# the square of the paired t statistic on the cell means (same p).
SUITE = {
    "a": ([1.00, 1.02, 1.01], [0.95, 0.96, 0.94]),
    "b": ([2.00, 2.04, 2.02], [2.01, 2.03, 2.05]),
    "c": ([0.50, 0.51, 0.52], [0.47, 0.48, 0.46]),
    "d": ([3.10, 3.00, 3.20], [3.05, 2.95, 3.00]),
}
ma = [np.mean(a) for a, _ in SUITE.values()]
mb = [np.mean(b) for _, b in SUITE.values()]
r = stats.ttest_rel(ma, mb)
show("suite: stats.ttest_rel(cell means) t**2 (= F)", r.statistic**2)
show("suite: stats.ttest_rel(cell means) p", r.pvalue)
ratios = [b / a for a, b in zip(ma, mb)]
show("suite: mean(B)/mean(A) per benchmark", ratios)
show("suite: np.median(ratios)", np.median(ratios))
significant = faster = 0
for name, (a, b) in SUITE.items():
    normal = stats.shapiro(a).pvalue >= 0.05 and stats.shapiro(b).pvalue >= 0.05
    if normal:
        p = stats.ttest_ind(a, b, equal_var=False).pvalue
        how = "ttest_ind(equal_var=False)"
    else:
        p = stats.mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
        how = "mannwhitneyu(method='exact')"
    show(f"suite {name}: {how} p", p)
    significant += p < 0.05
    faster += p < 0.05 and np.mean(a) > np.mean(b)
show("suite: significant at 0.05", significant)
show("suite: of which B faster", faster)

# ---------------------------------------------------------------- extremes
# tests/unit/test_stats_compare.c: W and sd are scale-invariant (sd scales
# with the data), so subnormal (x 1e-310) and huge (x 1e60) copies of D must
# give D's W and p, and sd(D) times the factor.
D = [1.0, 2.0, 3.0, 1.5, 2.5]
w = stats.shapiro(D)
show("D: stats.shapiro W", w.statistic)
show("D: stats.shapiro p", w.pvalue)
show("D: np.std(ddof=1)", np.std(D, ddof=1))
