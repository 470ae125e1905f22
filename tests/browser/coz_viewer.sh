#!/usr/bin/env bash
# Loads a lever profile into Coz's own web viewer (Debian's coz-profiler
# package) in headless Chromium and takes a screenshot, to check that lever's
# profiles stay readable by Coz's tools. Not part of `make test` (needs
# chromium): run it by hand or from `make test-browser`.
#   tests/browser/coz_viewer.sh PROFILE.coz OUT.png
# The viewer is copied to a temporary directory and given a tiny script that
# feeds PROFILE to the viewer's own Profile class, as its sample buttons do.
set -euo pipefail
profile=$(realpath "$1") out=$(realpath -m "$2")
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
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$tmp/chromium" --window-size=1300,1000 --virtual-time-budget=8000 \
	--screenshot="$out" "http://127.0.0.1:$port/index.htm" 2>/dev/null
echo "coz_viewer: screenshot of $1 in Coz's viewer: $out"
