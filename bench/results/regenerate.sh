#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Rebuilds the tables of bench/results/ from the raw data committed beside
# them, with the same code the benchmark scripts use to write them, and
# either rewrites them (default) or checks that the committed tables are
# exactly what their raw data give (--check: a diff and exit 1 otherwise;
# ctest runs this as bench_results). Never re-runs a benchmark.
#   bench/results/regenerate.sh [--check] [BUILD]
# BUILD (default build) is needed for tables that run the built lever
# (causal report, compare --samples, annotate derive) or test_annotate_appendix_a.
# A table is settled whole, or as the block between two marker lines of a
# hand-written page, or as a README's copy of a generated table (found by
# its header line).
# A table whose raw data were never kept is listed with the reason and the
# command that makes it regenerable next time (re-running its benchmark,
# which now keeps the raw data); it is neither rebuilt nor checked.
set -euo pipefail
results=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$(cd "$results/.." && pwd)
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
build=${1:-$bench/../build}
[ -d "$build" ] && build=$(cd "$build" && pwd) # lever compare runs in the raw directories
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0 rebuilt=0

# The table after a heading in a Markdown file: the first run of lines
# starting with '|' after the line HEADING.
table_after() { # FILE HEADING
	awk -v h="$2" '$0 == h { on = 1; next } on && /^\|/ { t = 1; print; next } t { exit }' "$1"
}

# Replaces (or checks) the table after HEADING in FILE by the text in NEW.
settle_table() { # FILE HEADING NEW
	local file=$1 heading=$2 new=$3 old=$tmp/old
	table_after "$file" "$heading" >"$old"
	[ -s "$old" ] || { echo "regenerate: no table after '$heading' in $file" >&2; exit 1; }
	settle "$file: $heading" "$old" "$new" && return 0
	[ $check = 1 ] && return 1
	awk -v h="$heading" -v new="$new" '
		$0 == h { on = 1; print; next }
		on && /^\|/ { if (!done) { while ((getline l < new) > 0) print l; done = 1 } next }
		done { on = 0 }
		{ print }' "$file" >"$tmp/whole" && cp "$tmp/whole" "$file"
}

# The lines strictly between the line FROM and the next line TO of FILE.
between() { # FILE FROM TO
	awk -v a="$2" -v b="$3" 'on && $0 == b { exit } on { print } $0 == a { on = 1 }' "$1"
}

# Replaces (or checks) the lines between FROM and the next TO in FILE by NEW.
settle_between() { # FILE FROM TO NEW
	local file=$1 from=$2 to=$3 new=$4 old=$tmp/old
	between "$file" "$from" "$to" >"$old"
	[ -s "$old" ] || { echo "regenerate: nothing between '$from' and '$to' in $file" >&2; exit 1; }
	settle "$file: after '$from'" "$old" "$new" && return 0
	[ $check = 1 ] && return 1
	awk -v a="$from" -v b="$to" -v new="$new" '
		on && $0 == b { on = 0 }
		on { next }
		{ print }
		$0 == a { while ((getline l < new) > 0) print l; on = 1 }' "$file" >"$tmp/whole" &&
		cp "$tmp/whole" "$file"
}

# Compares OLD and NEW: 0 if equal; else the diff (under --check) and 1.
settle() { # WHAT OLD NEW
	rebuilt=$((rebuilt + 1))
	if cmp -s "$2" "$3"; then
		echo "regenerate: $1: same as its raw data give"
		return 0
	fi
	if [ $check = 1 ]; then
		echo "FAIL: $1 differs from what its raw data give (- committed, + rebuilt):"
		diff -u "$2" "$3" | tail -n +3
		status=1
	else
		echo "regenerate: $1: rewritten from its raw data"
	fi
	return 1
}

# Replaces (or checks) the whole of FILE (a path under bench/results) by NEW.
settle_file() { # FILE NEW
	if ! settle "${1#"$results"/}" "$1" "$2" && [ $check = 0 ]; then
		cp "$2" "$1"
	fi
}

# Replaces (or checks) the copy, in a README, of the table a benchmark
# wrote to NEW (its first run of lines starting with '|'): the table of
# FILE whose header line is NEW's header line.
settle_quoted_table() { # FILE NEW
	local file=$1 new=$tmp/quoted old=$tmp/old head
	awk '/^\|/ { t = 1; print; next } t { exit }' "$2" >"$new"
	head=$(head -n 1 "$new")
	awk -v h="$head" '$0 == h { on = 1 } on && /^\|/ { print; next } on { exit }' "$file" >"$old"
	[ -s "$old" ] || { echo "regenerate: no table '$head' in $file" >&2; exit 1; }
	settle "${file#"$results"/}: the table '${head:0:40}...'" "$old" "$new" && return 0
	[ $check = 1 ] && return 1
	awk -v h="$head" -v new="$new" '
		$0 == h { on = 1; while ((getline l < new) > 0) print l }
		on && /^\|/ { next }
		{ on = 0; print }' "$file" >"$tmp/whole" && cp "$tmp/whole" "$file"
}

