#!/usr/bin/env bash
# lever annotate record with input features from DWARF (issue 15, spec
# §4.2.3): on an ordinary -O2 -g build (live probes) and on a sled build,
# every call of process(), scale() and named() in
# tests/programs/annotate/features_record.c is recorded with its features
# named as the program's expressions, each equal to the value the program
# passed (j->id = i, j->kind = i % 3, j->items->len = 2i or missing when
# items is NULL, strlen(j->name) = i % 7, x = i/4 and n = -i in registers
# xmm0 and rsi, strlen(s) = i % 5 or missing for NULL; k = 2i + 1 in gcc's clone
# of clone_me, whose registers are not the source signature's); a stripped copy is
# recorded with metrics only and says why, once.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
n=40

# feature_check RECORD SYMBOL AWK-CONDITION: prints the calls of SYMBOL whose
# features (f["EXPR"], "?" when missing; i = the call's rank) break CONDITION.
feature_check() {
	awk -v sym="$2" '
		$1 == "S" { s = $2; $1 = $2 = ""; sub(/^  /, ""); if ($0 == sym) want = s }
		$1 == "F" && $2 == want { e = $0; sub(/^F [0-9]+ [0-9]+ [a-z-]+ /, "", e); name[$3] = e }
		$1 == "C" && $2 == want {
			delete f
			for (k = 5; k <= NF; k++) { split($k, kv, "="); if (kv[1] in name) f[name[kv[1]]] = kv[2] }
			i = rank++
			if (!('"$3"')) { bad++; print "bad call " i ": " $0 > "/dev/stderr" }
		}
		END { print bad + 0 }' "$1"
}

# has_feature RECORD SYMBOL "KIND EXPR": how many features of SYMBOL are that.
has_feature() {
	awk -v sym="$2" -v want="$3" '
		$1 == "S" { s = $2; $1 = $2 = ""; sub(/^  /, ""); if ($0 == sym) id = s }
		$1 == "F" && $2 == id { e = $0; sub(/^F [0-9]+ [0-9]+ /, "", e); if (e == want) n++ }
		END { print n + 0 }' "$1"
}

conds_process='f["j->id"] == i && f["j->kind"] == i % 3 &&
	(i % 5 == 4 ? f["j->items->len"] == "?" : f["j->items->len"] == 2 * i) &&
	f["strlen(j->name)"] == i % 7'
conds_scale='f["x"] == i / 4 && f["n"] == -i'
# k = 2i + 1 (j->id is i) where the function is a clone; `unused` (a constant dropped by the
# clone) either absent or 7, never another register's value
conds_clone='f["k"] == 2 * i + 1 && (!("unused" in f) || f["unused"] == 7)'
conds_named='(i % 3 == 2 ? f["strlen(s)"] == "?" : f["strlen(s)"] == i % 5)'

for prog in features_record features_record_sled; do
	"$dir/$prog" $n >"$tmp/plain"
	"$lever" annotate record --rate=all -f process -f scale -f named -f 'clone_me*' -o "$tmp/$prog" -- \
		"$dir/$prog" $n >"$tmp/out" 2>"$tmp/err"
	cmp "$tmp/plain" "$tmp/out"
	r=$tmp/$prog/record
	check "$prog: well-formed record" 0 "$(well_formed "$r")"
	check "$prog: process calls" $n "$(calls "$r" process)"
	for e in "integer j->id" "enum j->kind" "integer j->items->len" \
		"string-length strlen(j->name)"; do
		check "$prog: process has feature '$e'" 1 "$(has_feature "$r" process "$e")"
	done
	check "$prog: scale has float x" 1 "$(has_feature "$r" scale "float x")"
	check "$prog: named has strlen(s)" 1 "$(has_feature "$r" named "string-length strlen(s)")"
	check "$prog: process feature values" 0 "$(feature_check "$r" process "$conds_process")"
	check "$prog: scale feature values" 0 "$(feature_check "$r" scale "$conds_scale")"
	check "$prog: named feature values" 0 "$(feature_check "$r" named "$conds_named")"
	clone=$(awk '$1 == "S" && $3 ~ /^clone_me/ { print $3; exit }' "$r")
	check "$prog: $clone calls" $n "$(calls "$r" "$clone")"
	check "$prog: $clone has k" 1 "$(has_feature "$r" "$clone" "integer k")"
	check "$prog: $clone feature values" 0 "$(feature_check "$r" "$clone" "$conds_clone")"
done

# no debug information: metrics only, said once
objcopy --strip-debug "$dir/features_record" "$tmp/stripped"
"$lever" annotate record --rate=all -f process -f scale -o "$tmp/s" -- "$tmp/stripped" 5 \
	>/dev/null 2>"$tmp/err"
check "stripped: calls still recorded" 5 "$(calls "$tmp/s/record" process)"
check "stripped: no features" 0 "$(grep -c '^F ' "$tmp/s/record" || true)"
check "stripped: said once" 1 "$(grep -c 'no debug information' "$tmp/err")"
