#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds with ASan + UBSan, runs CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build-asan" -DXE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
cd "$root/build-asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# leaks inside CBC's libraries are suppressed by library name (tests/lsan.supp explains)
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
ctest --output-on-failure -j2 --timeout 600
