#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Real C++ and C programs recorded by `lever annotate record` without
# recompiling them (issue 15 must-show 4; spec freud.md §6, real programs):
#
#   list_sort  bench/annotate/list_sort.cpp, a std::list::sort driver built
#              by the distro's g++ -g -O2 (not lever cc: live patching);
#              probe sort_list(std::list<unsigned>&), whose feature is the
#              list's size, and libstdc++'s _List_node_base::_M_transfer
#              (a shared library, probed by name with LIB:SYMBOL);
#   sqlite3    Debian's sqlite3 source built by its own configure && make
#              with CFLAGS="-g -O2" (the CLI, libsqlite3.so beside it);
#              probe sqlite3_step, sqlite3VdbeExec and sqlite3BtreeInsert in
#              the library while the CLI runs a generated SQL workload (below).
#
# Each is recorded with features and metrics (time, cpu, mem), then
# `lever annotate derive` runs on the record. The overhead: wall and CPU
# (user+sys) time of the whole run, bare against recorded (default rate),
# in interleaved rounds whose order alternates; the load average is kept
# with every round (the machine is shared: an idle rerun is due).
# Results: bench/results/annotate-real/ (records, derive outputs, rounds
# in overhead.tsv, the table from real_table.py in overhead.md; the
# functions' counts and features from real_features_table.py in
# features.md, the table the README copies).
#
# A library routine built from Debian's source and annotated end to end
# (derive, HTML, check against injected regressions: issue 16 must-show 3)
# is bench/annotate/stb_png.sh, beside this script.
#
# usage: real.sh LEVER_BUILD_DIR [ROUNDS]
# env: WORK (default /work/scratch/annotate-real), SQLITE_SRC (a Debian
# sqlite3 source tree; fetched with apt-get source when unset and absent),
# LIST_ROUNDS (list_sort's rounds, 400).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
out=$root/bench/results/annotate-real
work=${WORK:-/work/scratch/annotate-real}
list_rounds=${LIST_ROUNDS:-400}
mkdir -p "$out" "$work"

# --- the programs -----------------------------------------------------
g++ -g -O2 -o "$work/list_sort" "$here/list_sort.cpp"

src=${SQLITE_SRC:-$(ls -d "$work"/sqlite3-*/ 2>/dev/null | head -1 || true)}
if [ -z "$src" ]; then
	(cd "$work" && apt-get source sqlite3 >"$work/apt-get-source.log" 2>&1)
	src=$(ls -d "$work"/sqlite3-*/ | head -1)
fi
src=$(cd "$src" && pwd)
sqb=$work/sqlite-build
if [ ! -x "$sqb/.libs/sqlite3" ]; then
	mkdir -p "$sqb"
	(cd "$sqb" && "$src/configure" CFLAGS="-g -O2" --disable-tcl --disable-readline \
		>"$work/sqlite-configure.log" 2>&1 && make sqlite3 >"$work/sqlite-make.log" 2>&1)
fi
# libtool's uninstalled CLI: the real ELF is .libs/sqlite3, its library beside
sqlite_cli=$sqb/.libs/sqlite3
sqlite_lib=$sqb/.libs/libsqlite3.so.0
export LD_LIBRARY_PATH=$sqb/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
	echo "date: $(date -u +%FT%TZ)"
	echo "uptime: $(uptime)"
	echo "g++: $(g++ --version | head -1)"
	echo "sqlite3: $(basename "$src") CFLAGS=-g -O2, $(stat -c %s "$(readlink -f "$sqlite_lib")") bytes library"
	echo "lever: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "nproc: $(nproc)"
} >"$out/environment.txt"

# The SQL workload: a table filled by 200 INSERT ... SELECT statements of
# 1 to 500 rows each (a recursive CTE, sizes from a fixed LCG), then 200
# range scans of varied width, then an index and 100 point lookups: calls
# of sqlite3_step/sqlite3VdbeExec whose cost spans three orders of magnitude.
awk 'BEGIN {
	x = 12345; srand(1)
	print "CREATE TABLE t(a INTEGER, b TEXT, c REAL);"
	print "BEGIN;"
	for (i = 0; i < 200; i++) {
		x = (x * 1103515245 + 12345) % 2147483648; n = 1 + x % 500
		printf "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) INSERT INTO t SELECT abs(random()) %% 100000, hex(randomblob(16)), i * 0.5 FROM s;\n", n
	}
	print "COMMIT;"
	for (i = 0; i < 200; i++) {
		x = (x * 1103515245 + 12345) % 2147483648; lo = x % 100000
		x = (x * 1103515245 + 12345) % 2147483648; w = x % 20000
		printf "SELECT count(*), sum(c) FROM t WHERE a BETWEEN %d AND %d;\n", lo, lo + w
	}
	print "CREATE INDEX ta ON t(a);"
	for (i = 0; i < 100; i++) {
		x = (x * 1103515245 + 12345) % 2147483648
		printf "SELECT b FROM t WHERE a = %d;\n", x % 100000
	}
}' >"$work/load.sql"

