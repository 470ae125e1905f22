#!/usr/bin/env bash
# lever annotate record: a program that dies leaves a readable record. Lines
# buffered when it aborts or segfaults are written by the runtime's handler
# (the program still dies of its signal); SIGKILL loses what was buffered
# (at most two record buffers per thread), never the record's shape.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for how in abort segv; do
	set +e
	"$lever" annotate record --rate=all -f work -o "$tmp/$how" -- "$dir/probe_crash" $how 1000 \
		>/dev/null 2>"$tmp/$how.err"
	rc=$?
	set -e
	[ "$how" = abort ] && want=134 || want=139
	check "$how: the program's status" $want $rc
	check "$how: well-formed record" 0 "$(well_formed "$tmp/$how/record")"
	check "$how: every call written before dying" 1000 "$(calls "$tmp/$how/record" work)"
	grep -q "the record holds what was written before" "$tmp/$how.err"
done
set +e
"$lever" annotate record --rate=all -f work -o "$tmp/kill" -- "$dir/probe_crash" kill 1000 \
	>/dev/null 2>&1
check "kill: the program's status" 137 $?
set -e
check "kill: well-formed record" 0 "$(well_formed "$tmp/kill/record")"
n=$(calls "$tmp/kill/record" work)
[ "$n" -le 1000 ] || { echo "FAIL: $n calls"; exit 1; }
# many more calls than the record buffers hold (2 x 32 KiB per thread, 1024
# calls each, time only): the buffers handed to the writer thread are
# written while the program runs, so a SIGKILL loses at most the two
# buffers of the thread; an abort loses nothing (the writer is paused, it
# finishes the buffer it is writing, the handler writes the rest)
for w in 1 0; do
	set +e
	LEVER_ANNOTATE_WRITER=$w "$lever" annotate record --rate=all -f work -o "$tmp/kill$w" -- \
		"$dir/probe_crash" kill 100000 >/dev/null 2>&1
	check "kill 100000 (writer $w): the program's status" 137 $?
	LEVER_ANNOTATE_WRITER=$w "$lever" annotate record --rate=all -f work -o "$tmp/abort$w" -- \
		"$dir/probe_crash" abort 100000 >/dev/null 2>&1
	check "abort 100000 (writer $w): the program's status" 134 $?
	set -e
	check "kill 100000 (writer $w): well-formed record" 0 "$(well_formed "$tmp/kill$w/record")"
	n=$(calls "$tmp/kill$w/record" work)
	[ "$n" -le 100000 ] && [ "$n" -ge $((100000 - 2048)) ] ||
		{ echo "FAIL: kill 100000 (writer $w): $n calls, expected 97952-100000"; exit 1; }
	echo "ok: kill 100000 (writer $w): $n calls in the record"
	check "abort 100000 (writer $w): well-formed record" 0 "$(well_formed "$tmp/abort$w/record")"
	check "abort 100000 (writer $w): every call" 100000 "$(calls "$tmp/abort$w/record" work)"
	check "abort 100000 (writer $w): ids unique" 0 \
		"$(awk '$1 == "C" { if (seen[$3]++) d++ } END { print d + 0 }' "$tmp/abort$w/record")"
done
# a program that exits normally with the same calls: all of them
"$lever" annotate record --rate=all -f work -o "$tmp/ok" -- "$dir/probe_crash" exit 1000 >/dev/null 2>&1
check "normal exit: every call" 1000 "$(calls "$tmp/ok/record" work)"
check "normal exit: recorded count" 1000 "$(probe_stat "$tmp/ok/record" work recorded)"
echo "ok: all"
