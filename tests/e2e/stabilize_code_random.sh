#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Code copies under lever stabilize --code are placed at random in the
# cache-index bits 6-17 (the Stabilizer paper's §3.2 criterion, which
# stabilize_heap_random checks for heap objects): code_bits, built with
# lever cc, calls 256 functions round after round while the runtime
# re-randomizes every 2 ms; the first COPIES addresses of its code log go
# through the NIST frequency, block-frequency, runs and cumulative-sums tests
# (addr_bits), for seeds 1-3. The runs are made without ASLR (setarch -R) and
# code_bits's functions all have one size, so a seed gives (nearly) the same
# addresses and the p-values hardly move between runs: only a copy whose first
# random place collides with a live copy lands elsewhere, and which copies are
# live depends on timing (checked below: >= 90% of the addresses repeat).
# Controls that must fail, or the test could not: the original addresses of
# the same functions in the same order (the program without code
# randomization), and addresses at a fixed stride.
set -uo pipefail
export LC_ALL=C # join and sort must agree on the order
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
addr_bits=$build/tests/programs/stabilizer/addr_bits
copies=${COPIES:-20000}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/bin/lever-cc" -O2 "$src/tests/programs/stabilizer/code_bits.c" -o "$tmp/code_bits" ||
	{ echo "FAIL: lever cc cannot build code_bits"; exit 1; }
norand=(setarch "$(uname -m)" -R)
"${norand[@]}" true 2>/dev/null || { echo "note: setarch -R is not allowed here; runs keep ASLR"; norand=(); }

# collect SEED: the copy lines of one run in $tmp/copies-SEED
collect() {
	local seed=$1 log=$tmp/log-$1
	rm -f "$log"
	if ! LEVER_STABILIZE_CODE_LOG=$log "${norand[@]}" "$lever" stabilize --code --interval=2ms \
		--seed="$seed" -- "$tmp/code_bits" "$copies" >/dev/null; then
		fail "seed $seed: code_bits failed under lever stabilize --code"
		return 1
	fi
	# (awk, not grep | head: under pipefail head's early exit fails grep)
	awk -v n="$copies" '!/^#/ { print; if (++c == n) exit }' "$log" >"$tmp/copies-$seed"
	if [ "$(wc -l <"$tmp/copies-$seed")" -ne "$copies" ]; then
		fail "seed $seed: fewer than $copies copies in the code log"
		return 1
	fi
}

for seed in 1 2 3; do
	collect $seed || continue
	periods=$(cut -d' ' -f1 "$tmp/copies-$seed" | sort -u | wc -l)
	[ "$periods" -ge 10 ] || fail "seed $seed: only $periods re-randomization periods"
	echo "seed $seed: $copies copies over $periods periods"
	cut -d' ' -f2 "$tmp/copies-$seed" | "$addr_bits" "$copies"
	[ $? -eq 0 ] || fail "seed $seed: code copy addresses are not random in bits 6-17"
done

# control 1: each copy at its function's original address (nm), same order
if [ -s "$tmp/copies-1" ]; then
	nm "$tmp/code_bits" | awk '$2 ~ /^[tT]$/ {print $3, $1}' | sort -k1,1 >"$tmp/original"
	awk '{print $4, NR}' "$tmp/copies-1" | sort -k1,1 | join - "$tmp/original" |
		sort -k2,2n | awk '{print $3}' >"$tmp/original-order"
	[ "$(wc -l <"$tmp/original-order")" -eq "$copies" ] ||
		fail "control: $(wc -l <"$tmp/original-order") of $copies copies have an original address"
	"$addr_bits" "$copies" <"$tmp/original-order"
	[ $? -eq 1 ] || fail "control: the original function addresses pass the tests"
	# control 2: the same number of addresses at a fixed 48-byte stride
	awk -v n="$copies" 'BEGIN { for (i = 0; i < n; i++) printf "%x\n", 4194304 + 48 * i }' |
		"$addr_bits" "$copies"
	[ $? -eq 1 ] || fail "control: addresses at a fixed stride pass the tests"
fi

# a seed (nearly) reproduces the placement without ASLR, another seed gives another one
if [ ${#norand[@]} -gt 0 ] && [ -s "$tmp/copies-1" ]; then
	mv "$tmp/copies-1" "$tmp/first-1"
	collect 1 && {
		same=$(paste -d' ' <(cut -d' ' -f2 "$tmp/first-1") <(cut -d' ' -f2 "$tmp/copies-1") |
			awk '$1 == $2' | wc -l)
		other=$(paste -d' ' <(cut -d' ' -f2 "$tmp/first-1") <(cut -d' ' -f2 "$tmp/copies-2") |
			awk '$1 == $2' | wc -l)
		echo "seed 1 twice: $same of $copies addresses equal; seeds 1 and 2: $other"
		[ "$same" -ge $((copies * 9 / 10)) ] || fail "seed 1 gave two placements ($same equal)"
		[ "$other" -le $((copies / 100)) ] || fail "seeds 1 and 2 gave the same placement"
	}
fi

[ $fails -eq 0 ] && echo "stabilize_code_random: all checks pass"
exit $((fails > 0))
