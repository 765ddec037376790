#!/usr/bin/env bash
# ONNX models end to end: every fixture of tests/data/onnx is read, turned into its
# training graph, costed by the roofline model, planned (small batch, short time limit)
# on gpu+cpu at 50% of the GPU's no-recomputation peak, and the written schedule is
# accepted by `xengine simulate` on the same model and options. Bad inputs (malformed,
# truncated or unsupported ONNX, a bad devices line, a bad --batch) give one error line,
# the documented exit code and no output file.
set -u
xe=${1:?usage: onnx_solve.sh PATH_TO_XENGINE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
d=tests/data/onnx

ok() { passes=$((passes + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; sed 's/^/     /' "$tmp/stdout" "$tmp/stderr" | tail -20; }

# plan NAME MODEL "SOLVE OPTIONS" INSTANCE OPTIONS...: solve must exit 0 and write a
# schedule that simulate accepts with the same instance options
plan() {
  local name=$1 model=$2 solve_opts=$3
  shift 3
  rm -f "$tmp/out.json"
  # shellcheck disable=SC2086
  "$xe" solve "$model" "$@" $solve_opts -q -o "$tmp/out.json" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$tmp/out.json" ] || ! grep -q '"validated_by": "xengine simulator"' "$tmp/out.json"; then
    bad "$name: solve exit $rc"
    return
  fi
  # the node count printed is 2 x forward ops + 1 for a training graph
  local n
  n=$(sed -n 's/.*: \([0-9]*\) nodes,.*/\1/p' "$tmp/stdout")
  "$xe" simulate "$model" "$tmp/out.json" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q '^total:' "$tmp/stdout"; then
    bad "$name: simulate exit $rc"
    return
  fi
  ok "$name: $n nodes, $(grep '^total:' "$tmp/stdout")"
}

for m in resnet18 resnet50 vgg16 mobilenet_v2 googlenet; do
  plan "$m" "$d/$m.onnx" "--time-limit 2" --batch 2 --devices gpu+cpu --budget 50%
done
# inference keeps no activation for later, so its peak is one node's footprint: 100%
plan resnet18-inference "$d/resnet18.onnx" --heuristic-only --batch 2 --inference --devices gpu --budget 100%
printf 'gpu0;GPU;0;2;60%%\n# the host\nhost;CPU;0;1;8GiB\n' >"$tmp/devices.txt"
plan resnet18-device-lines "$d/resnet18.onnx" --heuristic-only --batch 2 --devices "$tmp/devices.txt"

# node counts by hand: resnet18 has 68 operators that are not views (20 Conv, 20
# BatchNormalization, 17 Relu, 1 MaxPool, 8 Add, 1 GlobalAveragePool, 1 Gemm; Flatten
# folds): 68 forward + loss + 68 backward = 137; inference: 68 nodes and 75 edges (every
# operator but conv1 reads one activation, each Add a second one: 67 + 8)
"$xe" solve "$d/resnet18.onnx" --batch 2 --heuristic-only -o "$tmp/out.json" >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q ': 137 nodes, ' "$tmp/stdout"; then ok "resnet18 training graph has 137 nodes"; else bad "resnet18 node count"; fi
"$xe" solve "$d/resnet18.onnx" --batch 2 --inference --heuristic-only -o "$tmp/out.json" >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q ': 68 nodes, 75 edges' "$tmp/stdout"; then ok "resnet18 inference graph has 68 nodes, 75 edges"; else bad "resnet18 inference count"; fi
rm -f "$tmp/out.json"

# export-graph: the exported graph with its exported costs plans exactly like the model
"$xe" export-graph "$d/vgg16.onnx" --batch 2 -o "$tmp/g.json" --costs-out "$tmp/c.json" >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q 'wrote .*g.json (79 nodes, 120 edges) and .*c.json (2 devices)' "$tmp/stdout"; then
  a=$("$xe" solve "$d/vgg16.onnx" --batch 2 --budget 50% --heuristic-only -o "$tmp/s1.json" | grep '^total:')
  b=$("$xe" solve "$tmp/g.json" --costs "$tmp/c.json" --budget 50% --heuristic-only -o "$tmp/s2.json" | grep '^total:')
  if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "export-graph round trip: $b"; else bad "export-graph round trip: '$a' vs '$b'"; fi
  # the graph file's schedule states no batch: checked against the model at another batch,
  # a note says its sizes differ and to give the batch; at batch 2 none
  "$xe" simulate "$d/vgg16.onnx" "$tmp/s2.json" --batch 4 --budget 50% --costs "$tmp/c.json" >"$tmp/sim4" 2>&1
  if grep -q "^note: the file's summary states a peak of .* on gpu; the replay here gives .*: it was planned for other tensor sizes (it states no batch, as a schedule planned from an exported graph file: give the batch it was planned for with --batch)$" "$tmp/sim4"; then
    ok "graph file's schedule at another batch: the peak note"
  else
    bad "graph file's schedule at another batch: no peak note: $(cat "$tmp/sim4")"
  fi
  "$xe" simulate "$d/vgg16.onnx" "$tmp/s2.json" --batch 2 --budget 50% --costs "$tmp/c.json" >"$tmp/sim2" 2>&1
  if ! grep -q "states a peak" "$tmp/sim2"; then ok "graph file's schedule at its batch: no peak note"; else bad "peak note at the same batch"; fi
else
  bad "export-graph"
fi
rm -f "$tmp"/s1.json "$tmp"/s2.json

# expect NAME CODE PATTERN -- ARGS...: one stderr line matching PATTERN, exit CODE, no output
expect() {
  local name=$1 code=$2 pattern=$3
  shift 4
  "$xe" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  local lines leftovers
  lines=$(grep -c . "$tmp/stderr")
  leftovers=$(find "$tmp" -name 'out.json*' | wc -l)
  if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$tmp/stderr" && [ "$leftovers" -eq 0 ]; then
    ok "$name: $(cat "$tmp/stderr")"
  else
    fails=$((fails + 1))
    echo "FAIL $name: exit $rc (want $code), $lines stderr lines, $leftovers output files, want /$pattern/:"
    sed 's/^/     /' "$tmp/stderr"
  fi
}

# a model whose batch is fixed in the file (a weight sized for it): at another --batch the
# shape error says the file's own batch works
expect batch-fixed-hint 2 "batch_fixed.onnx: .*inner dimensions differ.* (at --batch 4; the file's own batch 2 works: a shape fixed in the file does not follow --batch)$" -- solve "$d/batch_fixed.onnx" --batch 4 -o "$tmp/out.json"
head -c 3000 "$d/resnet18.onnx" >"$tmp/truncated.onnx"
printf '\x08\x07garbage that is no protobuf at all \xff\xff\xff\xff' >"$tmp/garbage.onnx"
: >"$tmp/empty.onnx"
expect truncated 2 "$tmp/truncated.onnx" -- solve "$tmp/truncated.onnx" -o "$tmp/out.json"
expect garbage 2 "$tmp/garbage.onnx" -- solve "$tmp/garbage.onnx" -o "$tmp/out.json"
expect empty 2 "$tmp/empty.onnx" -- solve "$tmp/empty.onnx" -o "$tmp/out.json"
# external data is read from the file next to the model; a copy without it is refused
# naming the data file (2026-12-05: it was planned and run with random weights)
cp "$d/ext_mlp.onnx" "$tmp/ext_mlp.onnx"
expect ext-data-missing 2 "^xengine: error: $tmp/ext_mlp.onnx: tensor \"w\": external data file $tmp/ext_mlp.data cannot be opened: No such file or directory$" -- \
  solve "$tmp/ext_mlp.onnx" -o "$tmp/out.json"
# a model the executor can never run is refused before planning (2026-12-05)
expect matmul-1d 2 "node \"mm0\": MatMul of the 1-D operand \"x\" is not supported" -- \
  solve "$d/bad_matmul1d.onnx" -o "$tmp/out.json"
expect unsupported 2 'unsupported operator "Cos"' -- solve "$d/bad_unsupported.onnx" -o "$tmp/out.json"
printf 'gpu0;GPU;0;2;60%%\nhost;CPU;0\n' >"$tmp/bad_line.txt"
expect bad-device-line 2 "$tmp/bad_line.txt: line 2: 3 fields" -- solve "$d/resnet18.onnx" --batch 2 --devices "$tmp/bad_line.txt" -o "$tmp/out.json"
printf 'gpu0;XPU;0;2;60%%\n' >"$tmp/bad_type.txt"
expect bad-device-type 2 "$tmp/bad_type.txt: line 1: type 'XPU'" -- solve "$d/resnet18.onnx" --devices "$tmp/bad_type.txt" -o "$tmp/out.json"
expect batch-zero 1 "batch: '0' is not a whole number" -- solve "$d/resnet18.onnx" --batch 0 -o "$tmp/out.json"
expect batch-json 1 "apply to ONNX models only" -- solve tests/data/tiny_graph.json --batch 4 -o "$tmp/out.json"
expect batch-missing 1 "batch needs a value" -- solve "$d/resnet18.onnx" -o "$tmp/out.json" --batch
# a GPU budget below the largest node's footprint is proven infeasible, with the exact
# smallest budget (one device: docs/pebble.md)
expect infeasible 3 "infeasible.*smallest budget that admits any schedule is .*exact" -- solve "$d/vgg16.onnx" --batch 2 --devices gpu --budget 1MB -o "$tmp/out.json"

# the batch a plan was made for travels with it: solve records it, simulate takes it from
# the file without --batch (budgets then as planned: no budget note) and notes a --batch
# that differs
"$xe" solve "$d/resnet18.onnx" --batch 4 --devices gpu+cpu --budget 50% --method heuristic -q -o "$tmp/b4.json" \
  >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q '"batch": 4' "$tmp/b4.json"; then ok "solve records batch 4"; else bad "solve records batch 4"; fi
"$xe" simulate "$d/resnet18.onnx" "$tmp/b4.json" --devices gpu+cpu --budget 50% >"$tmp/stdout" 2>"$tmp/stderr"
if [ $? -eq 0 ] && grep -q '^note: batch 4, the one the schedule file was planned for' "$tmp/stdout" &&
  ! grep -q 'states a budget' "$tmp/stdout"; then
  ok "simulate takes batch 4 from the file, budgets as planned"
else
  bad "simulate takes batch 4 from the file, budgets as planned"
fi
"$xe" simulate "$d/resnet18.onnx" "$tmp/b4.json" --devices gpu+cpu --budget 50% --batch 2 >"$tmp/stdout" 2>"$tmp/stderr"
if grep -q '^note: the schedule file was planned for batch 4; it was checked at batch 2' "$tmp/stdout"; then
  ok "simulate notes --batch 2 against the file's 4"
else
  bad "simulate notes --batch 2 against the file's 4"
fi

# a stated batch that is not one is refused by simulate, plot and run (exit 2, one line
# naming the file and the field; it was ignored without a word before 2026-12-01), and
# null counts as absent
for v in '"abc"' -1 0 1e12 32.5; do
  sed "s/\"batch\": 4/\"batch\": $v/" "$tmp/b4.json" >"$tmp/bb.json"
  for cmd in simulate plot run; do
    extra=""
    [ $cmd = plot ] && extra="--out-dir $tmp/plotdir"
    "$xe" $cmd "$d/resnet18.onnx" "$tmp/bb.json" $extra >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ $rc -eq 2 ] && [ "$(grep -c . "$tmp/stderr")" -eq 1 ] &&
      grep -q "bb.json: summary.batch must be a whole number from 1 to 1000000000" "$tmp/stderr"; then
      ok "$cmd refuses summary.batch $v"
    else
      bad "$cmd refuses summary.batch $v: exit $rc, $(cat "$tmp/stderr")"
    fi
  done
done
[ ! -e "$tmp/plotdir" ] && ok "plot made no directory for a bad batch" || bad "plot made $tmp/plotdir"
sed 's/"batch": 4/"batch": null/' "$tmp/b4.json" >"$tmp/bb.json"
"$xe" simulate "$d/resnet18.onnx" "$tmp/bb.json" --batch 4 --devices gpu+cpu --budget 50% >"$tmp/stdout" 2>"$tmp/stderr"
if [ $? -eq 0 ] && ! grep -q '^note: .*batch' "$tmp/stdout"; then ok "summary.batch null counts as absent"; else bad "summary.batch null: $(cat "$tmp/stderr")"; fi

# the graph a plan was made for travels with it too: solve records "inference", simulate
# takes the inference graph from the file (with a note), and refuses --inference for a
# training schedule with a word about it (before 2026-12-05 "node loss was never computed"
# and "node 68 does not exist"); run refuses an inference schedule by name
"$xe" solve "$d/resnet18.onnx" --batch 2 --inference --devices gpu --budget 100% --heuristic-only -q \
  -o "$tmp/inf.json" >/dev/null 2>&1
if grep -q '"inference": true' "$tmp/inf.json" && grep -q '"inference": false' "$tmp/b4.json"; then
  ok "solve records the graph kind"
else
  bad "solve records the graph kind"
fi
"$xe" simulate "$d/resnet18.onnx" "$tmp/inf.json" --devices gpu --budget 100% >"$tmp/stdout" 2>"$tmp/stderr"
if [ $? -eq 0 ] && grep -q '^note: the inference graph, the one the schedule file was planned for' "$tmp/stdout"; then
  ok "simulate takes the inference graph from the file"
else
  bad "simulate takes the inference graph from the file"
fi
expect training-with-inference 2 "b4.json: planned for the training graph of .*resnet18.onnx; drop --inference" -- \
  simulate "$d/resnet18.onnx" "$tmp/b4.json" --inference --devices gpu+cpu --budget 50%
expect run-inference-schedule 2 "the schedule was planned for the inference graph; the executor runs training steps only" -- \
  run "$d/resnet18.onnx" "$tmp/inf.json"
sed 's/"inference": true/"inference": "yes"/' "$tmp/inf.json" >"$tmp/infbad.json"
expect inference-not-bool 2 "infbad.json: summary.inference must be true or false" -- \
  simulate "$d/resnet18.onnx" "$tmp/infbad.json"

echo "onnx_solve: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
