#!/usr/bin/env bash
# The main job: installs dependencies, builds, and plans one training step of ResNet-18
# (torchvision, tests/data/onnx/resnet18.onnx, batch 32) on a GPU + CPU (the gpu+cpu
# preset: NVIDIA V100 and a Xeon Gold 6148 over PCIe 3.0 x16, costs from the roofline
# model of docs/cost-model.md) with the GPU budget at 50% of the no-recomputation peak.
# Extra arguments go to 'xengine solve' (e.g. --time-limit 10, --batch 64).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build"
mkdir -p "$root/out"
cd "$root"
exec "$root/build/xengine" solve tests/data/onnx/resnet18.onnx --batch 32 --devices gpu+cpu --budget 50% \
  --time-limit 50 -o "out/resnet18_b32_gpu+cpu_50.json" "$@"
