#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever stats and lever compare on numbers at the edges (issue 14, point 13):
# huge and subnormal values printed with their exponent (not 47 truncated
# digits, not 0.000), Shapiro-Wilk never NaN, zero or negative times refused
# with the file and the value, and with --unit none no "-250% slower" and no
# interval beside its estimate.
set -uo pipefail
build=$(cd "$1" && pwd)
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
. "$lib/expect.sh" || exit 1

# no output of any check may hold a NaN
no_nan() {
	if grep -qiE -- '-?nan' "$tmp/out"; then
		echo "FAIL: NaN in the output of the last command"
		fails=$((fails + 1))
	fi
}

printf '%s\n' 1e60 2e60 1.5e60 1.2e60 >big.txt
expect 0 'mean = 1\.425e\+60 s, sd = 4\.349e\+59 s' "$lever" stats big.txt
no_nan
printf '%s\n' 1e-310 2e-310 3e-310 1.5e-310 2.5e-310 >tiny.txt
expect 0 'mean = 2e-301 ns, sd = 7\.906e-302 ns' "$lever" stats tiny.txt
no_nan
expect 0 'consistent with normal \(Shapiro-Wilk W = 0\.9868, p = 0\.967\)' "$lever" stats tiny.txt
expect 0 'consistent with normal \(Shapiro-Wilk W = 0\.9868, p = 0\.967\)' \
	"$lever" stats --unit none tiny.txt

printf '%s\n' -1 -1.1 -0.9 -1.05 >neg.txt
printf '%s\n' 0.4 0.41 0.39 0.42 >pos.txt
printf '%s\n' 0 0 0 1 >zeros.txt
expect 1 'neg\.txt: value 1 is -1: a time must be positive' "$lever" stats neg.txt
expect 1 'zeros\.txt: value 1 is 0: a time must be positive' "$lever" compare --samples zeros.txt zeros.txt
expect 1 'neg\.txt: value 1 is -1: a time must be positive' "$lever" compare --samples pos.txt neg.txt
printf 'benchmark,config,time\na,x,1\na,x,2\na,y,-1\na,y,2\n' >suite.csv
expect 1 'suite\.csv: value 3 is -1: a time must be positive' "$lever" compare --suite suite.csv

# plain numbers: the tests still run, the speedup is undefined rather than nonsense
expect 0 'speedup: undefined \(the values must be positive\)' \
	"$lever" compare --unit none --samples pos.txt neg.txt
if grep -q 'slower\|faster' "$tmp/out"; then
	echo "FAIL: a speedup of negative numbers"
	fails=$((fails + 1))
fi
expect 0 'the speedup is undefined' "$lever" compare --unit none --samples zeros.txt zeros.txt
expect 0 '"estimate": null' "$lever" compare --unit none --json --samples zeros.txt zeros.txt
no_nan

[ "$fails" = 0 ] && echo "all checks passed" || echo "$fails check(s) failed"
[ "$fails" = 0 ]
