#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# AMP validation (dissertation ch. 6, spec/amp.md §4.2 and §9): the
# producer-consumer program of Figure 6.1 with 2 producers and C = 2, 3, 4
# consumers. For each load level x (the inter-arrival time shortened by x,
# the chapter's convention) it compares
#   real: the producers' work really shortened (-P 1-x), wall time;
#   AMP:  the unmodified program under `lever causal sweep
#         --arrival-speedup=x*T --fixed-speedup=0 --end-to-end`, effective time;
#   the oracle min(1/(1-x), C/2).
# Relative throughput = mean time at x = 0 / mean time at x (same method).
# Then a consumer line's causal curve at 0% and 25% amplified load
# (Figure 6.4) against real consumer speedups (-C 1-s) at 25% real extra load.
# That part needs consumers that compute (the profiler samples and speeds up
# CPU work), and on this 2-vCPU machine two spinning consumers plus the
# producers and the profiler oversubscribe the CPUs: the system is no longer
# balanced at x = 0 and real runs vary severalfold. So it keeps the figure's
# balance with one spinning consumer (execution time T) fed by the 2 waiting
# producers at production time 2T: arrival rate 2/(2T) = service rate 1/T, the
# same oracle min(1/(1-x), 1/(1-s)) as the chapter's 2 + 2, on one CPU.
# Runs are interleaved (round r runs every configuration once) so that drift
# of a shared machine spreads over all points. Writes bench/results/amp.md.
#
# The machine is shared: to shield the runs' sleeps and wake-ups from the
# other users' load, the waiting runs go at real-time priority (chrt -f 10;
# they use little CPU) and the spinning ones at nice -15, both real and AMP
# alike (override with AMP_PRIO_SLEEP / AMP_PRIO_SPIN, "" for none).
#
#   bench/amp/run.sh [BUILD]      AMP_RUNS=N (default 5) runs per point
# The raw data (real times, the AMP profiles, the durations taken from them,
# the header's date and load) go to bench/results/amp-raw/, committed with the
# table; AMP_REPORT_ONLY=bench/results/amp-raw rebuilds the table from them
# alone (bench/results/regenerate.sh does, into AMP_OUT instead of amp.md).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
prog=$build/tests/programs/amp/prodcons
runs=${AMP_RUNS:-5}
t_us=10000 # production time = execution time
tasks=50   # per producer
levels="0 0.15 0.3 0.45 0.6"
speedups="0 0.1 0.25 0.4 0.6"
fig_consumers=1 # Figure 6.4: one spinning consumer ...
fig_produce=2   # ... and production time fig_produce * T (balanced)
out=${AMP_OUT:-$src/bench/results/amp.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# AMP_REPORT_ONLY=DIR: recompute the tables from the raw data kept in DIR
if [ -n "${AMP_REPORT_ONLY:-}" ]; then
	for f in real real-causal amp-c2.coz amp-c3.coz amp-c4.coz causal.coz amp-stderr meta; do
		[ -f "$AMP_REPORT_ONLY/$f" ] || {
			echo "bench/amp: $AMP_REPORT_ONLY/$f is missing: the table cannot be rebuilt" >&2
			exit 1
		}
	done
	cp "$AMP_REPORT_ONLY"/* "$tmp"/
	runs=$(awk '$1 == 2 && $2 == 0 { n++ } END { print n }' "$tmp/real")
else
	# the header's facts, measured now and kept with the raw data
	printf 'date=%s\ncores=%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" >"$tmp/meta"
fi
# rebuilding the tables runs lever causal report only; a new run needs prodcons
[ -x "$lever" ] || { echo "build first: $lever" >&2; exit 1; }
[ -n "${AMP_REPORT_ONLY:-}" ] || [ -x "$prog" ] || { echo "build first: $prog" >&2; exit 1; }
prio_sleep=${AMP_PRIO_SLEEP-chrt -f 10}
prio_spin=${AMP_PRIO_SPIN-nice -n -15}
$prio_sleep true 2>/dev/null || prio_sleep=""
$prio_spin true 2>/dev/null || prio_spin=""
run_line=$(grep -n "LINE:run" "$src/tests/programs/amp/prodcons.c" | cut -d: -f1)

ns_of() { awk -v x="$1" -v t="$t_us" 'BEGIN { printf "%d", x * t * 1000 + 0.5 }'; }
scale_of() { awk -v x="$1" 'BEGIN { printf "%.4f", 1 - x }'; }
elapsed() { sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p'; }

# Sleeping work: the result must not depend on the 2 cores of the machine.
scalability_round() {
	local c=$1 r=$2 x list=""
	for x in $levels; do
		echo "$c $x $($prio_sleep "$prog" -c "$c" -n $tasks -t $t_us -P "$(scale_of "$x")" | elapsed)" \
			>>"$tmp/real"
		list="$list${list:+,}$(ns_of "$x")"
	done
	$prio_sleep "$lever" causal sweep --arrival-speedup="$list" -n 1 --fixed-speedup=0 --end-to-end \
		-o "$tmp/amp-c$c.coz" -- "$prog" -c "$c" -n $tasks -t $t_us \
		>/dev/null 2>>"$tmp/amp-stderr"
}

# A spinning consumer (so the profiler samples the consumer line) fed by
# waiting producers at production time fig_produce * T: see the header.
causal_round() {
	local x s p
	for x in 0 0.25; do
		p=$(awk -v x="$x" -v f=$fig_produce 'BEGIN { printf "%.4f", f * (1 - x) }')
		for s in $speedups; do
			echo "$x $s $($prio_spin "$prog" -c $fig_consumers -n $tasks -t $t_us -P "$p" \
				-C "$(scale_of "$s")" --consume=spin | elapsed)" >>"$tmp/real-causal"
			$prio_spin "$lever" causal --end-to-end \
				--arrival-speedup="$(ns_of "$(awk -v x="$x" -v f=$fig_produce 'BEGIN { print x * f }')")" \
				--fixed-line "prodcons.c:$run_line" \
				--fixed-speedup "$(awk -v s="$s" 'BEGIN { printf "%d", s * 100 + 0.5 }')" \
				-o "$tmp/causal.coz" -- "$prog" -c $fig_consumers -n $tasks -t $t_us \
				-P $fig_produce --consume=spin >/dev/null 2>>"$tmp/amp-stderr"
		done
	done
}

[ -n "${AMP_REPORT_ONLY:-}" ] || {
echo "bench/amp: $runs rounds (scalability: C = 2, 3, 4 x $(wc -w <<<"$levels") loads;" \
	"Figure 6.4: 2 loads x $(wc -w <<<"$speedups") consumer speedups), real and AMP" >&2
for r in $(seq 1 "$runs"); do
	echo "round $r/$runs" >&2
	for c in 2 3 4; do scalability_round $c "$r"; done
	causal_round
done
printf 'load_end=%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp/meta"
}
meta() { sed -n "s/^$1=//p" "$tmp/meta"; }

# AMP durations per (C, x): from the experiment records of each profile.
rm -f "$tmp/amp"
for c in 2 3 4; do
	awk -F'\t' -v c=$c -v t=$t_us '$1 == "experiment" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "%d %.4f %s\n", c, f["arrival-speedup"] / (t * 1000), f["duration"] }' \
		"$tmp/amp-c$c.coz" >>"$tmp/amp"
done
awk -F'\t' -v t=$t_us '$1 == "experiment" {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	printf "%.4f %.4f %s\n", f["arrival-speedup"] / (fp * t * 1000), f["speedup"], f["duration"] }' \
	fp=$fig_produce "$tmp/causal.coz" >"$tmp/amp-causal"

# Times per key, in round order (the i-th value of a key is from round i).
# Relative throughput per round = time at x=0 / time at x of the same round
# (paired: the two ran minutes apart at most); reported as the median over
# rounds with the range, robust to a run hit by a burst of the machine's load.
stats='
function add(k, v) { n[k]++; val[k, n[k]] = v }
function median(a, m,   i, j, t) {
	for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
# per-round ratios of k0 over k into r[], their count returned
function ratios(k0, k, r,   i, m) {
	m = n[k0] < n[k] ? n[k0] : n[k]
	for (i = 1; i <= m; i++) r[i] = val[k0, i] / val[k, i]
	return m
}
function rel(k0, k,   r, m) { m = ratios(k0, k, r); return median(r, m) }
function span(k0, k,   r, m, i, lo, hi) {
	m = ratios(k0, k, r); lo = hi = r[1]
	for (i = 2; i <= m; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
	return sprintf("[%.2f, %.2f]", lo, hi)
}
'
{
	echo "# AMP validation: producer-consumer (dissertation Figure 6.1)"
	echo
	echo "Generated by \`bench/amp/run.sh\` on $(meta date), $(meta cores) cores," \
		"load average $(meta load_end) at the end."
	echo "2 producers; production time = execution time = $((t_us / 1000)) ms;" \
		"$tasks tasks per producer; $runs runs per point, interleaved."
	echo "Load x: the inter-arrival time shortened by x (0% = original load)."
	echo "Real: producers' work really shortened to (1-x)·T, wall time."
	echo "AMP: unmodified program, \`lever causal sweep --arrival-speedup=x·T -n 1" \
		"--fixed-speedup=0 --end-to-end\`, effective runtime."
	echo "Priorities: waiting runs \`${prio_sleep:-none}\`, spinning runs \`${prio_spin:-none}\`" \
		"(real and AMP alike), to shield them from the other users of the machine."
	echo "Relative throughput: per round, time at x=0 / time at x (paired, same round);" \
		"median over the rounds, [min, max] beside it; oracle min(1/(1-x), C/2) (spec §9)."
	echo
	echo "## Scalability (Figures 6.2/6.3)"
	echo
	echo "| C | load x | d (ns) | oracle | real | AMP | abs. diff (pp) |"
	echo "|---|---|---|---|---|---|---|"
	awk "$stats"'
		FNR == 1 { file++ }
		{ k = $1 " " sprintf("%.4f", $2); add(file ":" k, $3); keys[k] = 1 }
		END {
			for (c = 2; c <= 4; c++) {
				worst = 0
				nl = split(levels, L, " ")
				for (i = 1; i <= nl; i++) {
					k = c " " sprintf("%.4f", L[i]); k0 = c " 0.0000"
					o = 1 / (1 - L[i]); if (o > c / 2) o = c / 2
					r = rel("1:" k0, "1:" k); a = rel("2:" k0, "2:" k)
					d = 100 * (a - r); if (d < 0) d = -d; if (d > worst) worst = d
					printf "| %d | %d%% | %d | %.3f | %.3f %s | %.3f %s | %.1f |\n",
						c, L[i] * 100 + 0.5, L[i] * t * 1000 + 0.5, o, r,
						span("1:" k0, "1:" k), a, span("2:" k0, "2:" k), d
				}
				printf "| **%d** | | | | | | **max %.1f** |\n", c, worst
			}
		}' levels="$levels" t=$t_us "$tmp/real" "$tmp/amp"
	echo
	echo "## Consumer line at 0% and 25% load (Figure 6.4)"
	echo
	echo "$fig_consumers consumer that spins for T (CPU work the profiler samples) fed by 2 producers"
	echo "that wait ${fig_produce}T each: balanced like the chapter's 2 + 2, whose two spinning"
	echo "consumers would oversubscribe this machine's 2 vCPUs together with the producers."
	echo "Real: consumer work shortened to (1-s)·T (-C) with the producers at (1-x)·${fig_produce}T."
	echo "Predicted: the unmodified program under \`lever causal --arrival-speedup=x·${fig_produce}T"
	echo "--fixed-line prodcons.c:$run_line --fixed-speedup=100·s --end-to-end\`."
	echo "Each curve is relative to its own load's s = 0 (same-load baseline)."
	echo "Oracle: min(1/(1-x), 1/(1-s)) / min(1/(1-x), 1)."
	echo
	echo "| load x | consumer speedup s | oracle | real | AMP+causal | abs. diff (pp) |"
	echo "|---|---|---|---|---|---|"
	awk "$stats"'
		FNR == 1 { file++ }
		{ add(file ":" sprintf("%.4f %.4f", $1, $2), $3) }
		END {
			ns = split(speedups, S, " ")
			for (xi = 0; xi < 2; xi++) {
				x = xi * 0.25; worst = 0
				for (i = 1; i <= ns; i++) {
					k = sprintf("%.4f %.4f", x, S[i]); k0 = sprintf("%.4f 0.0000", x)
					o = 1 / (1 - S[i]); cap = 1 / (1 - x); if (o > cap) o = cap
					r = rel("1:" k0, "1:" k); a = rel("2:" k0, "2:" k)
					d = 100 * (a - r); if (d < 0) d = -d; if (d > worst) worst = d
					printf "| %d%% | %d%% | %.3f | %.3f %s | %.3f %s | %.1f |\n",
						x * 100, S[i] * 100 + 0.5, o, r, span("1:" k0, "1:" k), a,
						span("2:" k0, "2:" k), d
				}
				printf "| **%d%%** | | | | | **max %.1f** |\n", x * 100, worst
			}
		}' speedups="$speedups" "$tmp/real-causal" "$tmp/amp-causal"
	echo
	echo "## \`lever causal report\` on the C = 3 sweep profile"
	echo
	echo '```'
	"$lever" causal report "$tmp/amp-c3.coz" 2>&1 || true
	echo '```'
	if grep -q "lever:" "$tmp/amp-stderr"; then
		echo
		echo "Runtime messages during the AMP runs (counted):"
		echo
		echo '```'
		grep "lever:" "$tmp/amp-stderr" | sed 's/[0-9][0-9]* ns/N ns/g' | sort | uniq -c | head -20
		echo '```'
	fi
} >"$out"
if [ -z "${AMP_REPORT_ONLY:-}" ]; then
	mkdir -p "$src/bench/results/amp-raw"
	cp "$tmp"/real "$tmp"/real-causal "$tmp"/amp-c2.coz "$tmp"/amp-c3.coz "$tmp"/amp-c4.coz \
		"$tmp"/causal.coz "$tmp"/amp-stderr "$tmp"/meta "$src/bench/results/amp-raw/"
fi
cat "$out"
