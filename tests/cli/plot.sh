#!/usr/bin/env bash
# `xengine plot` on a hand-written schedule of tests/data/tiny_graph.json (gpu+cpu preset,
# gpu budget 3100 B): images exist with PNG / SVG magic bytes, and every data file holds
# the rows and values worked out by hand below (docs/plots.md defines them).
set -u
xe=${1:?usage: plot.sh PATH_TO_XENGINE}
tmp=$(mktemp -d)
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "skip: gnuplot is not installed (Debian: gnuplot-nox)"
  exit 77 # CTest reports it as skipped (SKIP_RETURN_CODE), not passed
fi
g=tests/data/tiny_graph.json
s=tests/data/plot/tiny_schedule.json
inst=(--devices gpu+cpu --budget 3100)

# ---- PNG -------------------------------------------------------------------------------
"$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/png" >"$tmp/out" 2>"$tmp/err"
check "png: exit code" "$?" 0
check "png: stderr empty" "$(cat "$tmp/err")" ""
for f in rs memory timeline; do
  if [ -s "$tmp/png/$f.png" ] && [ "$(head -c 8 "$tmp/png/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    ok "png: $f.png is a PNG"
  else
    bad "png: $f.png missing, empty or not a PNG"
  fi
  grep -q "^  $tmp/png/$f.png\$" "$tmp/out" && ok "png: $f.png listed" || bad "png: $f.png not listed"
done
check "png: 11 files listed" "$(grep -c "^  $tmp/png/" "$tmp/out")" 11
check "png: no temporary files left" "$(find "$tmp/png" -name '*.tmp.*' | wc -l)" 0

d=$tmp/png
rows() { grep -vc '^#' "$1"; }
# the schedule has 17 events and splits into 5 stages (one per first computation):
# stage 0 = events 0, 1 = 1, 2 = 2..3, 3 = 4..10 (a copy opens it; relu1 recomputed,
# relu1_grad first computed, then frees), 4 = 11..16 (conv1_grad, its copy, frees).
check "rs_0.dat rows (5 stages x 5 nodes)" "$(rows "$d/rs_0.dat")" 25
check "rs_1.dat rows" "$(rows "$d/rs_1.dat")" 25
# "stage node R S C" with any non-zero entry, by hand:
#  gpu R: (0,0) (1,1) (2,2) (3,1) recompute (3,3) (4,4)
#  gpu S at stage start: 1:{conv1} 2:{conv1,relu1} 3:{conv1,loss} 4:{conv1,relu1_grad}
#  gpu C: conv1 arrives back in stage 3
want_gpu="0 0 1 0 0
1 0 0 1 0
1 1 1 0 0
2 0 0 1 0
2 1 0 1 0
2 2 1 0 0
3 0 0 1 1
3 1 1 0 0
3 2 0 1 0
3 3 1 0 0
4 0 0 1 0
4 3 0 1 0
4 4 1 0 0"
check "rs_0.dat non-zero cells" "$(grep -v '^#' "$d/rs_0.dat" | awk '$3 || $4 || $5')" "$want_gpu"
#  cpu: conv1 arrives in stage 3 and is resident when stage 4 begins; conv1_grad arrives in stage 4
want_cpu="3 0 0 0 1
4 0 0 1 0
4 4 0 0 1"
check "rs_1.dat non-zero cells" "$(grep -v '^#' "$d/rs_1.dat" | awk '$3 || $4 || $5')" "$want_cpu"

# memory after each event (bytes): conv1, relu1, relu1_grad, conv1_grad are 1000 B, loss 8 B
check "mem_0.dat rows" "$(rows "$d/mem_0.dat")" 17
check "mem_0.dat gpu bytes" "$(grep -v '^#' "$d/mem_0.dat" | awk '{printf "%s ", $3}')" \
  "1000 2000 2008 1008 1008 8 1008 2008 3008 3000 2000 3000 2000 1000 1000 1000 0 "
check "mem_0.dat budget column" "$(grep -v '^#' "$d/mem_0.dat" | awk '{print $4}' | sort -u)" 3100
check "mem_1.dat cpu bytes" "$(grep -v '^#' "$d/mem_1.dat" | awk '{printf "%s ", $3}')" \
  "0 0 0 0 1000 1000 1000 1000 1000 1000 1000 1000 1000 1000 2000 1000 1000 "
# cpu budget of the gpu+cpu preset: 4 x the no-recomputation peak of 3008 B
check "mem_1.dat budget column" "$(grep -v '^#' "$d/mem_1.dat" | awk '{print $4}' | sort -u)" 12032

# timeline: 6 computes + 3 copies; lanes gpu 0, cpu 1, gpu->cpu 2, cpu->gpu 3
check "timeline.dat rows" "$(rows "$d/timeline.dat")" 9
check "timeline.dat lane,kind,node" "$(grep -v '^#' "$d/timeline.dat" | awk '{printf "%s,%s,%s ", $1, $2, $8}')" \
  "0,0,0 0,0,1 0,0,2 2,2,0 3,2,0 0,1,1 0,0,3 0,0,4 2,2,4 "
# costs (ms): conv1 2.5, relu1 0.5, loss 1, relu1_grad 0.75, conv1_grad 5; a 1000 B copy
# 10 us + 1000 / 16e9 s = 0.0100625 ms. Serial end = 10.25 + 3 x 0.0100625 = 10.2801875 ms.
# Overlapped: gpu runs conv1 0-2.5, relu1 -3, loss -4, relu1 again 4-4.5 (its slot is free
# once loss has read it, at 4), relu1_grad -5.25, conv1_grad -10.25; conv1 goes to the cpu
# at 2.5 and back at 3 (once the gpu copy is freed after relu1 read it); conv1_grad's copy
# 10.25-10.2600625 is the makespan.
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-12) }'; }
last_serial=$(grep -v '^#' "$d/timeline.dat" | awk '{ if ($4 > m) m = $4 } END { printf "%.12g", m }')
near "$last_serial" 0.0102801875 && ok "serial end 10.2801875 ms" || bad "serial end $last_serial"
makespan=$(grep -v '^#' "$d/timeline.dat" | awk '{ if ($6 > m) m = $6 } END { printf "%.12g", m }')
near "$makespan" 0.0102600625 && ok "overlapped end 10.2600625 ms" || bad "overlapped end $makespan"
recompute_start=$(grep -v '^#' "$d/timeline.dat" | awk '$2 == 1 { printf "%.12g", $5 }')
near "$recompute_start" 0.004 && ok "recompute of relu1 starts at 4 ms" || bad "recompute starts at $recompute_start"
copy_back=$(grep -v '^#' "$d/timeline.dat" | awk '$1 == 3 { printf "%.12g", $5 }')
near "$copy_back" 0.003 && ok "copy back starts at 3 ms" || bad "copy back starts at $copy_back"

