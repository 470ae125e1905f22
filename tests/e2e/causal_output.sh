#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The profile writer loses nothing and never writes where it must not
# (issue 14, points 1, 7, 8; doc/formats/profile.md):
# 1. a daemon-like program closes every inherited descriptor (close one by
#    one, close_range, dup2 over them, the bare system call) and opens its own file: its file is
#    byte for byte the native run's, and the profile still gets the
#    experiments (both samplers); and the files lever reads while main runs
#    (the line map's) never show in the program's descriptor table (watch);
# 2. four runs appending to one profile at once: every record names its run,
#    every run has its startup and experiments, the report reads four runs;
# 3. a profile that cannot be written (/dev/full): one line on stderr, exit
#    status 1 for a program that succeeded, the program's own status kept.
set -uo pipefail
build=$(cd "$1" && pwd)
lever=$build/bin/lever
daemon=$build/tests/programs/causal_output/daemon
figure1=$build/examples/figure1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp" || exit 1

# ---- 1. closed and reused descriptors
"$daemon" "$tmp/native.txt" 1000 || fail "the daemon program failed natively"
# the close system call itself bypasses lever's wrappers: only the profile
# writer's own check (same device and inode before each write) is left, and
# perf events closed under the sampler cannot be saved, so the timer sampler
for how in close close_range dup2 syscall; do
	for sampler in timer perf; do
		case $how-$sampler in
		close_range-timer | dup2-timer | syscall-perf) continue ;;
		esac
		rm -f "$tmp/d.coz" "$tmp/lever.txt"
		"$lever" causal --sampler=$sampler --experiment-length 50ms -o "$tmp/d.coz" -- \
			"$daemon" "$tmp/lever.txt" 1000 0 $how 2>"$tmp/err" ||
			fail "$how, $sampler: lever causal on the daemon failed: $(cat "$tmp/err")"
		cmp -s "$tmp/native.txt" "$tmp/lever.txt" ||
			fail "$how, $sampler: the daemon's own file differs from the native run's:" \
				"$(diff "$tmp/native.txt" "$tmp/lever.txt" | head -5)"
		n=$(grep -c '^experiment' "$tmp/d.coz")
		[ "$n" -ge 1 ] || fail "$how, $sampler: no experiment in the profile: $(cat "$tmp/err")"
		grep -q '^startup' "$tmp/d.coz" || fail "$how, $sampler: no startup record"
		echo "daemon ($how, $sampler sampler): own file identical, $n experiments in the profile"
	done
done

# The line map is read on another thread while main runs; before it had a
# descriptor table of its own, a daemon that closed everything at start could
# get the number of the file being read and lose its own file to lever's close
# (write: EBADF). The program watches its table for lever's descriptor on its
# executable; one run sees the read in about one case in five when it is not
# private, so 15 runs miss it with a chance of about 3%, and never fail when
# it is.
for i in $(seq 15); do
	rm -f "$tmp/d.coz" "$tmp/lever.txt"
	"$lever" causal --sampler=perf --experiment-length 50ms -o "$tmp/d.coz" -- \
		"$daemon" "$tmp/lever.txt" 100 0 watch 2>"$tmp/err" ||
		fail "watch, run $i: lever causal on the daemon failed: $(cat "$tmp/err")"
	head -100 "$tmp/native.txt" | cmp -s - "$tmp/lever.txt" ||
		fail "watch, run $i: the daemon's own file differs from the native run's"
done
echo "daemon (watch, 15 runs): the line map's files never showed in the program's descriptor table"

# ---- 2. four concurrent runs appending to one profile
pids=()
for i in 1 2 3 4; do
	"$lever" causal --experiment-length 50ms --cooloff 5ms -o "$tmp/c.coz" -- \
		"$figure1" --rounds 100 >/dev/null 2>"$tmp/err$i" &
	pids+=($!)
done
for i in 0 1 2 3; do
	wait "${pids[$i]}" || fail "concurrent run $((i + 1)) failed: $(cat "$tmp/err$((i + 1))")"
done
# whole records only, each tagged with its run
bad=$(grep -cvP '^[a-z-]+(\t[a-z-]+=[^\t]*)+\trun=[0-9]+-[0-9]+$' "$tmp/c.coz")
[ "$bad" = 0 ] || fail "$bad records are not whole or carry no run tag: $(grep -vP '\trun=' "$tmp/c.coz" | head -3)"
runs=$(grep '^startup' "$tmp/c.coz" | grep -oP 'run=\S+' | sort -u)
[ "$(echo "$runs" | wc -l)" = 4 ] || fail "expected 4 run tags on startup records, got: $runs"
for r in $runs; do
	e=$(grep -P "^experiment\t.*\t$r\$" "$tmp/c.coz" | wc -l)
	p=$(grep -P "^throughput-point\t.*\t$r\$" "$tmp/c.coz" | wc -l)
	[ "$e" -ge 1 ] || fail "run $r has no experiment"
	[ "$p" -ge "$e" ] || fail "run $r: $e experiments but $p point records"
done
"$lever" causal report --min-speedups 1 "$tmp/c.coz" >"$tmp/report" 2>"$tmp/rerr" ||
	fail "report on the concurrent profile failed: $(cat "$tmp/rerr")"
grep -q 'malformed\|no experiment before' "$tmp/rerr" && fail "report warned: $(cat "$tmp/rerr")"
grep -q '^lever causal report: 4 runs' "$tmp/report" ||
	fail "report does not see 4 runs: $(head -2 "$tmp/report")"
echo "concurrent: 4 runs, each with its own experiments"

# ---- 3. a profile that cannot be written
"$lever" causal --sampler=timer -o /dev/full -- "$daemon" "$tmp/full.txt" 300 2>"$tmp/err"
status=$?
[ "$status" = 1 ] || fail "-o /dev/full: exit status $status, expected 1"
[ "$(grep -c 'cannot write the profile /dev/full: No space left on device' "$tmp/err")" = 1 ] ||
	fail "-o /dev/full: no (or more than one) clear line on stderr: $(cat "$tmp/err")"
"$lever" causal --sampler=timer -o /dev/full -- "$daemon" "$tmp/full.txt" 300 3 2>/dev/null
status=$?
[ "$status" = 3 ] || fail "-o /dev/full: the program's own status 3 became $status"
echo "unwritable profile: reported, exit status 1 (the program's own 3 kept)"
echo "causal_output: ok"
