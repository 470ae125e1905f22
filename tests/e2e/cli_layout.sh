#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever layout report on a record of the thesis's Table 3.2 plus a
# false-sharing pair: the suggestion, the ranking, JSON, and clear errors.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"

printf '%s\n' \
	'lever-layout-record	2' \
	'struct	foo' \
	'field	a	long long	-	0	8	8' \
	'field	b	struct bar *	-	8	8	8' \
	'field	c	uint64_t	-	16	8	8' \
	'field	d	int	-	24	4	4' \
	'struct	counters' \
	'field	hits	long	-	0	8	8' \
	'field	misses	long	-	8	8	8' \
	'field	name	char	[48]	16	48	1' \
	'ref	0x401000	foo	a	r' \
	'ref	0x401010	foo	b	r' \
	'ref	0x401020	foo	c	r' \
	'ref	0x401030	foo	d	w' \
	'ref	0x402000	counters	hits	w' \
	'ref	0x402100	counters	misses	w' \
	'sample	0x401000	111	1' \
	'sample	0x401010	15	1' \
	'sample	0x401020	19	1' \
	'sample	0x401030	128	1' \
	'sample	0x402000	400	1' \
	'sample	0x402100	300	2' \
	'sample	0x999999	5' \
	'access	0x402000	0x7f0000001000	1	w	400' \
	'access	0x402100	0x7f0000001008	2	w	300' \
	'period	16384' >"$tmp/r.record"

if ! "$lever" layout report "$tmp/r.record" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
	fail "report: exit $?: $(cat "$tmp/err.txt")"
fi
grep -q '978 samples (1 per 16384 events), 5 without a reference' "$tmp/out.txt" || fail "no summary line"
grep -q '^In struct counters you will save 300 samples (by threads; about 4.915e+06 events at period 16384)$' "$tmp/out.txt" ||
	fail "counters not ranked first by threads"
grep -q '^In struct foo you will save 145 samples (by misses; about 2.376e+06 events at period 16384)$' "$tmp/out.txt" ||
	fail "foo: not 145 samples × 16384"
grep -q 'false sharing in counters, cacheline 0: hits written by thread 1, misses used by thread 2 (300 samples in 1 object)' "$tmp/out.txt" ||
	fail "false sharing not reported"
grep -q 'misses __attribute__((aligned(64)));' "$tmp/out.txt" || fail "no aligned(64) group start"

# The suggested foo, pasted into C, compiles and has the printed offsets.
sed -n '/^\/\* foo, suggested/,/^};/p' "$tmp/out.txt" | sed 1d >"$tmp/foo.h"
cat >"$tmp/check.c" <<'C'
#include <stddef.h>
#include <stdint.h>
struct bar;
#include "foo.h"
_Static_assert(offsetof(struct foo, d) == 0, "d");
_Static_assert(offsetof(struct foo, a) == 8, "a");
_Static_assert(offsetof(struct foo, c) == 16, "c");
_Static_assert(offsetof(struct foo, b) == 24, "b");
_Static_assert(sizeof(struct foo) == 32, "size");
int main(void) { return 0; }
C
cc -std=c11 -Wall -Werror -o "$tmp/check" "$tmp/check.c" 2>"$tmp/cc.txt" ||
	fail "the suggested struct does not compile as printed: $(cat "$tmp/cc.txt")"

"$lever" layout report --json "$tmp/r.record" >"$tmp/out.json" || fail "--json: exit $?"
python3 - "$tmp/out.json" <<'PY' || fail "JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "lever-layout-report" and d["version"] == 1 and d["period"] == 16384
s = {x["struct"]: x for x in d["structs"]}
assert s["foo"]["suggestion"]["saved"] == 145
assert [o["name"] for o in s["foo"]["suggestion"]["order"]] == ["d", "a", "c", "b"]
assert s["counters"]["suggestion"]["algorithm"] == "by threads"
PY