# ---- SVG -------------------------------------------------------------------------------
"$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/svg" --format svg >/dev/null 2>&1
check "svg: exit code" "$?" 0
for f in rs memory timeline; do
  if [ -s "$tmp/svg/$f.svg" ] && head -c 400 "$tmp/svg/$f.svg" | grep -q '<svg'; then ok "svg: $f.svg is SVG"; else bad "svg: $f.svg"; fi
done
cmp -s "$tmp/png/timeline.dat" "$tmp/svg/timeline.dat" && ok "svg: same data" || bad "svg: data differs"

# ---- errors: one line, exit code, nothing written --------------------------------------
expect() { # NAME CODE PATTERN DIR -- ARGS
  local name=$1 code=$2 pattern=$3 dir=$4
  shift 5
  "$@" >/dev/null 2>"$tmp/err"
  local rc=$? lines
  lines=$(grep -c . "$tmp/err")
  if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$tmp/err" && [ -z "$(ls -A "$dir" 2>/dev/null)" ]; then
    ok "$name: $(cat "$tmp/err")"
  else
    bad "$name: exit $rc (want $code), $lines lines, files: $(ls -A "$dir" 2>/dev/null | tr '\n' ' ')"
    sed 's/^/     /' "$tmp/err"
  fi
}
expect no-gnuplot 5 "gnuplot not found" "$tmp/e1" -- env XE_GNUPLOT=/nonexistent/gnuplot "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/e1"
printf '#!/bin/sh\necho "line 0: something broke" >&2\nexit 1\n' > "$tmp/fakegp"; chmod +x "$tmp/fakegp"
mkdir "$tmp/e2"
expect gnuplot-fails 5 "gnuplot.*exited with status 1: line 0: something broke" "$tmp/e2" -- env XE_GNUPLOT="$tmp/fakegp" "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/e2"
# the file states 3100 B for the gpu: the error line says so (before 2026-12-05 that note
# came only with a valid schedule)
expect invalid-schedule 2 "invalid schedule: event 8 (compute relu1_grad on gpu): memory on gpu would be 3008 bytes, budget 3000 (the file states a budget of 3100 B for gpu, checked against 3000 B: --devices/--budget)\$" "$tmp/e3" -- "$xe" plot "$g" "$s" --devices gpu+cpu --budget 3000 --out-dir "$tmp/e3"
expect bad-format 1 "format must be png or svg" "$tmp/e4" -- "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/e4" --format gif
expect no-out-dir 1 "need GRAPH, SCHEDULE.json and --out-dir" "$tmp/e5" -- "$xe" plot "$g" "$s"
expect bad-schedule 2 "schedule_unknown_device.json" "$tmp/e6" -- "$xe" plot "$g" tests/data/bad/schedule_unknown_device.json --out-dir "$tmp/e6"

