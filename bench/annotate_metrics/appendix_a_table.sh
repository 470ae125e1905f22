#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/results/annotate-appendix-a.md (issue 16, must-show 1; spec freud.md
# §6.6): lever annotate derive on the seed's Appendix A, from a seeded
# synthetic record of the twenty functions kept in RAW (default
# bench/results/annotate-appendix-a-raw: appendix-a.rec.xz and meta).
#
#   bench/annotate_metrics/appendix_a_table.sh [--new] [BUILD_DIR] [OUT]
#
# --new writes a new record into RAW first (`lever annotate synth`); without
# it the kept record is used, and the table is a function of it alone:
# test_annotate_appendix_a's expected-against-derived table, then
# `lever annotate derive` on it. derive's elapsed seconds per function are
# left out (they measure the machine, not the record). The Markdown goes to
# OUT (default: standard output); bench/results/regenerate.sh checks it.
set -euo pipefail
new=0
[ "${1:-}" = --new ] && { new=1; shift; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
out=${2:-/dev/stdout}
raw=${APPENDIX_A_RAW:-$repo/bench/results/annotate-appendix-a-raw}
lever=$build/bin/lever
table=$build/bin/test_annotate_appendix_a
calls=600 seed=2021
for f in "$lever" "$table"; do
	[ -x "$f" ] || { echo "appendix_a_table: $f is missing; build first" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $new = 1 ]; then
	mkdir -p "$raw"
	"$lever" annotate synth --calls $calls --seed $seed -o "$tmp/appendix-a.rec"
	xz -9 -c "$tmp/appendix-a.rec" >"$raw/appendix-a.rec.xz"
	printf 'date=%s\ncalls=%s\nseed=%s\nlever=%s\n' "$(date -u +%F)" $calls $seed \
		"$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$raw/meta"
fi
for f in appendix-a.rec.xz meta; do
	[ -f "$raw/$f" ] || { echo "appendix_a_table: $raw/$f is missing; run with --new" >&2; exit 1; }
done
meta() { sed -n "s/^$1=//p" "$raw/meta"; }
xz -dc "$raw/appendix-a.rec.xz" >"$tmp/appendix-a.rec"

# The unit test prints its table between cmocka's bracketed lines and fails
# (exit status) when a function does not get the seed's model.
"$table" "$tmp/appendix-a.rec" >"$tmp/test.out" 2>"$tmp/test.err" || {
	cat "$tmp/test.out" "$tmp/test.err" >&2
	echo "appendix_a_table: $table failed on the record" >&2
	exit 1
}
"$lever" annotate derive "$tmp/appendix-a.rec" >"$tmp/derive.out"
{
	echo "# lever annotate derive on the seed's Appendix A (issue 16, must-show 1)"
	echo
	echo "Output of \`build/bin/test_annotate_appendix_a RECORD\` (tests/unit/test_annotate_appendix_a.c) on"
	echo "a seeded synthetic record of the twenty functions, $(meta calls) calls each"
	echo "(\`lever annotate synth --calls $(meta calls) --seed $(meta seed)\`, made $(meta date), kept in"
	echo "[annotate-appendix-a-raw/](annotate-appendix-a-raw/appendix-a.rec.xz)), derived with the default parameters."
	echo "Expected = the model class, features and scopes of the seed's annotations (spec §6.6);"
	echo "cv R2 = 10-fold cross-validated R² of the whole annotation (the seed: ≥ 0.9866)."
	echo "Rebuilt from the record by \`bench/annotate_metrics/appendix_a_table.sh\`."
	echo
	echo '```'
	grep -v '^\[' "$tmp/test.out"
	echo '```'
	echo
	echo "The annotations themselves (\`lever annotate derive RECORD\`; its elapsed seconds per function left out):"
	echo
	echo '```'
	sed -E 's/; [0-9]+\.[0-9]+ s(;|$)/\1/' "$tmp/derive.out"
	echo '```'
} >"$out"
