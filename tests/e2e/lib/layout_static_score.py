#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Precision and recall of a static reference table against the truth
encoded in function names (tests/programs/layout/static_refs.c): a function
touch__S__F[__S__F...][_suffix] accesses exactly the fields S.F it names.

usage: layout_static_score.py RECORD NM_OUTPUT [--truth FILE] [--verbose]
NM_OUTPUT: `nm -S --defined-only BINARY`. Precision counts ref lines inside
the functions with a truth: a ref is right when its struct.field is in the
function's set. Recall counts the (function, struct.field) pairs of the
truth that have at least one ref. Prints "precision P recall R refs N pairs M".

--truth FILE takes the truth from FILE instead of the names, for any
program: lines "FUNCTION<TAB>STRUCT<TAB>FIELD", every field each function
accesses — what the GCC plugin of `lever cc --layout` knows exactly (it
instruments every field access, COMPONENT_REF, in each function), so the
same score applies to memcached built with the plugin."""
import sys


def expected(name):
    base = name.split(".")[0]  # gcc's clones: name.constprop.0
    if not base.startswith("touch__"):
        return None
    parts = base[len("touch__"):].split("__")
    fields = set()
    for i in range(0, len(parts) - 1, 2):
        fields.add((parts[i], parts[i + 1].split("_")[0] if i + 2 >= len(parts) else parts[i + 1]))
    return fields


def read_truth(path):
    truth = {}
    with open(path) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if len(col) == 3 and not line.startswith("#"):
                truth.setdefault(col[0], set()).add((col[1], col[2]))
    return truth


def main():
    record, nm_out = sys.argv[1], sys.argv[2]
    verbose = "--verbose" in sys.argv
    truth = read_truth(sys.argv[sys.argv.index("--truth") + 1]) if "--truth" in sys.argv else None
    funcs = []
    with open(nm_out) as f:
        for line in f:
            col = line.split()
            if len(col) == 4 and col[2] in "tT":
                exp = truth.get(col[3].split(".")[0]) if truth is not None else expected(col[3])
                if exp is not None:
                    lo = int(col[0], 16)
                    funcs.append((lo, lo + int(col[1], 16), col[3], exp))
    found = {f[2]: set() for f in funcs}
    right = wrong = 0
    with open(record) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if col[0] != "ref":
                continue
            pc = int(col[1], 16)
            for lo, hi, name, exp in funcs:
                if lo <= pc < hi:
                    pair = (col[2], col[3])
                    if pair in exp:
                        right += 1
                        found[name].add(pair)
                    else:
                        wrong += 1
                        if verbose:
                            print(f"wrong: {name} {col[1]} {col[2]}.{col[3]}")
    total = sum(len(f[3]) for f in funcs)
    hit = sum(len(found[f[2]]) for f in funcs)
    if verbose:
        for lo, hi, name, exp in funcs:
            for pair in sorted(exp - found[name]):
                print(f"missed: {name} {pair[0]}.{pair[1]}")
    precision = right / (right + wrong) if right + wrong else 0.0
    recall = hit / total if total else 0.0
    print(f"precision {precision:.3f} recall {recall:.3f} refs {right + wrong} "
          f"pairs {hit}/{total} functions {len(funcs)}")


if __name__ == "__main__":
    main()
