#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The "Top structs against the thesis" table of
# bench/results/layout-memcached/README.md (issue 17, must-show 4; spec
# autocpa.md §4.3): the thesis's Table 5.2 (memcached 1.6.6, saved L1
# misses, quoted below) beside what `lever layout report --json` found on
# bench/layout/memcached.sh's record (memcached-clock.report.json). Every
# lever number comes from that JSON:
#   samples      the struct's samples; the share of all structs' samples for
#                the struct with the most
#   saving       suggestion.benefit and its rank among the suggestions that
#                save something (the report's order: ranked by benefit)
#   algorithm    suggestion.algorithm, "—" when it saves nothing
#   hot fields   the fields by block-adjusted samples (adj), at most four,
#                each with at least a tenth of the hottest one's
# Rows: the thesis's structs in its order, then lever's other structs among
# its top LEVER_TOP suggestions.
#
#   bench/layout/memcached_structs_table.py REPORT_JSON
import json
import sys

# Table 5.2 of the thesis (autocpa-2020-thesis.txt): struct, how the row
# names it, what the thesis says of it (saved misses, rank).
THESIS = [
    ("_stritem", "`_stritem` (item)", 'not reordered, "about 40 percent" of misses (1 in the text)'),
    ("conn", "`conn`", "1308 (1)"),
    ("_mc_resp", "`_mc_resp`", "945 (2)"),
    ("settings", "`settings`", "826 (3)"),
    ("LIBEVENT_THREAD", "`LIBEVENT_THREAD`", "514 (4)"),
    ("bipbuf_t", "`bipbuf_t`", "354 (5)"),
    ("token_s", "`token_s`", "165 (6)"),
    ("cache_t", "`cache_t`", "83 (7)"),
    ("_lru_bump_buf", "`_lru_bump_buf`", "67 (8)"),
    ("thread_stats", "`thread_stats`", "52 (9)"),
]
# lever's suggestions shown besides the thesis's structs: its top eleven,
# as many as it takes to reach the last thesis struct it ranks (thread_stats)
LEVER_TOP = 11
LABELS = {"__pthread_mutex_s": "`__pthread_mutex_s` (glibc)"}
# Remarks on single cells, explained in the README's prose
SAVING_NOTE = {"_stritem": " — but see bug B1"}
FIELD_NOTE = {("__pthread_mutex_s", "__kind"): " (the first load of `pthread_mutex_lock`)"}


def hot_fields(s):
    fields = sorted(s["fields"], key=lambda f: -f["adj"])
    if not fields or fields[0]["adj"] == 0:
        return "—"
    top = fields[0]["adj"]
    hot = [f for f in fields[:4] if f["adj"] > 0 and 10 * f["adj"] >= top]
    return ", ".join("`%s` %d%s" % (f["name"], f["adj"], FIELD_NOTE.get((s["struct"], f["name"]), ""))
                     for f in hot)


def main(path):
    with open(path) as f:
        report = json.load(f)
    structs = report["structs"]
    by_name = {s["struct"]: s for s in structs}
    saving = [s["struct"] for s in structs if s.get("suggestion", {}).get("benefit", 0) > 0]
    rank = {name: i + 1 for i, name in enumerate(saving)}
    total = sum(s["samples"] for s in structs)
    most = max(structs, key=lambda s: s["samples"])["struct"]
    thesis = {t[0] for t in THESIS}
    rows = [(name, label, said) for name, label, said in THESIS]
    rows += [(name, LABELS.get(name, "`%s`" % name), "—")
             for name in saving[:LEVER_TOP] if name not in thesis]
    print("| struct | thesis saved misses (rank) | lever samples on the struct "
          "| lever estimated saving, samples (rank) | lever algorithm "
          "| hottest fields here (block-adjusted samples) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, label, said in rows:
        s = by_name.get(name)
        if s is None:
            print("| %s | %s | 0 | — | — | — |" % (label, said))
            continue
        samples = str(s["samples"])
        if name == most:
            samples += " (%d%% of the %d attributed)" % (round(100 * s["samples"] / total), total)
        sug = s.get("suggestion", {})
        benefit = sug.get("benefit", 0)
        if benefit > 0:
            cell = "%d (%d)%s" % (benefit, rank[name], SAVING_NOTE.get(name, ""))
            algorithm = sug["algorithm"]
        else:
            cell, algorithm = "0", "—"
        print("| %s | %s | %s | %s | %s | %s |" % (label, said, samples, cell, algorithm,
                                                   hot_fields(s)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: memcached_structs_table.py REPORT_JSON")
    main(sys.argv[1])
