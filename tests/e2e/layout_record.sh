#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever layout record (issue 17) on record_hot, a program whose only
# cache-missing load reads field `hot` (offset 48) of 64-byte structs at
# random: with --source=clock the record must carry the program's build ID,
# put the samples on that load (the instruction before the interrupted pc)
# and compute data addresses that fall on `hot` inside the array the
# program prints. Also: the fallback from pmu (and the error when pmu is
# asked for) on machines without one, the program's exit status passed on,
# children followed into their own module, merge and pprof export of real
# records, and clear errors.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$2
lever=$build/bin/lever
prog=$build/tests/programs/layout/record_hot
. "$src/tests/e2e/lib/skip.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
field() { awk -F'\t' -v k="$2" '$1 == "stat" && $2 == k { print $3 }' "$1"; }

"$lever" layout record --source=clock -o "$tmp/probe.record" -- true 2>"$tmp/probe.err" ||
	if grep -q 'perf_event_open' "$tmp/probe.err"; then
		skip_test "perf_event_open is not permitted here: $(cat "$tmp/probe.err")"
	fi

# --- the designed program, default source (pmu self-test, then clock here)
"$lever" layout record -o "$tmp/r.record" -- "$prog" 20000000 >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "record exited $rc: $(cat "$tmp/err.txt")"
if [ ! -e /sys/bus/event_source/devices/cpu/events/mem-loads ] &&
	[ ! -e /sys/bus/event_source/devices/ibs_op ]; then
	grep -q '^lever layout record: no PMU memory sampling here (.*); using --source=clock$' \
		"$tmp/err.txt" || fail "no one-line fallback message: $(cat "$tmp/err.txt")"
	"$lever" layout record --source=pmu -o "$tmp/pmu.record" -- true 2>"$tmp/pmu.err"
	rc=$?
	[ $rc -eq 1 ] || fail "--source=pmu without a PMU exited $rc, not 1"
	grep -q '^lever layout record: --source=pmu: no memory-sampling PMU' "$tmp/pmu.err" ||
		fail "--source=pmu: no clear error: $(cat "$tmp/pmu.err")"
	[ ! -e "$tmp/pmu.record" ] || fail "--source=pmu failed but wrote a record"
fi
# the pmu path on a synthetic sysfs tree (an Intel PMU under a type this kernel
# does not have): the event's terms reach perf_event_open, the self-test fails
# with a clear line and clock takes over
mkdir -p "$tmp/sysfs/cpu/events" "$tmp/sysfs/cpu/format"
echo 250 >"$tmp/sysfs/cpu/type"
echo 'event=0xcd,umask=0x1,ldlat=3' >"$tmp/sysfs/cpu/events/mem-loads"
echo 'event=0xd0,umask=0x82' >"$tmp/sysfs/cpu/events/mem-stores"
echo 'config:0-7' >"$tmp/sysfs/cpu/format/event"
echo 'config:8-15' >"$tmp/sysfs/cpu/format/umask"
echo 'config1:0-15' >"$tmp/sysfs/cpu/format/ldlat"
LEVER_EVENT_SOURCE_DIR=$tmp/sysfs "$lever" layout record -o "$tmp/fake.record" -- true 2>"$tmp/fake.err" ||
	fail "record with a synthetic PMU exited $?"
grep -q '^lever layout record: no PMU memory sampling here (perf_event_open(type 250, config 0x1cd, config1 0x1e): .*); using --source=clock$' \
	"$tmp/fake.err" || fail "synthetic PMU: $(cat "$tmp/fake.err")"
grep -q $'^source\tclock\t' "$tmp/fake.record" || fail "synthetic PMU: the record is not clock's"
LEVER_EVENT_SOURCE_DIR=$tmp/sysfs "$lever" layout record --source=pmu -o "$tmp/fake2.record" -- true 2>"$tmp/fake.err"
[ $? -eq 1 ] || fail "--source=pmu with a PMU that does not open did not exit 1"
grep -q '^lever layout record: --source=pmu: perf_event_open(type 250' "$tmp/fake.err" ||
	fail "--source=pmu, synthetic PMU: $(cat "$tmp/fake.err")"

