#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders the HTML page of `lever causal report --html` in headless Chromium:
# a screenshot to look at, and a check that the page's script ran without
# errors (the DOM after the script has the count of lines shown filled in and
# Chromium logged no console error). For a load-amplified profile (records
# with arrival-speedup) also that the page has the scalability chart and, when
# lines were sped up at several loads, per-line charts with a legend entry per
# load. Not part of `make test` (needs chromium); run by `make test-browser`.
#   tests/browser/causal_report.sh LEVER PROFILE... OUT.png
set -euo pipefail
lever=$1
shift
out=$(realpath -m "${!#}")
profiles=("${@:1:$#-1}")
command -v chromium >/dev/null || { echo "causal_report: chromium is missing (scripts/install-deps.sh --browser)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
html=$tmp/report.html
"$lever" causal report --html "$html" "${profiles[@]}" >/dev/null
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
	--disable-component-update --disable-sync --no-first-run)
chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" --screenshot="$out" \
	--window-size=1200,2000 --enable-logging=stderr --v=0 "file://$html" 2>"$tmp/log" >/dev/null
chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" --dump-dom "file://$html" \
	>"$tmp/dom.html" 2>/dev/null
fails=0
if grep -i 'CONSOLE' "$tmp/log" | grep -Eiq 'error|uncaught'; then
	echo "FAIL: console errors:"; grep -i 'CONSOLE' "$tmp/log"; fails=1
fi
# the script numbers the charts and counts them; without it these stay empty
grep -q '<span id="count">[1-9][0-9]*</span>' "$tmp/dom.html" ||
	{ echo "FAIL: the page's script did not run (no line count)"; fails=1; }
[ -s "$out" ] || { echo "FAIL: no screenshot"; fails=1; }
if grep -q 'arrival-speedup=' "${profiles[@]}"; then
	grep -q '<section id="scalability">' "$tmp/dom.html" ||
		{ echo "FAIL: AMP profile without a scalability chart"; fails=1; }
	if grep -q '<h2>Causal profiles per load</h2>' "$tmp/dom.html"; then
		legend=$(grep -o '<title>[^<:]* (load [0-9]*%)</title>' "$tmp/dom.html" | sort -u | wc -l)
		[ "$legend" -ge 2 ] || { echo "FAIL: per-load charts without a legend entry per load"; fails=1; }
	fi
fi
cp "$html" "${out%.png}.html"
echo "causal_report: $(grep -c '<svg' "$html") charts; screenshot $out, page ${out%.png}.html"
exit $fails
