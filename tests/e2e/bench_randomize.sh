#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever bench / lever compare --randomize=code,stack,link with programs built
# by lever cc (tests/programs/stabilizer/code_bits.c): every run gets the
# Stabilizer runtime with those parts on, the re-randomization period and a
# fresh seed; the code part really relocates functions in each run (its code
# log); the randomizations and seeds are in the text, JSON and HTML outputs;
# --randomize=link reads the seed lever cc --randomize-link recorded; programs
# not built by lever cc are refused. Checks behaviour only, never timings.
set -uo pipefail
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd) || exit 1
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
lever_cc=$build/bin/lever-cc
prog_src=$src/tests/programs/stabilizer/code_bits.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
. "$lib/expect.sh" || exit 1
py=/usr/bin/python3
fast=(--min-time 0)


"$lever_cc" -O2 "$prog_src" -o cb || { echo "FAIL: lever cc cannot build code_bits"; exit 1; }
"$lever_cc" -O2 --randomize-link=41 "$prog_src" -o cb-41 &&
	"$lever_cc" -O2 --randomize-link=42 "$prog_src" -o cb-42 &&
	LEVER_CC_RANDOMIZE_LINK=random "$lever_cc" -O2 "$prog_src" -o cb-r ||
	{ echo "FAIL: lever cc --randomize-link cannot build code_bits"; exit 1; }
cc -O2 "$prog_src" -o plain || exit 1

# the runtime's settings in every run: parts, period, a fresh seed per run
"$lever" bench -n 4 "${fast[@]}" --show-output --seed 3 --randomize=code,stack --rerandomize=2ms \
	--export-json b.json --html b.html -- ./cb env >run.log 2>&1
check "bench --randomize=code,stack runs" grep -q 'Time (mean' run.log
check "each run: runtime, code and stack on, heap off, 2 ms period" \
	[ "$(grep -c '^settings HEAP=0 CODE=1 STACK=1 ONE_TIME=0 INTERVAL_NS=2000000 SEED=[0-9]* runtime=yes' run.log)" = 4 ]
check "each run has its own seed" [ "$(grep '^settings' run.log | sed 's/.*SEED=\([0-9]*\).*/\1/' | sort -u | wc -l)" = 4 ]
check "the text names the parts and the period" \
	grep -q 'Layout: .*Stabilizer, fresh seed per run: relocated code, random stack pads, code and stack re-randomized every 2' run.log
check "the text says which program was checked" grep -q "Program: *$tmp/cb\$" run.log
check "the JSON records the parts, period and the seed of every run" $py - b.json run.log <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))["results"][0]
lay = r["layout"]
seeds = re.findall(r"SEED=(\d+)", open(sys.argv[2]).read())
assert r["randomize_code"] and r["randomize_stack"] and not r["randomize_heap"], r
assert lay["randomize"] == ["code", "stack"], lay
assert lay["rerandomize_ns"] == 2000000, lay
c = lay["commands"][0]
assert c["program"].endswith("/cb") and c["link_seed"] is None, c
assert c["link_seeds"] is None, c
assert c["stabilizer_seeds"] == seeds, (c["stabilizer_seeds"], seeds)
PY
check "the HTML records the layout and the seeds" grep -q 'Stabilizer seeds of the runs of ./cb env, in order: [0-9]*, [0-9]*, [0-9]*, [0-9]*' b.html
check "the HTML names the parts" grep -q 'relocated code, random stack pads' b.html
# the same --seed gives the same Stabilizer seeds
"$lever" bench -n 4 "${fast[@]}" --show-output --seed 3 --randomize=code,stack --rerandomize=2ms \
	-- ./cb env >run2.log 2>&1
check "--seed repeats the Stabilizer seeds" cmp -s <(grep '^settings' run.log) <(grep '^settings' run2.log)
# --rerandomize=off: randomized once per run
expect 0 'code and stack randomized once per run' "$lever" bench -n 2 "${fast[@]}" --show-output \
	--randomize=code --rerandomize=off -- ./cb env
check "--rerandomize=off sets ONE_TIME" grep -q 'CODE=1 STACK=0 ONE_TIME=1' out
expect 0 'HEAP=1 CODE=1 STACK=1 ONE_TIME=0 INTERVAL_NS=500000000' "$lever" bench -n 2 "${fast[@]}" \
	--show-output --randomize=heap,code,stack -- ./cb env

# the code part really moves functions in every run: the runtime's code log
LEVER_STABILIZE_CODE_LOG=$tmp/code.log "$lever" bench -n 3 "${fast[@]}" --randomize=code \
	--rerandomize=1ms -- ./cb 300 >/dev/null 2>&1