# stabilizer.md, "Overhead per randomization": lever compare --suite JSON
# exports in stabilizer-raw/ (bench/stabilizer/run.sh --parts overhead).
. "$bench/stabilizer/tables.sh"
stabilizer_overhead_table "$results/stabilizer-raw" >"$tmp/overhead"
settle_table "$results/stabilizer.md" "## Overhead per randomization (paper §5.2, Fig. 6)" \
	"$tmp/overhead" || true

# stabilizer.md, Table 1 and -O2 vs -O3: lever compare --suite on the CSV
# suite files table1.csv and suite.csv in stabilizer-raw/ (run.sh --parts
# table1,suite), the same calls run.sh makes.
if [ -x "$build/bin/lever" ]; then
	{
		echo
		stabilizer_table1 "$build/bin/lever" "$results/stabilizer-raw"
		echo
	} >"$tmp/table1"
	settle_between "$results/stabilizer.md" \
		'`lever compare --suite table1.csv --configs one-time,re-randomized --drop-max --export-markdown table1.md`:' \
		"## Overhead per randomization (paper §5.2, Fig. 6)" "$tmp/table1" || true
	stabilizer_suite_text "$build/bin/lever" "$results/stabilizer-raw" >"$tmp/suite"
	settle_between "$results/stabilizer.md" '```' '```' "$tmp/suite" || true
else
	echo "regenerate: stabilizer.md, Table 1 and -O2 vs -O3: no $build/bin/lever to run lever compare --suite; build lever first"
fi

# amp.md: the whole file, from amp-raw/ (AMP_REPORT_ONLY of bench/amp/run.sh).
if [ -f "$results/amp-raw/amp-c3.coz" ] && [ -f "$results/amp-raw/meta" ]; then
	AMP_OUT=$tmp/amp.md AMP_REPORT_ONLY=$results/amp-raw "$bench/amp/run.sh" "$build" >/dev/null
	if ! settle "amp.md" "$results/amp.md" "$tmp/amp.md" && [ $check = 0 ]; then
		cp "$tmp/amp.md" "$results/amp.md"
	fi
else
	echo "regenerate: amp.md: not regenerable: amp-raw/ lacks the AMP profiles (amp-c*.coz, causal.coz; .gitignore dropped them) and meta; run bench/amp/run.sh, which now keeps them"
fi

# stabilizer_heap.md: the whole file, from stabilizer_heap-raw/.
if [ -f "$results/stabilizer_heap-raw/meta" ]; then
	STABILIZER_HEAP_OUT=$tmp/heap.md "$bench/stabilizer_heap/run.sh" --report-only >/dev/null
	if ! settle "stabilizer_heap.md" "$results/stabilizer_heap.md" "$tmp/heap.md" && [ $check = 0 ]; then
		cp "$tmp/heap.md" "$results/stabilizer_heap.md"
	fi
else
	echo "regenerate: stabilizer_heap.md: not regenerable: its lever compare outputs were not kept; run bench/stabilizer_heap/run.sh BUILD, which now keeps them in stabilizer_heap-raw/"
fi

# stabilizer_heap_scale/README.md: the whole file, from raw.csv and notes.md
# beside it (bench/stabilizer_heap/scale.sh runs table.py the same way).
scale=$results/stabilizer_heap_scale
python3 "$bench/stabilizer_heap/table.py" "$scale/raw.csv" "$scale/notes.md" >"$tmp/scale.md"
if ! settle "stabilizer_heap_scale/README.md" "$scale/README.md" "$tmp/scale.md" && [ $check = 0 ]; then
	cp "$tmp/scale.md" "$scale/README.md"
fi

# stabilizer-random.md: the whole file, from stabilizer-random-raw/ (nist.sh's
# test outputs, one per row).
if [ -f "$results/stabilizer-random-raw/meta" ]; then
	NIST_RAW=$results/stabilizer-random-raw "$bench/stabilizer/nist.sh" --report-only \
		"$tmp/random.md" >/dev/null
	if ! settle "stabilizer-random.md" "$results/stabilizer-random.md" "$tmp/random.md" && [ $check = 0 ]; then
		cp "$tmp/random.md" "$results/stabilizer-random.md"
	fi
else
	echo "regenerate: stabilizer-random.md: not regenerable: no stabilizer-random-raw/; run bench/stabilizer/nist.sh BUILD, which keeps it"
fi

