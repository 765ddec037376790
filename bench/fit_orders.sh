#!/usr/bin/env bash
# bench/fit_orders.sh — every node once in an order that fits the budget, on generated
# layered DAGs near their least peaks (docs/reorder.md, "Annealing over orders"):
#   1. the order search alone, side by side: the exact depth-first search (xe_order_fit),
#      the annealing over orders (xe_order_anneal) and the planner's combination
#      (xe_order_fit_within), SECONDS each (bench/order_fit_bench.c);
#   2. `xengine solve --devices gpu --time-limit LIMIT` at the same budgets with the
#      fit-order phase and with --no-fit-order, side by side: exit code, the result's name,
#      its cost over every node once (the bound over every schedule), wall seconds.
#
#   bench/fit_orders.sh [BUILD_DIR] [SECONDS] [LIMIT]   (defaults: build 2 10)
#
# Graphs: python3 tools/layered_dag.py 1000 --seed 3 and 5000 --seed 1. No shared graph
# is needed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd) || { echo "bench/fit_orders.sh: no build directory ${1:-$root/build}" >&2; exit 1; }
secs=${2:-2}
limit=${3:-10}
for b in "$build/xengine" "$build/order_fit_bench"; do
  [ -x "$b" ] || { echo "bench/fit_orders.sh: $b not found (scripts/build.sh)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/tools/layered_dag.py" 1000 --seed 3 >"$tmp/dag1000.json"
python3 "$root/tools/layered_dag.py" 5000 --seed 1 >"$tmp/dag5000.json"
pcts1000="60 58 57 56 55 54 53 52"
pcts5000="70 65 62 60 58"
echo "Order search alone, $secs s each, $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| graph | nodes | target | search alone | annealing alone | search, then annealing |"
echo "|---|---|---|---|---|---|"
(cd "$tmp" && "$build/order_fit_bench" dag1000.json "$secs" $pcts1000 && "$build/order_fit_bench" dag5000.json "$secs" $pcts5000)
echo
echo "target: % of the graph order's no-recomputation peak; a cell: seconds to the order"
echo "(its peak in %), none (proven), or - (nothing within $secs s)."
echo
echo "xengine solve --devices gpu --time-limit $limit"
echo
echo "| graph | budget | variant | exit | result | cost / every node once | wall s |"
echo "|---|---|---|---|---|---|---|"
for g in dag1000 dag5000; do
  pcts=$pcts1000
  [ "$g" = dag5000 ] && pcts=$pcts5000
  for p in $pcts; do
    for variant in fit-order no-fit-order; do
      extra=()
      [ "$variant" = no-fit-order ] && extra=(--no-fit-order)
      /usr/bin/time -f "%e" -o "$tmp/time" "$build/xengine" solve "$tmp/$g.json" --devices gpu --budget "$p%" \
        --time-limit "$limit" "${extra[@]}" -o "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
      rc=$?
      wall=$(tail -1 "$tmp/time")
      name=$(sed -n 's/^result: [0-9.]* s (\([^)]*\)).*/\1/p' "$tmp/out")
      cost=$(awk '/^result:/{print $2}' "$tmp/out")
      once=$(awk '/^result:/{b=""; for(i=1;i<NF;i++){ if($i=="bound" && b=="") b=$(i+1); if($i=="is") b=$(i+1) }
                             print b}' "$tmp/out")
      ratio=-
      [ -n "$cost" ] && [ -n "$once" ] && ratio=$(awk -v c="$cost" -v o="$once" 'BEGIN{printf "%.4f", c/o}')
      printf '| %s | %s%% | %s | %d | %s | %s | %s |\n' "$g" "$p" "$variant" "$rc" "${name:--}" "$ratio" "$wall"
    done
  done
done
echo
echo "cost / every node once: the written schedule's cost over the result line's bound over"
echo "every schedule (here every node once, which an order that fits attains: 1.0000 is optimal)."
