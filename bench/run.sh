#!/usr/bin/env bash
# make bench: runs every benchmark suite bench/*/run.sh with the build dir.
# Each writes its report to bench/results/<suite>.md. Benchmarks compare lever
# with the peer tool in the same run and report ratios; they are not tests.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/results"
status=0
for suite in "$here"/*/run.sh; do
	[ -x "$suite" ] || continue
	name=$(basename "$(dirname "$suite")")
	echo "== bench/$name"
	if ! "$suite" "$build"; then
		echo "bench/$name failed" >&2
		status=1
	fi
done
exit $status
