#!/usr/bin/env bash
# lever annotate record: exits by return-address replacement stay correct
# through longjmp and siglongjmp, C++ exceptions (thrown through probed
# frames with cleanups, caught and rethrown), signal handlers that run a
# probed function (synchronous and from an interval timer; on an alternate
# stack above the thread's stack), threads (one
# leaving by pthread_exit inside a probed call), fork and exec. Each with the
# sled and the live probes; the program's output never changes.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib/annotate_record.sh"
lever=$build/bin/lever dir=$build/tests/programs/annotate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

record() { # OUT PROGRAM ARGS... (probes: -f options in $FUNCS)
	local out=$1
	shift
	# shellcheck disable=SC2086
	"$lever" annotate record --rate=all $FUNCS -o "$tmp/$out" -- "$@" >"$tmp/$out.out" 2>"$tmp/$out.err"
	well=$(well_formed "$tmp/$out/record")
	check "$out: well-formed record" 0 "$well"
	check "$out: ids unique" 0 "$(unique_ids "$tmp/$out/record")"
}

for v in "" _sled; do
	kind=live
	[ -n "$v" ] && kind=sled
	# -- longjmp and siglongjmp
	FUNCS="-f catcher -f thrower -f sigcatcher -f raiser -f on_usr1 -f main"
	"$dir/probe_longjmp$v" 20 >"$tmp/plain"
	record "longjmp$v" "$dir/probe_longjmp$v" 20
	r=$tmp/longjmp$v/record
	cmp "$tmp/plain" "$tmp/longjmp$v.out"
	check "longjmp$v: kind" $kind "$(probe_kind "$r" catcher)"
	check "longjmp$v: catcher recorded" 20 "$(calls "$r" catcher)"
	check "longjmp$v: sigcatcher recorded" 20 "$(calls "$r" sigcatcher)"
	check "longjmp$v: thrower never returns" 0 "$(calls "$r" thrower)"
	check "longjmp$v: thrower calls left by longjmp" 80 "$(probe_stat "$r" thrower unwound)"
	check "longjmp$v: raiser calls left by siglongjmp" 60 "$(probe_stat "$r" raiser unwound)"
	check "longjmp$v: catcher's parent is main" 0 "$(parents_within "$r" catcher main)"
	check "longjmp$v: sigcatcher's parent is main" 0 "$(parents_within "$r" sigcatcher main)"
	check "longjmp$v: main recorded" 1 "$(calls "$r" main)"

	# -- C++ exceptions
	FUNCS="-f outer -f guard -f deep -f rethrower -f main"
	"$dir/probe_exceptions$v" 20 >"$tmp/plain"
	record "exc$v" "$dir/probe_exceptions$v" 20
	r=$tmp/exc$v/record
	cmp "$tmp/plain" "$tmp/exc$v.out"
	check "exceptions$v: outer recorded" 20 "$(calls "$r" "outer(int)")"
	check "exceptions$v: guard (catches) recorded" 20 "$(calls "$r" "guard(int)")"
	check "exceptions$v: guard's parent is outer" 0 "$(parents_within "$r" "guard(int)" "outer(int)")"
	check "exceptions$v: rethrower (rethrows) not recorded" 0 "$(calls "$r" "rethrower(int)")"
	check "exceptions$v: deep calls unwound (3 per guard, 2 per rethrower)" 100 \
		"$(probe_stat "$r" "deep(int)" unwound)"
	check "exceptions$v: main recorded" 1 "$(calls "$r" main)"
	# by its mangled and its demangled names too
	FUNCS="-f _Z5guardi -f outer(int)"
	record "excnames$v" "$dir/probe_exceptions$v" 3
	check "exceptions$v: guard by mangled name" 3 "$(calls "$tmp/excnames$v/record" "guard(int)")"
	check "exceptions$v: outer by signature" 3 "$(calls "$tmp/excnames$v/record" "outer(int)")"

	# -- signals: every run of in_handler is recorded, or counted as landing in a probe
	FUNCS="-f in_handler -f work"
	record "sig$v" "$dir/probe_signals$v" 20000
	r=$tmp/sig$v/record
	handled=$(awk '{ print $6 }' "$tmp/sig$v.out")
	check "signals$v: sum unchanged" "$("$dir/probe_signals$v" 20000 | awk '{ print $2 }')" \
		"$(awk '{ print $2 }' "$tmp/sig$v.out")"
	check "signals$v: in_handler recorded + skipped = run" "$handled" \
		$(($(calls "$r" in_handler) + $(probe_stat "$r" in_handler in-signal)))
	check "signals$v: work recorded" 20000 "$(calls "$r" work)"
	# (or in_handler itself: a second signal landing in the first one's handler)
	check "signals$v: in_handler's parent is work, in_handler or none" 0 \
		"$(parents_within "$r" in_handler work in_handler 0)"

	# -- a handler on an alternate stack above the thread's stack, calls in progress below
	FUNCS="-f outer -f work -f in_handler"
	"$dir/probe_altstack$v" >"$tmp/plain"
	record "alt$v" "$dir/probe_altstack$v"
	r=$tmp/alt$v/record
	cmp "$tmp/plain" "$tmp/alt$v.out"
	grep -q "alt stack above" "$tmp/plain"
	check "altstack$v: work recorded" 100 "$(calls "$r" work)"
	check "altstack$v: outer recorded" 1 "$(calls "$r" outer)"
	check "altstack$v: in_handler recorded" 10 "$(calls "$r" in_handler)"
	check "altstack$v: in_handler's parent is work" 0 "$(parents_within "$r" in_handler work)"

	# -- threads, pthread_exit, fork, exec
	FUNCS="-f work -f quit_now -f thread_main"
	"$dir/probe_threads$v" >"$tmp/plain"
	record "thr$v" "$dir/probe_threads$v"
	r=$tmp/thr$v/record
	cmp "$tmp/plain" "$tmp/thr$v.out"
	check "threads$v: work in threads, forked and exec'd child" $((4001 + 5 + 7)) "$(calls "$r" work)"
	check "threads$v: thread_main returned 3 times" 3 "$(calls "$r" thread_main)"
	check "threads$v: quit_now left by pthread_exit" 1 "$(probe_stat "$r" quit_now unwound)"
	# the 1001 calls of the thread that left by pthread_exit name a parent
	# (its thread_main) that never returned, so is not in the record
	check "threads$v: work's parent is a recorded thread_main, but for the exited thread" 1001 \
		"$(parents_within "$r" work thread_main 0)"
done
echo "ok: all"
