#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What reading each metric costs inside liblever-annotate.so, and which clock
# the time metric should use (src/annotate/runtime/metrics.c). Builds
# clock_cost.c against the runtime's metrics.c, runs ROUNDS interleaved
# rounds, keeps the raw CSV and `uptime` in results/, prints the table.
# usage: bench/annotate_metrics/run.sh [ROUNDS] [READS_PER_ROUND]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
out=$here/results
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O2 -D_GNU_SOURCE -I"$src" -o "$tmp/clock_cost" "$here/clock_cost.c" \
	"$src/annotate/runtime/metrics.c"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
{
	echo "# $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	echo "# clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "# uptime before: $(uptime)"
} >"$out/$stamp.meta"
"$tmp/clock_cost" "${1:-20}" "${2:-100000}" >"$out/$stamp.csv"
echo "# uptime after: $(uptime)" >>"$out/$stamp.meta"
cat "$out/$stamp.meta"
python3 "$here/analyze.py" "$out/$stamp.csv"
