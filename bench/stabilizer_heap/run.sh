#!/usr/bin/env bash
# Overhead of the Stabilizer runtime's shuffling heap (lever stabilize --heap)
# against glibc's malloc, on a malloc-heavy workload (malloc_heavy.c) with one
# and two threads, and on sort (a real program), by `lever compare`
# (interleaved runs; the ratio is mean(bare) / mean(heap), below 1 = slower).
#
#   bench/stabilizer_heap/run.sh BUILD [RUNS]      (default 10 runs each)
#
# Writes bench/results/stabilizer_heap.md.
set -euo pipefail
build=$(cd "$1" && pwd)
runs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
lever=$build/bin/lever
out=$here/../results/stabilizer_heap.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/malloc_heavy" "$here/malloc_heavy.c"
seq 1 300000 | awk '{ srand(NR); print int(rand() * 1e6), $1 }' >"$tmp/sort.txt"

compare() { # NAME COMMAND
	local name=$1 cmd=$2
	"$lever" compare --no-progress -n "$runs" --export-json "$tmp/r.json" -- \
		"$cmd" "$lever stabilize --heap -- $cmd" >"$tmp/out.txt" 2>&1 || true
	local ratio
	ratio=$(grep -m1 -o 'speedup [^,]*' "$tmp/out.txt" || true)
	echo "| $name | \`$cmd\` | $(grep -m1 -E 'faster|slower|no significant' "$tmp/out.txt" | sed 's/|/\\|/g') |" >>"$out.tmp"
	cat "$tmp/out.txt"
}

{
	echo "# Shuffling heap overhead (lever stabilize --heap vs glibc malloc)"
	echo
	echo "$(date -u +%F) on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $runs interleaved runs per command."
	echo
	echo "| workload | command | lever compare verdict (A = glibc, B = shuffling heap) |"
	echo "|---|---|---|"
} >"$out.tmp"
compare "malloc-heavy, 1 thread" "$tmp/malloc_heavy 2000000 1"
compare "malloc-heavy, 2 threads" "$tmp/malloc_heavy 1000000 2"
compare "sort -n, 300k lines" "sort -n $tmp/sort.txt"
mv "$out.tmp" "$out"
echo "wrote $out"
