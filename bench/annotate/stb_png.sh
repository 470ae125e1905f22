#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The real-library walk-through of doc/annotate.md ("A real program", issue
# 16 must-show 3), with its figures: stb_image_write's PNG encoder
# (stbi_write_png_to_mem, source from Debian's libstb-dev) built with
# -g -O2 as shipped and with the two injections of bench/annotate/
# stb_png_impl.c, then
#   1. recorded (--rate all, time,cpu,mem) and derived per metric, with the
#      HTML page;
#   2. checked: the mem and cpu annotations against an unchanged run, the
#      input-dependent regression and the constant cost, with and without
#      --tolerance 0.1 (verdicts in checks.txt);
#   3. the overhead: whole runs bare against recorded (--rate all and the
#      default rate), ROUNDS interleaved rounds, the load kept with each.
# The e2e test tests/e2e/annotate_real_stb.sh asserts the mem verdicts; the
# cpu ones are here to show why it does not use time (load moves them).
# Results: bench/results/annotate-real/stb_png/.
#
# usage: stb_png.sh LEVER_BUILD_DIR [ROUNDS (default 7)] [IMAGES (default 300)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-7}
images=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lever=$build/bin/lever
out=$root/bench/results/annotate-real/stb_png
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

variant() { # NAME CFLAGS...
	local name=$1
	shift
	gcc -g -O2 "$@" -c "$here/stb_png_impl.c" -o "$work/$name.o"
	gcc -g -O2 -I"$here" "$here/stb_png.c" "$work/$name.o" -o "$work/$name"
}
variant stb_png
variant stb_png_rows -DLEVER_INJECT_ROW_COPY=10
variant stb_png_const -DLEVER_INJECT_CONSTANT=4096

{
	echo "date: $(date -u +%FT%TZ)"
	echo "uptime: $(uptime)"
	echo "gcc: $(gcc --version | head -1)"
	echo "libstb-dev: $(dpkg-query -W -f='${Version}' libstb-dev 2>/dev/null)"
	echo "lever: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "images: $images"
} >"$out/environment.txt"

record() { # NAME BINARY [record options]
	local name=$1 bin=$2
	shift 2
	"$lever" annotate record --metrics time,cpu,mem "$@" -f stbi_write_png_to_mem \
		-o "$work/$name" -- "$work/$bin" "$images" >/dev/null 2>"$work/$name.stderr"
}

# --- 1. record, derive, HTML ---------------------------------------------
record base stb_png --rate all
cp "$work/base/record" "$out/base.record"
for m in mem cpu time; do
	html=()
	[ "$m" = mem ] && html=(--html "$out/derive-mem.html")
	(cd "$out" && "$lever" annotate derive --metric "$m" "${html[@]/#$out\//}" base.record \
		>"derive-$m.ann")
done

# --- 2. check -------------------------------------------------------------
record again stb_png --rate all
record rows stb_png_rows --rate all
record const stb_png_const --rate all
: >"$out/checks.txt"
for m in mem cpu; do
	for run in again rows const; do
		for tol in 0 0.1; do
			set +e
			"$lever" annotate check --tolerance "$tol" "$out/derive-$m.ann" \
				"$work/$run/record" >"$work/check.out"
			status=$?
			set -e
			{
				echo "== $m, run '$run', --tolerance $tol: exit $status (load $(cut -d' ' -f1 /proc/loadavg))"
				cat "$work/check.out"
			} >>"$out/checks.txt"
		done
	done
done

# --- 3. overhead ------------------------------------------------------------
timed() { # MODE -> "wall cpu"
	local rec=()
	case $1 in
	all) rec=("$lever" annotate record --metrics "time,cpu,mem" --rate all -f stbi_write_png_to_mem -o "$work/ovh" --) ;;
	default) rec=("$lever" annotate record --metrics "time,cpu,mem" -f stbi_write_png_to_mem -o "$work/ovh" --) ;;
	esac
	local t0 t1 u s
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$work/time.out" "${rec[@]}" "$work/stb_png" "$images" >/dev/null 2>&1
	t1=$(date +%s.%N)
	read -r u s <"$work/time.out"
	echo "$(echo "$t1 - $t0" | bc) $(echo "$u + $s" | bc)"
}
printf 'program\tround\tmode\twall_s\tcpu_s\tload1\n' >"$out/overhead.tsv"
for r in $(seq 1 "$rounds"); do
	for rate in all default; do
		if [ $((r % 2)) -eq 1 ]; then modes="bare recorded"; else modes="recorded bare"; fi
		for m in $modes; do
			l=$(cut -d' ' -f1 /proc/loadavg)
			if [ "$m" = bare ]; then
				read -r w c <<<"$(timed bare)"
			else
				read -r w c <<<"$(timed "$rate")"
			fi
			printf 'stb_png_rate_%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$r" "$m" "$w" "$c" "$l" \
				>>"$out/overhead.tsv"
		done
	done
done
echo "end uptime: $(uptime)" >>"$out/environment.txt"
python3 "$here/real_table.py" "$out/overhead.tsv" >"$out/overhead.md"
cat "$out/overhead.md"
grep '^==' "$out/checks.txt"