# --- the commands -------------------------------------------------------
list_cmd=("$work/list_sort" "$list_rounds")
list_probes=(-f sort_list -f 'libstdc++.so.6:_ZNSt8__detail15_List_node_base11_M_transferEPS0_S1_')
sqlite_cmd=("$sqlite_cli" "$work/load.db")
sqlite_probes=(-f "$sqlite_lib:sqlite3_step" -f "$sqlite_lib:sqlite3VdbeExec"
	-f "$sqlite_lib:sqlite3BtreeInsert")

run_sqlite() { # [lever record args...] -- runs the workload on a fresh db
	rm -f "$work/load.db"
	"$@" "${sqlite_cmd[@]}" <"$work/load.sql" >/dev/null
}

# --- 1. the records kept, with features and metrics, then derive ---------
"$lever" annotate record -v --metrics time,cpu,mem "${list_probes[@]}" \
	-o "$work/list_sort.ann" -- "${list_cmd[@]}" >/dev/null 2>"$out/list_sort.record.stderr"
cp "$work/list_sort.ann/record" "$out/list_sort.record"
cp "$work/list_sort.ann/plan" "$out/list_sort.plan"
for metric in time cpu; do
	"$lever" annotate derive --metric "$metric" "$out/list_sort.record" \
		>"$out/list_sort.derive-$metric.txt" 2>"$out/list_sort.derive-$metric.stderr" ||
		echo "derive exit $?" >>"$out/list_sort.derive-$metric.stderr"
done

run_sqlite "$lever" annotate record -v --metrics time,cpu,mem "${sqlite_probes[@]}" \
	-o "$work/sqlite.ann" -- 2>"$out/sqlite.record.stderr"
cp "$work/sqlite.ann/record" "$out/sqlite.record"
cp "$work/sqlite.ann/plan" "$out/sqlite.plan"
for metric in time cpu; do
	"$lever" annotate derive --metric "$metric" "$out/sqlite.record" \
		>"$out/sqlite.derive-$metric.txt" 2>"$out/sqlite.derive-$metric.stderr" ||
		echo "derive exit $?" >>"$out/sqlite.derive-$metric.stderr"
done

# --- 2. overhead: bare against recorded, interleaved ---------------------
# timed PROGRAM-KEY MODE -> "wall cpu" seconds of the whole run
timed() {
	local prog=$1 mode=$2 rec=()
	if [ "$mode" = recorded ]; then
		if [ "$prog" = list_sort ]; then
			rec=("$lever" annotate record --metrics time,cpu,mem "${list_probes[@]}" -o "$work/ovh.ann" --)
		else
			rec=("$lever" annotate record --metrics time,cpu,mem "${sqlite_probes[@]}" -o "$work/ovh.ann" --)
		fi
	fi
	local t0 t1
	t0=$(date +%s.%N)
	if [ "$prog" = list_sort ]; then
		/usr/bin/time -f '%U %S' -o "$work/time.out" "${rec[@]}" "${list_cmd[@]}" >/dev/null 2>&1
	else
		rm -f "$work/load.db"
		/usr/bin/time -f '%U %S' -o "$work/time.out" "${rec[@]}" "${sqlite_cmd[@]}" \
			<"$work/load.sql" >/dev/null 2>&1
	fi
	t1=$(date +%s.%N)
	read -r u s <"$work/time.out"
	echo "$(echo "$t1 - $t0" | bc) $(echo "$u + $s" | bc)"
}

printf 'program\tround\tmode\twall_s\tcpu_s\tload1\n' >"$out/overhead.tsv"
for r in $(seq 1 "$rounds"); do
	for prog in list_sort sqlite; do
		if [ $((r % 2)) -eq 1 ]; then modes="bare recorded"; else modes="recorded bare"; fi
		for m in $modes; do
			l=$(cut -d' ' -f1 /proc/loadavg)
			read -r w c <<<"$(timed "$prog" "$m")"
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$r" "$m" "$w" "$c" "$l" >>"$out/overhead.tsv"
		done
	done
done
echo "end uptime: $(uptime)" >>"$out/environment.txt"
python3 "$here/real_table.py" "$out/overhead.tsv" >"$out/overhead.md"
python3 "$here/real_features_table.py" "$out" list_sort sqlite >"$out/features.md"
cat "$out/features.md"
cat "$out/overhead.md"
