#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 14 point 14, measured: the shuffling heap (lever stabilize --heap) of
# this build against glibc's malloc and against an older build, in time and
# peak resident memory, and lever compare --samples on 10^7 values per
# sample, old build against new.
#
#   bench/stabilizer_heap/scale.sh NEW_BUILD OLD_BUILD [RUNS [COMPARE_RUNS]]
#
# ONLY=heap or ONLY=compare runs one half: ONLY=compare appends to raw.csv,
# ONLY=heap replaces its heap rows and keeps the compare rows already there.
# NOTE="text" is appended to notes.md (what OLD and NEW were), which the
# table prints under its header.
#
# Every round runs each workload under glibc, the old heap and the new heap
# in a shuffled order (interleaved, so that a load change hits all three),
# each through /usr/bin/time; the load average is recorded with every run.
# Under a heap, /usr/bin/time runs inside `lever stabilize --heap` and
# times the program, not lever: lever execs the program, and the peak
# resident size the kernel reports (ru_maxrss) survives exec, so timing
# lever itself would report at least lever's own 6.5 MiB for every program.
# Lever's start-up is left out of the CPU time too (a few milliseconds).
# Raw data: bench/results/stabilizer_heap_scale/raw.csv; the table
# (medians with distribution-free 95% intervals, ratios with bootstrap
# intervals): table.py writes bench/results/stabilizer_heap_scale/README.md.
set -euo pipefail
new=$(cd "$1" && pwd)
old=$(cd "$2" && pwd)
runs=${3:-10}
compare_runs=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../results/stabilizer_heap_scale
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
raw=$out/raw.csv
cc -O2 -pthread -o "$tmp/malloc_heavy" "$here/malloc_heavy.c"
cc -O2 -o "$tmp/large_blocks" "$here/large_blocks.c"
cc -O2 -fno-builtin -o "$tmp/heap_return" "$here/../../tests/programs/stabilizer/heap_return.c"
cc -O2 -fno-builtin -o "$tmp/heap_classes" "$here/../../tests/programs/stabilizer/heap_classes.c"
seq 1 300000 | awk '{ srand(NR); print int(rand() * 1e6), $1 }' >"$tmp/sort.txt"
printf 'd = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i %% 7)\nprint(len(d))\n' >"$tmp/dicts.py"
py=$(python3 -c 'import sys; print(sys.executable)')
# 10^7 values per sample, deterministic (awk's generator with a fixed seed)
[ "${ONLY:-all}" = heap ] || for s in a b; do
	awk -v seed=$([ $s = a ] && echo 1 || echo 2) -v f=$([ $s = a ] && echo 1.0 || echo 1.01) \
		'BEGIN { srand(seed); for (i = 0; i < 10000000; i++) printf "%.6f\n", f * (0.9 + 0.2 * rand()) }' \
		>"$tmp/$s.txt"
done

only=${ONLY:-all}
if [ "$only" != compare ]; then
	header="workload,variant,run,wall_s,user_s,sys_s,maxrss_kb,load1"
	# the compare rows of an earlier run stay (they take half an hour)
	{ echo "$header"; [ -f "$raw" ] && grep '^compare_1e7,' "$raw" || true; } >"$tmp/kept"
	[ "$only" = heap ] || echo "$header" >"$tmp/kept"
	cp "$tmp/kept" "$raw"
fi
[ -z "${NOTE:-}" ] || echo "- $(date -u +%F): $NOTE" >>"$out/notes.md"
measure() { # WORKLOAD VARIANT RUN [LAUNCHER...] -- COMMAND...
	local w=$1 v=$2 r=$3 launcher=()
	shift 3
	while [ "$1" != -- ]; do
		launcher+=("$1")
		shift
	done
	shift
	"${launcher[@]}" /usr/bin/time -o "$tmp/t" -f "%e,%U,%S,%M" "$@" >/dev/null 2>"$tmp/err" ||
		{ echo "$w/$v failed:" >&2; cat "$tmp/err" >&2; return 1; }
	echo "$w,$v,$r,$(cat "$tmp/t"),$(cut -d' ' -f1 /proc/loadavg)" >>"$raw"
}
workload() { # NAME COMMAND...  (run under glibc, old, new in shuffled order)
	local name=$1 r=$2
	shift 2
	for v in $(printf 'glibc\nold\nnew\n' | shuf); do
		case $v in
		glibc) measure "$name" glibc "$r" -- "$@" ;;
		old) measure "$name" old "$r" "$old/bin/lever" stabilize --heap -- -- "$@" ;;
		new) measure "$name" new "$r" "$new/bin/lever" stabilize --heap -- -- "$@" ;;
		esac
	done
}
echo "start ($only): $(uptime)" >>"$out/load.txt"
nproc >"$out/cpus.txt" # the table names the run's CPU count, not the reader's
[ "$only" = compare ] && runs=0
[ "$only" = heap ] && compare_runs=0
# Steps: five times those of 2026-11-25, when glibc's 1-thread run took
# 0.15 s; the machine is now three times faster, and /usr/bin/time counts
# CPU time in 10 ms ticks.
for r in $(seq 1 "$runs"); do
	workload malloc_heavy_1t "$r" "$tmp/malloc_heavy" 10000000 1
	workload malloc_heavy_2t "$r" "$tmp/malloc_heavy" 5000000 2
	# the same with ten times the live objects (26 MiB): the per-class
	# floor of the spread slabs (see doc/stabilize.md) weighs less
	workload malloc_heavy_1t_pool100k "$r" "$tmp/malloc_heavy" 10000000 1 100000
	# a few dozen live objects in each of 40 size classes (the footprint test)
	workload heap_classes_40 "$r" "$tmp/heap_classes" 1000000
	workload heap_return_1GiB "$r" "$tmp/heap_return" 100000
	workload large_blocks "$r" "$tmp/large_blocks" 50000
	workload sort_300k "$r" sort -n "$tmp/sort.txt"
	workload python3_dicts "$r" "$py" "$tmp/dicts.py"
	echo "round $r of $runs done: $(uptime)" >&2
done
for r in $(seq 1 "$compare_runs"); do
	for v in $(printf 'old\nnew\n' | shuf); do
		b=$([ $v = old ] && echo "$old" || echo "$new")
		measure compare_1e7 "$v" "$r" -- "$b/bin/lever" compare --samples "$tmp/a.txt" "$tmp/b.txt"
	done
done
echo "end: $(uptime)" >>"$out/load.txt"
python3 "$here/table.py" "$raw" "$out/notes.md" >"$out/README.md"
cat "$out/README.md"