"$lever" layout report --threshold 200 "$tmp/r.record" >"$tmp/t.txt" || fail "--threshold"
grep -q 'foo: saves 145 samples, not above --threshold 200' "$tmp/t.txt" || fail "threshold note"
grep -q '^In struct foo' "$tmp/t.txt" && fail "foo ranked above the threshold"

# --pack: counters' cold name[48] cannot fill anything; foo has no cold field: same output.
"$lever" layout report --pack "$tmp/r.record" >"$tmp/pack.txt" || fail "--pack: exit $?"
cmp -s "$tmp/out.txt" "$tmp/pack.txt" || fail "--pack changed a layout without holes to fill"

# --pack moves a cold char into the hole after a hot one.
printf '%s\n' 'lever-layout-record	1' 'struct	entry' 'field	cold	char	-	0	1	1' \
	'field	key	long	-	8	8	8' 'field	tag	char	-	16	1	1' \
	'ref	0x10	entry	key	r' 'ref	0x20	entry	tag	r' \
	'sample	0x10	90' 'sample	0x20	100' >"$tmp/entry.record"
"$lever" layout report "$tmp/entry.record" | grep -q 'size 24 -> 24 \*/$' || fail "entry unpacked"
"$lever" layout report --pack "$tmp/entry.record" >"$tmp/entry.txt"
grep -q 'size 24 -> 16 \*/$' "$tmp/entry.txt" || fail "--pack: entry not 16 bytes"
grep -q '^	char                       cold;                 /\*     1     1 \*/$' "$tmp/entry.txt" ||
	fail "--pack: cold not in the hole"

# Issue 17 B1/B3/B4, the memcached defects: two workers write nkey and next
# of *their own* items (different addresses), as memcached's workers do.
# Sharing is judged per object, so nothing is padded ("by threads" would
# grow item to 128 bytes for sharing no object has); D has nothing to move;
# the clock source's counts are samples of CPU time, never "misses".
printf '%s\n' 'lever-layout-record	2' 'source	clock	cpu-clock' 'struct	item' \
	'field	nkey	long	-	0	8	8' 'field	next	long	-	8	8	8' \
	'field	data	char	[48]	16	48	1' \
	'ref	0x10	item	nkey	w' 'ref	0x20	item	next	w' \
	'sample	0x10	500	1' 'sample	0x20	400	2' \
	'access	0x10	0x10000	1	w	250' 'access	0x10	0x10040	1	w	250' \
	'access	0x20	0x20008	2	w	200' 'access	0x20	0x20048	2	w	200' \
	'access	0x20	0x10008	2	w	1' \
	'period	1000000' >"$tmp/item.record"
"$lever" layout report "$tmp/item.record" >"$tmp/item.txt" || fail "item: exit $?"
grep -q '^/\* item: keep the current layout: it is already in miss order (estimate E 400 samples); grouping by threads avoids 1 samples of sharing per object and raises the modelled samples by 400 \*/$' "$tmp/item.txt" ||
	fail "item: not kept, or without why: $(grep -i 'item' "$tmp/item.txt")"
grep -q 'suggested by threads\|aligned(64)' "$tmp/item.txt" && fail "item: padded for sharing between different objects"
grep -q 'data line' "$tmp/item.txt" && fail "item: a line with 1 sample of sharing listed"
grep -q '^1 shared line left out (251 samples on them)' "$tmp/item.txt" || fail "item: shared line not counted"
grep -q '^No struct saves more than 0 samples\.$' "$tmp/item.txt" || fail "item: ranked"
grep -q 'false sharing in item' "$tmp/item.txt" && fail "item: a 1-sample pair reported as false sharing"
grep -q '^/\* 2 false-sharing pairs in item left out (2 samples in all): below 4 samples' "$tmp/item.txt" ||
	fail "item: the pairs left out are not counted"
grep -i 'miss' "$tmp/item.txt" | grep -v 'miss order\|by misses' | grep -q . &&
	fail "clock counts called misses: $(grep -i 'miss' "$tmp/item.txt")"
grep -q '^[^ ]*item.record: 900 samples (1 per 1000000 ns of CPU time)' "$tmp/item.txt" ||
	fail "item: summary line: $(head -1 "$tmp/item.txt")"
