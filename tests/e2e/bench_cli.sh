#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever bench: help, usage errors, failing commands, the randomized environment,
# prepare/cleanup, run counts, warm-up, and the JSON/CSV/Markdown/HTML exports.
# Checks behaviour only, never timings.
set -uo pipefail
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd) || exit 1
build=$(cd "$1" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
. "$lib/expect.sh" || exit 1
. "$lib/skip.sh" || exit 1
need python3 python3 # checks the JSON exports (skipped, never passed, without it)
py=$(command -v python3)


fast=(--min-time 0)
expect 0 'usage: lever bench' "$lever" bench --help
expect 0 'usage: lever bench' "$lever" help bench
for opt in --warmup --min-runs --max-runs --runs --min-time --prepare --cleanup --randomize \
	--rerandomize --ignore-failure --show-output --no-progress --seed --export-json --export-csv \
	--export-markdown --html --alpha; do
	expect 0 "$opt" "$lever" bench --help
done
expect 2 'no command given' "$lever" bench
expect 2 'no command given' "$lever" bench -n 3 --
expect 2 "unknown option '--frob'" "$lever" bench --frob -- true
expect 2 "needs a value" "$lever" bench -n
expect 2 "--runs '1'" "$lever" bench -n 1 -- true
expect 2 "--runs 'x'" "$lever" bench -n x -- true
expect 2 "--min-time 'soon'" "$lever" bench --min-time soon -- true
expect 2 "unbalanced quotes" "$lever" bench "echo 'oops"
# code, stack and link need a program built by lever cc (tests/e2e/bench_randomize.sh
# has the programs that are): refused before any run, never silently ignored
expect 1 "--randomize=code: .*has no .rela.text.*lever cc" "$lever" bench --randomize=env,code -- true
expect 1 "--randomize=stack: .*has no lever_stack_pads.*lever cc" "$lever" bench --randomize=stack -- true
expect 1 "--randomize=link: .*records no link seed.*--randomize-link" "$lever" bench --randomize=link -- true
printf '#!/bin/sh\nexit 0\n' >script.sh && chmod +x script.sh
expect 1 "is not an ELF program" "$lever" bench --randomize=code -- ./script.sh
expect 1 "cannot find the program 'no-such-command-xyz'" "$lever" bench --randomize=code -- no-such-command-xyz
expect 2 "--rerandomize only acts on --randomize=code or stack" "$lever" bench --rerandomize=2ms -- true
expect 2 "--rerandomize only acts" "$lever" bench --randomize=heap --rerandomize=off -- true
expect 2 "--rerandomize '0.5ms'" "$lever" bench --randomize=code --rerandomize=0.5ms -- true
expect 2 "expected env, heap, code, stack, link or none" "$lever" bench --randomize=disk -- true
expect 1 "command 'false' failed with exit status 1" "$lever" bench -n 3 -- false
expect 1 "cannot run 'no-such-command-xyz'" "$lever" bench -n 3 -- no-such-command-xyz
expect 0 "Warning: 3 runs exited with a non-zero status" "$lever" bench -n 3 "${fast[@]}" -i -- false
expect 1 "the prepare command 'exit 3' failed" "$lever" bench -n 3 -p 'exit 3' -- true

# a normal run: the summary lines
expect 0 'Time \(mean ± σ\)' "$lever" bench -n 5 "${fast[@]}" -- true
expect 0 '5 runs' "$lever" bench -n 5 "${fast[@]}" -- true
expect 0 'Normality: ' "$lever" bench -n 5 "${fast[@]}" 'sh -c "exit 0"'
expect 0 'random environment size' "$lever" bench -n 3 "${fast[@]}" -- true
expect 0 'fixed environment' "$lever" bench -n 3 "${fast[@]}" --randomize=none -- true
expect 0 'Stabilizer, fresh seed per run: shuffled heap' "$lever" bench -n 3 "${fast[@]}" --randomize=heap -- true
# --randomize=heap: each run under the Stabilizer runtime with a fresh seed
"$lever" bench -n 5 "${fast[@]}" --show-output --randomize=env,heap -- \
	sh -c 'echo "heap $LEVER_STABILIZE_HEAP code $LEVER_STABILIZE_CODE preload ${LD_PRELOAD##*/} len ${#LEVER_RANDOMIZED_ENVIRONMENT_OFFSET}"' \
	>heap.log 2>&1
check "--randomize=heap preloads the runtime" [ "$(grep -c '^heap 1 code 0 preload liblever-stabilizer.so len' heap.log)" = 5 ]
"$lever" bench -n 5 "${fast[@]}" --show-output --randomize=heap --seed 9 -- \
	"$build/tests/programs/stabilizer/heap_bits" live 300 >seeds.log 2>&1
check "--randomize=heap gives every run a fresh layout" \
	[ "$(grep fingerprint seeds.log | sort -u | wc -l)" = 5 ]
LEVER_RUNTIME_DIR=/nonexistent expect 1 'runtime not found' "$lever" bench -n 3 --randomize=heap -- true

# exactly -n runs plus warm-up: count them with the prepare command
"$lever" bench -n 7 -w 2 "${fast[@]}" -p "echo p >> prep.log" -c "echo c >> clean.log" -- true >/dev/null 2>&1
check "prepare ran before each of 2 warm-up + 7 runs" [ "$(wc -l <prep.log)" = 9 ]
check "cleanup ran once" [ "$(wc -l <clean.log)" = 1 ]
# --min-runs with --max-runs: at least min, at most max
rm -f prep.log
"$lever" bench -m 3 -M 4 --min-time 10s -p "echo p >> prep.log" -- true >/dev/null 2>&1
check "--max-runs caps the runs" [ "$(wc -l <prep.log)" = 4 ]

# the environment offset: a variable of random length 0..4095 per run, and the iteration
"$lever" bench -n 20 "${fast[@]}" --show-output --seed 5 -- \
	sh -c 'echo "len ${#LEVER_RANDOMIZED_ENVIRONMENT_OFFSET} it $LEVER_BENCH_ITERATION"' >env.log 2>&1
check "offset lengths are within 0..4095" awk '$1=="len" && ($2<0 || $2>4095) {bad=1} END {exit bad}' env.log
check "offsets vary between runs" [ "$(awk '$1=="len" {print $2}' env.log | sort -u | wc -l)" -gt 5 ]
check "iterations are numbered" grep -q 'it 19$' env.log
"$lever" bench -n 3 "${fast[@]}" --show-output --randomize=none -- \
	sh -c 'echo "set:${LEVER_RANDOMIZED_ENVIRONMENT_OFFSET+yes}"' >env2.log 2>&1
check "--randomize=none sets no offset" [ "$(grep -c 'set:$' env2.log)" = 3 ]
# the same seed gives the same offsets
"$lever" bench -n 20 "${fast[@]}" --show-output --seed 5 -- \
	sh -c 'echo "len ${#LEVER_RANDOMIZED_ENVIRONMENT_OFFSET} it $LEVER_BENCH_ITERATION"' >env3.log 2>&1
check "--seed makes offsets reproducible" cmp -s <(grep '^len' env.log) <(grep '^len' env3.log)
# output is discarded unless --show-output
"$lever" bench -n 3 "${fast[@]}" -- echo SHOULD-NOT-APPEAR >quiet.log 2>&1
check "command output is discarded" bash -c '! grep -qx SHOULD-NOT-APPEAR quiet.log'

# exports
expect 0 'Benchmark: ' "$lever" bench -n 6 "${fast[@]}" --export-json r.json --export-csv r.csv \
	--export-markdown r.md --html r.html -- sh -c 'exit 0'
check "CSV has hyperfine's header" grep -qx 'command,mean,stddev,median,user,system,min,max' r.csv
check "CSV has one result row" [ "$(wc -l <r.csv)" = 2 ]
check "Markdown table" grep -q '^| `sh -c exit 0` |' r.md
check "HTML report has charts" grep -q '<svg' r.html
check "HTML report is self-contained" bash -c '! grep -qE "(src|href)=" r.html'
{
	check "JSON has hyperfine's fields and 6 runs" "$py" -c '
import json, sys
r = json.load(open("r.json"))["results"][0]
for k in ("command", "mean", "stddev", "median", "user", "system", "min", "max", "times",
          "memory_usage_byte", "exit_codes", "env_offsets", "lever", "ci_mean_bca"):
    assert k in r, k
assert len(r["times"]) == 6 and len(r["memory_usage_byte"]) == 6
assert r["min"] <= r["median"] <= r["max"] and all(c == 0 for c in r["exit_codes"])
assert r["memory_usage_byte"][0] > 0
assert "shapiro_wilk" in r["lever"]
'
}
# The numbers: mean, median, min, max and stddev are those of `times`, and
# every time is checked against independent clocks. `sleep 0.1` cannot take
# less than 0.1 s (a lower bound on each run), and the runs happen between two
# reads of the clock here (an upper bound on their sum): both hold however
# loaded the machine is.
t0=$(date +%s%N)
"$lever" bench -n 5 "${fast[@]}" --export-json sleep.json -- sleep 0.1 >sleep.log 2>&1
t1=$(date +%s%N)
check "lever bench -- sleep 0.1 ran" [ -s sleep.json ]
check "summary statistics agree with times; times bracketed by sleep 0.1 and the wall clock" \
	"$py" - sleep.json "$(((t1 - t0)))" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][0]
wall = int(sys.argv[2]) / 1e9
t = r["times"]
def near(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))
assert len(t) == 5, t
assert near(r["mean"], statistics.mean(t)), (r["mean"], statistics.mean(t))
assert near(r["median"], statistics.median(t)), (r["median"], statistics.median(t))
assert near(r["min"], min(t)) and near(r["max"], max(t)), (r["min"], r["max"], t)
assert near(r["stddev"], statistics.stdev(t)), (r["stddev"], statistics.stdev(t))
assert min(t) >= 0.1, ("a run of sleep 0.1 took less than 0.1 s", t)
assert sum(t) <= wall, ("the runs took longer than lever bench itself", sum(t), wall)
print("times %s s, mean %.4f, wall %.3f s" % (" ".join("%.4f" % x for x in t), r["mean"], wall))
PY
expect 1 'cannot write /nonexistent/x.json' "$lever" bench -n 3 "${fast[@]}" --export-json /nonexistent/x.json -- true

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