# a failed plot into the --out-dir of an earlier, complete one leaves that one as it was
# (it used to delete the earlier data and scripts and keep its images)
sum_dir() { (cd "$1" && ls -A | sort | xargs cat | cksum); }
before=$(sum_dir "$tmp/png")
before_n=$(ls -A "$tmp/png" | wc -l)
env XE_GNUPLOT="$tmp/fakegp" "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/png" >/dev/null 2>"$tmp/err"
check "failed plot over an earlier one: exit 5" "$?" 5
check "failed plot over an earlier one: same files" "$(ls -A "$tmp/png" | wc -l)" "$before_n"
check "failed plot over an earlier one: same contents" "$(sum_dir "$tmp/png")" "$before"

# inputs inside --out-dir under the names of plot files: refused, inputs untouched,
# nothing else written
mkdir "$tmp/e7"
cp "$s" "$tmp/e7/rs.gp"
cp "$g" "$tmp/e7/timeline.dat"
"$xe" plot "$tmp/e7/timeline.dat" "$tmp/e7/rs.gp" "${inst[@]}" --out-dir "$tmp/e7" >/dev/null 2>"$tmp/err"
rc=$?
check "inputs in --out-dir: exit code" "$rc" 1
check "inputs in --out-dir: one line" "$(grep -c . "$tmp/err")" 1
grep -q "is the input graph; refusing to overwrite it" "$tmp/err" && ok "inputs in --out-dir: says why" || bad "inputs in --out-dir: $(cat "$tmp/err")"
cmp -s "$s" "$tmp/e7/rs.gp" && cmp -s "$g" "$tmp/e7/timeline.dat" && ok "inputs in --out-dir: inputs untouched" || bad "inputs in --out-dir: an input was overwritten"
check "inputs in --out-dir: nothing else written" "$(ls -A "$tmp/e7" | wc -l)" 2

