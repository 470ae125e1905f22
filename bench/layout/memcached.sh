#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# memcached from Debian's sources under a real load generator, recorded by
# `lever layout record` and analysed by `lever layout report` (issue 17
# must-show 4; spec autocpa.md §4.3, the thesis's memcached evaluation).
#
#   1. fetch: `apt-get source memcached` (a deb-src line) into WORK;
#   2. build: its own ./configure && make, with CFLAGS="-g -O2";
#   3. record: memcached (4 worker threads, as in the thesis) under
#      memcaslap (memaslap, Debian's libmemcached-tools: 90% get, 10% set)
#      on loopback, recorded with --source=clock; then --source=pmu, which
#      has no PMU to use on these VMs, to keep its message;
#   4. report: `lever layout report` (text and --json);
#   5. overhead: throughput (memcaslap's TPS) of the bare server against
#      the server under `record --source=clock` (mode clock: the default,
#      one event per CPU where it opens) and under `record --source=clock
#      --per-task` (mode per-task: per-thread events, what an unprivileged
#      user gets), rounds interleaved with the order rotating, the load
#      average kept with every round.
# Raw records, reports and rounds go to bench/results/layout-memcached/;
# table.py there turns the rounds into the README's overhead table.
#
# usage: memcached.sh LEVER_BUILD_DIR [ROUNDS] [SECONDS] [RECORD_SECONDS]
# (SECONDS: each overhead round's load; RECORD_SECONDS: the kept record's)
# env: WORK (default /work/scratch/layout-memcached), PORT (11511),
# ONLY=overhead (skip the kept record and report: rerun the rounds only),
# MODES (the overhead rounds' modes, default "bare clock per-task"; also
# clock-500: clock at -F 500), ROUNDS_NAME (default overhead: the rounds go
# to bench/results/layout-memcached/ROUNDS_NAME.tsv and .md).
# Needs: libevent-dev, libmemcached-tools (memcaslap), a deb-src line.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
secs=${3:-10}
rec_secs=${4:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
out=$root/bench/results/layout-memcached
work=${WORK:-/work/scratch/layout-memcached}
port=${PORT:-11511}
only=${ONLY:-}
mkdir -p "$out" "$work"
export XDG_CACHE_HOME=$work/cache

command -v memcaslap >/dev/null || {
	echo "memcached.sh: memcaslap missing (apt-get install libmemcached-tools)" >&2
	exit 1
}

# 1. fetch
src=$(ls -d "$work"/memcached-*/ 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
	(cd "$work" && apt-get source memcached >"$work/apt-get-source.log" 2>&1)
	src=$(ls -d "$work"/memcached-*/ | head -1)
fi
src=${src%/}

# 2. build with its own build system
if [ ! -x "$src/memcached" ]; then
	(cd "$src" && ./configure CFLAGS="-g -O2" >"$work/configure.log" 2>&1 &&
		make -j2 memcached >"$work/make.log" 2>&1)
fi
mc=$src/memcached
mc_args=(-u nobody -l 127.0.0.1 -p "$port" -U 0 -t 4 -m 256 -c 1024)

{
	echo "date: $(date -u +%FT%TZ)"
	echo "uptime: $(uptime)"
	echo "memcached: $(basename "$src") built with CFLAGS=-g -O2, $(stat -c %s "$mc") bytes"
	echo "record: ${rec_secs}s of load; overhead rounds: ${secs}s each"
	echo "load: memcaslap $(dpkg-query -W -f='${Version}' libmemcached-tools) -T 2 -c 32 -t ${secs}s (get 90%, set 10%)"
	echo "gcc: $(gcc --version | head -1)"
	echo "lever: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "nproc: $(nproc)"
} >"$out/environment${only:+-${ROUNDS_NAME:-$only}}.txt"

wait_port() {
	local _
	for _ in $(seq 1 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "memcached.sh: nothing listens on port $port" >&2
	return 1
}

# load SECONDS -> prints memcaslap's TPS; its full output in $work/load.log
load() {
	memcaslap -s "127.0.0.1:$port" -T 2 -c 32 -t "${1}s" >"$work/load.log" 2>&1
	sed -n 's/.*TPS: \([0-9]*\).*/\1/p' "$work/load.log" | tail -1
}

# stop the server (the direct child of $1, or $1 itself) with SIGTERM and
# wait for $1
stop() {
	local pid=$1 child
	child=$(pgrep -P "$pid" -x memcached || true)
	kill -TERM "${child:-$pid}" 2>/dev/null || true
	wait "$pid" || true
}

# bare run: prints TPS
run_bare() {
	"$mc" "${mc_args[@]}" &
	local pid=$!
	wait_port
	load "$secs"
	stop "$pid"
}

# recorded run: record into $1 with source $2 for $3 seconds (and lever's
# options $4...), prints TPS
run_recorded() {
	local rec=$1 source=$2 len=${3:-$secs}
	shift 3
	"$lever" layout record --source="$source" "$@" --force -o "$rec" -- \
		"$mc" "${mc_args[@]}" 2>"$rec.stderr" &
	local pid=$!
	wait_port
	load "$len"
	stop "$pid"
}

# 3. the records kept: clock, then pmu (no PMU here: its message kept)
[ "$only" = overhead ] || {
tps=$(run_recorded "$out/memcached-clock.rec" clock "$rec_secs")
echo "clock record: TPS $tps" >>"$out/environment.txt"
cp "$work/load.log" "$out/memcached-clock.load.log"
set +e
"$lever" layout record --source=pmu --force -o "$work/pmu.rec" -- "$mc" -h \
	>/dev/null 2>"$out/memcached-pmu.stderr"
echo "exit status $?" >>"$out/memcached-pmu.stderr"
# the default source: pmu when the self-test passes, else clock with a message
"$lever" layout record --force -o "$work/default.rec" -- "$mc" -h \
	>/dev/null 2>"$out/memcached-default-source.stderr"
echo "exit status $?" >>"$out/memcached-default-source.stderr"
set -e

# 4. report, with memcached's ABI constraints (item, chunk and crawler
# headers are cast into each other: memcached.constraints)
"$lever" layout report --constraints "$here/memcached.constraints" \
	"$out/memcached-clock.rec" >"$out/memcached-clock.report.txt"
"$lever" layout report --json --constraints "$here/memcached.constraints" \
	"$out/memcached-clock.rec" >"$out/memcached-clock.report.json"
}

# 5. overhead: interleaved rounds, the order rotating by the round so that
# none always runs after another
rounds_name=${ROUNDS_NAME:-overhead}
printf 'round\tmode\ttps\tload1\n' >"$out/$rounds_name.tsv"
read -r -a all_modes <<<"${MODES:-bare clock per-task}"
n_modes=${#all_modes[@]}
for r in $(seq 1 "$rounds"); do
	modes=()
	for k in $(seq 0 $((n_modes - 1))); do modes+=("${all_modes[$(((k + r) % n_modes))]}"); done
	for m in "${modes[@]}"; do
		l=$(cut -d' ' -f1 /proc/loadavg)
		case $m in
		bare) t=$(run_bare) ;;
		clock) t=$(run_recorded "$work/overhead.rec" clock "$secs") ;;
		per-task) t=$(run_recorded "$work/overhead.rec" clock "$secs" --per-task) ;;
		clock-500) t=$(run_recorded "$work/overhead.rec" clock "$secs" -F 500) ;;
		*) echo "memcached.sh: unknown mode $m (MODES)" >&2 && exit 2 ;;
		esac
		printf '%s\t%s\t%s\t%s\n' "$r" "$m" "$t" "$l" >>"$out/$rounds_name.tsv"
	done
done
echo "end uptime: $(uptime)" >>"$out/environment${only:+-${ROUNDS_NAME:-$only}}.txt"
python3 "$here/memcached_table.py" "$out/$rounds_name.tsv" >"$out/$rounds_name.md"
cat "$out/$rounds_name.md"
