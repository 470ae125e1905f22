#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/causal helper: predictions from raw profiles, and the report tables.

  analyze.py predict [--min-speedups N] PROFILE...
      Prints the causal curves of the profiles as JSON, in the schema of
      `lever causal report --json`:
        {"series": [{"line", "point", "kind", "slope",
                     "points": [{"line_speedup", "program_speedup", "ci",
                                 "experiments"}]}]}
      computed as in spec coz.md §10: experiments with the same line and
      speedup are combined by adding durations and visits; throughput
      p = duration / visits, program speedup = 1 - p_s / p_0; latency by
      Little's law, W = sum(difference * duration) / sum(arrivals),
      improvement (W_0 - W_s) / W_0. Buckets with fewer than 5 visits are
      left out; no phase correction. "ci" is a 95% bootstrap interval over
      experiments. run.sh uses this while `lever causal report` has no
      --json, and always as a cross-check.

  analyze.py predict --coz-viewer PROFILE...
      The same JSON, as Coz's web viewer computes the curves (spec
      anchors.md §1.8): the cross-check of `lever causal report
      --method=coz-viewer`.

  analyze.py tables DATA_DIR
      Writes the Markdown report of a run.sh run (DATA_DIR = WORKDIR/data).
"""
import json
import math
import os
import random
import statistics
import sys

MIN_VISITS = 5


def parse_profile(path):
    """Experiments of a Coz-format profile: dicts with selected, speedup
    (whole percent), duration, and points {name: (kind, a, b, c)}."""
    exps = []
    cur = None
    with open(path, errors="replace") as f:
        for raw in f:
            fields = raw.rstrip("\n").split("\t")
            rec, kv = fields[0], {}
            for x in fields[1:]:
                if "=" in x:
                    k, v = x.split("=", 1)
                    kv[k] = v
            try:
                if rec == "experiment":
                    cur = None
                    dur = int(kv["duration"])
                    if dur <= 0 or dur >= 2**63:  # Coz writes wrapped negatives
                        continue
                    cur = {"selected": kv["selected"],
                           "speedup": int(round(float(kv["speedup"]) * 100)),
                           "duration": dur, "points": {}}
                    exps.append(cur)
                elif rec in ("throughput-point", "progress-point") and cur is not None:
                    cur["points"][kv["name"]] = ("throughput", int(kv["delta"]), 0, 0)
                elif rec == "latency-point" and cur is not None:
                    diff = int(kv["difference"])
                    if diff >= 2**63:
                        diff -= 2**64
                    cur["points"][kv["name"]] = ("latency", int(kv["arrivals"]),
                                                 int(kv["departures"]), diff)
            except (KeyError, ValueError):
                continue
    return exps


def bucket_cost(entries, kind):
    """Period (throughput) or Little's-law latency of a list of
    (duration, a, b, c) entries; None if unusable."""
    dur = sum(e[0] for e in entries)
    visits = sum(e[1] for e in entries)
    if visits < MIN_VISITS or dur <= 0:
        return None
    if kind == "latency":
        return sum(e[3] * e[0] for e in entries) / visits
    return dur / visits


def quantile(sorted_vals, p):
    """Linear interpolation between order statistics (R's type 7)."""
    h = (len(sorted_vals) - 1) * p
    lo = math.floor(h)
    if lo >= len(sorted_vals) - 1:
        return sorted_vals[-1]
    frac = h - lo
    if frac == 0:
        return sorted_vals[lo]
    return sorted_vals[lo] + frac * (sorted_vals[lo + 1] - sorted_vals[lo])


def trim(entries, kind):
    """lever causal report's default (src/causal/summary.c trim_bucket):
    experiments whose cost per visit lies beyond 3 IQR past the quartiles
    of their bucket are set aside, when the bucket has >= 8 experiments
    with a median of >= 5 visits. Visits are counts, so the spread is at
    least the cost of one visit at the median count (median cost / median
    visits)."""
    if len(entries) < 8:
        return entries
    visits = sorted(e[1] for e in entries)
    v_med = quantile(visits, 0.5)
    if v_med < MIN_VISITS:
        return entries

    def cost(e):
        if e[1] <= 0:
            return math.inf
        return (e[3] * e[0] if kind == "latency" else e[0]) / e[1]
    costs = sorted(cost(e) for e in entries)
    q1, q3 = quantile(costs, 0.25), quantile(costs, 0.75)
    if not math.isfinite(q3):
        return entries
    iqr = max(q3 - q1, quantile(costs, 0.5) / v_med)
    if not iqr > 0:
        return entries
    lo, hi = q1 - 3 * iqr, q3 + 3 * iqr
    return [e for e in entries if lo <= cost(e) <= hi]


def speedup_of(base, cost):
    if base is None or cost is None or base <= 0:
        return None
    return 1.0 - cost / base


def bootstrap_ci(b0, bs, kind, rng, n=200):
    vals = []
    for _ in range(n):
        r0 = [rng.choice(b0) for _ in b0]
        rs = [rng.choice(bs) for _ in bs]
        y = speedup_of(bucket_cost(r0, kind), bucket_cost(rs, kind))
        if y is not None and math.isfinite(y):
            vals.append(y)
    if len(vals) < 10:
        return None
    vals.sort()
    return [vals[int(0.025 * (len(vals) - 1))], vals[int(0.975 * (len(vals) - 1))]]


def slope(points):
    xs = [p["line_speedup"] for p in points]
    ys = [min(2.0, max(-1.0, p["program_speedup"])) for p in points]
    n = len(xs)
    d = n * sum(x * x for x in xs) - sum(xs) ** 2
    if n < 2 or abs(d) < 1e-12:
        return 0.0
    return (n * sum(x * y for x, y in zip(xs, ys)) - sum(xs) * sum(ys)) / d


def predict(paths, min_speedups, no_trim=False):
    groups = {}  # (line, point, kind) -> {pct: [entries]}
    for path in paths:
        for e in parse_profile(path):
            for name, (kind, a, b, c) in e["points"].items():
                g = groups.setdefault((e["selected"], name, kind), {})
                g.setdefault(e["speedup"], []).append((e["duration"], a, b, c))
    rng = random.Random(1)
    series = []
    for (line, point, kind), buckets in sorted(groups.items()):
        if not no_trim:
            buckets = {pct: trim(es, kind) for pct, es in buckets.items()}
        base = bucket_cost(buckets.get(0, []), kind) if 0 in buckets else None
        if base is None:
            continue
        pts = []
        for pct in sorted(buckets):
            y = 0.0 if pct == 0 else speedup_of(base, bucket_cost(buckets[pct], kind))
            if y is None or not math.isfinite(y):
                continue
            ci = [0.0, 0.0] if pct == 0 else bootstrap_ci(buckets[0], buckets[pct], kind, rng)
            pts.append({"line_speedup": pct / 100, "program_speedup": y,
                        "ci": ci, "experiments": len(buckets[pct])})
        if len(pts) < min_speedups:
            continue
        series.append({"line": line, "point": point, "kind": kind,
                       "slope": slope(pts), "points": pts})
    series.sort(key=lambda s: -s["slope"])
    return {"series": series}


def predict_viewer(paths, min_points=10):
    """Coz's viewer's numbers (spec anchors.md §1.8), computed here
    independently of `lever causal report --method=coz-viewer` as its
    cross-check: sums per (line, point, speedup), no trimming, no phase
    correction; a point needs 5 visits (arrivals); (base - value) / base,
    negated for latency; points outside [-1, 2] dropped; lines in coz.h
    dropped; Minimum Points lowered from 10 until a curve has them."""
    groups = {}  # (line, point, kind) -> {pct: [duration, visits, difference x duration, n]}
    for path in paths:
        for e in parse_profile(path):
            if "/coz.h:" in e["selected"] or e["selected"].startswith("coz.h:"):
                continue
            for name, (kind, a, _, c) in e["points"].items():
                g = groups.setdefault((e["selected"], name, kind), {})
                agg = g.setdefault(e["speedup"], [0, 0, 0, 0])
                agg[0] += e["duration"]
                agg[1] += a
                agg[2] += c * e["duration"]
                agg[3] += 1

    def value(agg, kind):
        if agg[1] < 5:
            return None
        return (agg[2] if kind == "latency" else agg[0]) / agg[1]
    curves = []
    for (line, point, kind), aggs in sorted(groups.items()):
        base = value(aggs[0], kind) if 0 in aggs else None
        if not base:
            continue
        pts = []
        for pct in sorted(aggs):
            v = value(aggs[pct], kind)
            if v is None:
                continue
            y = (base - v) / base * (-1 if kind == "latency" else 1)
            if -1 <= y <= 2:
                pts.append({"line_speedup": pct / 100, "program_speedup": y,
                            "experiments": aggs[pct][3]})
        curves.append({"line": line, "point": point, "kind": kind, "points": pts})
    while min_points > 1 and not any(len(c["points"]) >= min_points for c in curves):
        min_points -= 1
    series = [c for c in curves if c["points"] and len(c["points"]) >= min_points]
    for c in series:
        area, best, p = 0.0, 0.0, c["points"]
        for a, b in zip(p, p[1:]):
            area += (a["program_speedup"] + b["program_speedup"]) / 2 * (
                b["line_speedup"] - a["line_speedup"])
            best = max(best, area / b["line_speedup"])
        c["impact"] = best
    series.sort(key=lambda c: (-c["impact"], c["line"], c["point"]))
    return {"method": "coz-viewer", "viewer_min_points": min_points, "series": series}


# ---------------------------------------------------------------- tables

def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def find_series(doc, line, point):
    """The series of FILE:LINE (matched on the file's base name) and point."""
    file, _, lno = line.rpartition(":")
    for s in doc.get("series", []):
        sfile, _, slno = s.get("line", "").rpartition(":")
        if slno == lno and os.path.basename(sfile) == file and s.get("point") == point:
            return s
    return None


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def fmt_pct(x, signed=True):
    if x is None:
        return "–"
    return ("%+.1f" if signed else "%.1f") % (100 * x)


def truth_ci(runs0, runs_s, rng, n=500):
    """95% bootstrap interval of 1 - median(runs_s) / median(runs0)."""
    if len(runs0) < 2 or len(runs_s) < 2:
        return None
    vals = sorted(1 - statistics.median(rng.choices(runs_s, k=len(runs_s))) /
                  statistics.median(rng.choices(runs0, k=len(runs0))) for _ in range(n))
    return [vals[int(0.025 * (n - 1))], vals[int(0.975 * (n - 1))]]


def load_note(data, prog):
    marks = {r[1]: r[2:] for r in read_tsv(os.path.join(data, "load.tsv")) if r[0] == prog}
    if "start" not in marks or "end" not in marks:
        return ""
    return (" Machine load (1-min average) %s at the start, %s at the end; CPU pressure "
            "(PSI some, avg60) %s%% → %s%%." % (marks["start"][0], marks["end"][0],
                                                 marks["start"][1], marks["end"][1]))


def accuracy_tables(data, out):
    progs = read_tsv(os.path.join(data, "programs.tsv"))
    truth = {}
    for p, lvl, _, v in read_tsv(os.path.join(data, "truth.tsv")):
        if v:
            truth.setdefault(p, {}).setdefault(int(lvl), []).append(float(v))
    summary = []
    rng = random.Random(2)
    tools = ["lever", "coz"]
    # the Coz profiles through Coz's own viewer's method (lever causal report
    # --method=coz-viewer), where the run (or a --report-only pass) made it
    if any(os.path.exists(os.path.join(data, "%s.cozview.json" % r[0])) for r in progs):
        tools.append("cozview")
    if any(os.path.exists(os.path.join(data, "%s.lever2.json" % r[0])) for r in progs):
        tools.append("lever2")
    names = {"lever": "lever", "coz": "Coz", "cozview": "Coz viewer", "lever2": "lever2"}
    for p, kind, point, line, rounds_t, rounds_p in progs:
        med = {l: statistics.median(v) for l, v in truth.get(p, {}).items()}
        base = med.get(0)
        true_sp = {l: (1 - m / base) for l, m in med.items()} if base else {}
        out.append("### %s (`%s`, %s point `%s`)\n" % (p, line, kind, point))
        out.append("Truth: %d runs of %s rounds per level; profiles: runs of %s rounds.%s\n"
                   % (len(truth.get(p, {}).get(0, [])), rounds_t, rounds_p, load_note(data, p)))
        preds, checks, nexp = {}, {}, {}
        for tool in tools:
            s = find_series(load_json(os.path.join(data, "%s.%s.json" % (p, tool))), line, point)
            c = find_series(load_json(os.path.join(data, "%s.%s.check.json" % (p, tool))),
                            line, point)
            preds[tool] = {round(x["line_speedup"] * 100): x for x in (s or {}).get("points", [])}
            checks[tool] = {round(x["line_speedup"] * 100): x for x in (c or {}).get("points", [])}
        out.append("| line speedup | true (median) | true 95% CI | " + " | ".join(
            "%s | %s 95%% CI | %s exps | %s err" % ((names[t],) * 4) for t in tools) + " |")
        out.append("|---:|---:|---:|" + "---:|---:|---:|---:|" * len(tools))
        errs = {t: [] for t in tools}
        cross, widths = [], []
        for lvl in sorted(med):
            tci = truth_ci(truth[p][0], truth[p][lvl], rng) if lvl and base else None
            if tci:
                widths.append((tci[1] - tci[0]) / 2)
            row = ["%d%%" % lvl, fmt_pct(true_sp.get(lvl)),
                   "[%s, %s]" % (fmt_pct(tci[0]), fmt_pct(tci[1])) if tci else ""]
            for tool in tools:
                x = preds[tool].get(lvl)
                if x is None:
                    row += ["–", "", "0" if lvl not in checks[tool] else "?", "–"]
                    continue
                ci = x.get("ci") or None
                if ci and None in ci:  # the viewer's method has no intervals
                    ci = None
                cis = "[%s, %s]" % (fmt_pct(ci[0]), fmt_pct(ci[1])) if ci else ""
                err = abs(x["program_speedup"] - true_sp[lvl]) if lvl in true_sp else None
                if lvl != 0 and err is not None:
                    errs[tool].append(err)
                row += [fmt_pct(x["program_speedup"]), cis, str(x.get("experiments", "")),
                        fmt_pct(err, signed=False)]
                c = checks[tool].get(lvl)
                if c is not None:
                    # analyze.py does no phase correction: compare before it
                    raw = x.get("uncorrected_speedup", x["program_speedup"])
                    cross.append(abs(c["program_speedup"] - (raw if lvl else 0.0)))
            out.append("| " + " | ".join(row) + " |")
        mae = {t: (sum(e) / len(e) if e else None) for t, e in errs.items()}
        out.append("")
        out.append("MAE (points, levels > 0): %s%s\n" % (
            ", ".join("%s %s" % (names[t], fmt_pct(mae[t], False)) for t in tools),
            "; report vs analyze.py cross-check: max difference %.2f points" % (100 * max(cross))
            if cross else ""))
        noise = sum(widths) / len(widths) if widths else None
        summary.append((p, kind, mae["lever"], mae["coz"], noise, mae.get("lever2"),
                        mae.get("cozview", "next run")))
    return summary, "lever2" in tools


def overhead_tables(data, out):
    rows = read_tsv(os.path.join(data, "overhead.tsv"))
    runs = {}
    for p, cfg, _, t, exps in rows:
        runs.setdefault(p, {}).setdefault(cfg, []).append((float(t), int(exps)))
    if not runs:
        return
    med = lambda p, c: statistics.median(x[0] for x in runs[p][c]) if c in runs[p] else None
    out.append("| program | bare s | lever start-up | lever sampling 0% | lever full | "
               "Coz start-up | Coz sampling 0% | Coz full | lever exps/min | Coz exps/min |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    means = {k: [] for k in ("ls", "lz", "lf", "cs", "cz", "cf")}
    for p in runs:
        bare, bare_coz, bare0 = med(p, "bare"), med(p, "bare-coz"), med(p, "bare0")
        if not bare:
            continue
        bc = bare_coz or bare
        coz_start = None
        if med(p, "coz-startup0") is not None and bare0 is not None:
            coz_start = (bc + med(p, "coz-startup0") - bare0) / bc
        vals = {
            "ls": med(p, "lever-startup") / bare if med(p, "lever-startup") else None,
            "lz": med(p, "lever-sampling") / bare if med(p, "lever-sampling") else None,
            "lf": med(p, "lever-full") / bare if med(p, "lever-full") else None,
            "cs": coz_start,
            "cz": med(p, "coz-sampling") / bc if med(p, "coz-sampling") else None,
            "cf": med(p, "coz-full") / bc if med(p, "coz-full") else None,
        }
        for k, v in vals.items():
            if v is not None:
                means[k].append(v)

        def rate(cfg):
            r = runs[p].get(cfg, [])
            total_t = sum(x[0] for x in r)
            return "%.0f" % (60 * sum(x[1] for x in r) / total_t) if total_t else "–"
        f = lambda v: "%.3f" % v if v is not None else "–"
        out.append("| %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p, bare, f(vals["ls"]), f(vals["lz"]), f(vals["lf"]), f(vals["cs"]),
            f(vals["cz"]), f(vals["cf"]), rate("lever-full"), rate("coz-full")))
    gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else None
    f = lambda v: "%.3f" % v if v is not None else "–"
    out.append("| geometric mean | | %s | %s | %s | %s | %s | %s | | |" % tuple(
        f(gm(means[k])) for k in ("ls", "lz", "lf", "cs", "cz", "cf")))
    out.append("")


def tables(data):
    meta = dict(r[:2] for r in read_tsv(os.path.join(data, "meta.txt")) if len(r) >= 2)
    out = ["# bench/causal: accuracy and overhead of lever causal vs Coz", ""]
    out.append("Generated by `bench/causal/run.sh` (%s mode), started %s, took %.0f s." % (
        meta.get("mode", "?"), meta.get("started", "?"), float(meta.get("duration_s", 0))))
    out.append("")
    out.append("## Machine")
    out.append("")
    for k in ("cpu", "kernel", "os", "gcc", "coz", "lever", "lever2", "load", "predictions",
              "recomputed"):
        if meta.get(k):
            out.append("- %s: %s" % (k, meta[k]))
    out.append("- the 2 vCPUs share one physical core; the load average and CPU pressure at the "
               "start and end of each program are given with its table (other work on the "
               "machine shows there, see README.md)")
    out.append("")
    out.append("## Commands")
    out.append("")
    out.append("- truth: `PROG --rounds R --scale 1-s` for s in {%s}%%, levels interleaved, "
               "%s runs each, median; throughput speedup `1 - T_s/T_0`, latency "
               "`(W_0 - W_s)/W_0` (W = the mean latency the program measures)"
               % (", ".join(meta.get("levels", "").split()), meta.get("truth_reps", "?")))
    out.append("- lever: `lever causal -o P.lever.coz --fixed-line P.c:L --fixed-speedup s -- "
               "lever/P --rounds R'` (build `-g -O2 -fno-omit-frame-pointer`)")
    out.append("- Coz: `coz run --fixed-line /abs/P.c:L --fixed-speedup s -o P.coz.coz --- coz/P "
               "--rounds R'` (build adds `-gdwarf-4 -gno-variable-location-views`)")
    out.append("- %s cycle(s) over the levels, tools alternating run by run; both profiles read "
               "by the same analysis: %s" % (meta.get("cycles", "?"), meta.get("predictions", "?")))
    out.append("")
    out.append("## Accuracy")
    out.append("")
    body = []
    summary, has2 = accuracy_tables(data, body)
    if summary:
        out.append("Mean absolute error of the predicted program speedup, in percentage points, "
                   "over the line speedups > 0 (goal: lever ≤ 2 and below Coz):")
        out.append("")
        out.append("| program | kind | lever MAE | Coz MAE (Coz profiles, lever's analysis) | "
                   "Coz MAE (its viewer's method) | truth noise | lever ≤ 2 | lever < Coz |"
                   + (" lever2 MAE |" if has2 else ""))
        out.append("|---|---|---:|---:|---:|---:|---|---|" + ("---:|" if has2 else ""))
        for p, kind, ml, mc, noise, m2, mv in summary:
            ok2 = "yes" if ml is not None and ml <= 0.02 else "no"
            okc = ("yes" if ml is not None and (mc is None or ml < mc) else "no")
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s |%s" % (
                p, kind, fmt_pct(ml, False), fmt_pct(mc, False),
                mv if isinstance(mv, str) else fmt_pct(mv, False), fmt_pct(noise, False), ok2,
                okc, " %s |" % fmt_pct(m2, False) if has2 else ""))
        out.append("")
        out.append("Coz MAE (its viewer's method): the same Coz profiles through `lever causal "
                   "report --method=coz-viewer`, the numbers Coz's web viewer plots (no phase "
                   "correction, no trimming, points under 5 visits or outside -100..+200% "
                   "dropped; a latency improvement plots negative, as in the viewer): Coz as "
                   "its users see it. Its MAE is over the levels it keeps; \"next run\": this "
                   "run's data predate the column, the next run (or `run.sh --report-only` on "
                   "its kept data) fills it. Its cross-check is `analyze.py predict --coz-viewer`, "
                   "an independent computation of the viewer's numbers.")
        out.append("")
        out.append("Truth noise: mean half-width of the 95% bootstrap interval of the true "
                   "speedups (levels > 0); an error below it cannot be told from the "
                   "measurement's own scatter.")
        out.append("")
        out.append("Both tools' profiles go through the same analysis, with lever causal "
                   "report's defaults: phase correction on, and far-out experiments (cost per "
                   "visit beyond 3 IQR past the quartiles of their speedup's experiments) set "
                   "aside; analyze.py's cross-check applies the same rule but no phase "
                   "correction.")
        out.append("")
        out += body
    out.append("## Overhead")
    out.append("")
    out.append("Wall time of each configuration as a ratio to the program run alone (median of "
               "%s alternating round(s)); start-up only: lever `--sampler=none`; Coz has no such "
               "mode, so its start-up cost is `coz run --- PROG --rounds 0` minus the bare "
               "`PROG --rounds 0` (the program ends right after start-up), added to the bare "
               "time; sampling 0%%: `--fixed-speedup 0`; full: default options. Experiments per "
               "minute: `experiment` records of the full runs per minute of their wall time."
               % meta.get("ovh_reps", "?"))
    out.append("")
    overhead_tables(data, out)
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) >= 2 and argv[1] == "predict":
        args, min_speedups = argv[2:], 5
        if args[:1] == ["--coz-viewer"]:
            json.dump(predict_viewer(args[1:]), sys.stdout, indent=1)
            print()
            return 0
        if args[:1] == ["--min-speedups"]:
            min_speedups, args = int(args[1]), args[2:]
        json.dump(predict(args, min_speedups), sys.stdout, indent=1)
        print()
        return 0
    if len(argv) == 3 and argv[1] == "tables":
        sys.stdout.write(tables(argv[2]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