# ---- an ONNX model's schedule: plotted at the batch it was planned for ----------------
# (resnet18.onnx states batch 1; the schedule says batch 2): the memory data's largest
# resident bytes on the GPU equal the peak simulate measures for the same file, with
# simulate's note that the batch was taken from the file
m=tests/data/onnx/resnet18.onnx
"$xe" solve "$m" --batch 2 --devices gpu+cpu --budget 50% --heuristic-only -q -o "$tmp/r18.json" >/dev/null 2>&1
check "onnx: batch-2 schedule solves" "$?" 0
"$xe" plot "$m" "$tmp/r18.json" --devices gpu+cpu --budget 50% --out-dir "$tmp/onnx" >"$tmp/out" 2>"$tmp/err"
check "onnx: plot exit code" "$?" 0
grep -q "note: batch 2, the one the schedule file was planned for" "$tmp/out" && ok "onnx: batch note" || bad "onnx: no batch note: $(cat "$tmp/out" "$tmp/err")"
want=$("$xe" simulate "$m" "$tmp/r18.json" --devices gpu+cpu --budget 50% --json | grep -o '"peak_bytes": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
got=$(awk '!/^#/ && $3 > mx {mx = $3} END {print mx + 0}' "$tmp/onnx/mem_0.dat")
check "onnx: plotted GPU peak = simulate's peak at the file's batch" "$got" "$want"

# ---- a full disk ----------------------------------------------------------------------
# a 4 KiB tmpfs (where this user may mount one: root): the data files cannot be written,
# exit 5 as for solve (1, a usage error, before 2026-12-01), and the --out-dir the plot
# made is removed again (it was left behind, empty)
mkdir "$tmp/full"
if mount -t tmpfs -o size=4k tmpfs "$tmp/full" 2>/dev/null; then
  dd if=/dev/zero of="$tmp/full/fill" bs=1k count=4 2>/dev/null
  "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/full/p" >"$tmp/out" 2>"$tmp/err"
  check "full disk: exit 5" "$?" 5
  check "full disk: one error line" "$(grep -c 'No space left on device' "$tmp/err")" 1
  check "full disk: no --out-dir left" "$(ls "$tmp/full")" fill
  umount "$tmp/full"
  # room for the data files and all but the last 12 KiB of the images: gnuplot exits 0
  # with an image cut short there, which plot took for a picture (exit 0, a PNG without
  # its IEND chunk) until 2026-12-05; now exit 5 naming the image, nothing left
  kib=$(find "$tmp/png" -type f -printf '%s\n' | awk '{k += int(($1 + 4095) / 4096) * 4} END {print k}')
  if mount -t tmpfs -o size=$((kib + 64))k tmpfs "$tmp/full" 2>/dev/null; then
    dd if=/dev/zero of="$tmp/full/fill" bs=1k count=76 2>/dev/null
    "$xe" plot "$g" "$s" "${inst[@]}" --out-dir "$tmp/full/p" >"$tmp/out" 2>"$tmp/err"
    check "disk full mid-image: exit 5" "$?" 5
    check "disk full mid-image: one error line naming the cut image" \
      "$(grep -c 'gnuplot wrote an incomplete image .*disk full' "$tmp/err")/$(wc -l <"$tmp/err")" 1/1
    check "disk full mid-image: no --out-dir left" "$(ls "$tmp/full")" fill
    umount "$tmp/full"
  fi
else
  echo "skip full disk: this user cannot mount a tmpfs"
fi

# no PATH at all (env -i): gnuplot is looked for where execvp would look (/bin:/usr/bin);
# "gnuplot not found" before 2026-12-05. Only where gnuplot is installed there.
if [ -x /usr/bin/gnuplot ] || [ -x /bin/gnuplot ]; then
  case $xe in /*) xabs=$xe ;; *) xabs=$PWD/$xe ;; esac
  env -i "$xabs" plot "$PWD/$g" "$PWD/$s" "${inst[@]}" --out-dir "$tmp/nopath" >"$tmp/out" 2>"$tmp/err"
  check "no PATH: exit code" "$?" 0
  check "no PATH: the memory image" "$([ -s "$tmp/nopath/memory.png" ] && echo yes)" yes
else
  echo "skip no PATH: gnuplot is not in /bin or /usr/bin"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
