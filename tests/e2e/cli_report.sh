#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever causal report on Coz's own sample profiles (package coz-profiler) and on bad input.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
dir=/usr/share/coz-profiler/viewer/profiles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export LC_ALL=C # ASCII curves: awk counts bytes

. "$2/tests/e2e/lib/skip.sh"
ls "$dir"/*.coz >/dev/null 2>&1 || skip_test "no sample profiles in $dir (Debian package coz-profiler)"
for f in "$dir"/*.coz; do
	name=$(basename "$f" .coz)
	if ! "$lever" causal report --top 0 "$f" >"$tmp/$name.txt" 2>"$tmp/$name.err"; then
		fail "$name: exit $?: $(cat "$tmp/$name.err")"
		continue
	fi
	grep -q '^lever causal report: [0-9]* runs\?, [0-9]* experiments' "$tmp/$name.txt" ||
		fail "$name: no summary line"
	grep -q '^ #  line .*effect' "$tmp/$name.txt" || fail "$name: no table"
	awk 'length > 80 { exit 1 }' "$tmp/$name.txt" || fail "$name: lines over 80 columns"
	grep -q 'malformed' "$tmp/$name.err" && fail "$name: malformed lines reported"
	echo "ok: $name ($(grep -c '^[ 0-9][0-9][ !?] ' "$tmp/$name.txt") lines)"
done

# sqlite: lines of sqlite3.c, and the wrapped durations are skipped with a warning
grep -q '^[ 0-9][0-9][ !?] sqlite3\.c:[0-9]* ' "$tmp/sqlite.txt" || fail "sqlite: no sqlite3.c lines"
grep -q 'sqlite.coz: skipped 7 experiment(s) with duration <= 0' "$tmp/sqlite.err" ||
	fail "sqlite: no warning about the 7 wrapped durations"
grep -q 'progress points: main.c:73 (throughput)' "$tmp/sqlite.txt" || fail "sqlite: point"
# ranks: lines with firm curves before thin ones, each group by impact, descending
"$lever" causal report --json "$dir/sqlite.coz" 2>/dev/null |
	jq -r '.series[] | "\(if .thin then 1 else 0 end) \(.impact)"' >"$tmp/ranks" ||
	fail "sqlite: --json"
[ -s "$tmp/ranks" ] && sort -s -k1,1n -k2,2gr -c "$tmp/ranks" ||
	fail "sqlite: not ranked firm first, then by impact"
# several profiles combine
"$lever" causal report "$dir/sqlite.coz" "$dir/sqlite.coz" >"$tmp/twice.txt" 2>/dev/null ||
	fail "two profiles"
grep -q '^lever causal report: 80 runs' "$tmp/twice.txt" || fail "two profiles: runs not summed"
# --top and --min-speedups
n=$("$lever" causal report --top 3 "$dir/sqlite.coz" 2>/dev/null | grep -c '^[ 0-9][0-9][ !?] ')
[ "$n" -eq 3 ] || fail "--top 3 showed $n lines"
a=$("$lever" causal report --top 0 --min-speedups 2 "$dir/sqlite.coz" 2>/dev/null | grep -c '^[ 0-9][0-9][ !?] ')
b=$(grep -c '^[ 0-9][0-9][ !?] ' "$tmp/sqlite.txt")
[ "$a" -gt "$b" ] || fail "--min-speedups 2 did not admit more lines ($a vs $b)"

# bad input: clear errors, never a crash
"$lever" causal report "$tmp/missing.coz" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "missing.coz: cannot open" "$tmp/err" || fail "missing file"
head -c 65536 /dev/urandom >"$tmp/random.coz"
"$lever" causal report "$tmp/random.coz" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "random.coz: no profile records" "$tmp/err" || fail "random bytes"
printf 'startup\ttime=1\nexperiment\tselected=a.c:1\tspeedup=2\tduration=5\n' >"$tmp/bad.coz"
"$lever" causal report "$tmp/bad.coz" >/dev/null 2>"$tmp/err" || fail "lenient read failed"
grep -q "bad.coz:2: experiment: speedup=2 is not a number in 0..1" "$tmp/err" ||
	fail "no diagnostic naming file and line: $(cat "$tmp/err")"
"$lever" causal report --strict "$tmp/bad.coz" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "bad.coz:2:" "$tmp/err" || fail "--strict did not fail"
( cd "$tmp" && cp "$dir/ferret.coz" profile.coz && "$lever" causal report >/dev/null 2>&1 ) ||
	fail "default ./profile.coz"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
