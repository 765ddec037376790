#!/usr/bin/env bash
# bench/fixtures.sh — every ONNX fixture's training step planned at one GPU budget on
# gpu+cpu, gpu only and cpu only (same budgets), side by side.
#
#   bench/fixtures.sh [BUILD_DIR] [BATCH] [BUDGET] [TIME_LIMIT]   (defaults: build 32 50% 30)
#
# Prints a markdown table: nodes and edges of the training graph, the no-recomputation
# peak, the planned serial step time (seconds, roofline costs of docs/cost-model.md),
# its gap to the proven lower bound and the solve time. Every schedule is replayed by
# the simulator before xengine writes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
batch=${2:-32}
budget=${3:-50%}
limit=${4:-30}
bin=$build/xengine
[ -x "$bin" ] || { echo "bench/fixtures.sh: $bin not found (scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d.get(sys.argv[2]); print('' if v is None else v)" "$1" "$2"; }
echo "batch $batch, GPU budget $budget of the no-recomputation peak, --time-limit $limit s"
echo
echo "| model | nodes | edges | no-recompute peak | gpu+cpu s | gap | solve s | gpu only s | gap | cpu only s | gap |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for m in resnet18 resnet50 vgg16 mobilenet_v2 googlenet; do
  onnx=$root/tests/data/onnx/$m.onnx
  row="| $m"
  "$bin" solve "$onnx" --batch "$batch" --devices gpu --budget 100% --method heuristic --json \
      -o "$tmp/p.json" >"$tmp/peak.json" 2>"$tmp/peak.err" || true
  "$bin" export-graph "$onnx" --batch "$batch" -o "$tmp/g.json" >/dev/null
  nodes=$(python3 -c "import json; print(len(json.load(open('$tmp/g.json'))['nodes']))")
  edges=$(python3 -c "import json; print(len(json.load(open('$tmp/g.json'))['edges']))")
  peak=$(python3 -c "import json; d=json.load(open('$tmp/peak.json')); print('%.2f MiB' % (d['devices'][0]['budget_bytes']/2**20))")
  row="$row | $nodes | $edges | $peak"
  for dev in gpu+cpu gpu cpu; do
    "$bin" solve "$onnx" --batch "$batch" --devices "$dev" --budget "$budget" --time-limit "$limit" \
        --json -o "$tmp/s.json" >"$tmp/r.json" 2>/dev/null || true
    st=$(field "$tmp/r.json" status)
    obj=$(field "$tmp/r.json" objective_s)
    if [ -z "$obj" ]; then
      row="$row | $st | -"
    else
      gap=$(python3 -c "print('%.2f%%' % (100*float('$(field "$tmp/r.json" gap)' or 0)))")
      row="$row | $(printf %.6f "$obj") | $gap"
    fi
    [ "$dev" = gpu+cpu ] && row="$row | $(printf %.1f "$(field "$tmp/r.json" solve_time_s || echo 0)")"
  done
  echo "$row |"
done
