#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever compare and lever stats: sample files with known statistics (verdicts,
# test choice, speedup), bad sample files (clear errors with file:line), the
# suite analysis on the Stabilizer authors' data (the paper's ANOVA), and
# interleaved runs of two commands. Checks behaviour only, never timings.
set -uo pipefail
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd) || exit 1
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
. "$lib/expect.sh" || exit 1
. "$lib/skip.sh" || exit 1
need python3 python3 # checks the JSON exports (skipped, never passed, without it)
py=$(command -v python3)
data=$src/bench/stats/stabilizer-asplos13


expect 0 'usage: lever compare' "$lever" compare --help
expect 0 'usage: lever stats' "$lever" stats --help
for opt in --samples --suite --configs --drop-max --alpha --test --bootstrap --unit --json --html \
	--export-markdown \
	--runs --warmup --prepare --cleanup --randomize --rerandomize; do
	expect 0 "$opt" "$lever" compare --help
done
expect 2 'randomizes runs of commands; --samples and --suite run none' \
	"$lever" compare --randomize=code --samples a b
expect 2 '--rerandomize only acts' "$lever" compare --rerandomize=1s -- true true
expect 1 "--randomize=code: .*has no .rela.text" "$lever" compare --randomize=code -- true true
expect 2 'need two commands' "$lever" compare
expect 2 'need two commands' "$lever" compare -- true
expect 2 '--samples needs two files' "$lever" compare --samples a.txt
expect 2 "--test 'fast'" "$lever" compare --test fast --samples a b
expect 2 "--alpha '2'" "$lever" compare --alpha 2 --samples a b
expect 2 'no sample file given' "$lever" stats
expect 2 "unknown unit 'h'" "$lever" stats -u h x

# two samples with known statistics: B = A - 0.3 (so equal variances), both normal-looking
printf '%s\n' 10.1 10.3 9.8 10.0 10.2 9.9 10.4 9.7 10.05 9.95 >a.txt
awk '{printf "%.2f\n", $1 - 0.3}' a.txt >b.txt
expect 0 'B is 3\.1% ± [0-9.]+% faster than A, p = 0\.00[0-9]+; significant at alpha = 0.05' \
	"$lever" compare --samples a.txt b.txt
expect 0 "Welch's t-test: t = 3\.0[0-9]+, df = 18\.0" "$lever" compare --samples a.txt b.txt
expect 0 'speedup: mean\(A\)/mean\(B\) = 1\.0308' "$lever" compare --samples a.txt b.txt
# A and B share values: Mann-Whitney falls back to the normal approximation with ties
expect 0 'Mann-Whitney U test \(normal approximation\)' "$lever" compare --test mann-whitney --samples a.txt b.txt
# identical samples: not significant
expect 0 'NOT significant' "$lever" compare --samples a.txt a.txt
# a skewed sample makes the automatic choice Mann-Whitney, with the reason
printf '%s\n' 1 1.01 1.02 1.01 1.03 1 1.02 1.01 1.9 2.5 1.01 1.02 >skew.txt
expect 0 'why: B is NOT normal' "$lever" compare --samples a.txt skew.txt
expect 0 'Mann-Whitney U test' "$lever" compare --samples a.txt skew.txt
# --drop-max removes each side's largest value
expect 0 '\(9 values\)' "$lever" compare --drop-max --samples a.txt b.txt
{
	"$lever" compare --json --samples a.txt b.txt >cmp.json
	check "compare --json" "$py" -c '
import json
c = json.load(open("cmp.json"))
assert c["test"]["name"] == "welch" and c["significant"] is True
assert abs(c["speedup"]["estimate"] - 10.04 / 9.74) < 1e-12
assert c["speedup"]["low"] < c["speedup"]["estimate"] < c["speedup"]["high"]
assert c["a"]["n"] == 10 and len(c["a"]["values"]) == 10
assert abs(c["a"]["mean"] - 10.04) < 1e-12
'
	"$lever" stats --json a.txt b.txt >stats.json
	check "stats --json" "$py" -c '
import json
s = json.load(open("stats.json"))
a = s["samples"][0]
assert a["n"] == 10 and abs(a["median"] - 10.025) < 1e-12 and a["min"] == 9.7 and a["max"] == 10.4
assert 0 < a["shapiro_wilk"]["p"] <= 1 and s["brown_forsythe"]["p"] > 0.9
'
}
expect 0 'n = 10, mean = 10\.04 s' "$lever" stats a.txt
expect 0 'n = 10, mean = 10\.04,' "$lever" stats -u none a.txt
expect 0 'Brown-Forsythe test of equal variances: F\(1, 18\)' "$lever" stats a.txt b.txt
"$lever" compare --samples --html cmp.html a.txt b.txt >/dev/null
check "compare --html: self-contained, charts, verdict" \
	bash -c 'grep -q "<svg" cmp.html && grep -q "faster than A" cmp.html && ! grep -qE "(src|href)=" cmp.html'