# stabilizer-cc.md, the "Overhead" section (to the end of the file): from
# stabilizer-cc-raw/ (bench/stabilizer/cc.sh's lever compare outputs).
if [ -f "$results/stabilizer-cc-raw/meta" ]; then
	cp "$results/stabilizer-cc.md" "$tmp/cc.md"
	CC_OUT=$tmp/cc.md CC_RAW=$results/stabilizer-cc-raw "$bench/stabilizer/cc.sh" --report-only
	if ! settle "stabilizer-cc.md" "$results/stabilizer-cc.md" "$tmp/cc.md" && [ $check = 0 ]; then
		cp "$tmp/cc.md" "$results/stabilizer-cc.md"
	fi
else
	echo "regenerate: stabilizer-cc.md: not regenerable: no stabilizer-cc-raw/; run bench/stabilizer/cc.sh BUILD, which keeps it"
fi

# startup-*.md: the whole file, from startup-*-raw/ (bench/startup/run.sh -R).
for raw_dir in "$results"/startup*-raw; do
	[ -f "$raw_dir/meta" ] || continue
	name=$(basename "${raw_dir%-raw}")
	STARTUP_RAW=$raw_dir "$bench/startup/run.sh" -R -o "$tmp/$name.md" 2>/dev/null
	if ! settle "$name.md" "$results/$name.md" "$tmp/$name.md" && [ $check = 0 ]; then
		cp "$tmp/$name.md" "$results/$name.md"
	fi
done

# causal.md: the whole file, from causal-raw/ (bench/causal/run.sh's data/).
if [ -f "$results/causal-raw/meta.txt" ]; then
	python3 "$bench/causal/analyze.py" tables "$results/causal-raw" >"$tmp/causal.md"
	if ! settle "causal.md" "$results/causal.md" "$tmp/causal.md" && [ $check = 0 ]; then
		cp "$tmp/causal.md" "$results/causal.md"
	fi
else
	echo "regenerate: causal.md: not regenerable (its header says so): the run's data/ was not kept; bench/causal/run.sh BUILD now copies it to causal-raw/"
fi

# figure1.md: the whole file, from figure1-raw/ (FIGURE1_REPORT_ONLY).
if [ -f "$results/figure1-raw/meta" ]; then
	FIGURE1_OUT=$tmp/figure1.md FIGURE1_REPORT_ONLY=$results/figure1-raw "$bench/figure1/run.sh" "$build" >/dev/null
	if ! settle "figure1.md" "$results/figure1.md" "$tmp/figure1.md" && [ $check = 0 ]; then
		cp "$tmp/figure1.md" "$results/figure1.md"
	fi
else
	echo "regenerate: figure1.md: not regenerable: its profiles and truth runs were not kept; bench/figure1/run.sh now keeps them in figure1-raw/"
fi
# figure1-sleep.md: the same check with pauses paid by sleeping (--pause=sleep),
# the measurement behind --pause=auto (doc/causal.md), from figure1-sleep-raw/.
if [ -f "$results/figure1-sleep-raw/meta" ]; then
	FIGURE1_OUT=$tmp/figure1-sleep.md FIGURE1_REPORT_ONLY=$results/figure1-sleep-raw "$bench/figure1/run.sh" "$build" >/dev/null
	if ! settle "figure1-sleep.md" "$results/figure1-sleep.md" "$tmp/figure1-sleep.md" && [ $check = 0 ]; then
		cp "$tmp/figure1-sleep.md" "$results/figure1-sleep.md"
	fi
fi

# lever layout: the clock source's overhead and skid (bench/layout/overhead.sh,
# skid.sh) and the static references' precision (bench/layout_static/run.sh).
for t in overhead skid; do
	if [ -d "$results/layout-$t-raw" ]; then
		python3 "$bench/layout/tables.py" $t "$results/layout-$t-raw" >"$tmp/layout-$t.md"
		if ! settle "layout-$t.md" "$results/layout-$t.md" "$tmp/layout-$t.md" &&
			[ $check = 0 ]; then
			cp "$tmp/layout-$t.md" "$results/layout-$t.md"
		fi
	fi
done
if [ -d "$results/layout_static-raw" ]; then
	python3 "$bench/layout_static/table.py" "$results/layout_static-raw" >"$tmp/layout_static.md"
	if ! settle "layout_static.md" "$results/layout_static.md" "$tmp/layout_static.md" &&
		[ $check = 0 ]; then
		cp "$tmp/layout_static.md" "$results/layout_static.md"
	fi
fi

# amp_saturation.md and causal_phases.md: the whole files, from their raw
# directories (the REPORT_ONLY modes of their run.sh).
AMP_SAT_OUT=$tmp/amp_saturation.md AMP_SAT_REPORT_ONLY=$results/amp_saturation-raw \
	"$bench/amp_saturation/run.sh" "$build" >/dev/null
