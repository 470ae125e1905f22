#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What reading each metric costs inside liblever-annotate.so, and which clock
# the time metric should use (src/annotate/runtime/metrics.c). Builds
# clock_cost.c against the runtime's metrics.c, runs ROUNDS interleaved
# rounds, keeps the raw CSV and `uptime` in results/, prints the table.
# usage: bench/annotate_metrics/run.sh [ROUNDS] [READS_PER_ROUND]
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
bench_init "$0"
cc -std=gnu11 -O2 -D_GNU_SOURCE -I"$src" -o "$tmp/clock_cost" "$here/clock_cost.c" \
	"$src/annotate/runtime/metrics.c"
bench_meta_begin "$out/$stamp.meta" \
	"# clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
"$tmp/clock_cost" "${1:-20}" "${2:-100000}" >"$out/$stamp.csv"
bench_meta_end "$out/$stamp.meta"
python3 "$here/analyze.py" "$out/$stamp.csv"
