#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The outputs of a layout record besides the text report (issue 17), on
# hand-written version-2 records: `report --html` (a self-contained page
# with both layouts of each struct; the rendering is checked by
# tests/browser/layout_report.sh), `export --pprof` (gzip; read back by
# `go tool pprof` when Go is installed), `merge` (sums, and refuses records
# of another build), and their refusals to overwrite inputs.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"

record() { # BUILD-ID COUNT-SCALE
	printf '%s\n' \
		'lever-layout-record	2' \
		"program	/opt/prog	$1" \
		'source	clock	cpu-clock' \
		'period	1000000' \
		'stat	samples	'$((254 * $2)) \
		'struct	foo' \
		'field	a	long long	-	0	8	8' \
		'field	b	struct bar *	-	8	8	8' \
		'field	c	uint64_t	-	16	8	8' \
		'field	d	int	-	24	4	4' \
		'ref	0x401000	foo	a	r' \
		'ref	0x401010	foo	b	r' \
		'ref	0x401020	foo	c	r' \
		'ref	0x401030	foo	d	w' \
		'sample	0x401000	'$((111 * $2))'	1' \
		'sample	0x401010	'$((15 * $2))'	1' \
		'sample	0x401020	'$((19 * $2))'	1' \
		'sample	0x401030	'$((128 * $2))'	1' \
		'access	0x401000	0x7f0000001000	1	r	'$((3 * $2)) \
		'access	0x401030	0x7f0000001018	2	w	'$((2 * $2)) \
		'module	/lib/libc.so.6	-' \
		'sample	0x2000	'$((7 * $2))'	1'
}
record 00aa 1 >"$tmp/a.record"
record 00aa 2 >"$tmp/b.record"
record 00bb 1 >"$tmp/other.record"

# --- merge: Table 3.2 once and twice is three times
"$lever" layout merge -o "$tmp/m.record" "$tmp/a.record" "$tmp/b.record" || fail "merge exited $?"
grep -q $'^sample\t0x401030\t384\t1$' "$tmp/m.record" || fail "merged d is not 3 x 128"
grep -q $'^stat\tsamples\t762$' "$tmp/m.record" || fail "merged samples counter is not 3 x 254"
grep -q $'^access\t0x401000\t0x7f0000001000\t1\tr\t9$' "$tmp/m.record" || fail "merged access is not 9"
awk -F'\t' '$1 == "module" { m = 1 } m && $1 == "sample" && $2 == "0x2000" && $3 == 21 { ok = 1 } END { exit !ok }' \
	"$tmp/m.record" || fail "the library's sample is not summed in its module"
"$lever" layout report "$tmp/m.record" >"$tmp/m.txt"
grep -q '^In struct foo you will save 435 samples (by misses; about 4.35e+08 ns of CPU time at period 1000000)$' "$tmp/m.txt" || fail "the merged record does not give 3 x 145"
grep -q '^recorded by clock (cpu-clock): 762 samples, 0 without a memory operand, 0 lost' "$tmp/m.txt" ||
	fail "report does not show the collector's counters: $(head -3 "$tmp/m.txt")"
"$lever" layout merge -o "$tmp/x.record" "$tmp/a.record" "$tmp/other.record" 2>"$tmp/err"
[ $? -eq 1 ] || fail "merge of two builds did not exit 1"
grep -q 'other.record: different builds: 00aa (/opt/prog) and 00bb (/opt/prog)' "$tmp/err" ||
	fail "merge of two builds: $(cat "$tmp/err")"
[ ! -e "$tmp/x.record" ] || fail "a refused merge wrote its output"
"$lever" layout merge -o "$tmp/a.record" "$tmp/a.record" "$tmp/b.record" 2>"$tmp/err" &&
	fail "merge wrote over its input"
"$lever" layout merge "$tmp/a.record" "$tmp/b.record" 2>/dev/null
[ $? -eq 2 ] || fail "merge without -o is not a usage error"
"$lever" layout merge -o "$tmp/y.record" "$tmp/a.record" 2>/dev/null
[ $? -eq 2 ] || fail "merge of one record is not a usage error"

# --- report --html: a page with both layouts, the record's numbers
"$lever" layout report --html "$tmp/h.html" "$tmp/m.record" >"$tmp/report.txt" || fail "report --html exited $?"
grep -q '^In struct foo' "$tmp/report.txt" || fail "report --html lost the text report"
grep -q '<section class="struct"><h2>struct foo</h2>' "$tmp/h.html" || fail "no section for foo"
[ "$(grep -c '<caption>' "$tmp/h.html")" -eq 2 ] || fail "not two tables (as it is, suggested)"
grep -q '<td><code>int d</code></td><td class="num">384</td>' "$tmp/h.html" || fail "no row for d with 384"
grep -Eq '(src|href)="https?:' "$tmp/h.html" && fail "the page loads something from outside"
grep -q '<tr><td><code>0x7f0000001000</code></td><td>false</td><td class="num">15</td>' "$tmp/h.html" ||
	fail "no false-sharing row for data line 0x7f0000001000"
grep -q '^false sharing of data line 0x7f0000001000 (15 samples): thread 1 bytes 0-7 (foo.a), 9 samples, 0 writes; thread 2 bytes 24-27 (foo.d), 6 samples, 6 writes$' "$tmp/report.txt" ||
	fail "report: no false sharing by address: $(grep sharing "$tmp/report.txt")"
"$lever" layout report --html "$tmp/a.record" "$tmp/b.record" 2>"$tmp/err"
[ $? -eq 1 ] || fail "--html over a record did not exit 1"
grep -q 'refusing' "$tmp/err" || fail "--html over a record: $(cat "$tmp/err")"

# --- export --pprof
"$lever" layout export --pprof "$tmp/p.pb.gz" "$tmp/m.record" || fail "export exited $?"
gzip -t "$tmp/p.pb.gz" || fail "the export is not gzip"
if command -v go >/dev/null; then
	go tool pprof -raw "$tmp/p.pb.gz" >"$tmp/pprof.txt" 2>&1 || fail "go tool pprof: $(cat "$tmp/pprof.txt")"
	grep -q 'foo.d' "$tmp/pprof.txt" || fail "go tool pprof shows no foo.d"
fi
"$lever" layout export --pprof "$tmp/m.record" "$tmp/a.record" 2>/dev/null && fail "export wrote over a record"
"$lever" layout export "$tmp/m.record" 2>/dev/null
[ $? -eq 2 ] || fail "export without --pprof is not a usage error"

# --- the commands' help
for c in record report merge export; do
	"$lever" layout $c --help | grep -q "^usage: lever layout $c" || fail "$c --help"
done
[ $fails -eq 0 ] && echo "cli_layout_outputs: ok"
exit $((fails > 0))
