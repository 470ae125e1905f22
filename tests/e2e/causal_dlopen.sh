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
n=$(grep -c "^experiment.*selected=.*dlwork.c:$line" "$tmp/p.coz" || true)
if [ "$n" -lt 3 ]; then
	echo "FAIL: $n experiments on dlwork.c:$line"; cat "$tmp/p.coz"; exit 1
fi
grep -q "^samples	location=.*dlwork.c:$line	count=" "$tmp/p.coz"
echo "ok: $n experiments on the dlopen'ed library's line dlwork.c:$line"
