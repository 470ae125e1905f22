#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever annotate record --branches (doc/annotate-record.md "Branches"): the
# outcome of every conditional branch of the probed functions, per call.
# tests/programs/annotate/probe_branches.c has an assembly function whose five
# branches (jle rel8, jz rel32, a jnz loop, jrcxz, loop) and so their outcome
# strings per call are known exactly; each is checked, through `lever
# annotate dump`, on the plain build (live patch) and the sled build. Its C
# function's `if (x > 10)` must be one branch run once per call whose outcome
# is x > 10 (or its negation, as the compiler chose). The program's own
# SIGTRAP handler (full sa_mask, a probed function inside), raise(SIGTRAP), an
# int3 of its own and a blocked SIGTRAP must all behave as bare: the same
# output. Three threads calling t_branch at once: each of the 6000 calls has
# its own outcome. A branch in the bytes a live patch moves runs, and is armed, in the
# trampoline (-v says so): its outcomes too are exact.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for prog in probe_branches probe_branches_sled; do
	"$dir/$prog" >"$tmp/plain"
	"$lever" annotate record --branches -v --rate=all -f asm_branches -f c_branch \
		-f early_branch -f t_branch -o "$tmp/$prog" -- "$dir/$prog" >"$tmp/out" 2>"$tmp/err"
	if ! cmp -s "$tmp/plain" "$tmp/out"; then
		echo "FAIL: $prog: the program's output differs under --branches"
		diff "$tmp/plain" "$tmp/out" || true
		cat "$tmp/err"
		exit 1
	fi
	grep -q "traps 3, inner 218" "$tmp/out"
	grep -q "blocked: 1, asm_branches(30, 4) = 112" "$tmp/out"
	r=$tmp/$prog/record
	check "$prog: well-formed record" 0 "$(well_formed "$r")"
	check "$prog: asm_branches calls" 9 "$(calls "$r" asm_branches)"
	if ! grep -q "early_branch: 1 branch in the 5 bytes its live patch moved: armed in the trampoline" "$tmp/err"; then
		echo "FAIL: $prog: -v does not say that early_branch's branch is armed in its trampoline"
		cat "$tmp/err"
		exit 1
	fi
	"$lever" annotate dump --format=json "$r" -o "$tmp/$prog.json"
	python3 - "$r" "$tmp/$prog.json" <<'PY'
import json, sys
record, dump = sys.argv[1:3]
rows = json.load(open(dump))
feats = {}
sym = {}
for line in open(record):
    f = line.split()
    if f[0] == "S":
        sym[f[1]] = f[2]
    elif f[0] == "F" and f[3] == "branch":
        feats.setdefault(sym[f[1]].split("(")[0], []).append(" ".join(f[4:]))
want_names = ["asm_branches+0x%x" % o for o in (0x6, 0x12, 0x20, 0x25, 0x2b)]
assert feats.get("asm_branches") == want_names, feats.get("asm_branches")

def loop(n):
    if n == 0:
        return None
    s = "T" * (n - 1) + "N"
    return s if len(s) <= 64 else s[:64] + "+%d" % (len(s) - 64)

def expect(x, n):
    return [("T" if x <= 10 else "N"), ("T" if n == 0 else "N"), loop(n),
            ("T" if n == 0 else "N"), loop(n)]

# main's five calls, the handler's three (raise twice: x 11; the int3: x 3), then (30, 4)
calls = [(5, 0), (11, 1), (20, 3), (10, 70), (-3, 2), (11, 2), (11, 2), (3, 2), (30, 4)]
got = [[r.get(n) for n in want_names] for r in rows if r["symbol"].split("(")[0] == "asm_branches"]
bad = 0
for (x, n), g in zip(calls, got):
    if g != expect(x, n):
        print("FAIL: asm_branches(%d, %d): %s, want %s" % (x, n, g, expect(x, n)))
        bad += 1
if len(got) != len(calls):
    print("FAIL: %d calls of asm_branches, want %d" % (len(got), len(calls)))
    bad += 1
# c_branch(8..13): one of its branches ran once per call, outcome x > 10 or not
cb = [r for r in rows if r["symbol"].split("(")[0] == "c_branch"]
xs = [r.get("x") for r in cb]
if xs != list(range(8, 14)):
    print("FAIL: c_branch's x: %s" % xs)
    bad += 1
hits = []
for name in feats.get("c_branch", []):
    seq = [r.get(name) for r in cb]
    if all(s in ("T", "N") for s in seq):
        t = [s == "T" for s in seq]
        if t == [x > 10 for x in xs] or t == [x <= 10 for x in xs]:
            hits.append(name)
if len(hits) != 1:
    print("FAIL: c_branch: branches following x > 10: %s (of %s; values %s)"
          % (hits, feats.get("c_branch"), [[r.get(n) for n in feats.get("c_branch", [])] for r in cb]))
    bad += 1
# early_branch's only branch is in its patched bytes, armed in the trampoline:
# early_branch(1) falls through, early_branch(0) jumps
eb = [r for r in rows if r["symbol"].split("(")[0] == "early_branch"]
if feats.get("early_branch") != ["early_branch+0x3"] or \
        [r.get("early_branch+0x3") for r in eb] != ["N", "T"]:
    print("FAIL: early_branch: %s %s" % (feats.get("early_branch"), eb))
    bad += 1
# t_branch, three threads at once: one branch runs once per call, its outcome
# x % 3 == 0 (or not) on every one of the 6000 calls
tb = [r for r in rows if r["symbol"].split("(")[0] == "t_branch"]
hits = []
for name in feats.get("t_branch", []):
    seq = [(r.get(name), r.get("x")) for r in tb]
    if all(o in ("T", "N") for o, _ in seq):
        t = [o == "T" for o, _ in seq]
        m = [x % 3 == 0 for _, x in seq]
        if t == m or t == [not v for v in m]:
            hits.append(name)
if len(tb) != 6000 or len(hits) != 1:
    print("FAIL: t_branch: %d calls, branches following x %% 3 == 0: %s" % (len(tb), hits))
    bad += 1
print("ok: outcome strings of %d calls" % len(got) if not bad else "%d failure(s)" % bad)
sys.exit(1 if bad else 0)
PY
	echo "ok: $prog"
done

# without --branches: no branch feature, no trap
"$lever" annotate record --rate=all -f asm_branches -o "$tmp/off" -- "$dir/probe_branches" \
	>"$tmp/out" 2>"$tmp/err"
check "no --branches: no branch features" 0 "$(awk '$1 == "F" && $4 == "branch"' "$tmp/off/record" | wc -l)"
echo "ok: all"