"$lever" stats --html st.html a.txt skew.txt >/dev/null
check "stats --html" grep -q 'Normal Q-Q' st.html

# bad sample files: clear errors naming file and line, exit 1, never a crash
: >empty.txt
printf '# nothing\n\n' >comments.txt
printf '1\n2\nthree\n' >word.txt
printf '1\nNaN\n' >nan.txt
printf '1\n1e999\n' >huge.txt
head -c 10000 /dev/zero | tr '\0' '7' >longline.txt
head -c 3000 /dev/urandom >random.bin
expect 1 'empty.txt: no samples' "$lever" stats empty.txt
expect 1 'comments.txt: no samples' "$lever" compare --samples a.txt comments.txt
expect 1 "word.txt:3: 'three' is not a number" "$lever" stats word.txt
expect 1 "nan.txt:2: 'NaN' is NaN" "$lever" compare --samples nan.txt a.txt
expect 1 "huge.txt:2: '1e999' is out of range" "$lever" stats huge.txt
expect 1 'longline.txt:1: line longer than 4096 bytes' "$lever" stats longline.txt
expect 1 'random.bin:[0-9]+: ' "$lever" stats random.bin
expect 1 'missing.txt: No such file or directory' "$lever" stats missing.txt
expect 1 '/: Is a directory' "$lever" stats /
expect 0 'n = 3' bash -c "printf '1\n2\n3\n' | '$lever' stats -"

# the suite: the Stabilizer paper's ANOVA with the authors' cleaning (spec §7.5)
expect 0 'F\(1, 17\) = 3\.235, p = 0\.0898' "$lever" compare --suite "$data/anova_data.csv" --configs O1,O2 --drop-max
expect 0 '17 of 18 per-benchmark tests are significant \(14 faster, 3 slower\)' \
	"$lever" compare --suite "$data/anova_data.csv" --configs O1,O2 --drop-max
expect 0 'about 0\.90 would be significant by chance' \
	"$lever" compare --suite "$data/anova_data.csv" --configs O1,O2 --drop-max
expect 0 'F\(1, 17\) = 1\.335, p = 0\.264' "$lever" compare --suite "$data/anova_data.csv" --configs O2,O3 --drop-max
expect 0 'F\(1, 17\) = 3\.215, p = 0\.0908' "$lever" compare --suite "$data/anova_data.csv" --configs O1,O2
# Table 1 of the paper on the command line: Shapiro-Wilk of both sides and Brown-Forsythe
expect 0 'astar +29 +29 .* 0\.000226 +0\.194 +0\.00144' \
	"$lever" compare --suite "$data/qq_data.csv" --drop-max -u none
expect 0 'sjeng +29 +29 .* 0\.24 +0\.373 +4\.5e-07' \
	"$lever" compare --suite "$data/qq_data.csv" --drop-max -u none
expect 2 'has 3 configurations \(O3, O2, O1\); choose two with --configs' \
	"$lever" compare --suite "$data/anova_data.csv"
expect 2 "has no configuration 'O9'" "$lever" compare --suite "$data/anova_data.csv" --configs O1,O9
expect 1 'word.txt:1: header must name' "$lever" compare --suite word.txt
{
	"$lever" compare --json --suite "$data/anova_data.csv" --configs O1,O2 --drop-max >suite.json
	check "suite --json" "$py" -c '
import json
s = json.load(open("suite.json"))
assert round(s["anova"]["F"], 3) == 3.235 and round(s["anova"]["p"], 4) == 0.0898
assert s["anova"]["df1"] == 1 and s["anova"]["df2"] == 17
assert s["tests"] == 18 and s["significant"] == 17 and abs(s["expected_false_positives"] - 0.9) < 1e-12
slower = sorted(b["benchmark"] for b in s["benchmarks"]
                if b["comparison"]["significant"] and b["comparison"]["speedup"]["estimate"] < 1)
assert slower == ["bzip2", "libquantum", "milc"], slower
'
}

