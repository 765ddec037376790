#!/usr/bin/env bash
# bench/overrun.sh — does `xengine solve` keep its --time-limit? Wall-clock time of whole
# solves (reading, planning, the search bound's thread joined, replay, writing) against
# the limit, on cases where the planner's phases run to the end of it.
#
#   bench/overrun.sh [BUILD_DIR] [TIME_LIMIT]   (defaults: build 10)
#
# Prints a markdown table: case, exit code, wall seconds, overrun (wall - limit) and the
# result line. `solve --help` says what may pass the limit: a greedy pass is not
# interrupted, nor reading, replaying and writing; on exit 4 (no schedule) the budget
# hint's exact search gets at least 0.25 s more (src/cli/solve.c, budget_range_text).
# The shared graphs are skipped, saying so, where ../shared/graphs is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
limit=${2:-10}
bin=$build/xengine
[ -x "$bin" ] || { echo "bench/overrun.sh: $bin not found (scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/tools/layered_dag.py" 1000 --seed 3 >"$tmp/dag1000.json"
python3 "$root/tools/training_chain.py" 1000 1 >"$tmp/chain1000.json"
shared=$root/../shared/graphs
cases=("$tmp/dag1000.json gpu 70%" "$tmp/dag1000.json gpu 60%" "$tmp/dag1000.json gpu 50%"
       "$tmp/chain1000.json gpu+cpu 40%")
if [ -d "$shared" ]; then
  cases+=("$shared/random_layered_n100.json gpu 60%" "$shared/random_layered_n250.json gpu 60%"
          "$shared/random_layered_n250.json gpu+cpu 60%" "$shared/checkmate_mobilenet_b512_train.json gpu 50%")
else
  echo "bench/overrun.sh: $shared absent: the shared graphs' cases are skipped" >&2
fi
echo "xengine solve --time-limit $limit on $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| graph | devices | budget | exit | wall s | overrun s | result |"
echo "|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  read -r graph dev budget <<<"$c"
  t0=$(date +%s.%N)
  set +e
  "$bin" solve "$graph" --devices "$dev" --budget "$budget" --time-limit "$limit" -o "$tmp/s.json" \
      >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  res=$(grep -m1 '^result:' "$tmp/out" | cut -c1-90 || true)
  [ -n "$res" ] || res=$(head -c 90 "$tmp/err" | tr '\n' ' ')
  name=$(basename "$graph" .json)
  awk -v n="$name" -v d="$dev" -v b="$budget" -v rc="$rc" -v t0="$t0" -v t1="$t1" -v l="$limit" -v r="$res" \
      'BEGIN { printf "| %s | %s | %s | %d | %.2f | %+.2f | %s |\n", n, d, b, rc, t1 - t0, t1 - t0 - l, r }'
done
