#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever bench loses nothing (issue 14, point 10): a failing --cleanup keeps
# the measurement; SIGINT stops the run going on (no process left behind)
# and still prints and exports the runs done; --timeout stops a run that
# hangs; an unwritable --export-json is found before any run; and a write
# error on standard output is reported (bench, compare, stats). Behaviour
# only: the one time bound (a run hanging 61 s must not be waited for) is
# far from anything a loaded machine takes.
set -uo pipefail
build=$(cd "$1" && pwd)
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib
lever=$build/bin/lever
tmp=$(mktemp -d)
cd "$tmp" || exit 1
fails=0
. "$lib/expect.sh" || exit 1
hang="sleep 61.$$" # unique to this test, to look for leftovers
cleanup() {
	pkill -f "$hang" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A program whose first 3 runs are quick and whose 4th hangs; count has a line per run.
cat >prog <<EOS
#!/bin/sh
n=\$(wc -l < count 2>/dev/null || echo 0)
echo run >> count
if [ "\$n" -ge 3 ]; then exec $hang; fi
EOS
chmod +x prog

runs_in() { /usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$1"; }
no_leftover() {
	if pgrep -f "$hang" >/dev/null; then
		echo "FAIL: $1: the hanging run is still running"
		fails=$((fails + 1))
		pkill -f "$hang"
	else
		echo "ok: $1: no run left behind"
	fi
}

# --cleanup fails: the measurement is printed and exported, and the exit status says 1
expect 1 "the cleanup command 'false' failed" \
	"$lever" bench -n 3 --no-progress -c false --export-json c.json -- true
check "the measurement is printed although the cleanup failed" grep -q 'Range (min … max):.* 3 runs' "$tmp/out"
check "and exported" test "$(runs_in c.json)" = 3

# SIGINT during the 4th run: exit 130, the 3 runs reported and exported, the run stopped
# (set -m: the job gets SIGINT's default disposition, as at a terminal, not
# the SIG_IGN a non-interactive shell gives background jobs)
rm -f count
set -m
"$lever" bench -n 10 --no-progress --export-json i.json -- ./prog >i.out 2>i.err &
pid=$!
set +m
for _ in $(seq 600); do
	[ "$(wc -l <count 2>/dev/null || echo 0)" -ge 4 ] && pgrep -f "$hang" >/dev/null && break
	sleep 0.1
done
kill -INT "$pid"
for _ in $(seq 300); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	echo "FAIL: lever bench still runs 30 s after SIGINT"
	fails=$((fails + 1))
	kill -KILL "$pid"
fi
wait "$pid"
status=$?
check "SIGINT: exit status 130 (got $status)" test "$status" = 130
check "SIGINT: the runs done are printed" grep -q 'Range (min … max):.* 3 runs' i.out
check "SIGINT: and exported" test "$(runs_in i.json)" = 3
check "SIGINT: says so" grep -q 'stopped by SIGINT' i.err
no_leftover "SIGINT"

# --timeout: the hanging run is stopped, the 3 runs before it reported, exit 1
rm -f count
start=$(date +%s)
expect 1 "'./prog' ran longer than --timeout 1.000 s and was stopped" \
	"$lever" bench -n 10 --no-progress --timeout 1s -- ./prog
check "--timeout: the runs done are printed" grep -q 'Range (min … max):.* 3 runs' "$tmp/out"
check "--timeout: lever did not wait for the 61 s run" test $(($(date +%s) - start)) -lt 50
no_leftover "--timeout"
expect 2 "--timeout: 'soon' is not" "$lever" bench --timeout soon -- true

# an export that cannot be written is found before the first run
rm -f count
expect 1 "cannot write $tmp/no/such/dir/x.json" \
	"$lever" bench -n 3 --no-progress --export-json "$tmp/no/such/dir/x.json" -- ./prog
check "no run was made for an unwritable export" test ! -e count
expect 1 "cannot write $tmp/no/x.html" \
	"$lever" compare -n 2 --no-progress --html "$tmp/no/x.html" -- ./prog ./prog
check "nor for compare's" test ! -e count

# issue 14 point 9: no report over an input, nor over a samples file unless --force
printf '%s\n' 1 2 3 >in.txt
cp in.txt other.txt
expect 1 "in\.txt is also an input" "$lever" stats --html in.txt in.txt
expect 1 "other\.txt exists and holds samples: refusing to overwrite it \(--force" \
	"$lever" stats --html other.txt in.txt
check "the samples file is intact" cmp -s in.txt other.txt
expect 1 "in\.txt is also an input" "$lever" compare --samples --export-markdown in.txt in.txt other.txt
expect 1 "other\.txt exists and holds samples" "$lever" compare --samples --html other.txt in.txt in.txt
rm -f count
expect 1 "other\.txt exists and holds samples" "$lever" bench -n 2 --export-json other.txt -- ./prog
check "no run was made for a refused export" test ! -e count
check "the samples file is still intact" cmp -s in.txt other.txt
expect 0 "" "$lever" stats --force --html other.txt in.txt
check "--force replaces it" grep -q '<html' other.txt

# write errors on standard output
printf '%s\n' 1 2 3 >s.txt
for cmd in "bench -n 2 --no-progress -- true" "stats s.txt" "compare --samples s.txt s.txt"; do
	# shellcheck disable=SC2086
	"$lever" $cmd >/dev/full 2>full.err
	status=$?
	check "lever $cmd > /dev/full: exit 1 (got $status)" test "$status" = 1
	check "lever $cmd > /dev/full: says so" grep -q 'cannot write standard output' full.err
done

# issue 14 point 11: a static program cannot take the Stabilizer runtime; no
# measurement may claim a shuffled heap for it
printf 'int main(void) { return 0; }\n' >st.c
cc -static -o st st.c || { echo "FAIL: no libc.a (libc6-dev) to build a static program"; exit 1; }
rm -f count
expect 1 "\./st is statically linked: lever's Stabilizer runtime cannot be preloaded" \
	"$lever" bench -n 2 --no-progress --randomize=heap -- ./st
expect 1 "\./st is statically linked" "$lever" bench -n 2 --no-progress --randomize=code './st'
expect 1 "\./st is statically linked" "$lever" compare -n 2 --no-progress --randomize=heap -- ./prog ./st
check "no run was made for a static program" test ! -e count
expect 0 "Range" "$lever" bench -n 2 --no-progress -- ./st

[ "$fails" = 0 ] && echo "all checks passed" || echo "$fails check(s) failed"
[ "$fails" = 0 ]
