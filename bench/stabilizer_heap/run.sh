#!/usr/bin/env bash
# Overhead of the Stabilizer runtime's shuffling heap (lever stabilize --heap)
# against glibc's malloc, on a malloc-heavy workload (malloc_heavy.c) with one
# and two threads, on real programs (sort, gzip, python3) and on `true`
# (what starting lever and the runtime costs), by `lever compare`
# (interleaved runs; the ratio is mean(bare) / mean(heap), below 1 = slower).
#
#   bench/stabilizer_heap/run.sh BUILD [RUNS]      (default 10 runs each)
#   bench/stabilizer_heap/run.sh --report-only     (rebuild the table from raw data)
#
# NOTE="text" is kept in the raw data's meta and printed under the header.
# Writes bench/results/stabilizer_heap.md, and keeps the raw data beside it in
# bench/results/stabilizer_heap-raw/ (each `lever compare` output, NN.txt,
# with its workload name and command in NN.name and NN.cmd, and the header's
# facts in meta): --report-only rebuilds the table from those alone
# (bench/results/regenerate.sh does, into STABILIZER_HEAP_OUT). A failed
# comparison stops the run: it never becomes a row.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${STABILIZER_HEAP_OUT:-$here/../results/stabilizer_heap.md}
raw=$here/../results/stabilizer_heap-raw
report_only=0
if [ "${1:-}" = --report-only ]; then
	report_only=1
	[ -f "$raw/meta" ] || { echo "stabilizer_heap: no raw data in $raw" >&2; exit 1; }
else
	build=$(cd "$1" && pwd)
	runs=${2:-10}
	lever=$build/bin/lever
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cc -O2 -pthread -o "$tmp/malloc_heavy" "$here/malloc_heavy.c"
	seq 1 300000 | awk '{ srand(NR); print int(rand() * 1e6), $1 }' >"$tmp/sort.txt"
	rm -rf "$raw"
	mkdir -p "$raw"
	printf 'date=%s\ncpus=%s\nload_start=%s\nruns=%s\nnote=%s\n' "$(date -u +%F)" "$(nproc)" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "$runs" "${NOTE:-}" >"$raw/meta"
fi
meta() { sed -n "s/^$1=//p" "$raw/meta"; }
n_compared=0

compare() { # NAME COMMAND: runs lever compare, keeps its output as raw data
	local name=$1 cmd=$2 f
	n_compared=$((n_compared + 1))
	f=$raw/$(printf '%02d' $n_compared)
	echo "$name" >"$f.name"
	echo "$cmd" | sed "s|$tmp/|TMP/|g" >"$f.cmd"
	if ! "$lever" compare --no-progress -n "$runs" -- \
		"$cmd" "$lever stabilize --heap -- $cmd" >"$f.txt" 2>&1; then
		cat "$f.txt"
		echo "stabilizer_heap: lever compare failed on $name" >&2
		exit 1
	fi
	cat "$f.txt"
}

row() { # NN: a table row from one kept lever compare output
	local f=$raw/$1 mean_a mean_b ratio
	mean_a=$(grep -m1 'mean ± sd' "$f.txt" | awk '{print $4, $5}')
	mean_b=$(grep 'mean ± sd' "$f.txt" | sed -n 2p | awk '{print $4, $5}')
	ratio=$(grep -m1 'speedup:' "$f.txt" | sed 's/.*= //')
	echo "| $(cat "$f.name") | \`$(cat "$f.cmd")\` | $mean_a | $mean_b | $ratio |"
}

if [ $report_only = 0 ]; then
	compare "start-up only (lever + runtime)" "true"
	compare "malloc-heavy, 1 thread" "$tmp/malloc_heavy 2000000 1"
	compare "malloc-heavy, 2 threads" "$tmp/malloc_heavy 1000000 2"
	compare "sort -n, 300k lines" "sort -n $tmp/sort.txt"
	compare "gzip -6 of the same file" "gzip -6c $tmp/sort.txt"
	printf 'd = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i %% 7)\nprint(len(d))\n' >"$tmp/dicts.py"
	# the interpreter itself, not a wrapper script (pyenv's shims exec several processes)
	py=$(python3 -c 'import sys; print(sys.executable)')
	compare "python3 dict of lists" "$py $tmp/dicts.py"
	printf 'load_end=%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw/meta"
fi

{
	echo "# Shuffling heap overhead (lever stabilize --heap vs glibc malloc)"
	echo
	echo "$(meta date) on $(meta cpus) CPUs, load average $(meta load_start) at start, $(meta load_end) at the end; $(meta runs) interleaved runs per command."
	echo
	if [ -n "$(meta note)" ]; then
		echo "$(meta note)"
		echo
	fi
	echo "Wall time by \`lever compare\` (A = glibc malloc, B = \`lever stabilize --heap\`, runs"
	echo "interleaved); speedup = mean(A)/mean(B) with its 95% BCa interval, so 0.5 = twice as slow."
	echo
	echo "| workload | command | mean A | mean B | speedup A/B |"
	echo "|---|---|---|---|---|"
	for f in "$raw"/*.txt; do
		row "$(basename "$f" .txt)"
	done
	echo
	echo "Raw data: \`bench/results/stabilizer_heap-raw/\` (the \`lever compare\` outputs);"
	echo "\`bench/stabilizer_heap/run.sh --report-only\` rebuilds this table from them."
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
