#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What the feature interpreter costs per sampled call, per kind of program
# (eval_cost.c against the runtime's features_eval.c and safe_read.c, built
# as the runtime is: -O2). ROUNDS interleaved rounds; the raw CSV and
# `uptime` go to results/, table.py prints medians with their spread.
# usage: bench/annotate_features/run.sh [ROUNDS] [EVALS_PER_ROUND]
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
bench_init "$0"
cc -std=gnu11 -O2 -D_GNU_SOURCE -I"$src" -o "$tmp/eval_cost" "$here/eval_cost.c" \
	"$src/annotate/runtime/features_eval.c" "$src/annotate/runtime/safe_read.c" -lm
bench_meta_begin "$out/$stamp.meta"
"$tmp/eval_cost" "${1:-15}" "${2:-200000}" >"$out/$stamp.csv"
bench_meta_end "$out/$stamp.meta"
python3 "$here/table.py" "$out/$stamp.csv" | tee "$out/$stamp.md"
