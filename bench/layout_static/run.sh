#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Static reference precision and recall (issue 17, must-show 3; spec
# autocpa.md §8.5 step 8): `lever layout refs` on
# tests/programs/layout/static_refs.c (truth in the function names) with
# gcc and clang-14 at -O0 and -O2, and on memcached built from Debian's
# sources with -g (no truth: how much resolves, a source-line lower bound
# of the precision, the most referenced structs, the time to analyse).
# Raw data: bench/results/layout_static-raw/; table: table.py ->
# bench/results/layout_static.md.
#
# usage: run.sh BUILD_DIR [MEMCACHED_SOURCE_DIR]
# Without a source dir it runs `apt-get source memcached` (a deb-src line)
# into BUILD_DIR/bench-layout-static; memcached needs libevent-dev.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
raw=$root/bench/results/layout_static-raw
work=$build/bench-layout-static
lib=$root/tests/e2e/lib
mkdir -p "$raw" "$work"
export XDG_CACHE_HOME=$work/cache
# pyenv shims cost a second per call: the system python when there is one
py=$(command -v /usr/bin/python3 || command -v python3)

{
	echo "date: $(date -u +%FT%TZ)"
	echo "uptime: $(uptime)"
	echo "gcc: $(gcc --version | head -1)"
	echo "clang: $(clang-14 --version 2>/dev/null | head -1)"
	echo "lever: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
} >"$raw/environment.txt"

# 1. the test program with known truth
printf 'compiler\topt\tprecision\trecall\trefs\tpairs\tfunctions\n' >"$raw/static_refs.tsv"
for cc in gcc clang-14; do
	command -v "$cc" >/dev/null || continue
	for opt in O0 O2; do
		bin=$work/static_refs-$cc-$opt
		"$cc" -g -"$opt" -o "$bin" "$root/tests/programs/layout/static_refs.c"
		"$lever" layout refs -q --no-cache -o "$bin.rec" "$bin"
		nm -S --defined-only "$bin" >"$bin.nm"
		line=$("$py" "$lib/layout_static_score.py" "$bin.rec" "$bin.nm")
		"$py" "$lib/layout_static_score.py" "$bin.rec" "$bin.nm" --verbose \
			>"$raw/static_refs-$cc-$opt.score"
		read -r _ p _ r _ refs _ pairs _ fns <<<"$line"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cc" "$opt" "$p" "$r" "$refs" "$pairs" "$fns" \
			>>"$raw/static_refs.tsv"
	done
done

# 2. memcached from Debian's sources
src=${2:-}
if [ -z "$src" ]; then
	src=$(ls -d "$work"/memcached-*/ 2>/dev/null | head -1 || true)
	if [ -z "$src" ]; then
		(cd "$work" && apt-get source memcached >"$work/apt-get-source.log" 2>&1) || true
		src=$(ls -d "$work"/memcached-*/ 2>/dev/null | head -1 || true)
	fi
fi
printf 'compiler\topt\tfunctions\tmemory_operands\tresolved\tstructs\trefs\tblocks\tleft_out\tconfirmed\tseconds_median\tseconds_min\tseconds_max\n' \
	>"$raw/memcached.tsv"
if [ -z "$src" ] || [ ! -f "$src/configure" ]; then
	echo "memcached: no source (apt-get source memcached needs a deb-src line)" | tee "$raw/memcached.skipped"
else
	rm -f "$raw/memcached.skipped"
	for cc in gcc clang-14; do
		command -v "$cc" >/dev/null || continue
		for opt in O0 O2; do
			b=$work/memcached-build-$cc-$opt
			if [ ! -x "$b/memcached" ]; then
				rm -rf "$b"
				# -a: new timestamps would make make rerun the autotools
				cp -a "$src" "$b"
				# objects of an earlier build in the source tree would be reused
				find "$b" -name '*.o' -delete
				rm -f "$b/memcached"
				(cd "$b" && ./configure CC="$cc" CFLAGS="-g -$opt" >configure.log 2>&1 &&
					make -j2 memcached >make.log 2>&1)
				grep -q -- "-$opt" "$b/make.log" || { echo "memcached $cc -$opt: not built" >&2; exit 1; }
			fi
			bin=$b/memcached
			times=()
			for run in 1 2 3 4 5; do
				t0=$(date +%s.%N)
				"$lever" layout refs -q --no-cache -o "$bin.rec" "$bin"
				t1=$(date +%s.%N)
				times+=("$(echo "$t1 - $t0" | bc)")
			done
			sorted=$(printf '%s\n' "${times[@]}" | sort -g)
			median=$(echo "$sorted" | sed -n 3p)
			min=$(echo "$sorted" | head -1)
			max=$(echo "$sorted" | tail -1)
			summary=$("$lever" layout refs --no-cache -o "$bin.rec" "$bin" 2>&1 >/dev/null)
			read -r fns memops resolved structs refs blocks left <<<"$(echo "$summary" |
				sed -E 's/.*: ([0-9]+) functions, ([0-9]+) memory operands, ([0-9]+) resolved.*; ([0-9]+) structs, ([0-9]+) refs, ([0-9]+) blocks written; ([0-9]+) referenced.*/\1 \2 \3 \4 \5 \6 \7/')"
			"$py" "$lib/layout_static_lines.py" "$bin.rec" "$bin" "$b" --show 30 \
				>"$raw/memcached-$cc-$opt.lines"
			confirmed=$(head -1 "$raw/memcached-$cc-$opt.lines" | sed -E 's/.*\((.*)\)/\1/')
			# the layouts against pahole's
			"$lever" layout refs -q --no-cache --all-structs "$bin" >"$bin.all.rec"
			if command -v pahole >/dev/null; then
				pahole "$bin" >"$bin.pahole" 2>/dev/null || true
				"$py" "$lib/layout_pahole_compare.py" "$bin.all.rec" "$bin.pahole" 1 \
					>"$raw/memcached-$cc-$opt.pahole" || true
			fi
			grep $'^ref\t' "$bin.rec" | cut -f3 | sort | uniq -c | sort -rn >"$work/top" || true
			sed -n 1,15p "$work/top" >"$raw/memcached-$cc-$opt.top"
			grep '^# struct' "$bin.rec" >"$raw/memcached-$cc-$opt.left_out" || true
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cc" "$opt" "$fns" \
				"$memops" "$resolved" "$structs" "$refs" "$blocks" "$left" "$confirmed" \
				"$median" "$min" "$max" >>"$raw/memcached.tsv"
		done
	done
fi
"$py" "$here/table.py" "$raw" >"$root/bench/results/layout_static.md"
cat "$root/bench/results/layout_static.md"
