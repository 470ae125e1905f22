#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The plan of lever annotate record stays linear in functions + globals
# (doc/formats/annotate-plan.md `globals`): the globals of a compilation unit
# are planned once and called by each function's feature program, not copied
# into every function (a plan for all of sqlite3.c reached 175 MB that way).
# Two generated programs with the same N functions and G1 < G2 globals: the
# plan grows by one shared program, not by N copies of it; and the features
# of the globals still read the values the program set.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler"; exit 77; }

n=1000
# gen G: n functions reading one of G globals each; main sets g3 and calls f3
gen() {
	awk -v nf=$n -v ng="$1" 'BEGIN {
		for (g = 0; g < ng; g++) printf "int g%d;\n", g
		for (f = 0; f < nf; f++)
			printf "__attribute__((noinline)) int f%d(int a) { return a + g%d; }\n", f, f % ng
		print "int main(void) { g3 = 42; return f3(1) == 43 ? 0 : 1; }" }' >"$tmp/gen$1.c"
	"$cc" -g -O1 -o "$tmp/gen$1" "$tmp/gen$1.c"
}
size() { stat -c %s "$1"; }

g1=20 g2=200
for g in $g1 $g2; do
	gen $g
	"$lever" annotate record --rate=all -f 'f*' -o "$tmp/r$g" -- "$tmp/gen$g" 2>"$tmp/err$g" ||
		{ cat "$tmp/err$g"; exit 1; }
done
s1=$(size "$tmp/r$g1/plan") s2=$(size "$tmp/r$g2/plan")
echo "plan sizes: $s1 bytes ($n functions, $g1 globals), $s2 bytes ($n functions, $g2 globals)"
check "one shared program per plan" "1 1" \
	"$(grep -c '^globals ' "$tmp/r$g1/plan") $(grep -c '^globals ' "$tmp/r$g2/plan")"
# each global's ops (about 100 hex digits) once, not once per function
grow=$((s2 - s1)) bound=$((200 * (g2 - g1)))
[ "$grow" -le "$bound" ] || { echo "FAIL: the plan grew by $grow bytes for $((g2 - g1)) more globals (bound $bound)"; exit 1; }
echo "ok: growth $grow <= $bound"
bound=$((400 * n + 200 * g2))
[ "$s2" -le "$bound" ] || { echo "FAIL: plan of $s2 bytes (bound $bound)"; exit 1; }
echo "ok: size $s2 <= $bound"
# every function still has every global as a feature, and reads it
r=$tmp/r$g2/record
sym=$(awk '$1 == "S" && $3 == "f3" { print $2 }' "$r")
check "f3's features: its parameter and the globals" $((1 + g2)) \
	"$(awk -v s="$sym" '$1 == "F" && $2 == s { n++ } END { print n + 0 }' "$r")"
v=$(awk -v s="$sym" '$1 == "F" && $2 == s && $5 == "g3" { i = $3 }
	$1 == "C" && $2 == s { for (k = 5; k <= NF; k++) { split($k, kv, "="); if (kv[1] == i) print kv[2] } }' "$r")
check "f3's feature g3 reads the value main set" 42 "$v"
echo "ok: all"
