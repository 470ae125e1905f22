#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What `lever cc` costs (bench/results/stabilizer-cc.md, "Overhead"): each
# row is one `lever compare` of two commands, interleaved runs, A the
# baseline:
#
#   frames compute 40 (fib(40), call-bound; tests/programs/stabilizer_cc/
#   frames.c): gcc -O2 against lever cc -O2 run without the runtime (what the
#   compiler's instrumentation costs), and lever cc without the runtime
#   against the same binary under `lever stabilize --stack` (what the stack
#   pads cost at run time);
#   for each Debian program of --programs (bench/stabilizer/programs.sh, its
#   `lever` build, CC=lever-cc -O2, and its bench workload): without the
#   runtime against under `lever stabilize --stack`.
#
#   bench/stabilizer/cc.sh BUILD [-n RUNS] [--programs LIST] [--work DIR] [--note TEXT]
#   bench/stabilizer/cc.sh --report-only
#
# Defaults: 15 runs, programs bzip2,zstd, work /tmp/lever-stabilizer-bench
# (programs.sh's sources and builds, shared with run.sh). The raw data stay
# in bench/results/stabilizer-cc-raw/ (CC_RAW): each lever compare output
# (NN.txt) with its row's label and commands (NN.row, NN.cmd) and the run's
# facts (meta); --report-only rebuilds the section from them
# (bench/results/regenerate.sh does, into CC_OUT). A failed comparison stops
# the run: it never becomes a row.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${CC_OUT:-$top/bench/results/stabilizer-cc.md}
raw=${CC_RAW:-$top/bench/results/stabilizer-cc-raw}

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }

# ------------------------------------------------------------ the section

meta() { sed -n "s/^$1=//p" "$raw/meta"; }

# row NN: a table row from one kept lever compare output
row() {
	local f=$raw/$1 label_a label_b ratio verdict
	IFS=$'\t' read -r label_a label_b <"$f.row"
	# "speedup: mean(A)/mean(B) = R, 95% CI [L, H] (BCa bootstrap)" -> "R [L, H]"
	ratio=$(sed -n 's/^ *speedup: .* = \([^,]*\), 95% CI \(\[[^]]*\]\).*/\1 \2/p' "$f.txt" | head -n 1)
	# the verdict: the first non-empty line after the speedup line
	verdict=$(awk '/^ *speedup:/ { on = 1; next } on && NF { sub(/^ +/, ""); print; exit }' "$f.txt")
	[ -n "$ratio" ] && [ -n "$verdict" ] || { echo "cc.sh: $f.txt: no speedup or verdict" >&2; return 1; }
	printf '| %s | %s | %s | %s |\n' "$label_a" "$label_b" "$ratio" "$verdict"
}

# ": a shared machine ..." when a 1-minute load average kept in meta was 1
# or more (other work on the 2 CPUs), nothing when the machine was idle.
busy_note() {
	local a b
	a=$(meta load_start | awk '{ print $1 }')
	b=$(meta load_end | awk '{ print $1 }')
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a >= 1 || b >= 1) }' &&
		printf ': a shared machine, **a rerun on an idle machine is due**'
	return 0
}