# --export-markdown: the paper's Table 1 from the authors' data, p < 0.05 in bold,
# sd(B)/sd(A) as in spec §7.2 (astar 0.21, cactusADM 2.67)
"$lever" compare --suite "$data/qq_data.csv" --drop-max -u none --export-markdown table1.md >table1.txt
check "suite --export-markdown keeps the text on stdout" grep -q 'Within-subjects ANOVA' table1.txt
check "Table 1 markdown: astar, bold where p < 0.05" \
	grep -qE '^\| astar \| 29 \| 29 \| 200\.058 \| 194\.567 \| 0\.9726 \| 0\.21[0-9] \| \*\*0\.000226\*\* \| 0\.194 \| \*\*0\.00144\*\* \|' table1.md
check "Table 1 markdown: cactusADM sd ratio 2.67" \
	grep -qE '^\| cactusADM \| 28 \| 27 \| .* \| 2\.67[0-9] \| \*\*0\.0029\*\* \| \*\*0\.00259\*\* \| \*\*0\.000941\*\* \|' table1.md
check "Table 1 markdown: bzip2 not bold" grep -qE '^\| bzip2 \|.*\| 0\.789 \| 0\.143 \| 0\.0775 \|' table1.md
check "Table 1 markdown: 18 rows" [ "$(grep -cE '^\| [a-zA-Z0-9]+ \| 2[0-9] \|' table1.md)" = 18 ]
expect 0 'Time ratio mean\(B\)/mean\(A\) across the 18 benchmarks: median 1\.004[0-9]+, min 0\.92[0-9]+ \(zeusmp\), max 1\.16[0-9]+ \(cactusADM\)' \
	"$lever" compare --suite "$data/qq_data.csv" --drop-max -u none
expect 0 '^\| benchmark \| runs A \| runs B \|' "$lever" compare --suite "$data/qq_data.csv" --export-markdown -
expect 2 'both want standard output' "$lever" compare --json --suite "$data/qq_data.csv" --export-markdown -
expect 1 'cannot write /nonexistent/x.md' "$lever" compare --suite "$data/qq_data.csv" --export-markdown /nonexistent/x.md
expect 0 '^\| a\.txt \| 10 \|' "$lever" compare --samples --export-markdown - a.txt b.txt
expect 0 'faster than A' "$lever" compare --samples --export-markdown - a.txt b.txt
{
	# the ratios, recomputed here from the CSV: mean(B)/mean(A) per benchmark after dropping the max
	"$lever" compare --json --suite "$data/qq_data.csv" --drop-max -u none >t1.json
	check "suite --json time_ratio and sd_ratio" "$py" -c '
import csv, json, statistics as st
cells = {}
for row in csv.DictReader(open("'"$data"'/qq_data.csv")):
    cells.setdefault((row["benchmark"], row["ext"]), []).append(float(row["time"]))
for v in cells.values():
    v.remove(max(v))
s = json.load(open("t1.json"))
ratios = {}
for b in s["benchmarks"]:
    a, r = cells[(b["benchmark"], s["a"])], cells[(b["benchmark"], s["b"])]
    ratios[b["benchmark"]] = st.mean(r) / st.mean(a)
    assert abs(b["time_ratio"] - ratios[b["benchmark"]]) < 1e-12
    assert abs(b["sd_ratio"] - st.stdev(r) / st.stdev(a)) < 1e-9
t = s["time_ratio"]
assert abs(t["median"] - st.median(ratios.values())) < 1e-12
assert t["max_benchmark"] == max(ratios, key=ratios.get) and t["min_benchmark"] == min(ratios, key=ratios.get)
'
}

# two commands, interleaved A B A B ...
"$lever" compare -n 4 --min-time 0 -w 1 -- 'sh -c "echo A >> order.log"' 'sh -c "echo B >> order.log"' >cmd.out 2>&1
check "runs are interleaved (1 warm-up each, then 4 pairs)" \
	[ "$(tr -d '\n' <order.log)" = "ABABABABAB" ]
check "the comparison has a verdict" grep -qE 'than A, p = .*significant.* at alpha = 0\.05' cmd.out
expect 1 "command 'false' failed" "$lever" compare -n 3 -- true false
expect 2 'unbalanced quotes' "$lever" compare -n 3 -- "echo 'x" true

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
