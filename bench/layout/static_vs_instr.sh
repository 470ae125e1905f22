#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 17, must-show 3 (part): precision and recall of the static
# references (`lever layout refs`) against the GCC plugin's ground truth
# (`lever layout record --source=instr --truth`), per function, on
# tests/programs/layout/designed.c at -O0 and -O2: the plugin's build gives
# the truth, a build with the same flags without it is scored
# (tests/e2e/lib/layout_static_score.py --truth, from layout-static's commit
# de32ffe on; SCORER overrides its path).
#
#   bench/layout/static_vs_instr.sh [BUILD_DIR] [OUT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-$src/bench/results/layout-static-vs-instr.md}
lever=$build/bin/lever
scorer=${SCORER:-$src/tests/e2e/lib/layout_static_score.py}
prog=$src/tests/programs/layout/designed.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
	echo "# Static references against the GCC plugin's truth (designed.c)"
	echo
	echo "\`bench/layout/static_vs_instr.sh\`, $(date -u +%F), gcc $(gcc -dumpfullversion)."
	echo "Per function: a ref is right when its (struct, field) is among those the"
	echo "plugin instrumented in that function; recall counts the plugin's pairs"
	echo "that have at least one ref."
	echo
	echo "| level | precision | recall | refs | pairs found | functions |"
	echo "|---|---|---|---|---|---|"
	for level in O0 O2; do
		"$lever" cc --layout -$level -g -pthread "$prog" -o "$tmp/truth-$level"
		"$lever" layout record --source=instr --truth "$tmp/truth-$level.tsv" -- "$tmp/truth-$level"
		"$lever" cc -$level -g -pthread "$prog" -o "$tmp/plain-$level"
		"$lever" layout refs -o "$tmp/plain-$level.rec" "$tmp/plain-$level" 2>/dev/null
		nm -S --defined-only "$tmp/plain-$level" >"$tmp/plain-$level.nm"
		python3 "$scorer" "$tmp/plain-$level.rec" "$tmp/plain-$level.nm" \
			--truth "$tmp/truth-$level.tsv" --verbose >"$tmp/score-$level"
		awk -v l="-$level" '/^precision/ { printf "| %s | %s | %s | %s | %s | %s |\n", l, $2, $4, $6, $8, $10 }' \
			"$tmp/score-$level"
	done
	echo
	for level in O0 O2; do
		grep -E '^(missed|wrong):' "$tmp/score-$level" | sed "s/^/- -$level /" || true
	done
} >"$out"
cat "$out"
