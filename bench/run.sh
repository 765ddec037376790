#!/bin/bash
# bench/run.sh — every method on every graph of ../shared/graphs (xe_bench), CSV and plots.
#
#   bench/run.sh [BUILD_DIR] [xe_bench options...]
#
# BUILD_DIR (default build) must hold xe_bench (make -C BUILD_DIR xe_bench). Options go
# to xe_bench: --limit S (default 60), --quick (10 s, budgets 90,70,50), --budgets,
# --presets, --methods, --only, --threads (use 1 on a shared machine). Writes
# bench/out/results.csv, bench/out/table.txt and bench/out/<preset>.png (gnuplot).
# Skips cleanly, saying so, when ../shared/graphs is absent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
case ${1:-} in
    -h|--help)
        sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
        exit 0 ;;
esac
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$root/$build ;; esac
bin=${XE_BENCH:-$build/xe_bench}
graphs=$root/../shared/graphs
if [ ! -d "$graphs" ]; then
    echo "bench/run.sh: $graphs is absent: nothing to benchmark (skipped)"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "bench/run.sh: $bin not found; build it: make -C $build xe_bench" >&2
    exit 1
fi
out=${XE_BENCH_OUT:-$here/out}
mkdir -p "$out"
cd "$root"
"$bin" --graphs "$graphs" --csv "$out/results.csv" "$@" | tee "$out/table.txt"
if command -v gnuplot >/dev/null; then
    for preset in gpu gpu+cpu; do
        grep -q ",$preset," "$out/results.csv" || continue
        gnuplot -e "csv='$out/results.csv'; preset='$preset'; png='$out/$preset.png'" "$here/plot.gp" \
            && echo "wrote $out/$preset.png"
    done
else
    echo "bench/run.sh: gnuplot not installed: no plots"
fi
