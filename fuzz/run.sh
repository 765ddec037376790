#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/build.sh) and runs each for a bounded time, one after
# another, at low priority and in one process (the machine is shared).
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     default 600 s, every target
# Seeds come from fuzz/corpus/TARGET/ (read only); new inputs go to
# build-fuzz/corpus/TARGET/, crashes to build-fuzz/crashes/TARGET/. Prints, per target,
# the seconds run, the executions and the number of crash files; exits 1 when any
# target crashed. XE_FUZZ_NICE (default 10) sets the niceness.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${XE_FUZZ_BUILD:-$root/build-fuzz}
secs=${1:-600}
shift || true
case $secs in ''|*[!0-9]*) echo "fuzz/run.sh: SECONDS must be a whole number" >&2; exit 1 ;; esac
"$root/fuzz/build.sh" "$@" >/dev/null || exit 1
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for b in "$out"/fuzz_*; do [ -x "$b" ] && targets+=("$(basename "${b#"$out"/fuzz_}")"); done
fi
status=0
printf '%-10s %8s %14s %8s\n' target seconds executions crashes
for t in "${targets[@]}"; do
  dict="$root/fuzz/json.dict"
  [ "$t" = onnx ] && dict="$root/fuzz/onnx.dict"
  maxlen=65536
  [ "$t" = onnx ] && maxlen=131072 # the model seeds reach 84 KB
  mkdir -p "$out/corpus/$t" "$out/crashes/$t"
  log="$out/fuzz_$t.log"
  start=$(date +%s)
  nice -n "${XE_FUZZ_NICE:-10}" "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=$maxlen -print_final_stats=1 $( [ -f "$dict" ] && echo "-dict=$dict" ) \
    -artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  end=$(date +%s)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$out/crashes/$t" -type f | wc -l)
  printf '%-10s %8d %14s %8d\n' "$t" $((end - start)) "${execs:-?}" "$crashes"
  if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    echo "  $t: exit $rc; log $log; crash inputs in $out/crashes/$t/"
  fi
done
exit $status
