#!/usr/bin/env bash
# Overhead of code randomization on a call-heavy loop (code_calls.c):
# bare vs re-randomized every 500 ms (the default) and every 10 ms,
# runs interleaved, median user+sys and elapsed times, and their ratios.
# Usage: bench/stabilizer/code_overhead.sh BUILD_DIR [RUNS]
set -euo pipefail
build=$1 runs=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
driver=$build/tests/programs/stabilizer_code/libstabilizer_code_driver.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -ffunction-sections -fno-omit-frame-pointer -fno-jump-tables -fcf-protection=none \
	-Wl,--emit-relocs "$here/code_calls.c" -o "$tmp/calls"
run() { # label env...
	local label=$1
	shift
	env "$@" /usr/bin/time -f "$label %e %U %S" "$tmp/calls" >/dev/null 2>>"$tmp/times"
}
for i in $(seq "$runs"); do
	run bare
	run code500ms LD_PRELOAD="$driver" LEVER_STABILIZE_CODE=1 LEVER_STABILIZE_SEED="$i"
	run code10ms LD_PRELOAD="$driver" LEVER_STABILIZE_CODE=1 LEVER_STABILIZE_SEED="$i" \
		LEVER_STABILIZE_INTERVAL_NS=10000000
done
grep -E '^(bare|code)' "$tmp/times" | awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ wall[$1] = wall[$1] " " $2; cpu[$1] = cpu[$1] " " ($3 + $4) }
END {
	bw = median(wall["bare"]); bc = median(cpu["bare"])
	for (k in wall)
		printf "%-10s median elapsed %.3f s (x%.2f)  user+sys %.3f s (x%.2f)\n", k,
			median(wall[k]), median(wall[k]) / bw, median(cpu[k]), median(cpu[k]) / bc
}' | sort
