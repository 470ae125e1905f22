#!/usr/bin/env bash
# Robustness of the causal runtime on tests/programs/causal/*: every program
# runs bare and under lever (perf and timer samplers, short experiments that
# always insert delays) and must print the same output, exit the same way,
# neither crash nor hang, and leave a profile starting with a startup record.
# Then: fork_exec with and without --follow-children (per-pid profiles of the
# children that are dynamically linked programs, or none at all), and lever
# sharing LD_PRELOAD with another library, before or after it.
#
# Usage: causal_robustness.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
progs=$build/tests/programs/causal
lever=$build/bin/lever
runtime=$build/lib/lever/liblever-causal.so
noop=$progs/libnoop_preload.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}

# Options that make experiments short and never 0%, so delays are inserted
# around every kind of blocking call while the programs run.
opts=(--experiment-length 20ms --cooloff 2ms --zero-probability 0)
env_opts=(LEVER_CAUSAL_EXPERIMENT_MS=20 LEVER_CAUSAL_COOLOFF_MS=2 LEVER_CAUSAL_ZERO_PROBABILITY=0)

# run_lever OUT SAMPLER FOLLOW PROGRAM [ARGS...]: runs PROGRAM under lever
# through the launcher, or through the environment contract if there is none.
run_lever() {
	local out=$1 sampler=$2 follow=$3
	shift 3
	if [ -x "$lever" ]; then
		local extra=()
		[ "$follow" = 1 ] && extra+=(--follow-children)
		timeout 60 "$lever" causal -o "$out" --sampler="$sampler" "${opts[@]}" "${extra[@]}" \
			-- "$@"
	else
		# shellcheck disable=SC2016 # $$ is the program's pid: it is exec'd
		timeout 60 env "${env_opts[@]}" LEVER_CAUSAL_ACTIVE=1 LEVER_CAUSAL_OUTPUT="$out" \
			LEVER_CAUSAL_SAMPLER="$sampler" LEVER_CAUSAL_FOLLOW_CHILDREN="$follow" \
			LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$runtime" \
			bash -c 'export LEVER_CAUSAL_ROOT_PID=$$; exec "$@"' bash "$@"
	fi
}

starts_with_startup() {
	[ -s "$1" ] && head -n 1 "$1" | grep -q '^startup	'
}

# check NAME SAMPLER PROGRAM [ARGS...]
check() {
	local name=$1 sampler=$2
	shift 2
	local dir=$tmp/$name-$sampler
	mkdir -p "$dir"
	(cd "$dir" && timeout 60 "$@" >bare.out 2>bare.err)
	local bare=$?
	(cd "$dir" && run_lever "$dir/p.coz" "$sampler" 0 "$@" >lever.out 2>lever.err)
	local got=$?
	if [ $got = 124 ]; then
		fail "$name ($sampler): timed out under lever (deadlock?)"
		return
	fi
	if [ $got != $bare ]; then
		fail "$name ($sampler): exit status $got under lever, $bare bare"
		sed 's/^/  stderr: /' "$dir/lever.err" | head -n 20
		return
	fi
	if ! cmp -s "$dir/bare.out" "$dir/lever.out"; then
		fail "$name ($sampler): output differs under lever"
		diff "$dir/bare.out" "$dir/lever.out" | head -n 20
		return
	fi
	if ! starts_with_startup "$dir/p.coz"; then
		fail "$name ($sampler): no profile starting with a startup record"
		return
	fi
	# Short experiments at high speedups may legitimately end with a negative
	# effective duration (a batch of samples taken just before the experiment
	# started is counted in it); wrapped or garbled values are bugs.
	if awk -F'\t' '$1 == "experiment" { sub(/^duration=/, "", $4)
			if ($4 !~ /^-?[0-9]+$/ || $4 + 0 > 1e12 || $4 + 0 < -1e12) bad = 1 }
			END { exit !bad }' "$dir/p.coz"; then
		fail "$name ($sampler): experiment with a wrapped or malformed duration"
		grep '^experiment' "$dir/p.coz" | head -n 5
		return
	fi
	echo "ok $name ($sampler): same output and exit status ($bare)," \
		"$(grep -c '^experiment' "$dir/p.coz") experiments"\
		"($(awk -F'\t' '$1 == "experiment" && $4 ~ /^duration=-?[0-9]+$/ {
			sub(/^duration=/, "", $4); if ($4 + 0 <= 0) n++ } END { print n + 0 }' \
			"$dir/p.coz") with duration <= 0)"
}

if [ ! -x "$lever" ] && [ ! -f "$runtime" ]; then
	echo "FAIL neither $lever nor $runtime exists"
	exit 1
fi

programs=(prodcons sigprof_handler fork_exec threads1000 exit_thread cxx_threads sleeps
	rwlock_barrier_sem eintr_waits sigwait_prof progress_threads fd_budget)