check "every run relocated functions (3 processes in the code log)" \
	[ "$(grep -c '^# lever stabilizer code log' code.log)" = 3 ]
check "the functions of code_bits were copied" [ "$(grep -c ' f1[0-3][0-3][0-3][0-3]$' code.log)" -ge 256 ]

# programs lever cc did not build are refused before any run
expect 1 "--randomize=code: $tmp/plain .*has no .rela.text.*lever cc" "$lever" bench --randomize=code -- ./plain env
expect 1 "--randomize=stack: $tmp/plain .*has no lever_stack_pads" "$lever" bench --randomize=stack -- ./plain env
expect 1 "--randomize=link: $tmp/cb .*records no link seed.*--randomize-link" "$lever" bench --randomize=link -- ./cb env
# the program is found through PATH, and in a shell command line
PATH=$tmp:$PATH expect 0 "Program: *$tmp/cb$" "$lever" bench -n 2 "${fast[@]}" --randomize=code -- cb env
expect 0 "Program: *$tmp/cb$" "$lever" bench -n 2 "${fast[@]}" --randomize=code 'X=1 ./cb env >/dev/null'
PATH=$tmp:$PATH expect 1 "$tmp/plain .*has no .rela.text" "$lever" bench --randomize=code 'plain env | cat'

# --randomize=link: the seed recorded by lever cc --randomize-link
check "lever cc --randomize-link records the seed" \
	sh -c "readelf -p .lever.link cb-41 | grep -q 'lever-link-seed 41'"
check "a plain lever cc build records none" sh -c "! readelf -S cb | grep -q '\.lever\.link'"
check "--randomize-link builds still run" sh -c "[ \"\$(./cb-41 env | sed 's/.*checksum=//')\" = \"\$(./cb env | sed 's/.*checksum=//')\" ]"
expect 0 "Layout: .*link order seed 41" "$lever" bench -n 2 "${fast[@]}" --randomize=link -- ./cb-41 env
expect 0 "link order seed [0-9]+" "$lever" bench -n 2 "${fast[@]}" --randomize=link,code -- ./cb-r env
strip -o cb-41-stripped cb-41
expect 0 "link order seed 41" "$lever" bench -n 2 "${fast[@]}" --randomize=link -- ./cb-41-stripped env
"$lever" compare -n 3 "${fast[@]}" --randomize=env,link,code --json --html c.html -- './cb-41 env' './cb-42 env' >c.json 2>c.err
check "compare two link-randomized builds (JSON: seeds per command)" $py - c.json <<'PY'
import json, sys
lay = json.load(open(sys.argv[1]))["layout"]
assert lay["randomize"] == ["env", "code", "link"], lay
assert [c["link_seed"] for c in lay["commands"]] == ["41", "42"], lay
assert [c["link_seeds"] for c in lay["commands"]] == [["41"] * 3, ["42"] * 3], lay
assert all(len(c["stabilizer_seeds"]) == 3 for c in lay["commands"]), lay
assert lay["rerandomize_ns"] == 500000000, lay
PY
check "compare HTML names both link seeds" sh -c 'grep -q "link order seed 41" c.html && grep -q "link order seed 42" c.html'
# a --prepare command that relinks: a fresh link order per run, each run's seed recorded
cp cb-41 cb-p
relink="LEVER_CC_RANDOMIZE_LINK=random $lever_cc -O2 $prog_src -o cb-p"
expect 0 "link order seeds: 3 distinct over 3 runs" "$lever" bench -n 3 "${fast[@]}" --randomize=link \
	--prepare "$relink" --export-json p.json -- ./cb-p env
check "the JSON has each run's link seed" $py - p.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["results"][0]["layout"]["commands"][0]
assert c["link_seed"] == "41", c
assert len(set(c["link_seeds"])) == 3 and "41" not in c["link_seeds"], c
assert c["stabilizer_seeds"] is None, c
PY
expect 1 "records no link seed any more" "$lever" bench -n 3 "${fast[@]}" --randomize=link \
	--prepare "$lever_cc -O2 $prog_src -o cb-p" -- ./cb-p env
expect 0 "B: .*link order seed 42" "$lever" compare -n 3 "${fast[@]}" --randomize=link -- './cb-41 env' './cb-42 env'
expect 1 "--randomize=link: $tmp/cb .*records no link seed" "$lever" compare -n 3 --randomize=link -- './cb-41 env' './cb env'

[ $fails -eq 0 ] && echo "bench_randomize: all checks pass"
exit $((fails > 0))
