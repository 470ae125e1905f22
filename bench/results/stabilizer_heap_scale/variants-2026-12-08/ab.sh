#!/bin/bash
# usage: ab.sh ROUNDS VARIANT... -- CMD...   (VARIANT: glibc or a .so path); prints variant,task_ms,maxrss
rounds=$1; shift; vars=()
while [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
for r in $(seq 1 $rounds); do
	for v in $(printf '%s\n' "${vars[@]}" | shuf); do
		if [ "$v" = glibc ]; then pre=(); else pre=(env LEVER_STABILIZE_HEAP=1 LEVER_STABILIZE_SEED=$RANDOM$RANDOM LD_PRELOAD=$v); fi
		"${pre[@]}" perf stat -x, -e task-clock -o /tmp/ab.stat /usr/bin/time -o /tmp/ab.time -f %M "$@" >/dev/null 2>&1
		echo "$(basename $v),$(grep task-clock /tmp/ab.stat | cut -d, -f1),$(cat /tmp/ab.time)"
	done
done
