#!/usr/bin/env bash
# Every public header compiles on its own (it includes what it uses: plan.h and
# solvers.h used size_t without <stddef.h> until 2026-12-05, a new user's find) as C11
# with -Wall -Wextra -Werror, and as C++17 where a C++ compiler is installed (the
# extern "C" guards: a C++ program calling xe_now() and xe_status_str() links against
# the library next to the CLI whose path is the one argument).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
cc=${CC:-cc}
cxx=$(command -v c++ || command -v g++ || true)
[ -n "$cxx" ] || echo "skip C++: no c++ or g++ on PATH"
for h in include/xengine/*.h; do
    b=$(basename "$h")
    printf '#include "xengine/%s"\nint xe_headers_check_%s;\n' "$b" "${b%.h}" >"$tmp/t.c"
    if "$cc" -std=c11 -Wall -Wextra -Werror -Iinclude -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
        passes=$((passes + 1)); echo "ok   $b: C11 alone"
    else
        fails=$((fails + 1)); echo "FAIL $b: C11 alone: $(head -3 "$tmp/err")"
    fi
    if [ -n "$cxx" ]; then
        cp "$tmp/t.c" "$tmp/t.cc"
        if "$cxx" -std=c++17 -Wall -Wextra -Werror -Iinclude -c "$tmp/t.cc" -o "$tmp/t.o" 2>"$tmp/err"; then
            passes=$((passes + 1)); echo "ok   $b: C++17"
        else
            fails=$((fails + 1)); echo "FAIL $b: C++17: $(head -3 "$tmp/err")"
        fi
    fi
done
lib="$(dirname "${1:-}")/libxengine.a"
if [ -n "$cxx" ] && [ -f "$lib" ]; then
    cat >"$tmp/l.cc" <<'CC'
#include "xengine/error.h"
#include "xengine/timer.h"
#include <cstdio>
int main() { return xe_now() >= 0 && xe_status_str(XE_OK)[0] ? 0 : 1; }
CC
    san=() # a library built with the sanitizers (scripts/test.sh) needs their runtimes
    nm "$lib" 2>/dev/null | grep -q "__asan_" && san+=(-fsanitize=address)
    nm "$lib" 2>/dev/null | grep -q "__ubsan_" && san+=(-fsanitize=undefined)
    if "$cxx" -std=c++17 -Wall -Wextra -Werror -Iinclude "${san[@]}" "$tmp/l.cc" "$lib" -lm -o "$tmp/l" 2>"$tmp/err" &&
        "$tmp/l"; then
        passes=$((passes + 1)); echo "ok   a C++ program links against $lib"
    else
        fails=$((fails + 1)); echo "FAIL C++ link: $(head -3 "$tmp/err")"
    fi
else
    echo "skip C++ link: no C++ compiler or no $lib"
fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
