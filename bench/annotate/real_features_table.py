#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The "Features and metrics recorded" table of bench/results/annotate-real/
# README.md, from the files bench/annotate/real.sh keeps per program:
# PROG.record (the record: S, F and C lines) and PROG.record.stderr
# (`lever annotate record -v`: the probe kind and object of each function,
# and its call counter at exit).
#
#   real_features_table.py DIR PROG...
#
# Per function: the object it was probed in, the probe kind, the calls it
# received, the calls kept in the record (its C lines) and the features the
# plan declared for it (F lines; listed by name when there are at most
# three).
import os
import re
import sys

# "lever annotate record: NAME (pid P): live probe, N calls, ..."
COUNTS = re.compile(r"^lever annotate record: (.*) \(pid \d+\): ([a-z -]+?) probe, (\d+) calls,")
# "lever annotate: NAME: live probe at 0xADDR (OBJECT)"
WHERE = re.compile(r"^lever annotate: (.*): [a-z -]+ probe at 0x[0-9a-f]+ \((.*)\)$")


def short_name(name):
    """sort_list(std::list<...>&) -> sort_list; a::b::_M_transfer(...) -> _M_transfer"""
    depth, cut = 0, len(name)
    for i, c in enumerate(name):
        if c in "<(":
            if depth == 0 and c == "(":
                cut = i
                break
            depth += 1
        elif c in ">)":
            depth -= 1
    return name[:cut].split("::")[-1]


def read_record(path):
    symbols, features, kept = {}, {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if parts[0] == "S":
                symbols[parts[1]] = line.rstrip("\n").split(" ", 2)[2]
            elif parts[0] == "F":
                features.setdefault(parts[1], []).append(parts[3])
            elif parts[0] == "C":
                kept[parts[1]] = kept.get(parts[1], 0) + 1
    return symbols, features, kept


def read_stderr(path):
    calls, kind, where = {}, {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = COUNTS.match(line)
            if m:
                calls[m.group(1)] = int(m.group(3))
                kind[m.group(1)] = m.group(2)
                continue
            m = WHERE.match(line)
            if m:
                where[m.group(1)] = os.path.basename(m.group(2))
    return calls, kind, where


def main(directory, programs):
    print("| function | object | probe | calls | kept in the record | features declared |")
    print("| --- | --- | --- | --- | --- | --- |")
    for prog in programs:
        base = os.path.join(directory, prog)
        symbols, features, kept = read_record(base + ".record")
        calls, kind, where = read_stderr(base + ".record.stderr")
        for sid in sorted(symbols, key=int):
            name = symbols[sid]
            if name not in calls:
                sys.exit(f"real_features_table: {base}.record.stderr: no counts for {name}")
            declared = features.get(sid, [])
            text = str(len(declared))
            if 0 < len(declared) <= 3:
                text += ": " + ", ".join(f"`{d}`" for d in declared)
            print(f"| `{short_name(name)}` | {where.get(name, '?')} | {kind[name]} "
                  f"| {calls[name]} | {kept.get(sid, 0)} | {text} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: real_features_table.py DIR PROG...")
    main(sys.argv[1], sys.argv[2:])
