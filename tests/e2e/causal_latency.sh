#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Latency points (LEVER_BEGIN/LEVER_END; the latency-point record of
# doc/formats/profile.md) against a known answer: tests/programs/causal_known/
# latency.c keeps exactly WORKERS requests of REQUEST_US each in flight, one
# per thread, and measures their mean latency itself. Checked on every record:
#   0 <= difference <= WORKERS            (requests in flight; exact)
#   |arrivals - departures| <= WORKERS    (each thread alternates begin/end)
# on the whole profile:
#   sum of arrivals <= the requests the program counted (+ WORKERS)
#   mean difference, weighted by duration, >= WORKERS / 2
#   Little's law as Coz's viewer applies it (latency = difference /
#   (arrivals / duration), pooled) within a factor 2 of the program's own
#   mean latency. Both sides slow down together on a loaded machine (the
#   program's clock brackets each request), so the band does not depend on
#   load; a wrong count, a window-relative difference or a swapped pair
#   lands far outside it. lever's in-flight-ns (the time average of the
#   number in flight x duration) is checked the same way: 0 <= its mean <=
#   WORKERS on every record, and Little's law from it within a factor 2.
# No delays: --fixed-speedup 0, so durations are plain wall time.
set -euo pipefail
build=$1
workers=4
prog=$build/tests/programs/causal_known/latency
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/bin/lever" causal -o "$tmp/p.coz" --fixed-speedup 0 --experiment-length 200ms --seed 3 -- \
	"$prog" "$workers" 2000 3000 >"$tmp/out" 2>"$tmp/err" || {
	echo "FAIL: lever causal exited $?"
	cat "$tmp/err"
	exit 1
}
cat "$tmp/out"
read -r requests latency_ns < <(sed -n 's/^requests=\([0-9]*\) latency_ns=\([0-9]*\) .*/\1 \2/p' "$tmp/out")
[ -n "${requests:-}" ] && [ "$requests" -gt 0 ] || {
	echo "FAIL: the program reported no requests"
	exit 1
}

awk -F'\t' -v k="$workers" -v requests="$requests" -v lat="$latency_ns" '
function val(f) { sub(/^[^=]*=/, "", f); return f + 0 }
$1 == "experiment" { dur = val($4); next }
$1 == "latency-point" && $2 == "name=request" {
	a = val($3); d = val($4); diff = val($5)
	n++
	# in-flight-ns (lever): the number in flight averaged over the experiment x duration
	if ($6 !~ /^in-flight-ns=/) { printf "FAIL: record %d: no in-flight-ns\n", n; bad++ }
	else if (dur > 0) {
		avg = val($6) / dur
		if (avg < 0 || avg > k + 0.01) { printf "FAIL: record %d: mean in flight %.2f outside [0, %d]\n", n, avg, k; bad++ }
		exact += val($6)
	}
	if (diff < 0 || diff > k) { printf "FAIL: record %d: difference=%d outside [0, %d]\n", n, diff, k; bad++ }
	if (a - d > k || d - a > k) { printf "FAIL: record %d: arrivals=%d departures=%d differ by more than %d\n", n, a, d, k; bad++ }
	arrivals += a
	if (dur > 0) { weighted += diff * dur; total_dur += dur; pooled_arr += a }
}
END {
	if (n < 5) { printf "FAIL: %d latency-point records named request, expected >= 5\n", n; exit 1 }
	if (arrivals > requests + k) { printf "FAIL: %d arrivals recorded, the program made %d requests\n", arrivals, requests; bad++ }
	if (total_dur <= 0 || pooled_arr <= 0) { print "FAIL: no experiment with duration and arrivals"; exit 1 }
	inflight = weighted / total_dur
	little = weighted / pooled_arr
	printf "latency points: %d records, %d arrivals of %d requests, in flight %.2f (known %d), Little latency %.0f ns, measured %d ns (ratio %.2f)\n", n, arrivals, requests, inflight, k, little, lat, little / lat
	printf "time-averaged in flight %.2f, Little latency from it %.0f ns (ratio %.2f)\n", exact / total_dur, exact / pooled_arr, exact / pooled_arr / lat
	if (exact / total_dur < k / 2) { printf "FAIL: time-averaged in flight %.2f, expected about %d\n", exact / total_dur, k; bad++ }
	if (exact / pooled_arr < lat / 2 || exact / pooled_arr > lat * 2) { printf "FAIL: Little latency from in-flight-ns %.0f ns not within a factor 2 of the measured %d ns\n", exact / pooled_arr, lat; bad++ }
	if (inflight < k / 2) { printf "FAIL: mean requests in flight %.2f, expected about %d\n", inflight, k; bad++ }
	if (little < lat / 2 || little > lat * 2) { printf "FAIL: Little latency %.0f ns not within a factor 2 of the measured %d ns\n", little, lat; bad++ }
	exit bad ? 1 : 0
}' "$tmp/p.coz"
echo "ok: latency points"