# The "Overhead" section of stabilizer-cc.md, from the raw data alone.
section() {
	local f
	echo "## Overhead"
	echo
	echo "Measured by \`bench/stabilizer/cc.sh\` on $(meta date) ($(meta machine); load average"
	echo "$(meta load_start) at the start, $(meta load_end) at the end$(busy_note)). $(meta runs) interleaved"
	echo "runs per row; \`lever compare\`, A the baseline, mean(A)/mean(B) with its 95% interval"
	echo "(below 1: B slower)."
	[ -z "$(meta note)" ] || { echo; echo "$(meta note)"; }
	echo
	echo "| A | B | mean(A)/mean(B) | verdict |"
	echo "|---|---|---|---|"
	for f in "$raw"/*.row; do
		row "$(basename "$f" .row)"
	done
	echo
	echo "Commands of each row: \`bench/results/stabilizer-cc-raw/NN.cmd\` (TMP = the run's"
	echo "scratch directory, WORK = programs.sh's); the lever compare outputs beside them."
	echo "\`bench/stabilizer/cc.sh --report-only\` rebuilds this section from them."
}

# Replace the section (from "## Overhead" to the end) of OUT.
write_out() {
	local tmp=$1
	if [ -f "$out" ] && grep -qx '## Overhead' "$out"; then
		sed '/^## Overhead$/,$d' "$out" >"$tmp/whole"
	elif [ -f "$out" ]; then
		{ cat "$out"; echo; } >"$tmp/whole"
	else
		printf '# lever cc: real programs and overhead\n\n' >"$tmp/whole"
	fi
	section >>"$tmp/whole"
	cp "$tmp/whole" "$out"
}

if [ "${1:-}" = --report-only ]; then
	[ -f "$raw/meta" ] || { echo "cc.sh: no raw data in $raw" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	write_out "$tmp"
	exit 0
fi

# ------------------------------------------------------------ measuring

[ $# -ge 1 ] || { usage >&2; exit 2; }
case $1 in -h | --help) usage; exit 0 ;; esac
build=$(cd "$1" && pwd)
shift
runs=15
programs=bzip2,zstd
work=/tmp/lever-stabilizer-bench
note=
while [ $# -gt 0 ]; do
	case $1 in
	-n | --runs) runs=$2 && shift ;;
	--programs) programs=$2 && shift ;;
	--work) work=$2 && shift ;;
	--note) note=$2 && shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "cc.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
lever=$build/bin/lever
[ -x "$lever" ] && [ -x "$build/bin/lever-cc" ] || { echo "cc.sh: no lever or lever-cc in $build/bin" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$work"
work=$(cd "$work" && pwd)
export LEVER_BUILD=$build PATH=$build/bin:$PATH LEVER_PROGRAMS_INPUTS=$work/inputs
# shellcheck source=programs.sh
. "$here/programs.sh"
stack="$lever stabilize --stack --seed=1 --"

rm -rf "$raw"
mkdir -p "$raw"
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine=$(uname -m), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "runs=$runs"
	echo "note=$note"
} >"$raw/meta"

n=0
compare() { # LABEL_A LABEL_B COMMAND_A COMMAND_B
	local f
	n=$((n + 1))
	f=$raw/$(printf '%02d' $n)
	printf '%s\t%s\n' "$1" "$2" >"$f.row"
	printf 'A: %s\nB: %s\n' "$3" "$4" | sed -e "s|$tmp/|TMP/|g" -e "s|$work/|WORK/|g" \
		-e "s|$build/|BUILD/|g" >"$f.cmd"
	if ! "$lever" compare --no-progress -n "$runs" -- "$3" "$4" >"$f.txt" 2>&1; then
		cat "$f.txt" >&2
		echo "cc.sh: lever compare failed on '$1' vs '$2'" >&2
		exit 1
	fi
	cat "$f.txt"
}

gcc -O2 "$top/tests/programs/stabilizer_cc/frames.c" -o "$tmp/fr-plain"
"$build/bin/lever-cc" -O2 "$top/tests/programs/stabilizer_cc/frames.c" -o "$tmp/fr-lever"
compare '`frames compute 40` (fib(40): call-bound), gcc -O2' 'same, lever cc -O2, no runtime' \
	"$tmp/fr-plain compute 40" "$tmp/fr-lever compute 40"
compare '`frames compute 40`, lever cc, no runtime' 'same under `lever stabilize --stack` (seed 1)' \
	"$tmp/fr-lever compute 40" "$stack $tmp/fr-lever compute 40"

IFS=, read -r -a plist <<<"$programs"
for p in "${plist[@]}"; do
	programs_fetch "$work" "$p" >&2
	bin=$(programs_build "$work" "$p" lever | tail -n 1)
	[ -x "$bin" ] || { echo "cc.sh: programs_build $p lever gave no executable" >&2; exit 1; }
	for cfg in plain stack; do
		launcher=
		[ $cfg = stack ] && launcher=$stack
		printf '. %q\nLEVER_PROGRAMS_LAUNCHER=%q programs_run %q %q bench /dev/null\n' \
			"$here/programs.sh" "$launcher" "$p" "$bin" >"$work/cc-$p-$cfg.sh"
	done
	# the input is made on the first run: once before the timed ones
	bash "$work/cc-$p-plain.sh" >/dev/null
	compare "$p (programs.sh bench workload), lever cc -O2, no runtime" \
		'same under `lever stabilize --stack` (seed 1)' \
		"bash $work/cc-$p-plain.sh" "bash $work/cc-$p-stack.sh"
	for cfg in plain stack; do # what the two scripts ran
		printf '\nWORK/cc-%s-%s.sh:\n' "$p" $cfg
		sed -e "s|$work/|WORK/|g" -e "s|$build/|BUILD/|g" -e "s|$here/|bench/stabilizer/|g" \
			"$work/cc-$p-$cfg.sh"
	done >>"$raw/$(printf '%02d' $n).cmd"
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw/meta"
write_out "$tmp"
echo "cc.sh: wrote the Overhead section of $out (raw data: $raw)" >&2
