#!/usr/bin/env bash
# bench/scale.sh — a schedule at scale: `xengine solve` on generated graphs of 1,000 to
# 60,000 nodes under a short --time-limit, with DTR (docs/dtr.md) and with --no-dtr, side
# by side in one run.
#
#   bench/scale.sh [BUILD_DIR] [TIME_LIMIT]   (defaults: build 1)
#
# Prints a markdown table per case and variant: exit code, the result's cost relative to
# every node once on its cheapest device (the result line's "over every schedule" bound
# where the plan has no better one), the seconds until the first schedule was in hand
# (the first row with an objective), wall seconds and peak resident memory (GNU time).
# Graphs: training chains (tools/training_chain.py) of 1,000, 10,000 and 60,000 nodes
# and a random layered DAG of 1,000 nodes (tools/layered_dag.py 1000 --seed 3), one GPU
# and gpu+cpu, the GPU at 60% of the no-recomputation peak. No shared graph is needed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
limit=${2:-1}
bin=$build/xengine
[ -x "$bin" ] || { echo "bench/scale.sh: $bin not found (scripts/build.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/scale.sh: /usr/bin/time (GNU time) not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 1000 10000 60000; do python3 "$root/tools/training_chain.py" $n 1 >"$tmp/chain$n.json"; done
python3 "$root/tools/layered_dag.py" 1000 --seed 3 >"$tmp/dag1000.json"
echo "xengine solve --budget 60% --time-limit $limit on $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| graph | devices | variant | exit | cost / every node once | first schedule s | wall s | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|"
for g in chain1000 chain10000 chain60000 dag1000; do
  for dev in gpu gpu+cpu; do
    for variant in dtr no-dtr; do
      extra=()
      [ "$variant" = no-dtr ] && extra=(--no-dtr)
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" solve "$tmp/$g.json" --devices "$dev" --budget 60% \
        --time-limit "$limit" "${extra[@]}" -o "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
      rc=$?
      # GNU time's last line (a failing command's status comes on a line before it)
      read -r wall rss < <(tail -1 "$tmp/time")
      cost=$(awk '/^result:/{print $2}' "$tmp/out")
      # the bound over every schedule: "... the bound is X s" where the result line has it,
      # else its "lower bound X s"
      once=$(awk '/^result:/{b=""; for(i=1;i<NF;i++){ if($i=="bound" && b=="") b=$(i+1); if($i=="is") b=$(i+1) }
                             print b}' "$tmp/out")
      ratio=-
      [ -n "$cost" ] && [ -n "$once" ] && ratio=$(awk -v c="$cost" -v o="$once" 'BEGIN{printf "%.4f", c/o}')
      first=$(awk 'NR>2 && $2 ~ /^[0-9.]+$/ {print $5; exit}' "$tmp/out")
      printf '| %s | %s | %s | %d | %s | %s | %s | %d |\n' "$g" "$dev" "$variant" "$rc" "$ratio" "${first:--}" \
        "$wall" "$((rss / 1024))"
    done
  done
done
echo
echo "cost / every node once: the written schedule's cost over the result line's bound over"
echo "every schedule (every node once on its cheapest device where nothing better is known);"
echo "first schedule s: the time column of the first method row with an objective (the"
echo "greedy rows' time is the whole portfolio's)."
