#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Smoke test of bench/stabilizer/run.sh (Table 1, overhead, -O2 vs -O3) so the
# harness does not rot: a quick run on two small stand-in programs built with
# lever cc (tests/programs/stabilizer_bench), few runs. Checks that every part
# runs and the report has its tables and verdicts, never the timings.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
run=$src/bench/stabilizer/run.sh
stand_in=$src/tests/programs/stabilizer_bench/programs.sh

check "--help" bash -c "'$run' --help | grep -q -- '--overhead-runs'"
"$run" "$build" --bogus >"$tmp/bad.out" 2>&1
check "unknown option: exit 2" [ $? = 2 ]
"$run" "$build" --programs-sh "$stand_in" --programs nope --work "$tmp/w" --out "$tmp/x.md" >"$tmp/bad.out" 2>&1
check "unknown program: exit 2 and the known ones" bash -c "[ $? = 2 ] && grep -q 'known: calls allocs' '$tmp/bad.out'"
"$run" "$build" --programs-sh "$stand_in" --build-only --programs calls --work "$tmp/prebuilt" --out "$tmp/x.md" >/dev/null 2>&1
check "--build-only builds the variants and writes no report" \
	bash -c "[ -x '$tmp/prebuilt/calls-lever-O3-link3' ] && [ ! -e '$tmp/x.md' ]"
"$run" "$build" --programs-sh "$stand_in" --runs 3 --work "$tmp/w" --out "$tmp/x.md" >"$tmp/bad.out" 2>&1
check "--runs 3 is refused (one run is dropped, Shapiro-Wilk needs 3)" [ $? = 2 ]

"$run" "$build" --programs-sh "$stand_in" --size ci --runs 5 --overhead-runs 2 --link-seeds 2 \
	--interval 5ms --work "$tmp/work" --out "$tmp/results/stab.md" >"$tmp/run.out" 2>&1
rc=$?
check "run.sh quick mode exits 0" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/    /' "$tmp/run.out" | tail -30
md=$tmp/results/stab.md
raw=$tmp/results/stab-raw
check "report written with the raw data beside it" test -s "$md" -a -s "$raw/table1.csv"
check "table1: 5 runs of each cell, interleaved" \
	[ "$(grep -c '^calls,.*,one-time' "$raw/table1.csv")" = 5 -a "$(grep -c '^allocs,.*,re-randomized' "$raw/table1.csv")" = 5 ]
check "table1: cells alternate (one-time, re-randomized, re-randomized, one-time, ...)" \
	[ "$(grep '^calls,' "$raw/table1.csv" | cut -d, -f3 | head -4 | tr '\n' ' ')" = "one-time re-randomized re-randomized one-time " ]
check "Table 1 in the report: both programs, 4 runs per cell after dropping the max" \
	bash -c "grep -qE '^\| calls \| 4 \| 4 \|' '$md' && grep -qE '^\| allocs \| 4 \| 4 \|' '$md'"
check "Table 1 has Shapiro-Wilk and Brown-Forsythe columns" grep -q 'SW p A | SW p B | BF p' "$md"
check "overhead: link baseline and four configurations, 2 runs each per program" \
	[ "$(cut -d, -f3 "$raw/overhead.csv" | grep -v config | sort | uniq -c | awk '{ print $1 }' | sort -u)" = 4 ]
check "overhead: link seeds 1 and 2 used in turn" \
	[ "$(grep '^calls,.*,link,' "$raw/overhead.raw.csv" | cut -d, -f5 | tr '\n' ' ')" = "calls-lever-link1 calls-lever-link2 " ]
check "every run has its own seed" \
	[ "$(cut -d, -f4 "$raw"/table1.raw.csv "$raw"/overhead.raw.csv "$raw"/suite.raw.csv | sort | uniq -d | wc -l)" = 0 ]
check "overhead table with median and worst" \
	bash -c "grep -qE '^\| calls \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|' '$md' && grep -q '^| \*\*median\*\* |' '$md' && grep -q '^| \*\*max\*\* |' '$md'"
check "the worst program's cause: largest single part and counters" \
	bash -c "grep -qE 'Worst program with all three parts: \*\*(calls|allocs)\*\*.*largest single part is \*\*(heap|code|stack)\*\*' '$md' && grep -qE '^\| all \|' '$md'"
check "suite: -O2 vs -O3 with the ANOVA verdict" grep -qE 'Within-subjects ANOVA .*F\(1, 1\) = ' "$md"
# (lever stabilize --code changes bench_work calls' checksum at the time of
# writing, a runtime bug; the harness must say so either way)
check "the report says whether every run computed the same output" \
	grep -qE 'every run wrote the same output|outputs differing from the first run' "$md"
check "the report names the machine and the command" \
	bash -c "grep -q '^- machine: ' '$md' && grep -q '^- command: ' '$md'"

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
