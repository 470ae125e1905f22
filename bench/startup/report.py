#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The measurement sections of bench/results/startup.md from the raw data of
bench/startup/run.sh: hyperfine's JSON exports, the probe times and lever's
-v lines of each target (see run.sh for what each file holds).

usage: report.py RAW_DIR TARGETS LEVER_OK   (TARGETS: sqlite3,python; LEVER_OK: 0 or 1)
Writes Markdown to stdout.
"""
import glob
import json
import statistics as st
import sys

work, targets, lever_ok = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"

def ms(x): return "%.1f" % (x * 1e3)
def mean(v): return st.mean(v) if v else float("nan")
def sd(v): return st.stdev(v) if len(v) > 1 else 0.0
def ratio(a, b): return "%.3f" % (a / b) if b > 0 and a == a else "n/a"

o = sys.stdout
w = o.write
for t in targets:
    info = dict(l.strip().split("=", 1) for l in open(f"{work}/info-{t}") if "=" in l)
    def field(k):  # "size4=N debug4=M"
        return {kv.split("=")[0]: int(kv.split("=")[1]) for kv in k.split()}
    s4 = field("size4=" + info["size4"]); s5 = field("size5=" + info["size5"])
    w(f"\n## {t}\n\n")
    w(f"- DWARF 4 binary: `{info['binary_dwarf4']}`: {s4['size4']/2**20:.1f} MiB file, "
      f"{s4['debug4']/2**20:.1f} MiB of .debug_* sections\n")
    w(f"- DWARF 5 binary: `{info['binary_dwarf5']}`: {s5['size5']/2**20:.1f} MiB file, "
      f"{s5['debug5']/2**20:.1f} MiB of .debug_* sections\n")
    w(f"- coz built its line map: {info['coz_map']}; profile.coz: {info['coz_profile']}\n")

    # 1. hyperfine
    times, cmds = {}, {}
    for f in sorted(glob.glob(f"{work}/hf-{t}-*.json")):
        for r in json.load(open(f))["results"]:
            times.setdefault(r["command"], []).extend(r["times"])
    w("\n### Wall time, exec to exit\n\n")
    w("| command | mean ms | sd | min | start-up cost ms | lever cost / coz cost |\n")
    w("|---|---:|---:|---:|---:|---:|\n")
    m = {k: mean(v) for k, v in times.items()}
    def base(k): return m.get("bare5" if k.endswith("5") else "bare4", float("nan"))
    coz_cost = m.get("coz", float("nan")) - m.get("bare4", float("nan"))
    for k in ["bare4", "bare5", "coz", "coz-preload", "lever4", "lever5"]:
        if k not in times: continue
        v = times[k]; cost = m[k] - base(k)
        w(f"| {k} | {ms(m[k])} | {ms(sd(v))} | {ms(min(v))} | "
          f"{'' if k.startswith('bare') else ms(cost)} | "
          f"{ratio(cost, coz_cost) if k.startswith('lever') else ''} |\n")

    # 2. probe
    rows = {}
    for l in open(f"{work}/probe-{t}.tsv"):
        name, t0, v = (l.rstrip("\n").split("\t") + ["", ""])[:3]
        try: rows.setdefault(name, []).append(float(v) - float(t0))
        except ValueError: rows.setdefault(name, [])
    w("\n### Exec to first user code (program prints the clock first)\n\n")
    w("| command | runs ok | mean ms | median | min | start-up cost ms | lever cost / coz cost |\n")
    w("|---|---:|---:|---:|---:|---:|---:|\n")
    pm = {k: mean(v) for k, v in rows.items()}
    def pbase(k): return pm.get("bare5" if k.endswith("5") else "bare4", float("nan"))
    pcoz = pm.get("coz", float("nan")) - pm.get("bare4", float("nan"))
    for k in ["bare4", "bare5", "coz", "coz-preload", "lever4", "lever5"]:
        if k not in rows: continue
        v = rows[k]
        if not v:
            w(f"| {k} | 0 | | | | | |\n"); continue
        cost = pm[k] - pbase(k)
        w(f"| {k} | {len(v)} | {ms(pm[k])} | {ms(st.median(v))} | {ms(min(v))} | "
          f"{'' if k.startswith('bare') else ms(cost)} | "
          f"{ratio(cost, pcoz) if k.startswith('lever') else ''} |\n")

    # 3. lever -v
    w("\n### lever's own report (`lever causal -v`)\n\n")
    if not lever_ok:
        w("lever not run.\n")
    else:
        ex, rt = {}, {}
        for l in open(f"{work}/lever-v-{t}.tsv"):
            p = l.rstrip("\n").split("\t")
            if p[1] == "exec": ex.setdefault(p[0], []).append(int(p[2]) / 1e6)
            elif p[1] == "rt": rt.setdefault(p[0], []).append((int(p[2]) / 1e6, int(p[3]) / 1e6))
        if not ex and not rt:
            w("The runtime printed no `first sample at ... us after exec` line.\n")
        else:
            w("| command | runs | first sample after exec, mean ms | median | min | "
              "line map ready after runtime start, mean ms |\n|---|---:|---:|---:|---:|---:|\n")
            for k in ["lever4", "lever5"]:
                v = ex.get(k, []); r = [b for a, b in rt.get(k, [])]
                if not v and not r: continue
                w(f"| {k} | {len(v)} | {ms(mean(v)) if v else ''} | "
                  f"{ms(st.median(v)) if v else ''} | {ms(min(v)) if v else ''} | "
                  f"{ms(mean(r)) if r else ''} |\n")

