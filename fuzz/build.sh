#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + UBSan) into build-fuzz/
# (or $XE_FUZZ_BUILD). Separate from the CMake build: the library is never compiled with
# fuzzer flags there. Usage: fuzz/build.sh [TARGET...]   (default: every target)
#   targets: graph devices costs schedule onnx (onnx only once src/onnx exists)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${XE_FUZZ_BUILD:-$root/build-fuzz}
cc=${CC_FUZZ:-$(command -v clang-14 || command -v clang)}
mkdir -p "$out/obj"

have_onnx=0
if [ -f "$root/include/xengine/onnx.h" ] && ls "$root"/src/onnx/*.c >/dev/null 2>&1; then have_onnx=1; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(graph devices costs schedule)
  [ $have_onnx -eq 1 ] && targets+=(onnx)
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -Werror $san -I$root/include -I$root/src/io -I$root/fuzz"

# The library sources a reader needs, compiled once with coverage instrumentation
# (-fsanitize=fuzzer-no-link) so libFuzzer sees their branches.
lib_dirs="core io sim net cost" # src/io reads device specs of src/cost, which uses src/net
need_onnx=0
for t in "${targets[@]}"; do [ "$t" = onnx ] && need_onnx=1; done
extra_inc=""
extra_libs=""
if [ $need_onnx -eq 1 ]; then
  [ $have_onnx -eq 1 ] || { echo "fuzz/build.sh: no ONNX reader yet (include/xengine/onnx.h, src/onnx/)" >&2; exit 1; }
  lib_dirs="$lib_dirs onnx"
  mkdir -p "$out/gen"
  if [ ! -f "$out/gen/onnx.pb-c.c" ] || [ /usr/include/onnx/onnx.proto -nt "$out/gen/onnx.pb-c.c" ]; then
    protoc-c --c_out="$out/gen" -I/usr/include/onnx /usr/include/onnx/onnx.proto
  fi
  extra_inc="-I$out/gen"
  extra_libs="$(pkg-config --libs libprotobuf-c)"
fi

objs=()
build_obj() { # SRC OBJ EXTRA_FLAGS
  local src=$1 obj=$2
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$root/include" "$root/src" -name '*.h' -newer "$obj" -print -quit)" ]; then
    "$cc" $cflags $extra_inc $3 -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  fi
  objs+=("$obj")
}
for d in $lib_dirs; do
  for src in "$root"/src/$d/*.c; do
    [ -f "$src" ] || continue
    build_obj "$src" "$out/obj/${d}_$(basename "${src%.c}").o" ""
  done
done
if [ $need_onnx -eq 1 ]; then
  build_obj "$out/gen/onnx.pb-c.c" "$out/obj/gen_onnx.pb-c.o" "-Wno-unused-parameter"
fi
build_obj "$root/fuzz/fuzz_util.c" "$out/obj/fuzz_util.o" ""

for t in "${targets[@]}"; do
  src="$root/fuzz/fuzz_$t.c"
  [ -f "$src" ] || { echo "fuzz/build.sh: unknown target '$t'" >&2; exit 1; }
  libs="$(pkg-config --libs jansson) -lm"
  tobjs=("${objs[@]}")
  if [ "$t" != onnx ]; then # keep the JSON targets free of the ONNX objects
    tobjs=()
    for o in "${objs[@]}"; do case $(basename "$o") in onnx_*|gen_*) ;; *) tobjs+=("$o") ;; esac; done
  else
    libs="$libs $extra_libs"
  fi
  "$cc" $cflags $extra_inc -fsanitize=fuzzer "$src" "${tobjs[@]}" $libs -o "$out/fuzz_$t"
  echo "built $out/fuzz_$t"
done
