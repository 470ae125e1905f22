#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Stabilizer's correctness on real programs (issue 6): the eight programs of
# bench/stabilizer/programs.sh, built from Debian sources with lever cc, once
# plainly and once with a randomized link, must give byte-identical output
# under every combination of randomizations: each subset of {heap, code,
# stack} of `lever stabilize`, re-randomizing every 5 ms, plus all three
# randomized once (--one-time), for both builds. The reference is the plain
# build run without the runtime. Seeds are fixed: a failure prints the
# command that repeats it. Code re-randomization is checked to have happened
# (LEVER_STABILIZE_CODE_LOG), so the test cannot pass vacuously; a program
# that cannot be fetched or built fails the test.
#
#   tests/e2e/stabilizer_debian.sh BUILD_DIR SOURCE_DIR [PROGRAM...]
#
# Sources and builds are cached in BUILD_DIR/stabilizer-debian.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
shift 2
# shellcheck source=../../bench/stabilizer/programs.sh
. "$src/bench/stabilizer/programs.sh"
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=("${LEVER_PROGRAMS[@]}")
lever=$build/bin/lever
work=$build/stabilizer-debian
out=$work/runs
export LEVER_BUILD=$build LEVER_PROGRAMS_INPUTS=$work/inputs
mkdir -p "$out"
failures=0
t_start=$(date +%s)

fail() {
	printf 'FAIL: %s\n' "$*"
	failures=$((failures + 1))
}

# Build: two programs at a time, each make -j1 (the configure scripts are
# serial), the randomized link right after the plain build (it only relinks).
build_one() {
	local name=$1 t0
	t0=$(date +%s)
	if LEVER_PROGRAMS_JOBS=1 programs_build "$work" "$name" lever >/dev/null &&
		LEVER_PROGRAMS_JOBS=1 programs_build "$work" "$name" lever-link=1 >/dev/null; then
		printf 'built %s (%d s)\n' "$name" $(($(date +%s) - t0))
	else
		printf 'BUILD FAILED: %s\n' "$name"
		return 1
	fi
}
export -f build_one
printf '%s\n' "${programs[@]}" | xargs -P 2 -I{} bash -c \
	". '$src/bench/stabilizer/programs.sh' && work='$work' build_one {}" ||
	fail "a program could not be fetched or built (see above)"
printf 'builds done (%d s)\n' $(($(date +%s) - t_start))
[ $failures -eq 0 ] || exit 1

# The runtime configurations: NAME FLAGS SEED.
configs=(
	"heap --heap 11"
	"code --code 12"
	"stack --stack 13"
	"heap+code --heap,--code 14"
	"heap+stack --heap,--stack 15"
	"code+stack --code,--stack 16"
	"all --heap,--code,--stack 17"
	"all-one-time --heap,--code,--stack,--one-time 18"
)

# Check the -v report and the code log of one run.
check_runtime() {
	local what=$1 flags=$2 err=$3 log=$4 epochs
	case $flags in
	*--code*)
		grep -q 'code on' "$err" || fail "$what: code randomization did not run"
		grep 'code randomization off' "$err" | head -1 | grep . && fail "$what: code refused"
		[ -s "$log" ] && [ "$(grep -vc '^#' "$log")" -gt 0 ] ||
			fail "$what: no function was copied (empty code log)"
		epochs=$(grep -v '^#' "$log" | cut -d' ' -f1 | sort -u | wc -l)
		case $flags in
		*--one-time*) ;;
		*) [ "$epochs" -ge 2 ] || fail "$what: code was never re-randomized ($epochs epoch)" ;;
		esac
		;;
	esac
	case $flags in *--stack*) grep -q 'stack on' "$err" || fail "$what: stack padding did not run" ;; esac
	case $flags in *--heap*) grep -q 'heap shuffled' "$err" || fail "$what: the heap was not shuffled" ;; esac
}

run_configs() {
	local name=$1 variant=$2 bin=$3 ref=$4 cfg cname flags seed o err log rc cmd interval
	for cfg in "${configs[@]}"; do
		read -r cname flags seed <<<"$cfg"
		flags=${flags//,/ }
		interval=--interval=5ms
		[[ $flags == *--one-time* ]] && interval=
		o=$out/$name.$variant.$cname
		err=$o.err
		log=$o.codelog
		rm -f "$log"
		cmd="$lever stabilize -v $flags $interval --seed=$seed --"
		LEVER_STABILIZE_CODE_LOG=$log LEVER_PROGRAMS_LAUNCHER=$cmd \
			programs_run "$name" "$bin" ci "$o.out" 2>"$err"
		rc=$?
		local what="$name ($variant) under $cname"
		local repeat="LEVER_PROGRAMS_LAUNCHER='$cmd' $src/bench/stabilizer/programs.sh run $name $bin ci OUT"
		if [ $rc -ne 0 ]; then
			fail "$what: exit status $rc; repeat: $repeat"
			tail -n 5 "$err"
			continue
		fi
		cmp -s "$o.out" "$ref" || fail "$what: output differs from the reference; repeat: $repeat"
		check_runtime "$what" "$flags" "$err" "$log"
	done
}

for name in "${programs[@]}"; do
	t0=$(date +%s)
	plain=$(programs_build "$work" "$name" lever) || {
		fail "$name: not built"
		continue
	}
	linked=$(programs_build "$work" "$name" lever-link=1) || {
		fail "$name: link-randomized build missing"
		continue
	}
	cmp -s "$plain" "$linked" && fail "$name: the randomized link gave the same binary"
	ref=$out/$name.reference
	programs_run "$name" "$plain" ci "$ref" || {
		fail "$name: the plain build's workload fails without the runtime"
		continue
	}
	[ -s "$ref" ] || fail "$name: empty reference output"
	programs_run "$name" "$linked" ci "$out/$name.link.bare" &&
		cmp -s "$out/$name.link.bare" "$ref" ||
		fail "$name: the link-randomized build differs without the runtime"
	before=$failures
	run_configs "$name" lever "$plain" "$ref"
	run_configs "$name" lever-link=1 "$linked" "$ref"
	printf '%s: %s (%d runs, %d s)\n' "$name" \
		"$([ $failures -eq $before ] && echo 'all identical' || echo FAILED)" \
		$((2 * ${#configs[@]} + 2)) $(($(date +%s) - t0))
done
printf 'total %d s\n' $(($(date +%s) - t_start))
[ $failures -eq 0 ] || {
	echo "$failures failure(s)"
	exit 1
}
echo "PASS"
