#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The layering of src/ (doc/architecture.md): fails, naming file and line, when
# a file includes a lever header its room may not include.
#
#   base  <-  elf, stats  <-  report  <-  tools  <-  cli
#   base, elf  <-  runtimes (src/*/runtime): never stats, report, a tool or cli
#
# A room includes any header of its own, the one public header of a room below
# it (tools may also use each other's), and the contract headers shared by a
# runtime and the CLI (settings.h, stack_pads.h, the profile format) — except
# the hallways, which know nothing of the tools. Only src/cli includes cli/.
#
# Usage: layering.sh [BUILD_DIR] SOURCE_DIR   (or: layering.sh --src DIR)
set -uo pipefail
if [[ ${1:-} == --src ]]; then
	src=$2
elif [[ $# -ge 2 ]]; then
	src=$2/src
else
	echo "usage: $0 BUILD_DIR SOURCE_DIR | $0 --src SRC_DIR" >&2
	exit 2
fi
[[ -d $src/base ]] || {
	echo "layering.sh: $src is not lever's src/ (no base/)" >&2
	exit 2
}

# The one header of each analysis room: what other rooms may include. A room
# that renames its public header says so here (stabilizer/cc: cc.h today,
# wrapper.h on the launch branch — drop the old name once it is gone).
declare -A public=(
	[base]=base/base.h
	[elf]=elf/elf.h
	[stats]=stats/stats.h
	[report]=report/report.h
	[causal]=causal/causal.h
	[stabilizer/cc]="stabilizer/cc/cc.h stabilizer/cc/wrapper.h"
	[launch]=launch/launch.h
	[measure]=measure/measure.h
	[annotate]=annotate/annotate.h
	[layout]=layout/layout.h
)
# Names shared by a runtime and the CLI: environment variables, file formats.
contracts=" causal/runtime/settings.h stabilizer/runtime/settings.h annotate/runtime/settings.h "
contracts+=" annotate/runtime/features.h annotate/runtime/features_ops.h annotate/runtime/branches.h "
contracts+=" layout/runtime/settings.h layout/runtime/instr_format.h stabilizer/runtime/stack_pads.h causal/profile_format.h "
# Until the Stabilizer runtime has its settings.h, its environment contract is
# the top of its internal stabilizer.h (issue 13); then it is internal again.
[[ -e $src/stabilizer/runtime/settings.h ]] || contracts+=" stabilizer/runtime/stabilizer.h "

rooms_re='^(base|elf|stats|report|causal|stabilizer|launch|measure|annotate|layout|cli|arch)/'

# The room of a path relative to src/: a runtime/, cc/ or plugins/ folder is a
# room of its own; otherwise the top folder.
room_of() {
	local d=${1%/*} top rest
	top=${d%%/*}
	rest=${d#"$top"/}
	rest=${rest%%/*}
	case $d in
	*/runtime | */runtime/* | stabilizer/cc | stabilizer/cc/* | stabilizer/plugins*)
		echo "$top/$rest" ;;
	*) echo "$top" ;;
	esac
}

layer_of() {
	case $1 in
	base) echo 0 ;;
	elf | stats) echo 1 ;;
	report) echo 2 ;;
	cli) echo 4 ;;
	*/runtime) echo runtime ;;
	stabilizer/plugins) echo plugin ;;
	*) echo 3 ;; # tools: causal, stabilizer/cc, launch, measure, annotate, layout
	esac
}

# Prints why file (room r) may not include h, or nothing if it may.
verdict() {
	local r=$1 h=$2 s lr ls
	s=$(room_of "$h")
	[[ $s == "$r" ]] && return
	lr=$(layer_of "$r")
	ls=$(layer_of "$s")
	if [[ $contracts == *" $h "* ]]; then
		[[ $lr == [012] ]] && echo "$r is a hallway: it knows nothing of the tools' contracts"
		return
	fi
	case $lr in
	runtime)
		[[ $h == base/base.h || $h == elf/elf.h ]] ||
			echo "a runtime includes only base, elf and contract headers, never analysis code"
		return ;;
	plugin)
		echo "a compiler plugin includes only contract headers"
		return ;;
	esac
	if [[ $s == cli ]]; then
		echo "only src/cli includes cli/"
	elif [[ $ls == runtime ]]; then
		echo "$h is internal to the runtime $s (only its contract headers are shared)"
	elif [[ " ${public[$s]:-} " != *" $h "* ]]; then
		echo "$h is private to $s (its public header: ${public[$s]:-none})"
	elif ! [[ $ls -lt $lr || ($ls == 3 && $lr == 3) ]]; then
		echo "$r (layer $lr) may not include $s (layer $ls): base <- elf/stats <- report <- tools <- cli"
	fi
}

fails=0 checked=0
while IFS= read -r -d '' file; do
	rel=${file#"$src"/}
	r=$(room_of "$rel")
	while IFS=: read -r line text; do
		[[ $text =~ include[[:space:]]*[\"\<]([^\">]+) ]] || continue
		h=${BASH_REMATCH[1]}
		[[ $h =~ $rooms_re ]] || continue
		checked=$((checked + 1))
		why=$(verdict "$r" "$h")
		if [[ -n $why ]]; then
			echo "src/$rel:$line: #include \"$h\": $why"
			fails=$((fails + 1))
		fi
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$file")
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' \) -print0 | sort -z)

if ((checked == 0)); then
	echo "FAIL: no lever #include found under $src"
	exit 1
fi
if ((fails > 0)); then
	echo "FAIL: $fails include(s) break the layering (doc/architecture.md)"
	exit 1
fi
echo "ok: $checked includes of lever headers under $src follow the layering"
