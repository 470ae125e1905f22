#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders the page of `lever annotate derive --html` in headless Chromium: a
# screenshot to look at, and checks that Chromium logged no console error and
# that the rendered DOM has a chart per scope and feature of the annotation
# (the seed's Appendix A: 25 cost charts and one mixture). Not part of
# `make test` (needs chromium); run it by hand or by `make test-browser`.
#   tests/browser/annotate_report.sh LEVER OUT.png
set -euo pipefail
lever=$1
out=$(realpath -m "$2")
command -v chromium >/dev/null || { echo "annotate_report: chromium is missing (scripts/install-deps.sh --browser)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
html=$tmp/annotations.html
"$lever" annotate synth --calls 600 --seed 2021 -o "$tmp/a.rec"
"$lever" annotate derive --html "$html" "$tmp/a.rec" >"$tmp/a.ann"
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
charts=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
# one chart per feature of every scope's model, one per mixture
want=$(grep -c "Norm(" "$tmp/a.ann")
[ "$charts" -ge 20 ] || { echo "FAIL: $charts charts in the rendered page"; fails=1; }
grep -q '<h2>test_random_clustering(int a).time</h2>' "$tmp/dom.html" ||
	{ echo "FAIL: a function's section is missing"; fails=1; }
[ -s "$out" ] || { echo "FAIL: no screenshot"; fails=1; }
cp "$html" "${out%.png}.html"
echo "annotate_report: $charts charts for $want distributions; screenshot $out, page ${out%.png}.html"
exit $fails
