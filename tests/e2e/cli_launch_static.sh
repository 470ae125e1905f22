#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 14 point 11: a statically linked program cannot take a preloaded runtime
# (no PT_INTERP: the dynamic loader, which reads LD_PRELOAD, never runs). lever
# causal and lever stabilize must say so and exit non-zero instead of running it
# unprofiled: for a static executable, a static-pie one, one found through PATH,
# and a script whose interpreter is static. A dynamic program still runs.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/prelude.sh"

# stand-in runtimes: this test is about the launcher, not the runtimes
echo 'int lever_stand_in;' >"$tmp/stub.c"
cc -shared -fPIC -o "$tmp/liblever-causal.so" "$tmp/stub.c" || exit 1
cc -shared -fPIC -o "$tmp/liblever-stabilizer.so" "$tmp/stub.c" || exit 1
export LEVER_RUNTIME_DIR=$tmp
printf '#include <stdio.h>\nint main(void) { puts("ran"); return 0; }\n' >"$tmp/prog.c"
cc -static -o "$tmp/static" "$tmp/prog.c" || { echo "no libc.a (libc6-dev)"; exit 1; }
cc -static-pie -o "$tmp/static-pie" "$tmp/prog.c" || exit 1
cc -o "$tmp/dynamic" "$tmp/prog.c" || exit 1
mkdir "$tmp/path" && cp "$tmp/static" "$tmp/path/static-in-path"
printf '#!%s\n' "$tmp/static" >"$tmp/script" && chmod +x "$tmp/script"
cd "$tmp"

refused() { # COMMAND... : exits non-zero, says "statically linked", runs nothing
	local out status
	out=$("$@" 2>err.txt)
	status=$?
	if [ $status -eq 0 ] || ! grep -q 'statically linked' err.txt || [ -n "$out" ]; then
		fail "$* exited $status, printed '$out', said: $(cat err.txt)"
	else
		echo "ok: refused $* ($(head -c 90 err.txt)...)"
	fi
}
for cmd in "causal -o $tmp/p.coz --" "stabilize --heap --"; do
	refused "$lever" $cmd ./static
	refused "$lever" $cmd ./static-pie
	refused env PATH="$tmp/path:$PATH" "$lever" $cmd static-in-path
	refused "$lever" $cmd ./script
	out=$("$lever" $cmd ./dynamic 2>err.txt)
	[ "$out" = ran ] || fail "$cmd ./dynamic did not run: $out $(cat err.txt)"
done

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all static-binary checks passed"