settle_file "$results/amp_saturation.md" "$tmp/amp_saturation.md"
CAUSAL_PHASES_OUT=$tmp/causal_phases.md CAUSAL_PHASES_REPORT_ONLY=$results/causal_phases-raw \
	"$bench/causal_phases/run.sh" "$build" >/dev/null
settle_file "$results/causal_phases.md" "$tmp/causal_phases.md"

# annotate.md: the whole file, from annotate-raw/ (bench/annotate/run.sh's
# times and models).
ANNOTATE_OUT=$tmp/annotate.md "$bench/annotate/run.sh" --report-only >/dev/null
settle_file "$results/annotate.md" "$tmp/annotate.md"

# annotate-appendix-a.md: the whole file, from the synthetic record kept in
# annotate-appendix-a-raw/ (test_annotate_appendix_a's table, then derive).
if [ -x "$build/bin/test_annotate_appendix_a" ]; then
	bash "$bench/annotate_metrics/appendix_a_table.sh" "$build" "$tmp/appendix-a.md"
	settle_file "$results/annotate-appendix-a.md" "$tmp/appendix-a.md"
else
	echo "regenerate: annotate-appendix-a.md: no $build/bin/test_annotate_appendix_a; build first"
fi

# layout-static-vs-instr.md: the whole file, from layout-static-vs-instr-raw/
# (the plugin's truth, the refs and nm of each build; python3 only).
bash "$bench/layout/static_vs_instr.sh" --report-only "$build" "$tmp/svi.md" >/dev/null
settle_file "$results/layout-static-vs-instr.md" "$tmp/svi.md"

# layout-designed.md: the block between its markers, from
# layout-designed-raw/ (bench/layout/designed.sh's lever compare JSON).
bash "$bench/layout/table.sh" "$results/layout-designed-raw" "$build" >"$tmp/designed"
settle_between "$results/layout-designed.md" \
	'<!-- from here to the end marker: bench/layout/table.sh bench/results/layout-designed-raw -->' \
	'<!-- end of bench/layout/table.sh -->' "$tmp/designed" || true

# layout-memcached/: the overhead rounds (bench/layout/memcached.sh writes
# overhead.tsv and runs memcached_table.py on it), the disturbed second run
# kept beside them, and the README's copy of the table.
mc=$results/layout-memcached
for t in overhead overhead-run2-disturbed overhead-rate; do
	[ -f "$mc/$t.tsv" ] || continue
	python3 "$bench/layout/memcached_table.py" "$mc/$t.tsv" >"$tmp/mc-$t.md"
	settle_file "$mc/$t.md" "$tmp/mc-$t.md"
done
settle_quoted_table "$mc/README.md" "$tmp/mc-overhead.md" || true
# and the README's top structs against the thesis, from the report's JSON
python3 "$bench/layout/memcached_structs_table.py" "$mc/memcached-clock.report.json" >"$tmp/mc-structs.md"
settle_quoted_table "$mc/README.md" "$tmp/mc-structs.md" || true

# annotate-real/: the overhead rounds (bench/annotate/real.sh writes
# overhead.tsv and runs real_table.py on it) and the README's copy.
ar=$results/annotate-real
python3 "$bench/annotate/real_table.py" "$ar/overhead.tsv" >"$tmp/ar-overhead.md"
settle_file "$ar/overhead.md" "$tmp/ar-overhead.md"
settle_quoted_table "$ar/README.md" "$tmp/ar-overhead.md" || true
python3 "$bench/annotate/real_features_table.py" "$ar" list_sort sqlite >"$tmp/ar-features.md"
settle_file "$ar/features.md" "$tmp/ar-features.md"
settle_quoted_table "$ar/README.md" "$tmp/ar-features.md" || true

# bench/annotate_probe/README.md: its copy of the table run.sh prints
# (table.py on raw.csv beside it).
ap=$bench/annotate_probe
python3 "$ap/table.py" "$ap/raw.csv" >"$tmp/annotate-probe.md"
settle_quoted_table "$ap/README.md" "$tmp/annotate-probe.md" || true

# The rest, listed so that nothing looks regenerable that is not.
[ -f "$results/startup-raw/meta" ] ||
	echo "regenerate: startup.md: not regenerable (its header says so): its raw data were never kept; bench/startup/run.sh BUILD now keeps them in startup-raw/ (startup-reduced.md shows that pipeline)"
echo "regenerate: $rebuilt table(s) rebuilt from raw data"
[ "$rebuilt" -gt 0 ] || { echo "FAIL: no table was rebuilt"; exit 1; }
exit $status