[ -x "$progs/coz_compat" ] && programs+=(coz_compat)
for sampler in perf timer; do
	for p in "${programs[@]}"; do
		check "$p" "$sampler" "$progs/$p"
	done
done

# ---- preloaded but idle (no LEVER_CAUSAL_ACTIVE): every interposer passes through ----
for p in sigprof_handler rwlock_barrier_sem cxx_threads; do
	dir=$tmp/idle-$p
	mkdir -p "$dir"
	(cd "$dir" && LD_PRELOAD=$runtime timeout 60 "$progs/$p" >out 2>err)
	rc=$?
	if [ $rc != 0 ] || ! cmp -s "$dir/out" "$tmp/$p-perf/bare.out" || [ -e "$dir/profile.coz" ]; then
		fail "$p with the runtime preloaded but idle: status $rc, output or profile differs"
	else
		echo "ok $p with the runtime preloaded but idle"
	fi
done

# ---- fork_exec and --follow-children ----
follow_check() { # FOLLOW
	local follow=$1 dir=$tmp/follow-$1
	mkdir -p "$dir"
	(cd "$dir" && FORK_EXEC_PIDS=$dir/pids run_lever "$dir/p.coz" perf "$follow" \
		"$progs/fork_exec" >out 2>err)
	local rc=$?
	if [ $rc != 0 ] || ! cmp -s "$dir/out" "$tmp/fork_exec-perf/bare.out"; then
		fail "fork_exec (follow=$follow): status $rc or output differs"
		return
	fi
	local n=0 missing=0 pid
	while read -r pid; do
		n=$((n + 1))
		if [ "$follow" = 1 ] && ! starts_with_startup "$dir/p.coz.$pid"; then
			missing=$((missing + 1))
			echo "  no profile p.coz.$pid starting with a startup record"
		fi
	done <"$dir/pids"
	local files
	files=$(find "$dir" -maxdepth 1 -name 'p.coz.*' | wc -l)
	if [ "$follow" = 1 ]; then
		if [ $n != 3 ] || [ $missing != 0 ]; then
			fail "--follow-children: $missing of $n children have no per-pid profile"
			ls "$dir"
			return
		fi
		echo "ok --follow-children: per-pid profiles for the $n dynamically linked children" \
			"($files files in all)"
	else
		if [ "$files" != 0 ]; then
			fail "without --follow-children, children wrote profiles:" \
				"$(cd "$dir" && echo p.coz.*)"
			return
		fi
		echo "ok without --follow-children: no per-pid profiles"
	fi
	if ! starts_with_startup "$dir/p.coz"; then
		fail "fork_exec (follow=$follow): the parent's profile has no startup record"
	fi
}
follow_check 0
follow_check 1

# ---- sharing LD_PRELOAD with another library ----
preload_check() { # NAME LD_PRELOAD_VALUE PROGRAM
	local name=$1 preload=$2 prog=$3 dir=$tmp/preload-$1
	mkdir -p "$dir"
	(cd "$dir" && "$progs/$prog" >bare.out 2>/dev/null)
	if [ "$name" = after ]; then
		# lever first: only possible through the environment contract
		(cd "$dir" && NOOP_PRELOAD_MARK=$dir/mark timeout 60 env "${env_opts[@]}" \
			LEVER_CAUSAL_ACTIVE=1 LEVER_CAUSAL_OUTPUT="$dir/p.coz" \
			LD_PRELOAD="$runtime $preload" "$progs/$prog" >out 2>err)
	else
		(cd "$dir" && NOOP_PRELOAD_MARK=$dir/mark LD_PRELOAD=$preload \
			run_lever "$dir/p.coz" perf 0 "$progs/$prog" >out 2>err)
	fi
	local rc=$?
	if [ $rc != 0 ] || ! cmp -s "$dir/out" "$dir/bare.out"; then
		fail "LD_PRELOAD $name ($prog): status $rc or output differs"
		head -n 5 "$dir/err"
		return
	fi
	if ! [ -s "$dir/mark" ] || ! starts_with_startup "$dir/p.coz"; then
		fail "LD_PRELOAD $name ($prog): the other library or lever did not run"
		return
	fi
	echo "ok LD_PRELOAD with another library $name lever ($prog):" \
		"$(wc -l <"$dir/mark") processes ran it"
}
if [ -f "$noop" ]; then
	preload_check before "$noop" prodcons
	preload_check before-fork "$noop" fork_exec
	preload_check after "$noop" cxx_threads
	# unfollowed children keep the other library but not lever
	if [ -s "$tmp/preload-before-fork/mark" ] &&
		[ "$(wc -l <"$tmp/preload-before-fork/mark")" -lt 3 ]; then
		fail "unfollowed children lost the other LD_PRELOAD library"
	fi
else
	fail "$noop was not built"
fi

if [ $failures != 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all robustness checks passed"
