#!/usr/bin/env bash
# lever annotate record, sled and live probes: recursion, nesting (PARENT
# ids), a tail call, float arguments, a dlopen'ed library; the program's
# output is unchanged; the clear refusals (short function, missing symbol,
# start-up code, stripped and static binaries).
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# -- the sled build: every function has a sled, even the 4-byte ones
"$dir/probe_calls_sled" 10 >"$tmp/plain"
"$lever" annotate record --rate=all -f fib -f leaf -f tail -f mix -f main -o "$tmp/s" -- \
	"$dir/probe_calls_sled" 10 >"$tmp/out" 2>"$tmp/err"
cmp "$tmp/plain" "$tmp/out"
r=$tmp/s/record
nfib=$(awk '{ print $6 }' "$tmp/plain") nleaf=$(awk '{ print $8 }' "$tmp/plain")
check "sled: well-formed record" 0 "$(well_formed "$r")"
check "sled: ids unique" 0 "$(unique_ids "$r")"
check "sled: probe kind" sled "$(probe_kind "$r" fib)"
check "sled: fib calls" "$nfib" "$(calls "$r" fib)"
check "sled: leaf calls" "$nleaf" "$(calls "$r" leaf)"
check "sled: tail calls" 10 "$(calls "$r" tail)"
check "sled: mix calls" 10 "$(calls "$r" mix)"
check "sled: main" 1 "$(calls "$r" main)"
check "sled: fib's parents are fib or main" 0 "$(parents_within "$r" fib fib main)"
check "sled: leaf's parents are fib or tail" 0 "$(parents_within "$r" leaf fib tail)"
check "sled: main has no parent" 0 "$(parents_within "$r" main 0)"
# the tail call: `jmp leaf` from tail, so that leaf returns for both
if objdump -d "$dir/probe_calls_sled" | awk '/<tail>:/,/^$/' | grep -q 'jmp.*<leaf>'; then
	n=$(awk '$1 == "S" && $3 == "tail" { t = $2 } $1 == "S" && $3 == "leaf" { l = $2 }
		$1 == "C" && $2 == t { tid[$3] = 1 } $1 == "C" && $2 == l { par[$4]++ }
		END { for (p in par) if (p in tid) n += par[p]; print n + 0 }' "$r")
	check "sled: the 10 tail-called leaf calls have tail as parent" 10 "$n"
else
	echo "FAIL: tail() does not tail-call leaf() in this build"; exit 1
fi

# -- the plain build: live patching (leaf's RIP-relative add relocated); tail
# (a 4-byte jmp) is too short and says so
"$dir/probe_calls" 10 >"$tmp/plain"
"$lever" annotate record --rate=all -f fib -f leaf -f tail -f mix -o "$tmp/l" -- \
	"$dir/probe_calls" 10 >"$tmp/out" 2>"$tmp/err"
cmp "$tmp/plain" "$tmp/out"
r=$tmp/l/record
check "live: probe kind" live "$(probe_kind "$r" fib)"
check "live: fib calls" "$(awk '{ print $6 }' "$tmp/plain")" "$(calls "$r" fib)"
check "live: mix calls" 10 "$(calls "$r" mix)"
check "live: fib's parents" 0 "$(parents_within "$r" fib fib 0)"
check "live: leaf calls" "$(awk '{ print $8 }' "$tmp/plain")" "$(calls "$r" leaf)"
grep -q "tail: cannot be patched live (it is shorter (4 bytes) than the 5-byte patch)" "$tmp/err"
if [ -e /sys/bus/event_source/devices/uprobe/type ]; then
	check "auto: tail falls back to a uprobe" uprobe "$(probe_kind "$r" tail)"
	check "auto: tail's calls by uprobe" 10 "$(calls "$r" tail)"
fi
"$lever" annotate record --rate=all --probe=live -f tail -o "$tmp/l3" -- "$dir/probe_calls" 1 \
	>/dev/null 2>"$tmp/err"
grep -q "tail: cannot be patched live: it is shorter (4 bytes) than the 5-byte patch; not probed" \
	"$tmp/err"
check "--probe=live: tail not probed" none "$(probe_kind "$tmp/l3/record" tail)"
# --probe=live on the sled build patches the sled's NOPs as ordinary code
"$lever" annotate record --rate=all --probe=live -f fib -o "$tmp/l2" -- "$dir/probe_calls_sled" 3 >/dev/null 2>&1
check "live on a sled build" live "$(probe_kind "$tmp/l2/record" fib)"
check "live on a sled build: calls" "$("$dir/probe_calls_sled" 3 | awk '{ print $6 }')" \
	"$(calls "$tmp/l2/record" fib)"
# --probe=sled without sleds: refused, said, program still runs
"$lever" annotate record --probe=sled -f fib -o "$tmp/s2" -- "$dir/probe_calls" 1 >/dev/null 2>"$tmp/err"
grep -q "fib: cannot use its sled: no -fpatchable-function-entry sled" "$tmp/err"

# -- uprobes (time only): the same calls and parents, the kernel's trap cost measured
if [ -e /sys/bus/event_source/devices/uprobe/type ] &&
	! grep -q "perf_event_open of a uprobe" "$tmp/err"; then
	"$lever" annotate record -v --rate=all --probe=uprobe -f fib -f leaf -f tail -o "$tmp/u" -- \
		"$dir/probe_calls" 10 >"$tmp/out" 2>"$tmp/err"
	cmp "$tmp/plain" "$tmp/out"
	r=$tmp/u/record
	check "uprobe: well-formed record" 0 "$(well_formed "$r")"
	check "uprobe: probe kind" uprobe "$(probe_kind "$r" fib)"
	check "uprobe: fib calls" "$(awk '{ print $6 }' "$tmp/plain")" "$(calls "$r" fib)"
	check "uprobe: leaf calls" "$(awk '{ print $8 }' "$tmp/plain")" "$(calls "$r" leaf)"
	check "uprobe: tail calls" 10 "$(calls "$r" tail)"
	check "uprobe: fib's parents" 0 "$(parents_within "$r" fib fib 0)"
	check "uprobe: leaf's parents" 0 "$(parents_within "$r" leaf fib tail)"
	grep -q "uprobe cost: [0-9]* ns per call" "$tmp/err"
	"$lever" annotate record --rate=5/3600s --probe=uprobe -f fib -o "$tmp/ur" -- "$dir/probe_calls" 10 \
		>/dev/null 2>&1
	check "uprobe, rate 5/3600s: fib recorded" 5 "$(calls "$tmp/ur/record" fib)"
	check "uprobe, rate 5/3600s: fib calls counted" "$(awk '{ print $6 }' "$tmp/plain")" \
		"$(probe_stat "$tmp/ur/record" fib calls)"
else
	skip_uprobe=1
fi

# -- a globbed C++-free name and the rate: 5 per period
"$lever" annotate record --rate=5/3600s -f 'fi*' -o "$tmp/r" -- "$dir/probe_calls_sled" 10 >/dev/null 2>&1
check "rate 5/3600s: fib recorded" 5 "$(calls "$tmp/r/record" fib)"
check "rate 5/3600s: fib calls counted" "$nfib" "$(probe_stat "$tmp/r/record" fib calls)"

# -- periods: 3 calls per millisecond at most, every call counted across the periods
start=$(date +%s%N)
"$lever" annotate record --rate=3/1ms -f work -o "$tmp/p" -- "$dir/probe_signals_sled" 20000 >/dev/null 2>&1
ms=$((($(date +%s%N) - start) / 1000000))
n=$(calls "$tmp/p/record" work)
check "rate 3/1ms: every call counted" 20000 "$(probe_stat "$tmp/p/record" work calls)"
if [ "$n" -lt 6 ] || [ "$n" -gt $((3 * (ms + 2))) ]; then
	echo "FAIL: rate 3/1ms: $n calls recorded in $ms ms"; exit 1
fi
echo "ok: rate 3/1ms: $n calls recorded in $ms ms (several periods, at most 3 each)"

# -- a library loaded with dlopen, named LIB:SYMBOL
"$lever" annotate record --rate=all -f "$dir/libprobe_dl.so:lib_work" -o "$tmp/d" -- \
	"$dir/probe_dlopen" "$dir/libprobe_dl.so" >"$tmp/out" 2>"$tmp/err"
grep -q "^lib 165$" "$tmp/out"
check "dlopen: lib_work calls" 10 "$(calls "$tmp/d/record" lib_work)"

# -- lever cc --annotate makes the sleds
"$lever" cc --annotate --no-stack-pads -O2 -g -o "$tmp/cc_calls" "$src/tests/programs/annotate/probe_calls.c"
"$lever" annotate record --rate=all -f fib -o "$tmp/cc" -- "$tmp/cc_calls" 2 >/dev/null 2>&1
check "lever cc --annotate: sled probe" sled "$(probe_kind "$tmp/cc/record" fib)"
# with -fcf-protection the sled follows the endbr64
"$lever" cc --annotate --no-stack-pads -fcf-protection -O2 -g -o "$tmp/cc_cet" \
	"$src/tests/programs/annotate/probe_calls.c"
"$lever" annotate record --rate=all -f fib -f leaf -o "$tmp/cet" -- "$tmp/cc_cet" 2 >"$tmp/out" 2>&1
check "endbr64 + sled: sled probe" sled "$(probe_kind "$tmp/cet/record" leaf)"
check "endbr64 + sled: fib calls" "$("$tmp/cc_cet" 2 | awk '{ print $6 }')" "$(calls "$tmp/cet/record" fib)"

# -- a module rebuilt after planning is refused by its build ID, not patched
"$lever" annotate record --rate=all -f fib -o "$tmp/b" -- "$dir/probe_calls" 1 >/dev/null 2>&1
sed -i 's/^\(module 0 \)[0-9a-f]*/\1deadbeef/' "$tmp/b/plan"
LEVER_ANNOTATE_PLAN=$tmp/b/plan LD_PRELOAD=$build/lib/lever/liblever-annotate.so \
	"$dir/probe_calls" 1 >"$tmp/out" 2>"$tmp/err"
grep -q "its build ID changed since the plan was made" "$tmp/err"
cmp "$tmp/out" <("$dir/probe_calls" 1)

# -- no debug information: metrics all the same, and it is said once
cc -O2 -o "$tmp/nodebug" "$src/tests/programs/annotate/probe_calls.c"
"$lever" annotate record --rate=all -f fib -f mix -o "$tmp/nd" -- "$tmp/nodebug" 2 >/dev/null 2>"$tmp/err"
check "no debug info: said once" 1 "$(grep -c "no debug information" "$tmp/err")"
check "no debug info: fib recorded" "$("$tmp/nodebug" 2 | awk '{ print $6 }')" "$(calls "$tmp/nd/record" fib)"
check "no debug info: no features declared" 0 "$(grep -c '^F ' "$tmp/nd/record" || true)"

# -- errors
set +e
"$lever" annotate record -f no_such_function -o "$tmp/e" -- "$dir/probe_calls" 1 2>"$tmp/err"
check "missing symbol: exit status" 2 $?
grep -q "no function matches 'no_such_function'" "$tmp/err"
"$lever" annotate record -f _start -o "$tmp/e" -- "$dir/probe_calls" 1 2>"$tmp/err"
check "_start: exit status" 2 $?
grep -q "not entered by a call" "$tmp/err"
cp "$dir/probe_calls" "$tmp/stripped" && strip "$tmp/stripped"
"$lever" annotate record -f fib -o "$tmp/e" -- "$tmp/stripped" 1 2>"$tmp/err"
check "stripped: exit status" 2 $?
grep -q "stripped (no .symtab)" "$tmp/err"
if printf 'int f(void){return 0;}\nint main(void){return f();}\n' >"$tmp/s.c" &&
	cc -static -o "$tmp/static" "$tmp/s.c" 2>/dev/null; then
	"$lever" annotate record -f f -o "$tmp/e" -- "$tmp/static" 2>"$tmp/err"
	check "static: exit status" 1 $?
	grep -qi "static" "$tmp/err"
fi
"$lever" annotate record -o "$tmp/e" -- "$dir/probe_calls" 2>"$tmp/err"
check "no -f: usage error" 2 $?
set -e
"$lever" annotate record --help | grep -q -- "--probe"
if [ -n "${skip_uprobe:-}" ]; then
	. "$src/tests/e2e/lib/skip.sh"
	skip_test "this kernel has no uprobe PMU: the uprobe backend was not tested"
fi
echo "ok: all"
