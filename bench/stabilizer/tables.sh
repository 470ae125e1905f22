# SPDX-License-Identifier: GPL-3.0-or-later
# Tables of bench/results/stabilizer.md built from the raw data alone, so
# that run.sh (writing them) and bench/results/regenerate.sh (rebuilding them
# from the committed raw data, to check they match) share one definition.
# Sourced; needs jq.

# stabilizer_overhead_table RAW_DIR : the "Overhead per randomization" table,
# time(config) / mean(time(link)) per program from overhead-{heap,code,stack,
# all}.json (lever compare --suite --export-json), programs in their order
# there, then the median and max rows.
stabilizer_overhead_table() {
	local raw=$1 c p configs=(heap code stack all)
	printf '| program | heap | code | stack | all |\n|---|--:|--:|--:|--:|\n'
	for p in $(jq -r '.benchmarks[].benchmark' "$raw/overhead-all.json"); do
		printf '| %s |' "$p"
		for c in "${configs[@]}"; do
			jq -r --arg p "$p" '.benchmarks[] | select(.benchmark == $p) | .time_ratio' \
				"$raw/overhead-$c.json" | xargs printf ' %.3f |'
		done
		echo
	done
	for stat in median max; do
		printf '| **%s** |' "$stat"
		for c in "${configs[@]}"; do
			jq -r ".time_ratio.$stat" "$raw/overhead-$c.json" | xargs printf ' **%.3f** |'
		done
		echo
	done
}

# stabilizer_table1 LEVER RAW_DIR : Table 1 (normality, one-time vs
# re-randomized) from table1.csv, the CSV suite file of the table1 part.
stabilizer_table1() {
	local md
	md=$(mktemp -d)/table1.md || return 1
	(cd "$2" && "$1" compare --suite table1.csv --configs one-time,re-randomized --drop-max \
		--export-markdown "$md" >/dev/null) && cat "$md"
	local status=$?
	rm -rf "$(dirname "$md")"
	return $status
}

# stabilizer_suite_text LEVER RAW_DIR : lever compare's report of -O2 vs -O3
# from suite.csv (names relative to RAW_DIR, so that the text holds no path
# of the machine that ran it).
stabilizer_suite_text() {
	(cd "$2" && "$1" compare --suite suite.csv --configs O2,O3 --drop-max)
}
