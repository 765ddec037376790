#!/usr/bin/env bash
# Output paths and bad option values of export-graph, sweep, profile, simulate:
#  - an output may never replace an input (graph, devices file, costs file) nor another
#    output of the same command, under any spelling (path, ./path, symlink, hard link);
#  - "-" and unwritable places (/proc) are refused before anything is printed on stdout;
#  - a bad value on the command line is a usage error: exit 1, one line
#    "xengine: error: ...", stdout empty;
#  - a sweep of more than 1000 budgets is refused up front, not cut short.
# Each case checks the exit code, exactly one stderr line matching a pattern, an empty
# stdout, and that every file in the work directory is byte for byte what it was.
set -u
xe=${1:?usage: outputs.sh PATH_TO_XENGINE}
case $xe in /*) ;; *) xe=$PWD/$xe ;; esac # the cases run in another directory
root=${XE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0 passes=0
g=$root/tests/data/tiny_graph.json
r18=$root/tests/data/onnx/resnet18.onnx
w=$tmp/w
mkdir "$w"
cp "$root/tests/data/tiny_devices.json" "$w/dev.json"
cp "$root/tests/data/tiny_costs.json" "$w/costs.json"
ln -s dev.json "$w/devlink.json"
ln "$w/costs.json" "$w/costshard.json"
snapshot() { (cd "$w" && find . -type f -o -type l | sort | xargs md5sum 2>/dev/null; ls -la | awk '{print $1, $NF}'); }
before=$(snapshot)

# expect NAME CODE PATTERN -- ARGS... (run in $w)
expect() {
  local name=$1 code=$2 pattern=$3
  shift 4
  (cd "$w" && "$xe" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$? lines out after
  lines=$(wc -l <"$tmp/stderr")
  out=$(wc -c <"$tmp/stdout")
  after=$(snapshot)
  if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$tmp/stderr" && [ "$out" -eq 0 ] &&
     [ "$after" = "$before" ]; then
    passes=$((passes + 1))
    echo "ok   $name: $(cat "$tmp/stderr")"
  else
    fails=$((fails + 1))
    echo "FAIL $name: exit $rc (want $code), $lines stderr lines, $out stdout bytes, want /$pattern/:"
    sed 's/^/     /' "$tmp/stderr" "$tmp/stdout"
    [ "$after" = "$before" ] || echo "     the work directory changed"
  fi
}

# 1. outputs against inputs and against each other
expect sweep-csv-is-devices 1 "dev.json: is the devices file" -- sweep "$g" --devices dev.json --csv dev.json
expect sweep-csv-is-devices-dot 1 "is the devices file" -- sweep "$g" --devices dev.json --csv ./dev.json
expect sweep-csv-is-devices-symlink 1 "is the devices file" -- sweep "$g" --devices devlink.json --csv "$w/dev.json"
expect sweep-csv-is-costs-hardlink 1 "costshard.json: is the costs file" -- sweep "$g" --costs costs.json --csv costshard.json
expect sweep-csv-is-plot 1 "same.svg: given to both --csv and --plot" -- sweep "$g" --csv same.svg --plot same.svg
expect sweep-csv-is-plot-dot 1 "given to both --csv and --plot" -- sweep "$g" --csv same.svg --plot ./same.svg
expect sweep-csv-is-graph 1 "is the input graph" -- sweep "$g" --csv "$g"
expect export-out-is-costs-out 1 "e.json: given to both -o and --costs-out" -- export-graph "$r18" -o e.json --costs-out e.json
expect export-out-is-devices 1 "is the devices file" -- export-graph "$g" --devices dev.json -o dev.json
expect export-costs-out-is-costs 1 "is the costs file" -- export-graph "$g" --costs costs.json -o e.json --costs-out costs.json
expect profile-out-is-devices 1 "is the devices file" -- profile "$r18" --devices dev.json -o dev.json
expect sweep-csv-stdout 1 "'-': output to stdout is not supported" -- sweep "$g" --csv -
# options that were taken without a word before 2026-12-05 (a new user's trial)
expect sweep-batch-limit-alone 1 "^xengine: error: --batch-limit applies to --max-batch" -- sweep "$g" --batch-limit 5
expect run-seed-negative 1 "^xengine: error: --seed: '-1' is not a whole number from 0 to 18446744073709551615$" -- run "$r18" s.json --seed -1
expect run-seed-too-large 1 "^xengine: error: --seed: '18446744073709551616' is not a whole number" -- run "$r18" s.json --seed 18446744073709551616
expect export-stdout 1 "'-': output to stdout is not supported" -- export-graph "$g" -o -
expect sweep-csv-proc 1 "/proc/o.csv: cannot create a file there" -- sweep "$g" --csv /proc/o.csv
expect export-proc 1 "/proc/o.json: cannot create a file there" -- export-graph "$g" -o /proc/o.json

# 2. more budgets than the sweep takes: (100 - 40) / 0.001 + 1 = 60001 > 1000; and
#    (100 - 40) / 0.06 + 1 = 1001, one over
expect sweep-too-many 1 "makes 60001 points; the maximum is 1000" -- sweep "$g" --time-limit 0 --step 0.001%
expect sweep-one-too-many 1 "makes 1001 points; the maximum is 1000" -- sweep "$g" --time-limit 0 --step 0.06%

# 3. bad values on the command line: exit 1, "xengine: error: "
expect budget-abc 1 "^xengine: error: --budget: budget \"abc\" is not a size" -- sweep "$g" --max-batch --budget abc
expect simulate-budget-abc 1 "^xengine: error: --budget: budget \"abc\" is not a size" -- simulate "$g" x.json --budget abc
expect export-batch-zero 1 "^xengine: error: --batch: '0' is not a whole number" -- export-graph "$r18" --batch 0 -o e.json
expect profile-batch-zero 1 "^xengine: error: --batch: '0' is not a whole number" -- profile "$r18" --batch 0 -o e.json
expect profile-threads-zero 1 "^xengine: error: --threads: '0' is not a list of whole numbers" -- profile "$r18" --threads 0 -o e.json
expect run-threads-abc 1 "^xengine: error: --threads: 'a,b' is not a list" -- run "$r18" x.json --threads a,b
# counts that do not match the devices: a bad value too (exit 2 before 2026-12-02, "than
# the 1 devices")
expect profile-threads-too-many 1 "^xengine: error: --threads: '1,2,3' gives 3 thread counts for 1 device (one per device" -- profile "$r18" --threads 1,2,3 -o e.json
expect run-threads-too-few 1 "^xengine: error: --threads: '1' gives 1 thread count for 2 devices" -- run "$r18" x.json --devices gpu+cpu --threads 1
expect sweep-from-abc 1 "^xengine: error: --from: 'abc' is not a percentage" -- sweep "$g" --from abc
expect sweep-time-limit-abc 1 "^xengine: error: --time-limit: 'abc' is not a number" -- sweep "$g" --time-limit abc
expect sweep-time-limit-hex 1 "^xengine: error: --time-limit: '0x1' is not a number" -- sweep "$g" --time-limit 0x1
expect sweep-from-hex 1 "^xengine: error: --from: '0x50' is not a percentage" -- sweep "$g" --from 0x50
expect solve-time-limit-hex 1 "^xengine: error: --time-limit: '0x10' is not a number" -- solve "$g" --time-limit 0x10 -o s.json
expect solve-gap-inf 1 "^xengine: error: --gap: 'inf' is not a number" -- solve "$g" --gap inf -o s.json
expect solve-gap-2 1 "^xengine: error: --gap: 2 is not a relative gap from 0 to 1" -- solve "$g" --gap 2 -o s.json
expect profile-runs-zero 1 "^xengine: error: --runs must be a whole number from 1" -- profile "$r18" --runs 0 -o e.json
expect run-repeat-zero 1 "^xengine: error: --repeat must be a whole number from 1" -- run "$r18" x.json --repeat 0
expect export-budget-missing 1 "^xengine: error: --budget needs a value" -- export-graph "$g" -o e.json --budget

# 6. hints
expect devices-missing-file 2 "--devices foo: no such file (--devices takes a devices file or a preset: gpu, cpu, gpu+cpu)" -- export-graph "$g" --devices foo -o e.json
expect profile-json-graph 1 "tiny_graph.json: profile needs an ONNX model" -- profile "$g" -o e.json
expect run-json-graph 1 "tiny_graph.json: run needs an ONNX model" -- run "$g" x.json
if "$xe" simulate --help | grep -q -- "--batch N] \[--inference\]"; then
  passes=$((passes + 1)); echo "ok   simulate-help-batch"
else
  fails=$((fails + 1)); echo "FAIL simulate-help-batch: simulate --help does not list --batch and --inference"
fi

# 7. a write-protected output file (no write bit) is refused, not replaced (the rename
#    alone needs only the directory's permission), by every user, root included: exit 1,
#    one line, the file untouched
ro=$tmp/ro
mkdir "$ro" && chmod 777 "$ro" && echo "keep me" >"$ro/out.json" && chmod 444 "$ro/out.json"
"$xe" solve "$g" --devices gpu+cpu --heuristic-only -q -o "$ro/out.json" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q "out.json: is write-protected (mode 0444); refusing to replace it" "$tmp/stderr" &&
   [ "$(cat "$ro/out.json")" = "keep me" ] && [ "$(ls "$ro" | wc -l)" -eq 1 ]; then
  passes=$((passes + 1)); echo "ok   write-protected-output: $(cat "$tmp/stderr")"
else
  fails=$((fails + 1)); echo "FAIL write-protected-output: exit $rc (want 1), file now: $(cat "$ro/out.json"), dir: $(ls "$ro" | tr '\n' ' ')"
  sed 's/^/     /' "$tmp/stderr"
fi
#    and another user's file this user may not write (mode 644, root's, written as user
#    nobody in a world-writable directory): only where the tests run as root
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$tmp"
  chmod 644 "$ro/out.json"
  if command -v runuser >/dev/null 2>&1 && runuser -u nobody -- test -x "$xe" -a -r "$g" 2>/dev/null; then
    runuser -u nobody -- "$xe" solve "$g" --devices gpu+cpu --heuristic-only -q -o "$ro/out.json" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q "out.json: cannot write: Permission denied" "$tmp/stderr" &&
       [ "$(cat "$ro/out.json")" = "keep me" ] && [ "$(ls "$ro" | wc -l)" -eq 1 ]; then
      passes=$((passes + 1)); echo "ok   other-users-output: $(cat "$tmp/stderr")"
    else
      fails=$((fails + 1)); echo "FAIL other-users-output: exit $rc (want 1), file now: $(cat "$ro/out.json")"
      sed 's/^/     /' "$tmp/stderr"
    fi
  else
    echo "skip other-users-output: user nobody cannot reach $xe"
  fi
fi

# a full disk (a 4 KiB tmpfs, where this user may mount one: root): a failed write of an
# output is exit 5, as solve's (not 2, "bad input"), with one error line, and nothing is
# left in the directory (no output, no temporary file)
full=$tmp/full
mkdir "$full"
if mount -t tmpfs -o size=4k tmpfs "$full" 2>/dev/null; then
  dd if=/dev/zero of="$full/fill" bs=1k count=4 2>/dev/null
  for c in "export-graph|-o|$full/g.json" \
           "sweep|--devices|$w/dev.json|--time-limit|0|--from|100%|--to|90%|--csv|$full/s.csv" \
           "solve|--devices|$w/dev.json|--heuristic-only|-q|-o|$full/s.json"; do
    IFS='|' read -r -a args <<<"$c"
    "$xe" "${args[0]}" "$g" "${args[@]:1}" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ "$rc" -eq 5 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'No space left on device' "$tmp/stderr" &&
       [ "$(ls "$full")" = fill ]; then
      passes=$((passes + 1)); echo "ok   full-disk ${args[0]}: $(cat "$tmp/stderr")"
    else
      fails=$((fails + 1)); echo "FAIL full-disk ${args[0]}: exit $rc (want 5), files: $(ls "$full" | tr '\n' ' ')"
      sed 's/^/     /' "$tmp/stderr"
    fi
  done
  umount "$full"
  # export-graph -o G --costs-out C is all or nothing: where either write fails, both
  # files keep their old contents (until 2026-12-05 a failed costs write removed G, whose
  # new contents had replaced the old). MobileNetV2's graph is about 58 KiB and its costs
  # about 68 KiB here; free space for the costs alone, then for neither
  m2=$root/tests/data/onnx/mobilenet_v2.onnx
  for room in 100 40; do
    if mount -t tmpfs -o size=256k tmpfs "$full" 2>/dev/null; then
      echo OLDGRAPH >"$full/g.json"; echo OLDCOSTS >"$full/c.json"
      dd if=/dev/zero of="$full/fill" bs=1k count=$((256 - 8 - room)) 2>/dev/null
      "$xe" export-graph "$m2" -o "$full/g.json" --costs-out "$full/c.json" >"$tmp/stdout" 2>"$tmp/stderr"
      rc=$?
      if [ "$rc" -eq 5 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'No space left on device' "$tmp/stderr" &&
         [ "$(cat "$full/g.json")" = OLDGRAPH ] && [ "$(cat "$full/c.json")" = OLDCOSTS ] &&
         [ "$(ls "$full" | tr '\n' ' ')" = "c.json fill g.json " ]; then
        passes=$((passes + 1)); echo "ok   full-disk export-graph pair, $room KiB free: $(cat "$tmp/stderr")"
      else
        fails=$((fails + 1))
        echo "FAIL full-disk export-graph pair, $room KiB free: exit $rc (want 5), files: $(ls "$full" | tr '\n' ' ')"
        sed 's/^/     /' "$tmp/stderr"
      fi
      umount "$full"
    fi
  done
else
  echo "skip full-disk: cannot mount a tmpfs here (not root)"
fi

# a closed pipe reader (solve ... | head -1) and a file-size limit: before 2026-12-05
# SIGPIPE and SIGXFSZ killed the process, the first before its schedule was written, the
# second mid-write with the temporary left behind. Now: the schedule written and exit 5
# (stdout's error at the end); exit 5 naming the file, nothing left.
sp=$tmp/sp
mkdir "$sp"
rc=$(python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)  # a reader that has gone before the writer starts
print(subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.DEVNULL).returncode)' \
  "$xe" solve "$g" --time-limit 2 -o "$sp/piped.json")
if [ "$rc" = 5 ] && grep -q '"xengine-schedule"' "$sp/piped.json" && [ "$(ls "$sp" | wc -l)" -eq 1 ]; then
  passes=$((passes + 1)); echo "ok   closed-pipe: exit 5, schedule written"
else
  fails=$((fails + 1)); echo "FAIL closed-pipe: exit '$rc' (want 5), files: $(ls "$sp" | tr '\n' ' ')"
fi
(ulimit -f 8; "$xe" solve "$r18" --budget 50% --time-limit 2 -q -o "$sp/big.json" >/dev/null 2>"$tmp/stderr")
rc=$?
if [ "$rc" -eq 5 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] &&
   grep -q "big.json: cannot write (write): File too large" "$tmp/stderr" && [ ! -e "$sp/big.json" ] &&
   [ "$(ls "$sp" | wc -l)" -eq 1 ]; then
  passes=$((passes + 1)); echo "ok   file-size-limit: exit 5, one line, nothing left"
else
  fails=$((fails + 1)); echo "FAIL file-size-limit: exit $rc (want 5), files: $(ls "$sp" | tr '\n' ' ')"
  sed 's/^/     /' "$tmp/stderr"
fi

# an output name of 255 bytes is legal: written (its temporary then has a short name; the
# 11 bytes of ".tmp.XXXXXX" had made it "File name too long" before 2026-12-05); one of
# 256 is refused up front (exit 1)
ln=$tmp/ln
mkdir "$ln"
long=$(printf 'a%.0s' $(seq 250)).json
"$xe" solve "$g" --time-limit 2 -q -o "$ln/$long" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"xengine-schedule"' "$ln/$long" && [ "$(ls -A "$ln" | wc -l)" -eq 1 ]; then
  passes=$((passes + 1)); echo "ok   output-name-255-bytes"
else
  fails=$((fails + 1)); echo "FAIL output-name-255-bytes: exit $rc, files: $(ls -A "$ln" | wc -l)"
  sed 's/^/     /' "$tmp/stderr"
fi
"$xe" solve "$g" --time-limit 2 -q -o "$ln/b$long" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "cannot create a file there: File name too long" "$tmp/stderr" && [ "$(ls -A "$ln" | wc -l)" -eq 1 ]; then
  passes=$((passes + 1)); echo "ok   output-name-256-bytes refused"
else
  fails=$((fails + 1)); echo "FAIL output-name-256-bytes: exit $rc (want 1)"
fi

# and the same commands still write where they should
if (cd "$w" && "$xe" export-graph "$g" --devices dev.json -o new.json --costs-out newcosts.json >/dev/null 2>&1) &&
   grep -q '"xengine-graph"' "$w/new.json" && grep -q '"xengine-costs"' "$w/newcosts.json"; then
  passes=$((passes + 1)); echo "ok   export-writes-both"
else
  fails=$((fails + 1)); echo "FAIL export-writes-both"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
