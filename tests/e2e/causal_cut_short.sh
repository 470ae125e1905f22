#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# An experiment cut short by the program's exit is not written (its time runs
# on past the last progress visit), unless it is the run's only one.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
prog=$build/examples/figure1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ~1.2 s of rounds, 100 ms experiments back to back (no cool-off, so the exit
# falls inside one): several end in full, the last is cut short
profile_short_run() {
	rm -f "$tmp/p.coz"
	"$lever" causal -vv --experiment-length 100ms --cooloff 0 --fixed-line figure1.c:48 \
		--fixed-speedup 0 -o "$tmp/p.coz" -- "$prog" --rounds 100 >/dev/null 2>"$tmp/err" ||
		fail "lever causal failed"
	ran=$(grep -c 'figure1.c:48 at 0%: started .* elapsed' "$tmp/err")
	dropped=$(grep -c 'cut short by the program.s exit, not written' "$tmp/err")
	written=$(grep -c '^experiment' "$tmp/p.coz")
}
profile_short_run
# the exit can still fall in the instant between two experiments: once more then
[ "$dropped" = 0 ] && profile_short_run
[ "$dropped" = 1 ] || fail "expected one dropped experiment, saw $dropped: $(cat "$tmp/err")"
[ "$written" -ge 2 ] || fail "expected at least 2 written experiments, saw $written"
[ $((written + dropped)) = "$ran" ] || fail "$ran experiments ran, $written written, $dropped dropped"

# a run shorter than one experiment keeps its only one
"$lever" causal -vv --experiment-length 5s --fixed-line figure1.c:48 --fixed-speedup 0 \
	-o "$tmp/q.coz" -- "$prog" --rounds 20 >/dev/null 2>"$tmp/err" || fail "lever causal failed"
[ "$(grep -c '^experiment' "$tmp/q.coz")" = 1 ] || fail "the only experiment was not written"
grep -q 'not written' "$tmp/err" && fail "the only experiment was dropped"
echo "causal_cut_short: ok ($ran experiments, $written written)"
