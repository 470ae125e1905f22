#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make demo: causal-profile the paper's Figure 1 program and print the result.
#   examples/demo.sh BUILD_DIR
# Environment: DEMO_ROUNDS (default: the program's, 3000 rounds of ~10 ms).
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