"$lever" layout report --json "$tmp/item.record" >"$tmp/item.json" || fail "item --json"
"$lever" layout report --html "$tmp/item.html" "$tmp/item.record" >/dev/null || fail "item --html"
grep -q '<p class="kept">keep the current layout: it is already in miss order' "$tmp/item.html" ||
	fail "item: the heat map does not say why the layout is kept"
grep -q '0x10000' "$tmp/item.html" && fail "item: the heat map lists a line with 1 sample of sharing"
grep -q '1 shared line left out' "$tmp/item.html" || fail "item: the heat map does not count the line left out"
grep -q '900 samples' "$tmp/item.html" && ! grep -qi 'misses' "$tmp/item.html" ||
	fail "item: the heat map calls clock samples misses"
python3 - "$tmp/item.json" <<'PY' || fail "item: JSON units or kept layout"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "clock" and d["unit"] == "samples" and d["period_unit"] == "ns of CPU time", d
sg = d["structs"][0]["suggestion"]
assert sg["algorithm"] == "original" and sg["kept_because"] == "no-move" and sg["size"] == 64, sg
PY

# ABI constraints (issue 17): foo is kept by the constraint file, with its
# reason and what a reorder would save; lock is used by a shared object's
# code (a `module` part), so it keeps its layout without being told.
printf '%s\n' 'lever-layout-record	2' 'program	/opt/prog	00aa' 'source	clock	cpu-clock' \
	'struct	foo' 'field	a	long long	-	0	8	8' 'field	b	struct bar *	-	8	8	8' \
	'field	c	uint64_t	-	16	8	8' 'field	d	int	-	24	4	4' \
	'struct	lock' 'field	owner	int	-	0	4	4' 'field	count	int	-	4	4	4' \
	'field	kind	int	-	8	4	4' \
	'ref	0x401000	foo	a	r' 'ref	0x401010	foo	b	r' 'ref	0x401020	foo	c	r' \
	'ref	0x401030	foo	d	w' 'ref	0x401040	lock	kind	r' \
	'sample	0x401000	111	1' 'sample	0x401010	15	1' 'sample	0x401020	19	1' \
	'sample	0x401030	128	1' 'sample	0x401040	300	1' \
	'module	/lib/libpthread-like.so	-' 'ref	0x2000	lock	owner	w' 'sample	0x2000	20	1' \
	>"$tmp/abi.record"
printf '%s\n' 'lever-layout-constraints 1' '# foo goes to disk as it is' \
	'keep foo on-disk header of v1 files' 'fixed absent x' >"$tmp/abi.constraints"
"$lever" layout report --constraints "$tmp/abi.constraints" "$tmp/abi.record" >"$tmp/abi.txt" 2>"$tmp/abi.err" ||
	fail "--constraints: exit $?: $(cat "$tmp/abi.err")"
grep -q '^/\* foo: keep the current layout: .*abi.constraints:3 says so: on-disk header of v1 files (a reorder would save 145 samples) \*/$' "$tmp/abi.txt" ||
	fail "foo not kept by the constraint file: $(grep 'foo' "$tmp/abi.txt")"
grep -q '^/\* lock: keep the current layout: the code of /lib/libpthread-like.so uses it' "$tmp/abi.txt" ||
	fail "lock, used by a shared object, not kept: $(grep 'lock' "$tmp/abi.txt")"
grep -q '^In struct' "$tmp/abi.txt" && fail "a kept struct was ranked"
grep -q 'abi.constraints:4: struct absent is not in the record: constraint skipped' "$tmp/abi.err" ||
	fail "no note for a struct the record does not have"
"$lever" layout report "$tmp/abi.record" >"$tmp/abi2.txt" || fail "abi.record without constraints"
grep -q '^In struct foo you will save 145 samples' "$tmp/abi2.txt" || fail "foo not suggested without constraints"
printf '%s\n' 'lever-layout-constraints 1' 'reorder lock' 'first foo a' >"$tmp/abi2.constraints"
"$lever" layout report --constraints "$tmp/abi2.constraints" "$tmp/abi.record" >"$tmp/abi3.txt" ||
	fail "reorder/first: exit $?"
