#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever's command line: help, version, dispatch, and usage errors (exit 2 with a message).
set -uo pipefail
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd) || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"
. "$lib/expect.sh" || exit 1


expect 0 '^lever [0-9]+\.[0-9]+' "$lever" --version
expect 0 'causal' "$lever" --help
expect 0 'causal' "$lever" help
expect 0 'usage: lever causal' "$lever" help causal
expect 0 'usage: lever causal' "$lever" causal --help
expect 0 'usage: lever causal' "$lever" causal -h
expect 0 'usage: lever causal report' "$lever" causal report --help
expect 0 'usage: lever causal sweep' "$lever" causal sweep --help
expect 0 'causal sweep' "$lever" causal --help
expect 2 'usage: lever' "$lever"
expect 2 "unknown command 'frobnicate'" "$lever" frobnicate
expect 2 "unknown command 'frobnicate'" "$lever" help frobnicate
expect 2 "unknown option '--frob'" "$lever" --frob

# every option is documented in --help
for opt in --output --binary-scope --source-scope --progress --sampled-progress --end-to-end \
	--fixed-line --fixed-speedup --sampler --verbose --follow-children --zero-probability \
	--speedup-step --experiment-length --cooloff --min-visits --sample-period --batch --seed \
	--arrival-speedup; do
	expect 0 "$opt" "$lever" causal --help
done

# usage errors of lever causal
c() { expect 2 "$1" "$lever" causal "${@:2}"; }
c 'no program given' 
c 'no program given' --
c 'no program given' -o x.coz --
c "unknown option '--frob'" --frob -- true
c "unknown option '-x'" -x -- true
c "needs a value" -o
c "needs a value" --fixed-line
c "is not FILE:LINE" --fixed-line main.c -- true
c "is not FILE:LINE" --fixed-line main.c:0 -- true
c "is not FILE:LINE" --progress :12 -- true
c "is not FILE:LINE" --sampled-progress main.c:x -- true
c "not a percentage 0..100" --fixed-speedup 101 -- true
c "not a percentage 0..100" --fixed-speedup -1 -- true
c "not a percentage 0..100" --fixed-speedup 5.5 -- true
c "not perf, timer or none" --sampler=hw -- true
c "not a probability" --zero-probability 1.5 -- true
c "not a probability" --zero-probability x -- true
c "percentage 1..100" --speedup-step 0 -- true
c "milliseconds" --experiment-length 0 -- true
c "milliseconds" --experiment-length 1.5ms -- true
c "milliseconds" --experiment-length 10parsecs -- true
c "milliseconds" --cooloff -3 -- true
c "microseconds" --sample-period 1us -- true
c "count 1..1000000000" --min-visits 0 -- true
c "count 1..1000" --batch 0 -- true
c "unsigned 64-bit" --seed 18446744073709551616 -- true
c "pattern must be non-empty" -b '' -- true
c "pattern must be non-empty" --source-scope '' -- true
c "empty file name" -o '' -- true
c "not a time from 0 to 1h" --arrival-speedup 1x -- true
c "not a time from 0 to 1h" --arrival-speedup -5 -- true
c "not a time from 0 to 1h" --arrival-speedup 2h -- true
s() { expect 2 "$1" "$lever" causal sweep "${@:2}"; }
s "-n RUNS is required" --arrival-speedup=0,1ms -- true
s "arrival-speedup=LIST is required" -n 2 -- true
s "is not a time" --arrival-speedup=0,1parsec -n 2 -- true
s "empty list" --arrival-speedup=, -n 2 -- true
s "not a count 1..1000" --arrival-speedup=0 -n 0 -- true
s "no program given" --arrival-speedup=0 -n 1
s "no program given" --arrival-speedup=0 -n 1 --
expect 2 "is not a count" "$lever" causal report --top x
expect 2 "is not 1..101" "$lever" causal report --min-speedups 0
expect 2 "unknown option" "$lever" causal report --frob

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
