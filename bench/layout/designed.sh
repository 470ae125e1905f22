#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 17, must-show 2 (real run time) and 3 (instr overhead), on
# tests/programs/layout/designed.c:
#
#  1. record the program built with `lever cc --layout` at the default rate
#     (lever layout record --source=instr), report, paste the suggested
#     structs into a header, and build the original and the suggested layout
#     with `lever cc` (stack pads, --emit-relocs: what --randomize needs);
#  2. lever compare of the two builds under Stabilizer's randomization
#     (--randomize=heap,code,stack, runs interleaved, a fresh seed per run):
#     does the suggested layout run measurably faster?
#  3. the overhead of instr (wall time with lever compare, and CPU time from
#     interleaved runs): the bare program (gcc -O2) against the same
#     program built with `lever cc --layout`, not recording and recording at
#     the default rate (1024 of every 65536 accesses per thread), as ratios.
#
# Raw data (every comparison's JSON, with each run's time, and the record,
# report and header) goes to OUT (default bench/results/layout-designed-raw), with
# `uptime` before and after; bench/layout/table.sh turns it into the table.
#
#   bench/layout/designed.sh [BUILD_DIR] [RUNS] [OUT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
runs=${2:-20}
out=${3:-$src/bench/results/layout-designed-raw}
lever=$build/bin/lever
prog=$src/tests/programs/layout/designed.c
# 16 passes over 262144 elements (64 MiB), 10^7 stores per thread, free-running
args="16 262144 10000000"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
out=$(cd "$out" && pwd)
uptime >"$out/uptime-before.txt"
{
	echo "date: $(date -u +%FT%TZ)"
	echo "lever: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "gcc: $(gcc -dumpfullversion)"
	echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "args: $args; runs: $runs"
} >"$out/setup.txt"

# --- 1. record, report, apply ------------------------------------------------
"$lever" cc --layout -O2 -g -pthread "$prog" -o "$tmp/instr"
"$lever" layout record --source=instr -o "$out/designed.record" --force \
	-- "$tmp/instr" $args >/dev/null 2>"$out/record.log"
"$lever" layout report "$out/designed.record" >"$out/designed.report"
# The suggested struct; when the report keeps the layout (its evidence is
# under the noise, e.g. too few sampled coherence misses), the original as
# the report prints it, so that the header still defines both structs.
suggested_struct() { # STRUCT
	awk -v s="$1" 'index($0, "/* " s ", suggested by") == 1 { want = 1; next }
		want && $0 ~ "^struct " s " \\{" { on = 1 }
		on { print } on && /^};/ { on = 0; want = 0; done = 1 }
		END { exit !done }' "$out/designed.report" ||
		awk -v s="$1" 'index($0, "/* " s ": ") == 1 && /samples|misses/ { want = 1; next }
			want && $0 ~ "^struct " s " \\{" { on = 1 }
			on { print } on && /^};/ { exit }' "$out/designed.report"
}
{
	echo "/* pasted from lever layout report's suggestions ($out/designed.report) */"
	suggested_struct record
	suggested_struct counters
} >"$out/suggested.h"
"$lever" cc -O2 -g -pthread "$prog" -o "$tmp/original"
"$lever" cc -O2 -g -pthread -DDESIGNED_LAYOUT='"suggested.h"' -I"$out" "$prog" -o "$tmp/suggested"
gcc -O2 -g -pthread "$prog" -o "$tmp/bare"

# --- 2. the layouts under randomization --------------------------------------
cd "$tmp"
"$lever" compare --randomize=heap,code,stack -n "$runs" -w 2 --no-progress --json \
	-- "./original $args" "./suggested $args" >"$out/layout.json"

# The same pair by CPU time (user + sys, which waits for a CPU on a loaded
# machine do not inflate as they do wall time): interleaved runs under
# lever stabilize with seed i for both, compared with lever compare --samples.
: >"$out/layout-cpu-original.txt"
: >"$out/layout-cpu-suggested.txt"
for i in $(seq "$runs"); do
	for side in original suggested; do
		/usr/bin/time -f "%U %S" -o "$tmp/time" \
			"$lever" stabilize --heap --code --stack --seed "$i" -- "./$side" $args >/dev/null
		awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/time" >>"$out/layout-cpu-$side.txt"
	done
done
"$lever" compare --samples --json "$out/layout-cpu-original.txt" "$out/layout-cpu-suggested.txt" \
	>"$out/layout-cpu.json"

# --- 3. overhead of instr ----------------------------------------------------
"$lever" compare -n "$runs" -w 2 --no-progress --json \
	-- "./bare $args" "./instr $args" >"$out/overhead-idle.json"
"$lever" compare -n "$runs" -w 2 --no-progress --json \
	-- "./bare $args" "env LEVER_LAYOUT_TRACE=$tmp/run.trace ./instr $args" \
	>"$out/overhead-recording.json"
ls -l "$tmp/run.trace" | awk '{ print "trace bytes per run: " $5 }' >>"$out/setup.txt"
# and by CPU time (user + sys), the three interleaved
for side in bare idle recording; do : >"$out/overhead-cpu-$side.txt"; done
for i in $(seq "$runs"); do
	for side in bare idle recording; do
		case $side in
		bare) cmd=(./bare) ;;
		idle) cmd=(./instr) ;;
		recording) cmd=(env "LEVER_LAYOUT_TRACE=$tmp/run.trace" ./instr) ;;
		esac
		/usr/bin/time -f "%U %S" -o "$tmp/time" "${cmd[@]}" $args >/dev/null
		awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/time" >>"$out/overhead-cpu-$side.txt"
	done
done
for side in idle recording; do
	"$lever" compare --samples --json "$out/overhead-cpu-bare.txt" \
		"$out/overhead-cpu-$side.txt" >"$out/overhead-cpu-$side.json"
done
uptime >"$out/uptime-after.txt"
# The table, also what bench/results/regenerate.sh puts between the markers
# of bench/results/layout-designed.md (and checks there).
"$here/table.sh" "$out" "$build"
