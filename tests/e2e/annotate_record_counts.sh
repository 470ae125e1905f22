#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever annotate record's counts (doc/annotate-record.md "Sampling"): with a
# reservoir that sees many more calls than it holds, "calls recorded" (the
# printed line and `# probe ... recorded=`) is the number of C lines in the
# record, not the number of calls that were once sampled and later
# replaced; those are counted apart (`# sampled`, "(S sampled)").
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 200000 calls, 10 slots, one period for the whole run (written at exit):
# about 10 * ln(20000) ~ 100 calls are sampled, exactly 10 kept.
"$lever" annotate record --rate=10/3600s -f empty -o "$tmp/r" -- "$dir/probe_loop" 200000 \
	>/dev/null 2>"$tmp/err"
r=$tmp/r/record
check "well-formed record" 0 "$(well_formed "$r")"
check "C lines: one per slot" 10 "$(calls "$r" empty)"
check "# probe recorded= is the C lines" 10 "$(probe_stat "$r" empty recorded)"
check "# probe calls= is every call" 200000 "$(probe_stat "$r" empty calls)"
sampled=$(awk '$1 == "#" && $2 == "sampled" { sub(/sampled=/, "", $5); t += $5 } END { print t + 0 }' "$r")
# P(no replacement in 200000 calls) = prod (1 - 10/k) < 1e-40
[ "$sampled" -gt 10 ] || { echo "FAIL: $sampled sampled, expected more than 10"; exit 1; }
echo "ok: sampled ($sampled)"
line=$(grep 'calls recorded of' "$tmp/err")
check "printed line" "lever annotate record: $r: 10 calls recorded of 200000 ($sampled sampled)" \
	"$line"

# every call kept: the three counts agree
"$lever" annotate record --rate=all -f empty -o "$tmp/a" -- "$dir/probe_loop" 5000 \
	>/dev/null 2>"$tmp/err"
check "all: C lines" 5000 "$(calls "$tmp/a/record" empty)"
check "all: printed line" "lever annotate record: $tmp/a/record: 5000 calls recorded of 5000 (5000 sampled)" \
	"$(grep 'calls recorded of' "$tmp/err")"
# every call kept, five threads at once, each filling many record buffers
# (handed to the writer thread, or written by the thread when the writer is
# behind, or without a writer): every call exactly once, per thread too
# "1pin": all on one CPU, so that the SCHED_IDLE writer falls behind and
# the threads write their older buffers themselves
for w in 1 0 1pin; do
	pin=()
	[ "$w" = 1pin ] && command -v taskset >/dev/null && pin=(taskset -c 0)
	LEVER_ANNOTATE_WRITER=${w%pin} "${pin[@]}" "$lever" annotate record --rate=all -f work \
		-o "$tmp/m$w" -- "$dir/probe_threads" many 60000 >/dev/null 2>"$tmp/err"
	r=$tmp/m$w/record
	check "threads (writer $w): well-formed record" 0 "$(well_formed "$r")"
	check "threads (writer $w): C lines" 300000 "$(calls "$r" work)"
	check "threads (writer $w): # probe calls=" 300000 "$(probe_stat "$r" work calls)"
	check "threads (writer $w): # probe recorded=" 300000 "$(probe_stat "$r" work recorded)"
	check "threads (writer $w): ids unique" 0 \
		"$(awk '$1 == "C" { if (seen[$3]++) d++ } END { print d + 0 }' "$r")"
	# a thread's lines in the order its calls ended (ids as strings: awk's
	# doubles would round the low digits), however the buffers were written
	check "threads (writer $w): each thread's lines in call order" 0 \
		"$(awk '$1 == "C" { s = int($3 / 4294967296) % 65536; id = $3 ""
			if ((s in last) && (length(id) < length(last[s]) ||
				(length(id) == length(last[s]) && id "" <= last[s] ""))) bad++
			last[s] = id } END { print bad + 0 }' "$r")"
	# the thread slot is bits 32-47 of an id: 60000 calls on each of five threads
	check "threads (writer $w): calls per thread" "60000 60000 60000 60000 60000" \
		"$(awk '$1 == "C" { n[int($3 / 4294967296) % 65536]++ }
			END { for (s in n) print n[s] }' "$r" | sort -n | xargs)"
done

# uprobes (where the kernel has them): the same counts, from the reader thread
if [ -e /sys/bus/event_source/devices/uprobe/type ]; then
	"$lever" annotate record --rate=all --probe=uprobe -f empty -o "$tmp/u" -- \
		"$dir/probe_loop" 2000 >/dev/null 2>"$tmp/err"
	if [ "$(probe_kind "$tmp/u/record" empty)" != uprobe ]; then
		echo "ok: uprobes not available here ($(grep -m1 uprobe "$tmp/err" || true)), skipped"
	else
		n=$(calls "$tmp/u/record" empty)
		check "uprobe: C lines" 2000 "$n"
		check "uprobe: # probe recorded=" "$n" "$(probe_stat "$tmp/u/record" empty recorded)"
	fi
fi
echo "ok: all"
