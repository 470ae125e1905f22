#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A proxy for the precision of a static reference table on a program
without ground truth (bench/layout_static/): a ref is "confirmed" when the
source line of its pc (the innermost inlined line) names the
field as an identifier. Field accesses through macros (memcached's
ITEM_key(it)), struct copies, and accesses the optimiser moved to a
neighbouring line's row are not confirmed, so this underestimates the
precision; and a line naming a field the instruction does not touch
confirms wrongly, so it is no proof: the GCC plugin's exact truth (`lever cc
--layout`) is the real measure.

usage: layout_static_lines.py RECORD BINARY SOURCE_ROOT [--show N]
Prints "confirmed C of N refs (P)" and, with --show, N unconfirmed ones."""
import re
import subprocess
import sys


def main():
    record, binary, root = sys.argv[1], sys.argv[2], sys.argv[3]
    show = int(sys.argv[sys.argv.index("--show") + 1]) if "--show" in sys.argv else 0
    refs = []
    with open(record) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if col[0] == "ref":
                refs.append((col[1], col[2], col[3]))
    pcs = sorted({r[0] for r in refs})
    # without -i, addr2line names the innermost (inlined) line of each address
    out = subprocess.run(["addr2line", "-e", binary], input="\n".join(pcs) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    where = {pc: out[i].split(" ")[0] for i, pc in enumerate(pcs) if i < len(out)}
    cache, confirmed, unconfirmed = {}, 0, []
    for pc, s, field in refs:
        loc = where.get(pc, "??:0")
        path, _, line = loc.rpartition(":")
        text = ""
        try:
            if path not in cache:
                p = path if path.startswith("/") else f"{root}/{path}"
                with open(p, errors="replace") as f:
                    cache[path] = f.read().split("\n")
            text = cache[path][int(line.split()[0]) - 1]
        except (OSError, ValueError, IndexError):
            pass
        name = field.split("[")[0]
        if re.search(r"(\.|->)\s*" + re.escape(name) + r"\b", text):
            confirmed += 1
        else:
            unconfirmed.append(f"{pc} {s}.{field}: {loc}: {text.strip()}")
    n = len(refs)
    print(f"confirmed {confirmed} of {n} refs ({confirmed / n if n else 0:.3f})")
    for u in unconfirmed[:show]:
        print("  unconfirmed:", u)


if __name__ == "__main__":
    main()
