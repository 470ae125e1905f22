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
A causal profile should show a's curve rising to ~5% and levelling off, b's at ~0%.

\$ lever causal -o $profile -- $prog ${args[*]:-}
EOF
rm -f "$profile"
"$lever" causal -o "$profile" -- "$prog" "${args[@]}"

echo
echo "\$ lever causal report $profile"
"$lever" causal report "$profile"

[ "${DEMO_TRUTH:-1}" = 0 ] && exit 0
# The ground truth: really shorten loop a, without lever (best of 2 runs each).
ms_per_round() {
	local best="" t
	for _ in 1 2; do
		t=$("$prog" --rounds "${DEMO_TRUTH_ROUNDS:-250}" --a-scale "$1" | sed -n 's/.*, \([0-9.]*\) ms\/round/\1/p')
		best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}
echo
echo "Ground truth, without lever: loop a really shortened (best of 2 runs each)"
echo "  loop a        ms/round  program speedup"
base=$(ms_per_round 1)
printf '  as is         %8.2f\n' "$base"
for s in 0.95 0.75 0.5 0; do
	t=$(ms_per_round "$s")
	awk -v s="$s" -v t="$t" -v b="$base" 'BEGIN {
		printf "  %3d%% shorter  %8.2f  %+14.1f%%\n", (1 - s) * 100 + 0.5, t, (1 - t / b) * 100 }'
done
