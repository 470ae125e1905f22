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
# Raw data (per level: the plugin's truth, the refs record, `nm -S` of the
# scored build; meta: date and gcc) go to RAW (default
# bench/results/layout-static-vs-instr-raw); the table (OUT) is a function
# of them alone. --report-only rebuilds the table from RAW without building
# or running anything (python3 only; bench/results/regenerate.sh checks it).
#
#   bench/layout/static_vs_instr.sh [--report-only] [BUILD_DIR] [OUT]
set -euo pipefail
report_only=0
[ "${1:-}" = --report-only ] && { report_only=1; shift; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=${2:-$src/bench/results/layout-static-vs-instr.md}
raw=${STATIC_VS_INSTR_RAW:-$src/bench/results/layout-static-vs-instr-raw}
scorer=${SCORER:-$src/tests/e2e/lib/layout_static_score.py}
prog=$src/tests/programs/layout/designed.c
levels="O0 O2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $report_only = 0 ]; then
	build=$(cd "${1:-build}" && pwd)
	lever=$build/bin/lever
	mkdir -p "$raw"
	raw=$(cd "$raw" && pwd)
	printf 'date=%s\ngcc=%s\nlever=%s\n' "$(date -u +%F)" "$(gcc -dumpfullversion)" \
		"$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)" >"$raw/meta"
	for level in $levels; do
		"$lever" cc --layout -$level -g -pthread "$prog" -o "$tmp/truth-$level"
		"$lever" layout record --source=instr --truth "$raw/truth-$level.tsv" -- "$tmp/truth-$level"
		"$lever" cc -$level -g -pthread "$prog" -o "$tmp/plain-$level"
		"$lever" layout refs -o "$raw/plain-$level.rec" "$tmp/plain-$level" 2>/dev/null
		nm -S --defined-only "$tmp/plain-$level" >"$raw/plain-$level.nm"
	done
fi
for level in $levels; do
	for f in meta truth-$level.tsv plain-$level.rec plain-$level.nm; do
		[ -f "$raw/$f" ] || { echo "static_vs_instr: $raw/$f is missing; run without --report-only" >&2; exit 1; }
	done
	python3 "$scorer" "$raw/plain-$level.rec" "$raw/plain-$level.nm" \
		--truth "$raw/truth-$level.tsv" --verbose >"$tmp/score-$level"
done
meta() { sed -n "s/^$1=//p" "$raw/meta"; }
{
	echo "# Static references against the GCC plugin's truth (designed.c)"
	echo
	echo "\`bench/layout/static_vs_instr.sh\`, $(meta date), gcc $(meta gcc), lever $(meta lever); raw data in"
	echo "[layout-static-vs-instr-raw/](layout-static-vs-instr-raw/), this table by"
	echo "\`bench/layout/static_vs_instr.sh --report-only\`."
	echo "Per function: a ref is right when its (struct, field) is among those the"
	echo "plugin instrumented in that function; recall counts the plugin's pairs"
	echo "that have at least one ref."
	echo
	echo "| level | precision | recall | refs | pairs found | functions |"
	echo "|---|---|---|---|---|---|"
	for level in $levels; do
		awk -v l="-$level" '/^precision/ { printf "| %s | %s | %s | %s | %s | %s |\n", l, $2, $4, $6, $8, $10 }' \
			"$tmp/score-$level"
	done
	echo
	for level in $levels; do
		grep -E '^(missed|wrong):' "$tmp/score-$level" | sed "s/^/- -$level /" || true
	done
} >"$out"
cat "$out"
