#!/usr/bin/env bash
# Builds xengine's GPU backend (cuBLAS + cuDNN, include/xengine/gpu.h) and runs its tests
# (tests/gpu/test_gpu.c: GEMM and convolution against plain loops, copy times).
# Needs the CUDA toolkit and cuDNN (CUDAToolkit_ROOT, default /usr/local/cuda) and, for
# the tests to run rather than skip, a CUDA GPU: on a machine with `nvidia-smi` listing
# one, a skipped test is a failure.
#   usage: tools/gpu-check.sh [BUILD_DIR]     (default build-gpu)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu}
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
export PATH=$cuda/bin:$PATH
cmake -S "$root" -B "$build" -DXE_CUDA=ON -DCUDAToolkit_ROOT="$cuda" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)" --target test_gpu
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -L || true
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
out=$(cd "$root" && "$build/test_gpu" 2>&1) || { echo "$out"; echo "gpu-check: FAILED"; exit 1; }
echo "$out"
if [ "$gpus" -gt 0 ] && grep -q SKIPPED <<<"$out"; then
  echo "gpu-check: FAILED: $gpus GPU(s) listed but tests were skipped"
  exit 1
fi
echo "gpu-check: ok ($gpus GPU(s))"
