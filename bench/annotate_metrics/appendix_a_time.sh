#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The seed's Appendix A on the time metric, as the seed ran it (usleep costs,
# t = 0..300 step 2, 151 calls each), for the sixteen functions whose sleeps
# stay short (the other four sleep up to a second a call): record, derive,
# keep the annotations with the machine's load. Timing-dependent, so a
# benchmark, not a test (tests/e2e/annotate_appendix_a.sh checks the same
# functions exactly on mem). usage: appendix_a_time.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: appendix_a_time.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=$here/results
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
q=test_linear_int,test_linear_int_pointer,test_linear_float,test_global_feature
q=$q,test_linear_charptr,test_linear_structs,test_linear_classes,test_linear_fitinregister
q=$q,test_linear_vector,test_derived_class,test_quad_int,test_interaction_linear_quad
q=$q,test_linear_branches_one_f,test_grand_derived_class2,test_linear_main_component
q=$q,test_random_clustering
fargs=()
for f in ${q//,/ }; do fargs+=(-f "$f"); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
	echo "# uptime before: $(uptime)"
	"$build/bin/lever" annotate record "${fargs[@]}" --metrics time --rate all -o "$tmp" -- \
		"$build/tests/programs/annotate/appendix_a" --cost=sleep --only="$q" 2>&1
	echo "# uptime after: $(uptime)"
	"$build/bin/lever" annotate derive --metric time --cv 10 "$tmp/record"
} >"$out/appendix_a_time_$stamp.txt"
cp "$tmp/record" "$out/appendix_a_time_$stamp.rec"
cat "$out/appendix_a_time_$stamp.txt"