grep -q 'lock: keep' "$tmp/abi3.txt" && fail "reorder lock did not lift the freeze"
grep -q '^/\* foo, suggested by misses' "$tmp/abi3.txt" && sed -n '/^\/\* foo, suggested/,/^};/p' "$tmp/abi3.txt" |
	sed -n 2,3p | grep -q 'long long  *a;' || fail "first foo a: a is not first"
printf 'lever-layout-constraints 1\nfirst foo d\n' >"$tmp/bad.constraints"
"$lever" layout report --constraints "$tmp/bad.constraints" "$tmp/abi.record" >/dev/null 2>"$tmp/e.txt"
[ $? = 1 ] || fail "a bad constraint file did not exit 1"
grep -q 'bad.constraints:2: d is not where the constraint keeps it' "$tmp/e.txt" ||
	fail "bad constraint file: $(cat "$tmp/e.txt")"

# Errors: a usage error exits 2, a bad record 1 with file:line.
expect_exit() {
	local want=$1 pattern=$2
	shift 2
	"$lever" "$@" >/dev/null 2>"$tmp/e.txt"
	local got=$?
	[ "$got" = "$want" ] || fail "$*: exit $got, want $want"
	grep -q -- "$pattern" "$tmp/e.txt" || fail "$*: no '$pattern' in: $(cat "$tmp/e.txt")"
}
expect_exit 2 "not thesis, repo-quirks or none" layout report --adjust=x "$tmp/r.record"
expect_exit 2 "which record" layout report
expect_exit 2 "unknown subcommand 'frob'" layout frob
expect_exit 2 "no program given" layout record
expect_exit 2 "is not a percentage 0..100" layout report --tolerance 150 "$tmp/r.record"
expect_exit 2 "'50' is not a percentage above 50, up to 100" layout report --dominant 50 "$tmp/r.record"
expect_exit 2 "'x' is not a count" layout report --threshold x "$tmp/r.record"
expect_exit 2 "is not a number 0..10" layout report --sigmas 11 "$tmp/r.record"
expect_exit 2 "is not a percentage 0..100" layout report --sharing-min-share 150 "$tmp/r.record"
expect_exit 2 "is not a count" layout report --sharing-min-samples -1 "$tmp/r.record"
expect_exit 1 "No such file" layout report --constraints "$tmp/missing.constraints" "$tmp/r.record"
# --sharing-min-samples 0 --sharing-min-share 0 lists the 1-sample pairs of item
"$lever" layout report --sharing-min-samples 0 --sharing-min-share 0 "$tmp/item.record" |
	grep -q 'false sharing in item, cacheline 0: nkey written by thread 1, next used by thread 2 (1 samples in 1 object)' ||
	fail "the significance options do not list the small pairs"
expect_exit 2 "one RECORD file, please" layout report "$tmp/r.record" "$tmp/r.record"
expect_exit 2 "unknown option '--frob'" layout report --frob "$tmp/r.record"
expect_exit 2 "needs a value" layout report "$tmp/r.record" --adjust
# fractional percentages, and options after the record
"$lever" layout report "$tmp/r.record" --tolerance 2.5 --dominant 50.5 --adjust none >/dev/null ||
	fail "fractional --tolerance/--dominant refused"
expect_exit 1 "No such file" layout report "$tmp/missing.record"
printf 'lever-layout-record\t1\nstruct\tfoo\nfield\ta\tlong\t-\t4\t8\t8\n' >"$tmp/bad.record"
expect_exit 1 "bad.record:3: field a: offset 4" layout report "$tmp/bad.record"
"$lever" layout --help | grep -q '^usage: lever layout report' || fail "--help"
"$lever" layout report --help | grep -q '^      --dominant PCT    a thread owning' || fail "report --help"

[ "$fails" = 0 ] && echo "ok: lever layout report"
exit $((fails > 0))