head -1 "$tmp/r.record" | grep -q $'^lever-layout-record\t2$' || fail "not a version-2 record"
build_id=$(readelf -n "$prog" | awk '/Build ID/ { print $3 }')
grep -q "^program	$prog	$build_id\$" "$tmp/r.record" || fail "no program line with build ID $build_id"
grep -q $'^source\tclock\tcpu-clock$' "$tmp/r.record" || fail "no source line"
grep -q $'^period\t1000000$' "$tmp/r.record" || fail "default rate is not 1000 Hz (period 1 ms)"
samples=$(field "$tmp/r.record" samples)
memory=$(field "$tmp/r.record" memory-samples)
[ "${samples:-0}" -ge 100 ] || fail "only ${samples:-0} samples of a program running ~1 s"
for k in lost throttled no-memory-operand address-unknown outside-known-code; do
	[ -n "$(field "$tmp/r.record" $k)" ] || fail "no '$k' counter"
done

# the load of `hot`: the objdump of sum_hot names it (add/mov 0x30(...)), and it has most samples
hot_pc=$(objdump -d --no-show-raw-insn "$prog" | awk '/^[0-9a-f]+ <sum_hot[^>]*>:$/ { f = 1 } f && !done && /0x30\(/ { sub(":", "", $1); print "0x" $1; done = 1 }')
[ -n "$hot_pc" ] || fail "cannot find the load of hot in sum_hot"
top=$(awk -F'\t' '$1 == "sample" { print $3, $2 }' "$tmp/r.record" | sort -rn | head -1)
top_count=${top%% *}
top_pc=${top##* }
[ "$((top_pc))" -eq "$((hot_pc))" ] || fail "most samples at $top_pc, not the load of hot $hot_pc"
[ "$((top_count * 100))" -ge "$((memory * 80))" ] ||
	fail "the load of hot has $top_count of $memory memory samples (< 80%)"

# the data addresses: on `hot` (offset 48 of a 64-byte struct) inside the array
read -r _ lo hi _ size _ off < <(grep '^nodes ' "$tmp/out.txt")
awk -F'\t' -v pc="$top_pc" -v lo="$((lo))" -v hi="$((hi))" -v size="$size" -v off="$off" '
	function hex(s,  i, v) { v = 0; s = tolower(substr(s, 3)); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	$1 == "access" && $2 == pc { a = hex($3); n += $6; if (a >= lo && a < hi && (a - lo) % size == off && $5 == "r") good += $6 }
	END { printf "%d %d\n", good, n }' "$tmp/r.record" >"$tmp/acc.txt"
read -r good total <"$tmp/acc.txt"
[ "${total:-0}" -gt 0 ] || fail "no data addresses at the load of hot"
[ "${good:-0}" -eq "${total:-0}" ] || fail "$good of $total data addresses fall on hot in [$lo, $hi)"

# the report names the struct and the field (static part from layout_static_write)
"$lever" layout report "$tmp/r.record" >"$tmp/report.txt" 2>"$tmp/report.err" || fail "report exited $?: $(cat "$tmp/report.err")"
# (whether it is ranked depends on the few samples off hot: with none, moving saves nothing)
grep -q '^/\* node: [0-9]* samples' "$tmp/report.txt" || fail "report does not show struct node"
hot_raw=$(awk '/^struct node \{/ { f = 1 } f && / hot;/ { for (i = 1; i <= NF; i++) if ($i == "raw") print $(i + 1); exit }' "$tmp/report.txt")
max_raw=$(awk '/^struct node \{/ { f = 1 } f && /raw/ { for (i = 1; i <= NF; i++) if ($i == "raw" && $(i + 1) > m) m = $(i + 1) } f && /^};/ { print m; exit }' "$tmp/report.txt")
[ -n "$hot_raw" ] && [ "$hot_raw" = "$max_raw" ] || fail "field hot (raw ${hot_raw:-none}) is not node's hottest (raw ${max_raw:-none})"
[ "$((hot_raw * 100))" -ge "$((memory * 80))" ] || fail "hot has $hot_raw of $memory samples"

# --- false sharing: two threads write a and b of one line (record_share)
share=$build/tests/programs/layout/record_share
"$lever" layout record --source=clock -o "$tmp/share.record" -- "$share" 200000000 >"$tmp/share.out" 2>/dev/null ||
	fail "record_share exited $?"
"$lever" layout report "$tmp/share.record" >"$tmp/share.txt" 2>&1 || fail "report of record_share exited $?"
read -r _ counters _ < "$tmp/share.out"
grep -q "^false sharing of data line $counters (.*thread [0-9]* bytes 0-7 (counters.a), .*thread [0-9]* bytes 8-15 (counters.b)" "$tmp/share.txt" ||
	grep -q "^false sharing of data line $counters (.*thread [0-9]* bytes 8-15 (counters.b), .*thread [0-9]* bytes 0-7 (counters.a)" "$tmp/share.txt" ||
	fail "no false sharing of $counters between a and b: $(grep -i sharing "$tmp/share.txt")"
grep -q 'false sharing in counters, cacheline 0' "$tmp/share.txt" || fail "Algorithm F's false sharing of counters not reported"

# --- exit status passed on; a record still written
"$lever" layout record --source=clock -o "$tmp/exit.record" -- sh -c 'exit 3' 2>/dev/null
rc=$?
[ $rc -eq 3 ] || fail "the program's exit status 3 came back as $rc"
[ -s "$tmp/exit.record" ] || fail "no record for a program that failed"

# --- -g: call chains from sum_hot (a leaf: its frame is its caller's) outward
"$lever" layout record -g --source=clock -o "$tmp/g.record" -- "$prog" 5000000 >/dev/null 2>&1 ||
	fail "-g exited $?"
read -r sum_lo sum_size < <(nm -S "$prog" | awk '$4 ~ /^sum_hot/ { print "0x" $1, "0x" $2 }')
awk -F'\t' -v lo="$((sum_lo))" -v size="$((sum_size))" '
	function hex(s,  i, v) { v = 0; s = tolower(substr(s, 3)); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	$1 == "chain" { n = split($4, f, ","); a = hex(substr(f[1], 3)); if (n >= 2 && f[1] ~ /^0:/ && a >= lo && a < lo + size && f[2] != "?") good += $2 }
	END { exit !(good > 10) }' "$tmp/g.record" || fail "-g: no chains from sum_hot with a known caller"

# --- a SIGTERM to lever alone (timeout) reaches the program; the record is kept
timeout --preserve-status -s TERM 1 "$lever" layout record --source=clock -o "$tmp/term.record" -- sleep 30 2>/dev/null
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, not 143 (the program killed by SIGTERM)"
[ -s "$tmp/term.record" ] || fail "SIGTERM: no record"

# --- children followed: sh runs record_hot, whose samples go to its own module
"$lever" layout record --source=clock -o "$tmp/child.record" -- sh -c "'$prog' 5000000 >/dev/null" 2>/dev/null ||
	fail "record of sh -c exited $?"
awk -F'\t' -v p="$prog" '$1 == "module" && $2 == p { m = 1; next } $1 == "module" { m = 0 } m && $1 == "sample" { n += $3 } END { exit !(n > 10) }' \
	"$tmp/child.record" || fail "record_hot run by sh: no samples in its module"

# --- -a: every process on every CPU (root or perf_event_paranoid <= 0); the
# program's load of hot is still module 0's, lever's own samples left out
if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	"$lever" layout record -a --source=clock -o "$tmp/all.record" -- "$prog" 5000000 >/dev/null 2>"$tmp/all.err" ||
		fail "-a exited $?: $(cat "$tmp/all.err")"
	awk -F'\t' -v pc="$hot_pc" '$1 == "module" { m = 1 } !m && $1 == "sample" && $2 == pc { n += $3 } END { exit !(n > 10) }' \
		"$tmp/all.record" || fail "-a: no samples on the program's load of hot"
	[ -n "$(field "$tmp/all.record" recorder-own)" ] || fail "-a: no recorder-own counter"

	# without -a, where cpu-wide events open, clock follows the program on one
	# event per CPU (no hrtimer restarted at each of its context switches):
	# a busy process beside it is sampled too and left out, the program's
	# load of hot is still module 0's, and no module of the other's is kept
	timeout 20 sh -c 'while :; do :; done' &
	busy=$!
	"$lever" layout record --source=clock -o "$tmp/cpu.record" -- "$prog" 5000000 >/dev/null 2>"$tmp/cpu.err" ||
		fail "cpu-wide record exited $?: $(cat "$tmp/cpu.err")"
	"$lever" layout record --source=clock --per-task -o "$tmp/task.record" -- "$prog" 5000000 >/dev/null 2>"$tmp/task.err" ||
		fail "--per-task record exited $?: $(cat "$tmp/task.err")"
	kill "$busy" 2>/dev/null
	wait "$busy" 2>/dev/null
	grep -q '^lever layout record: one event per CPU (--per-task for per-thread events): [0-9]* samples of other processes left out$' \
		"$tmp/cpu.err" || fail "cpu-wide: no message: $(cat "$tmp/cpu.err")"
	[ "$(field "$tmp/cpu.record" other-processes)" -gt 0 ] 2>/dev/null ||
		fail "cpu-wide: the busy process was not sampled and left out (other-processes $(field "$tmp/cpu.record" other-processes))"
	[ "$(field "$tmp/task.record" other-processes)" = 0 ] || fail "--per-task: other-processes is not 0"
	! grep -q 'one event per CPU' "$tmp/task.err" || fail "--per-task: still one event per CPU"
	for rec in cpu task; do
		awk -F'\t' -v pc="$hot_pc" '$1 == "module" { m = 1 } !m && $1 == "sample" && $2 == pc { n += $3 } END { exit !(n > 10) }' \
			"$tmp/$rec.record" || fail "$rec: no samples on the program's load of hot"
		! grep -q $'^module\t' "$tmp/$rec.record" ||
			awk -F'\t' '$1 == "module" && $2 !~ /(libc|ld-linux)/ { bad = 1 } END { exit bad }' "$tmp/$rec.record" ||
			fail "$rec: a module of another process: $(grep $'^module\t' "$tmp/$rec.record")"
	done
fi

# --- merge sums; export --pprof gives a gzip
"$lever" layout record --source=clock -o "$tmp/r2.record" -- "$prog" 5000000 >/dev/null 2>&1
"$lever" layout merge -o "$tmp/m.record" "$tmp/r.record" "$tmp/r2.record" || fail "merge exited $?"
want=$(($(field "$tmp/r.record" samples) + $(field "$tmp/r2.record" samples)))
[ "$(field "$tmp/m.record" samples)" = "$want" ] || fail "merged samples $(field "$tmp/m.record" samples), not $want"
# A run that caught a sample in a shared object with DWARF carries that
# object's static part (one sample in ld.so, with libc6-dbg installed,
# brings ~100 structs); the next run may not. Such records merge, in either
# order, to the same record: the program's part once, the object's part
# kept. The object here is built by the test, so that it has DWARF on any
# machine: r2 plus its module line, static part and one sample.
cat >"$tmp/libpart.c" <<'EOF_LIB'
struct part_conn { long id; char name[32]; long hits; struct part_conn *next; };
long part_walk(struct part_conn *c)
{
	long n = 0;

	for (; c; c = c->next)
		n += c->hits + c->id;
	return n;
}
EOF_LIB
lib=$tmp/libpart.so
gcc -O1 -g -shared -fPIC -Wl,--build-id -o "$lib" "$tmp/libpart.c" || fail "cannot build libpart.so"
lib_id=$(readelf -n "$lib" | awk '/Build ID/ { print $3 }')
"$lever" layout refs "$lib" >"$tmp/lib.refs" 2>"$tmp/lib.refs.err" ||
	fail "layout refs of libpart.so: $(cat "$tmp/lib.refs.err")"
lib_refs=$(grep -c '^ref' "$tmp/lib.refs")
[ "$lib_refs" -gt 0 ] || fail "libpart.so has no static references: $(cat "$tmp/lib.refs.err")"
{
	cat "$tmp/r2.record"
	printf 'module\t%s\t%s\n' "$lib" "$lib_id"
	grep -v -e '^#' -e '^lever-layout-record' "$tmp/lib.refs"
	awk -F'\t' '$1 == "ref" { printf "sample\t%s\t1\t1\n", $2; exit }' "$tmp/lib.refs"
} >"$tmp/lib.record"
"$lever" layout merge -o "$tmp/m_lib1.record" "$tmp/r.record" "$tmp/lib.record" 2>"$tmp/merge.err" ||
	fail "merge with a record holding a shared object's static part: $(cat "$tmp/merge.err")"
"$lever" layout merge -o "$tmp/m_lib2.record" "$tmp/lib.record" "$tmp/r.record" 2>"$tmp/merge.err" ||
	fail "merge, the other order: $(cat "$tmp/merge.err")"
# per module: the program's references (above any module line) once, the object's all
refs_of() { # RECORD MODULE-PATH|-: the references of that module (- the program)
	awk -F'\t' -v want="$2" '$1 == "module" { mod = $2 } $1 == "ref" && (mod ? mod : "-") == want { n++ }
		END { print n + 0 }' "$1"
}
prog_refs=$(refs_of "$tmp/r.record" -)
for m in m_lib1 m_lib2; do
	[ "$(refs_of "$tmp/$m.record" -)" = "$prog_refs" ] ||
		fail "$m: $(refs_of "$tmp/$m.record" -) references of the program, not $prog_refs"
	[ "$(refs_of "$tmp/$m.record" "$lib")" = "$lib_refs" ] ||
		fail "$m: $(refs_of "$tmp/$m.record" "$lib") references of libpart.so, not $lib_refs"
done
"$lever" layout report "$tmp/m_lib1.record" 2>/dev/null | tail -n +2 >"$tmp/m_lib1.report"
"$lever" layout report "$tmp/m_lib2.record" 2>/dev/null | tail -n +2 >"$tmp/m_lib2.report"
cmp -s "$tmp/m_lib1.report" "$tmp/m_lib2.report" || fail "merged in two orders, the reports differ"
"$lever" layout merge -o "$tmp/m2.record" "$tmp/r.record" "$tmp/child.record" 2>"$tmp/merge.err" &&
	fail "merge of two builds succeeded"
grep -q 'different builds' "$tmp/merge.err" || fail "merge of two builds: $(cat "$tmp/merge.err")"
"$lever" layout export --pprof "$tmp/p.pb.gz" "$tmp/m.record" || fail "export exited $?"
[ "$(head -c2 "$tmp/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof export is not gzip"

# --- errors
"$lever" layout record -o "$tmp/r.record" -- true 2>"$tmp/e.txt" && fail "replaced a record without --force"
grep -q 'refusing' "$tmp/e.txt" || fail "no refusal to replace: $(cat "$tmp/e.txt")"
"$lever" layout record -o "$tmp/x.record" -- /nonexistent/prog 2>"$tmp/e.txt"
rc=$?
[ $rc -eq 127 ] || fail "a missing program exited $rc, not 127"
[ ! -e "$tmp/x.record" ] || fail "a missing program left a record"
grep -q '/nonexistent/prog: No such file' "$tmp/e.txt" || fail "missing program: $(cat "$tmp/e.txt")"
"$lever" layout record -F 10 -c 10 -- true 2>/dev/null
[ $? -eq 2 ] || fail "-F with -c is not a usage error"
"$lever" layout record --mmap-pages 3 -- true 2>/dev/null
[ $? -eq 2 ] || fail "--mmap-pages 3 is not a usage error"
"$lever" layout record 2>/dev/null
[ $? -eq 2 ] || fail "no PROGRAM is not a usage error"

[ $fails -eq 0 ] && echo "layout_record: ok ($samples samples, $top_count at the load of hot, $good/$total addresses on hot)"
exit $((fails > 0))
