#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders the heat map of `lever layout report --html` in headless Chromium:
# a screenshot to look at, and checks that Chromium logged no console error,
# that the page's script ran (it fills in the count of structs shown), that
# each sampled struct has its two tables (as it is, suggested) with a row per
# field, and that the hottest field's row is the reddest. The record is the
# e2e one (tests/e2e/cli_layout.sh): Table 3.2 and a false-sharing pair.
# Not part of `make test` (needs chromium); run by `make test-browser`.
#   tests/browser/layout_report.sh LEVER OUT.png
set -euo pipefail
lever=$1
out=$(realpath -m "$2")
command -v chromium >/dev/null || { echo "layout_report: chromium is missing (scripts/install-deps.sh --browser)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
	'field	tail	long	-	64	8	8' \
	'ref	0x401000	foo	a	r' \
	'ref	0x401010	foo	b	r' \
	'ref	0x401020	foo	c	r' \
	'ref	0x401030	foo	d	w' \
	'ref	0x402000	counters	hits	w' \
	'ref	0x402100	counters	misses	w' \
	'ref	0x402200	counters	tail	r' \
	'sample	0x401000	111	1' \
	'sample	0x401010	15	1' \
	'sample	0x401020	19	1' \
	'sample	0x401030	128	1' \
	'sample	0x402000	400	1' \
	'sample	0x402100	300	2' \
	'sample	0x402200	20	2' \
	'access	0x402000	0x7f0000001000	1	w	400' \
	'access	0x402100	0x7f0000001008	2	w	300' \
	'period	16384' >"$tmp/r.record"
html=$tmp/layout.html
"$lever" layout report --html "$html" "$tmp/r.record" >/dev/null
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
	--disable-component-update --disable-sync --no-first-run)
chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" --screenshot="$out" \
	--window-size=1200,1400 --enable-logging=stderr --v=0 "file://$html" 2>"$tmp/log" >/dev/null
chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" --dump-dom "file://$html" \
	>"$tmp/dom.html" 2>/dev/null
fails=0
if grep -i 'CONSOLE' "$tmp/log" | grep -Eiq 'error|uncaught'; then
	echo "FAIL: console errors:"; grep -i 'CONSOLE' "$tmp/log"; fails=1
fi
grep -q '<span id="count">2</span>' "$tmp/dom.html" ||
	{ echo "FAIL: the page's script did not count 2 structs"; fails=1; }
tables=$(grep -o '<caption>' "$tmp/dom.html" | wc -l)
[ "$tables" -eq 4 ] || { echo "FAIL: $tables tables, not 2 per struct"; fails=1; }
rows=$(grep -o 'class="field"' "$tmp/dom.html" | wc -l)
[ "$rows" -eq 16 ] || { echo "FAIL: $rows field rows, not 2 x (4 + 4)"; fails=1; }
grep -q 'cache line 1' "$tmp/dom.html" || { echo "FAIL: no second cache line for counters"; fails=1; }
# foo's hottest field by adjusted samples is d (128): its row has the lowest green
hottest=$(sed -n '/<h2>struct foo/,/<\/section>/p' "$html" |
	grep -o 'data-field="[a-z]*" style="background:rgb(255,[0-9]*' | head -4 |
	sed 's/data-field="\([a-z]*\)".*rgb(255,\([0-9]*\)/\2 \1/' | sort -n | head -1 | cut -d' ' -f2)
[ "$hottest" = d ] || { echo "FAIL: the reddest row of foo is '$hottest', not d"; fails=1; }
[ -s "$out" ] || { echo "FAIL: no screenshot"; fails=1; }
cp "$html" "${out%.png}.html"
echo "layout_report: $(grep -c '<section class="struct">' "$html") structs; screenshot $out, page ${out%.png}.html"
exit $fails
