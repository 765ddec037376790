#!/usr/bin/env bash
# The main job: installs dependencies, builds, and plans a real network's training step
# (VGG16, batch 256, from the Checkmate benchmark graphs) on a GPU + CPU at 70% of the
# GPU's no-recomputation peak. Extra arguments go to 'xengine solve'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build"
graph="$(cd "$root/.." && pwd)/shared/graphs/checkmate_vgg16_b256_train.json"
if [ ! -f "$graph" ]; then
  echo "run.sh: $graph is absent: the default input comes from ../shared/graphs" >&2
  exit 2
fi
mkdir -p "$root/out"
exec "$root/build/xengine" solve "$graph" --devices gpu+cpu --budget 70% --time-limit 60 \
  -o "$root/out/vgg16_gpu+cpu_70.json" "$@"
