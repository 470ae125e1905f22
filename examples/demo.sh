#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make demo: causal-profile the paper's Figure 1 program and print the result.
#   examples/demo.sh BUILD_DIR
# Environment: DEMO_ROUNDS (default: the program's, 3000 rounds of ~10 ms);
# DEMO_TRUTH=0 skips measuring the real effect of shortening loop a.
set -euo pipefail

build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
lever=$build/bin/lever
prog=$build/examples/figure1
src=$here/figure1/figure1.c
profile=$build/examples/figure1.coz

for f in "$lever" "$prog"; do
	if [ ! -x "$f" ]; then
		echo "demo: $f is missing; build first (make build)" >&2
		exit 1
	fi
done

line_of() { grep -n "/\* line $1 \*/" "$src" | cut -d: -f1; }
la=$(line_of a)
lb=$(line_of b)
args=()
[ -n "${DEMO_ROUNDS:-}" ] && args=(--rounds "$DEMO_ROUNDS")

cat <<EOF
== lever demo: Figure 1 of the Coz paper ==
Two threads per round: loop a (figure1.c:$la) runs N iterations, loop b
(figure1.c:$lb) 0.95 N; each round waits for both. Optimising a can speed the
program up by at most ~5% (then b is the critical path); optimising b, not at all.
A causal profile should show a's curve rising at once and levelling off at a few
percent, and b's at ~0%. (This needs two idle cores: when other work takes one,
the loops share a core, the round takes a + b, and shortening either loop helps.)
The experiments use line speedups 0, 25, 50, 75 and 100% only (--speedup-step 25),
so that each gets enough of them for a firm number.

\$ lever causal --speedup-step 25 -o $profile -- $prog ${args[*]:-}
EOF
rm -f "$profile"
"$lever" causal --speedup-step 25 -o "$profile" -- "$prog" "${args[@]}"

html=${profile%.coz}.html
# Ranked by impact (the default: Coz's viewer's ranking, the largest mean
# program speedup over 0..x): line a's curve reaches its ceiling at once and
# stays flat, so its slope over 0..100% is small and the paper's slope ranking
# could not tell it from line b.
print_report() {
	cat <<EOF

How to read the report below: "effect" is what the fitted curve predicts if
the line were made 100% faster, with its 95% interval; "levels@25%" means the
curve has levelled off by a 25% line speedup (optimising the line beyond that
buys nothing more). Line a (figure1.c:$la) should come first with a few
percent; line b's interval should hold 0 or stay within a point or two of it.
A "?" and "thin" instead of a number mean too few experiments: run longer.
EOF
	echo
	echo "\$ lever causal report --html $html $profile"
	"$lever" causal report --html "$html" "$profile"
}

[ "${DEMO_TRUTH:-1}" = 0 ] && { print_report; exit 0; }
# The ground truth: really shorten loop a, without lever. Configurations are
# interleaved and repeated, and the median kept, so that a slow spell of the
# machine does not land on one of them.
scales=(1 0.75 0.5 0.25 0)
reps=${DEMO_TRUTH_REPS:-7}
rounds=${DEMO_TRUTH_ROUNDS:-100}
declare -A times
for ((r = 0; r < reps; r++)); do
	for s in "${scales[@]}"; do
		t=$("$prog" --rounds "$rounds" --a-scale "$s" | sed -n 's/.*, \([0-9.]*\) ms\/round/\1/p')
		times[$s]="${times[$s]:-} $t"
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "Ground truth, without lever: loop a really shortened (median of $reps runs of $rounds rounds)"
echo "  loop a        ms/round  program speedup"
base=$(median <<<"${times[1]}")
printf '  as is         %8.2f\n' "$base"
for s in "${scales[@]:1}"; do
	t=$(median <<<"${times[$s]}")
	awk -v s="$s" -v t="$t" -v b="$base" 'BEGIN {
		printf "  %3d%% shorter  %8.2f  %+14.1f%%\n", (1 - s) * 100 + 0.5, t, (1 - t / b) * 100 }'
done

# The report last, so that it is what the screen shows: the table, and where
# the HTML page with a chart per line is.
print_report
