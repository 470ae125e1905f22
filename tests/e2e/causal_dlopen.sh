#!/usr/bin/env bash
# Libraries loaded with dlopen after start-up are mapped too: with the binary
# scope restricted to such a library, experiments select its lines.
set -euo pipefail
build=$1 src=$2
dir=$build/tests/programs/causal_known
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line=$(grep -n "LINE:dlwork" "$src/tests/programs/causal_known/dlwork.c" | cut -d: -f1)
"$build/bin/lever" causal -o "$tmp/p.coz" -b '%libdlwork%' -- "$dir/dlopen_main" "$dir/libdlwork.so" 200 20000000 >"$tmp/out"
grep -q "^200 rounds" "$tmp/out"
# Experiments pick lines in proportion to their samples: the loop line has
# ~80%, the next one the rest, so with 5-8 experiments a run has every now and
# then fewer than 3 on the loop line (6% of runs at 5). What must hold: every
# experiment is on the library's lines (the scope) and there are several.
n=$(grep -c "^experiment.*selected=.*dlwork.c:" "$tmp/p.coz" || true)
all=$(grep -c "^experiment" "$tmp/p.coz" || true)
if [ "$n" -lt 3 ] || [ "$n" != "$all" ]; then
	echo "FAIL: $n of $all experiments on dlwork.c"; cat "$tmp/p.coz"; exit 1
fi
grep -q "^samples	location=.*dlwork.c:$line	count=" "$tmp/p.coz"
echo "ok: $n experiments on the dlopen'ed library's lines, samples on dlwork.c:$line"
