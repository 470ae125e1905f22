#!/usr/bin/env bash
# Overhead of the Stabilizer runtime's shuffling heap (lever stabilize --heap)
# against glibc's malloc, on a malloc-heavy workload (malloc_heavy.c) with one
# and two threads, on real programs (sort, gzip, python3) and on `true`
# (what starting lever and the runtime costs), by `lever compare`
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
	local name=$1 cmd=$2 mean_a mean_b ratio
	"$lever" compare --no-progress -n "$runs" -- \
		"$cmd" "$lever stabilize --heap -- $cmd" >"$tmp/out.txt" 2>&1 || true
	cat "$tmp/out.txt"
	mean_a=$(grep -m1 'mean ± sd' "$tmp/out.txt" | awk '{print $4, $5}')
	mean_b=$(grep 'mean ± sd' "$tmp/out.txt" | sed -n 2p | awk '{print $4, $5}')
	ratio=$(grep -m1 'speedup:' "$tmp/out.txt" | sed 's/.*= //')
	echo "| $name | \`$cmd\` | $mean_a | $mean_b | $ratio |" >>"$out.tmp"
}

{
	echo "# Shuffling heap overhead (lever stabilize --heap vs glibc malloc)"
	echo
	echo "$(date -u +%F) on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $runs interleaved runs per command."
	echo
	echo "Wall time by \`lever compare\` (A = glibc malloc, B = \`lever stabilize --heap\`, runs"
	echo "interleaved); speedup = mean(A)/mean(B) with its 95% BCa interval, so 0.5 = twice as slow."
	echo
	echo "| workload | command | mean A | mean B | speedup A/B |"
	echo "|---|---|---|---|---|"
} >"$out.tmp"
compare "start-up only (lever + runtime)" "true"
compare "malloc-heavy, 1 thread" "$tmp/malloc_heavy 2000000 1"
compare "malloc-heavy, 2 threads" "$tmp/malloc_heavy 1000000 2"
compare "sort -n, 300k lines" "sort -n $tmp/sort.txt"
compare "gzip -6 of the same file" "gzip -6c $tmp/sort.txt"
if command -v python3 >/dev/null; then
	printf 'd = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i %% 7)\nprint(len(d))\n' >"$tmp/dicts.py"
	# the interpreter itself, not a wrapper script (pyenv's shims exec several processes)
	py=$(python3 -c 'import sys; print(sys.executable)')
	compare "python3 dict of lists" "$py $tmp/dicts.py"
fi
mv "$out.tmp" "$out"
echo "wrote $out"
