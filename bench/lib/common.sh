# SPDX-License-Identifier: GPL-3.0-or-later
# Shell functions the bench scripts share (bench/README: raw data with the
# machine's state kept beside the table). Source it from a bench script:
#   . "$(dirname "$0")/../lib/common.sh"
# shellcheck shell=bash disable=SC2034

# bench_init SCRIPT: here (the script's folder), src (the tree's src/), out
# (here/results, created), tmp (a scratch folder removed on exit) and stamp
# (UTC, the name of this run's files).
bench_init() {
	here=$(cd "$(dirname "$1")" && pwd)
	src=$(cd "$here/../../src" && pwd)
	out=$here/results
	mkdir -p "$out"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
}

# bench_meta_begin FILE [LINE...]: the kernel and CPU, the given lines, and
# the load before the runs (the numbers of a loaded machine need a rerun).
bench_meta_begin() {
	local file=$1
	shift
	{
		echo "# $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
		for line in "$@"; do echo "$line"; done
		echo "# uptime before: $(uptime)"
	} >"$file"
}

# bench_meta_end FILE: the load after the runs, then the whole file on stdout.
bench_meta_end() {
	echo "# uptime after: $(uptime)" >>"$1"
	cat "$1"
}
