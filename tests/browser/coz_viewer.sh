#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Loads a lever profile into Coz's own web viewer (Debian's coz-profiler
# package) in headless Chromium, checks from the page's DOM (chromium
# --dump-dom) that the viewer drew a plot for each of the lines given (and
# did not say "No Data to Plot" or "Invalid Profile"), and takes a
# screenshot. So lever's profiles stay readable by Coz's tools. Not part of
# `make test` (needs chromium): run by `make test-browser`.
#   tests/browser/coz_viewer.sh PROFILE.coz OUT.png [LINE...]
# LINE: text a plot title must contain (a selected line, "file.c:22"); with
# none, at least one plot must be drawn. The viewer's "Minimum Points"
# slider stays at its default (10 speedup values per line).
# The viewer is copied to a temporary directory and given a tiny script that
# feeds PROFILE to the viewer's own Profile class, as its sample buttons do.
set -euo pipefail
profile=$(realpath "$1") out=$(realpath -m "$2")
shift 2
viewer=/usr/share/coz-profiler/viewer
for need in "$viewer/index.htm" /usr/bin/chromium; do
	[ -e "$need" ] || { echo "coz_viewer: $need is missing (apt-get install coz-profiler chromium)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$tmp"' EXIT
cp -rL "$viewer" "$tmp/viewer"
cp "$profile" "$tmp/viewer/profiles/lever.coz"
cat >"$tmp/viewer/autoload.js" <<'JS'
window.addEventListener('load', function () {
  var xhr = new XMLHttpRequest();
  xhr.open('GET', 'profiles/lever.coz');
  xhr.onload = function () {
    current_profile = new Profile(xhr.responseText, d3.select('#plot-area'),
                                  d3.select('#legend'), get_min_points, display_warning);
    update();
  };
  xhr.send();
});
JS
sed -i 's|<script src="js/ui.js"></script>|&<script src="autoload.js"></script>|' "$tmp/viewer/index.htm"
port=$((20000 + RANDOM % 20000))
(cd "$tmp/viewer" && exec /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
server=$!
sleep 1
browse() { # chromium options...
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$tmp/chromium" --window-size=1300,1000 --virtual-time-budget=8000 \
		"$@" "http://127.0.0.1:$port/index.htm" 2>/dev/null
}
browse --dump-dom >"$tmp/dom.html"
browse --screenshot="$out"
echo "coz_viewer: screenshot of $profile in Coz's viewer: $out"

# The plot titles, one per line: <div class="plot-title path" ...>file.c:N</div>
grep -o '<div class="plot-title[^"]*"[^>]*>[^<]*</div>' "$tmp/dom.html" |
	sed 's/<[^>]*>//g' >"$tmp/titles" || true
fail=0
if grep -q 'No Data to Plot' "$tmp/dom.html"; then
	echo "FAIL: the viewer says \"No Data to Plot\" for $profile"
	fail=1
fi
if grep -q 'Invalid Profile\|Empty Profile' "$tmp/dom.html"; then
	echo "FAIL: the viewer warns: $(grep -o '\(Invalid\|Empty\) Profile[^<]*' "$tmp/dom.html" | head -1)"
	fail=1
fi
if [ ! -s "$tmp/titles" ]; then
	echo "FAIL: the viewer drew no plot for $profile"
	fail=1
fi
for line in "$@"; do
	if grep -qF -- "$line" "$tmp/titles"; then
		echo "ok: the viewer plots $line"
	else
		echo "FAIL: no plot for $line; plots: $(tr '\n' ' ' <"$tmp/titles")"
		fail=1
	fi
done
[ "$fail" = 0 ] || exit 1
echo "ok: Coz's viewer draws $(wc -l <"$tmp/titles") plot(s): $(tr '\n' ' ' <"$tmp/titles")"
