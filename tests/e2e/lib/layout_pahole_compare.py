#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compares the struct layouts of a layout record (lever layout refs
--all-structs) with pahole's output for the same binary: for every struct
both describe, the same top-level members at the same offsets with the same
sizes (pahole's "/* OFFSET SIZE */" comments; an anonymous union or struct
member is its closing "};" line). Structs pahole shows with bitfields or
that the record leaves out are counted, not compared.

usage: layout_pahole_compare.py RECORD PAHOLE_OUTPUT MIN_COMPARED
Prints one line per mismatch and a summary; exit 1 on any mismatch or when
fewer than MIN_COMPARED structs could be compared."""
import re
import sys

MEMBER = re.compile(r"^\t(?!\t)(.*?)\s*/\*\s+(\d+)\s+(\d+)\s+\*/\s*$")
ANCESTOR = re.compile(r"<ancestor>")


def read_record(path):
    structs, left_out, cur = {}, {}, None
    with open(path) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if col[0] == "struct":
                cur = structs.setdefault(col[1], [])
            elif col[0] == "field":
                cur.append((int(col[4]), int(col[5]), col[1]))
            elif line.startswith("# struct ") and " left out: " in line:
                name = line[len("# struct "):].split(" left out: ")[0]
                left_out[name] = line.split(" left out: ")[1].strip()
            else:
                cur = None
    return structs, left_out


def read_pahole(path):
    """name -> list of (offset, size) of top-level members, and bitfield flag."""
    out, cur, name, bitfields = {}, None, None, False
    head = re.compile(r"^(?:struct|class) (.+?)(?: : .*)? \{$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = head.match(line)
            if m:
                name, cur, bitfields = m.group(1), [], False
                continue
            if line.startswith("typedef struct {"):
                name, cur, bitfields = None, [], False
                continue
            if cur is None:
                continue
            if line.startswith("}"):
                tail = re.match(r"^\}\s*(\w+)?;", line)
                if name is None and tail and tail.group(1):
                    name = tail.group(1)
                if name and name not in out:
                    out[name] = (cur, bitfields)
                cur = None
                continue
            if re.search(r"/\*\s+\d+:\s*\d+\s+\d+\s+\*/", line):
                bitfields = True
            m = MEMBER.match(line)
            if m:
                off, size = int(m.group(2)), int(m.group(3))
                if ANCESTOR.search(m.group(1)) and size == 0:
                    continue  # an empty base takes no room
                cur.append((off, size))
    return out


def main():
    record, pahole_out, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3])
    structs, left_out = read_record(record)
    pahole = read_pahole(pahole_out)
    compared = mismatches = 0
    for name, fields in sorted(structs.items()):
        key = name.split("::")[-1]
        if key not in pahole:
            continue
        members, bitfields = pahole[key]
        if bitfields:
            continue
        ours = sorted((o, s) for o, s, _ in fields)
        theirs = sorted(set(members))
        compared += 1
        if ours != theirs:
            mismatches += 1
            print(f"MISMATCH {name}: lever {ours} pahole {theirs}")
    print(f"{compared} structs compared with pahole, {mismatches} differ; "
          f"{len(left_out)} left out by lever")
    if mismatches or compared < minimum:
        sys.exit(1)


if __name__ == "__main__":
    main()
