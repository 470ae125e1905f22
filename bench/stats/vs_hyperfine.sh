#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lever bench beside hyperfine on the same command, in one run: ROUNDS
# rounds of `hyperfine -N` and `lever bench` (both without a shell, same run
# count and warm-up; which tool goes first alternates between rounds, so that
# drift hits both), then the means of each tool and their ratio, per round and
# overall (the median of the per-round ratios is the robust figure on a noisy
# machine). Usage: bench/stats/vs_hyperfine.sh LEVER [ROUNDS] [RUNS] -- COMMAND...
# Needs hyperfine (scripts/install-deps.sh --bench) and /usr/bin/python3.
set -euo pipefail
lever=$1
rounds=${2:-3}
runs=${3:-20}
shift 3
[ "${1:-}" = "--" ] && shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run_hyperfine() {
	hyperfine -N --style none -w 2 -r "$runs" --export-json "$out/h$1.json" -- "$2" >/dev/null 2>&1
}
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run_hyperfine "$r" "$*"; fi
	"$lever" bench --no-progress -w 2 -n "$runs" --export-json "$out/l$r.json" -- "$@" >"$out/l$r.txt"
	if [ $((r % 2)) = 0 ]; then run_hyperfine "$r" "$*"; fi
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
h = [json.load(open(f"{out}/h{r}.json"))["results"][0] for r in range(1, rounds + 1)]
l = [json.load(open(f"{out}/l{r}.json"))["results"][0] for r in range(1, rounds + 1)]
for r in range(rounds):
    print(f"round {r+1}: hyperfine mean {h[r]['mean']*1e3:.2f} ms (sd {h[r]['stddev']*1e3:.2f}), "
          f"lever mean {l[r]['mean']*1e3:.2f} ms (sd {l[r]['stddev']*1e3:.2f}), "
          f"ratio lever/hyperfine {l[r]['mean']/h[r]['mean']:.3f}; "
          f"user {h[r]['user']*1e3:.1f} vs {l[r]['user']*1e3:.1f} ms")
ht = [t for x in h for t in x["times"]]
lt = [t for x in l for t in x["times"]]
ratios = [l[r]["mean"] / h[r]["mean"] for r in range(rounds)]
print(f"median of the per-round ratios lever/hyperfine: {statistics.median(ratios):.3f}")
print(f"all runs: hyperfine {statistics.mean(ht)*1e3:.2f} ms (n={len(ht)}), "
      f"lever {statistics.mean(lt)*1e3:.2f} ms (n={len(lt)}), "
      f"ratio {statistics.mean(lt)/statistics.mean(ht):.3f}; "
      f"medians {statistics.median(ht)*1e3:.2f} vs {statistics.median(lt)*1e3:.2f} ms, "
      f"ratio {statistics.median(lt)/statistics.median(ht):.3f}")
open(f"{out}/hyperfine.txt", "w").write("".join(f"{t!r}\n" for t in ht))
open(f"{out}/lever.txt", "w").write("".join(f"{t!r}\n" for t in lt))
PY
echo "--- lever compare --samples hyperfine.txt lever.txt (do the two tools measure the same?):"
"$lever" compare --samples "$out/hyperfine.txt" "$out/lever.txt" | tail -4
echo "--- lever bench output of the last round:"
cat "$out/l$rounds.txt"
