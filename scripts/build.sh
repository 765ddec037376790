#!/usr/bin/env bash
# Configures and builds xengine into build/ (or $1); more arguments go to cmake.
# Quiet on success; prints the build log on failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
shift || true
mkdir -p "$dir"
if ! { cmake -S "$root" -B "$dir" "$@" && cmake --build "$dir" -j"$(nproc)"; } >"$dir/build.log" 2>&1; then
  cat "$dir/build.log" >&2
  echo "build failed (log: $dir/build.log)" >&2
  exit 1
fi
