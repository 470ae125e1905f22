#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever annotate record is transparent to a program's own signal handling
# (doc/annotate-record.md "Signals"): the runtime's SIGSEGV/SIGBUS fix-up of
# safe reads and its fatal-signal flush stay out of the program's sight.
# probe_sigsegv queries those actions, installs its own SIGSEGV handler,
# reads it back, faults on purpose and recovers with siglongjmp, blocks
# SIGSEGV and reads its mask back: the same output as bare. Restoring the
# default action and faulting kills it of SIGSEGV, after the runtime wrote
# the record.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for prog in probe_sigsegv probe_sigsegv_sled; do
	"$dir/$prog" >"$tmp/plain"
	grep -q "fault 2: recovered 1, handler runs 3" "$tmp/plain"
	"$lever" annotate record --rate=all -f sum -o "$tmp/$prog" -- "$dir/$prog" \
		>"$tmp/out" 2>"$tmp/err"
	if ! cmp -s "$tmp/plain" "$tmp/out"; then
		echo "FAIL: $prog: the program's output differs under lever annotate record"
		diff "$tmp/plain" "$tmp/out" || true
		exit 1
	fi
	r=$tmp/$prog/record
	check "$prog: well-formed record" 0 "$(well_formed "$r")"
	check "$prog: every call of sum recorded" 9 "$(calls "$r" sum)"
	# sum has features: the safe reads (and their fault fix-up) were in use
	n=$(awk '$1 == "F" { n++ } END { print n + 0 }' "$r")
	[ "$n" -gt 0 ] || { echo "FAIL: $prog: sum has no features"; exit 1; }

	# the default action restored, then a fault: dies of SIGSEGV, record written
	set +e
	"$dir/$prog" die >"$tmp/plain" 2>/dev/null
	want=$?
	"$lever" annotate record --rate=all -f sum -o "$tmp/$prog-die" -- "$dir/$prog" die \
		>"$tmp/out" 2>"$tmp/err"
	got=$?
	set -e
	check "$prog die: status" "$want" "$got"
	check "$prog die: status is SIGSEGV's" 139 "$got"
	cmp "$tmp/plain" "$tmp/out"
	check "$prog die: every call written before dying" 9 "$(calls "$tmp/$prog-die/record" sum)"
done
echo "ok: all"
