#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 15, must show 1: the cost of lever annotate record's probes per
# instrumented call, on a tight loop calling an empty (noinline) function
# (tests/programs/annotate/probe_loop.c), against the same program
# uninstrumented and against `uftrace record` on a -pg build, in one
# interleaved run (every round runs every variant, in a fresh random order).
#
# The program times its own loop (its thread's CPU time around N calls), so
# start-up, planning and the final write are left out: the figure is ns per
# call of the loop; beside it the process's CPU time over the loop (with
# lever's record writer thread; uftrace's recorder is another process, not in
# it). Variants:
#   base          -O2 build, no probes
#   sled          lever cc --annotate build (-fpatchable-function-entry=5),
#                 --metrics=time, default rate (100 calls per 5 s recorded,
#                 the others pass through the probe's reservoir decision)
#   sled-all      the same, every call recorded (--rate=all)
#   sled-all-nw   the same without the writer thread (LEVER_ANNOTATE_WRITER=0):
#                 the thread formats and writes its own records
#   sled-all-wi   the same with the writer as SCHED_IDLE
#                 (LEVER_ANNOTATE_WRITER=idle)
#   live, live-all  the -O2 build patched live
#   uprobe-all    --probe=uprobe, every call (the kernel traps; fewer calls)
#   pg-base       the -pg build without uftrace (mcount stubs)
#   uftrace       uftrace record on the -pg build
#   sled-5f, sled-all-5f  the sled variants with empty()'s five parameters
#                 as features (read at each sampled entry)
#
# usage: bench/annotate_probe/run.sh BUILD_DIR [ROUNDS] [N]
# writes bench/annotate_probe/raw.csv and prints the table (table.py).
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [ROUNDS] [N]}" && pwd)
rounds=${2:-7} n=${3:-2000000} n_slow=${N_SLOW:-20000}
here=$(cd "$(dirname "$0")" && pwd) src=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v uftrace >/dev/null || { echo "uftrace is missing (apt-get install uftrace)"; exit 1; }

c=$src/tests/programs/annotate/probe_loop.c
cc -O2 -g -o "$tmp/loop" "$c"
cc -O2 -g -fpatchable-function-entry=5 -o "$tmp/loop_sled" "$c"
cc -O2 -g -pg -o "$tmp/loop_pg" "$c"

rec() { "$lever" annotate record --metrics=time -o "$tmp/rec" "$@" 2>>"$tmp/log"; }
# time only: no features; -5f: the five parameters of empty() as features
# (x, y, strlen(s), d, *p), read at every sampled entry
run_variant() { # VARIANT -> ns per call
	case $1 in
	base) "$tmp/loop" "$n" ;;
	sled) rec --no-features -f empty -- "$tmp/loop_sled" "$n" ;;
	sled-all) rec --no-features --rate=all -f empty -- "$tmp/loop_sled" "$n" ;;
	sled-all-nw) LEVER_ANNOTATE_WRITER=0 rec --no-features --rate=all -f empty -- "$tmp/loop_sled" "$n" ;;
	sled-all-wi) LEVER_ANNOTATE_WRITER=idle rec --no-features --rate=all -f empty -- "$tmp/loop_sled" "$n" ;;
	sled-5f) rec -f empty -- "$tmp/loop_sled" "$n" ;;
	sled-all-5f) rec --rate=all -f empty -- "$tmp/loop_sled" "$n" ;;
	live) rec --no-features -f empty -- "$tmp/loop" "$n" ;;
	live-all) rec --no-features --rate=all -f empty -- "$tmp/loop" "$n" ;;
	uprobe-all) rec --no-features --rate=all --probe=uprobe -f empty -- "$tmp/loop" "$n_slow" ;;
	pg-base) (cd "$tmp" && ./loop_pg "$n") ;; # gmon.out lands in $tmp
	uftrace) (cd "$tmp" && uftrace record -d "$tmp/uftrace.data" ./loop_pg "$n") ;;
	esac | awk '/^ns_per_call/ { print $2 "," $8 }'
}

variants="base sled sled-all sled-all-nw sled-all-wi sled-5f sled-all-5f live live-all uprobe-all pg-base uftrace"
out=$here/raw.csv
{
	echo "# bench/annotate_probe/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) rounds=$rounds n=$n n_slow=$n_slow"
	echo "# host: $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# uptime before: $(uptime)"
	echo "round,variant,ns_per_call,process_ns_per_call"
} >"$out"
for r in $(seq 1 "$rounds"); do
	for v in $(printf '%s\n' $variants | shuf); do
		ns=$(run_variant "$v")
		echo "$r,$v,$ns" >>"$out"
	done
	echo "round $r done" >&2
done
echo "# uptime after: $(uptime)" >>"$out"
python3 "$here/table.py" "$out"
