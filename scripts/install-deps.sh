#!/usr/bin/env bash
# Installs the Debian 12 packages xengine builds and tests with (idempotent).
set -euo pipefail
# ocl-icd-opencl-dev: libdnnl-dev's CMake config (dnnl-config.cmake) calls find_package(OpenCL)
# and fails without it; Debian only recommends it, and recommends are not installed here.
pkgs=(build-essential cmake pkg-config coinor-libcbc-dev libjansson-dev libcmocka-dev
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev libdnnl-dev ocl-icd-opencl-dev gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
