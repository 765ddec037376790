#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds with ASan + UBSan, runs CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build-asan" -DXE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
cd "$root/build-asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# full malloc stacks (CBC has no frame pointers) so the suppressions can see Cbc_solve
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
ctest --output-on-failure -j2 --timeout 600
