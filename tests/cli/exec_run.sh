#!/usr/bin/env bash
# The executor end to end on a small ONNX model and two CPU devices (1 and 2 threads):
#   profile -> costs file -> solve reads it (round trip through the planner) -> simulate
#   agrees -> run executes the plan: measured peak = the simulator's, the prediction is
#   the plan's own total, gradients equal a keep-everything run -> a schedule whose
#   stated budget is too small is refused by the pool (exit 3), nothing silently run; a
#   schedule the simulator rejects for its events is refused before it runs (exit 2);
#   --budget sets the first device's pool.
set -u
xe=${1:?usage: exec_run.sh PATH_TO_XENGINE}
root=${XE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
model=$root/tests/data/onnx/tiny_misc.onnx
devs=$root/tests/data/cpu2_devices.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY=passive
fails=0
check() { # check WHAT COND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

"$xe" profile "$model" --devices "$devs" --runs 3 --warmup 1 -o "$tmp/costs.json" >"$tmp/profile.out" 2>&1
check "profile exits 0" test $? -eq 0
# every node of the 17-node training graph has a cost on both devices and a copy entry
check "costs for all 17 nodes on both devices" test "$(grep -c '"cpu1": .*"cpu2": ' "$tmp/costs.json")" -eq 17
check "copy entries both ways" grep -q '"cpu1->cpu2": .*"cpu2->cpu1": ' "$tmp/costs.json"
# the batch they were measured at travels with the costs; used at another batch they are
# taken as they are, with a warning (nothing said before 2026-12-01)
pb=$(sed -n 's/^ *"batch": \([0-9]*\),*$/\1/p' "$tmp/costs.json")
check "costs record their batch ($pb)" test -n "$pb"
"$xe" solve "$model" --batch $((pb + 1)) --devices "$devs" --costs "$tmp/costs.json" --heuristic-only -q \
  -o "$tmp/other.json" >/dev/null 2>"$tmp/other.err"
check "costs at another batch: a warning" \
  grep -q "^xengine: warning: $tmp/costs.json: the costs were measured at batch $pb; they are used as they are for batch $((pb + 1))$" "$tmp/other.err"

"$xe" solve "$model" --devices "$devs" --costs "$tmp/costs.json" --budget 60% -q -o "$tmp/plan.json" >"$tmp/solve.out" 2>&1
check "solve reads the profiled costs" test $? -eq 0
# the same costs with cpu1's times only (a profile of cpu1 alone), read for cpu1+cpu2:
# cpu2 stays on the roofline estimates, and a warning says so (silent before 2026-12-05)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["compute"]={k:{"cpu1":v["cpu1"]} for k,v in c["compute"].items()}; del c["copy"]; json.dump(c,open(sys.argv[2],"w"))' "$tmp/costs.json" "$tmp/cpu1only.json"
"$xe" solve "$model" --devices "$devs" --costs "$tmp/cpu1only.json" --heuristic-only -q -o "$tmp/p1.json" >/dev/null 2>"$tmp/p1.err"
check "costs for cpu1 only: exit 0" test $? -eq 0
check "costs for cpu1 only: one warning naming cpu2" \
  test "$(cat "$tmp/p1.err")" = "xengine: warning: $tmp/cpu1only.json: no compute cost for device cpu2; its costs are the roofline model's estimates, beside the file's for the other device"
"$xe" simulate "$model" "$tmp/plan.json" --devices "$devs" --costs "$tmp/costs.json" --budget 60% >"$tmp/sim.out" 2>&1
check "simulate accepts the plan" test $? -eq 0

"$xe" run "$model" "$tmp/plan.json" --devices "$devs" --costs "$tmp/costs.json" --check-grads >"$tmp/run.out" 2>"$tmp/run.err"
check "run exits 0" test $? -eq 0
check "run prints no warning" test ! -s "$tmp/run.err"
check "gradient check passes" grep -q 'gradient check .*PASS' "$tmp/run.out"
# against keep-everything with each node on its plan device: bit for bit where no node is
# computed on both devices (the same kernels and thread counts; docs/executor.md)
if grep -q 'computes on a second device' "$tmp/run.out"; then
  check "gradient check: within 1e-5 where a node ran on both devices" grep -q 'within 1e-5 asked): PASS$' "$tmp/run.out"
else
  check "gradient check: bit for bit on the plan's devices" \
    grep -q '^gradient check against keep-everything with each node on its schedule device: .*bit for bit equal: PASS$' "$tmp/run.out"
fi
# measured peak (column 4) equals predicted peak (column 5) on both devices
check "measured peak = simulated peak" test "$(awk '$1 ~ /^cpu[12]$/ && $4" "$5 == $6" "$7 {n++} END {print n+0}' "$tmp/run.out")" -eq 2
# the run's prediction is the plan's own serial total (same costs file)
plan_total=$(sed -n 's/.*"total_time_s": \([0-9.e+-]*\).*/\1/p' "$tmp/plan.json")
run_total=$(sed -n 's/.*predicted \([0-9.]*\) s.*/\1/p' "$tmp/run.out")
check "predicted total = plan total ($plan_total ~ $run_total)" \
  awk -v a="$plan_total" -v b="$run_total" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d < 1e-4 + 1e-3 * a)}'

# the plan with cpu1's stated budget cut to 100 bytes: the pool refuses it
sed '0,/"budget": [0-9]*/s//"budget": 100/' "$tmp/plan.json" >"$tmp/small.json"
"$xe" run "$model" "$tmp/small.json" --devices "$devs" --costs "$tmp/costs.json" >"$tmp/small.out" 2>"$tmp/small.err"
check "over-budget schedule exits 3" test $? -eq 3
check "pool names device and budget" grep -q 'device cpu1: allocating .* over the budget of 100 B' "$tmp/small.err"
check "the error names the schedule file" grep -q "^xengine: error: $tmp/small.json: " "$tmp/small.err"
check "one error line, with the simulator's reason" \
  test "$(wc -l <"$tmp/small.err")" -eq 1 -a "$(grep -c 'the simulator rejects the schedule too: .*budget 100' "$tmp/small.err")" -eq 1
check "a note names the file's budget the pool uses" grep -q '^note: the pool of cpu1 uses the file.s budget, 100 B (--devices gives [0-9]* B' "$tmp/small.out"

# without --costs the predictions are the cost model's, and a note says so
"$xe" run "$model" "$tmp/plan.json" --devices "$devs" >"$tmp/nc.out" 2>"$tmp/nc.err"
check "run without --costs: a note on the predictions" grep -q "^note: predicted from the roofline cost model (no --costs)" "$tmp/nc.out"
check "run with --costs: no such note" test "$(grep -c 'roofline cost model' "$tmp/run.out")" -eq 0

# a batch-2 plan with no room to spare run at batch 4: the pool refuses, one line
sed 's/400%/100%/' "$devs" >"$tmp/dev100.json"
"$xe" solve "$model" --batch 2 --devices "$tmp/dev100.json" -q -o "$tmp/b2.json" >/dev/null 2>&1
check "batch-2 plan solves" test $? -eq 0
"$xe" run "$model" "$tmp/b2.json" --batch 4 --devices "$tmp/dev100.json" >"$tmp/b4.out" 2>"$tmp/b4.err"
check "batch-2 plan at batch 4 exits 3" test $? -eq 3
check "batch-2 plan at batch 4: one error line" \
  test "$(wc -l <"$tmp/b4.err")" -eq 1 -a "$(grep -c '^xengine: error: .*over the budget.*the simulator rejects' "$tmp/b4.err")" -eq 1

# a schedule cut in half (every event kept valid, later nodes never computed): refused
# before anything runs, exit 2, one line naming the file and the node (it ran, exit 0,
# with a warning and a prediction of -1 s, before 2026-12-01)
total=$(grep -c '^ *{"op"' "$tmp/plan.json")
awk -v keep=$((total / 2)) '/"events"/ { ev = 1 } /^ *\{"op"/ { if (++k > keep) next; if (k == keep) sub(/,$/, "") }
  ev && /^  \],?$/ { print "  ]"; print "}"; exit } { print }' "$tmp/plan.json" >"$tmp/half.json"
"$xe" run "$model" "$tmp/half.json" --devices "$devs" --costs "$tmp/costs.json" >"$tmp/half.out" 2>"$tmp/half.err"
check "half a schedule exits 2" test $? -eq 2
check "half a schedule: one line naming the file and a node never computed" \
  test "$(wc -l <"$tmp/half.err")" -eq 1 -a "$(grep -c "^xengine: error: $tmp/half.json: invalid schedule: node .* was never computed" "$tmp/half.err")" -eq 1
check "half a schedule: nothing run (no result table)" test "$(grep -c '^total: measured' "$tmp/half.out")" -eq 0

# --budget sets the first device's pool (it was ignored for the file's before 2026-12-01):
# at 1 B the pool refuses the first compute, exit 3, and a note says which budget won
"$xe" run "$model" "$tmp/plan.json" --devices "$devs" --costs "$tmp/costs.json" --budget 1B >"$tmp/b1.out" 2>"$tmp/b1.err"
check "run --budget 1B exits 3" test $? -eq 3
check "run --budget 1B: the pool's budget is 1 B" grep -q 'device cpu1: allocating .* over the budget of 1 B' "$tmp/b1.err"
check "run --budget 1B: note on the file's budget" grep -q '^note: the file states a budget of [0-9]* B for cpu1; the pool uses 1 B (--budget)' "$tmp/b1.out"

# a run that cannot fit this machine's memory is refused before anything is allocated
# (exit 5, one line with the sizes): at batch 10^8 the data alone is 96 GiB; before
# 2026-12-05 it filled gigabytes for its data first and ran on while memory lasted
"$xe" run "$model" "$tmp/plan.json" --batch 100000000 --devices "$devs" --budget 100% >"$tmp/huge.out" 2>"$tmp/huge.err"
rc=$?
check "run beyond this machine's memory: exit 5, one line naming the sizes" \
  test "$rc" -eq 5 -a "$(wc -l <"$tmp/huge.err")" -eq 1 -a \
  "$(grep -c "^xengine: error: $tmp/plan.json: running it needs about .* (parameters, gradients and data: .*), more than 90% of this machine's memory" "$tmp/huge.err")" -eq 1

# budgets the schedule file states must be byte counts of at least 1 (0 was taken as
# "none" before 2026-12-05): refused, exit 2, one line
for bad in 0 -5 '"abc"' 1e300 2.5; do
  shown=${bad//\"/}
  [ "$bad" = 1e300 ] && shown=1e+300
  sed "0,/\"budget\": [0-9]*/s//\"budget\": $bad/" "$tmp/plan.json" >"$tmp/badbudget.json"
  "$xe" run "$model" "$tmp/badbudget.json" --devices "$devs" >"$tmp/bb.out" 2>"$tmp/bb.err"
  rc=$?
  check "run refuses stated budget $bad (exit 2, one line naming file, device, value)" \
    test "$rc" -eq 2 -a "$(wc -l <"$tmp/bb.err")" -eq 1 -a \
    "$(grep -c "badbudget.json: device 0 ('cpu1'): budget \"\\{0,1\}$shown\"\\{0,1\} is not a whole number of bytes" "$tmp/bb.err")" -eq 1
done

# a device with every core (no count in its name): its threads column says so ("0" before);
# --output is -o's long form, as in solve and export-graph (profile refused it until 2026-12-05)
"$xe" profile "$model" --devices gpu --runs 1 --warmup 0 --output "$tmp/pg.json" >"$tmp/pg.out" 2>&1
check "profile --devices gpu: threads 'all'" grep -qE '^gpu +all +[0-9.]+' "$tmp/pg.out"
check "profile --output writes the costs file" grep -q '"format": "xengine-costs"' "$tmp/pg.json"

"$xe" run "$model" >/dev/null 2>&1
check "run without a schedule is a usage error" test $? -eq 1
"$xe" profile "$model" --devices "$devs" >/dev/null 2>&1
check "profile without -o is a usage error" test $? -eq 1

# models a new user's trial could not run (2026-12-05): PyTorch's F.cross_entropy export
# (ignore_index -100), fc(self.b + x) (Add(b, x)), F.avg_pool2d (a zero Pad), weights as
# external data; each planned and run with the gradient check
for m in torch_ce param_first_add torch_avgpool ext_mlp; do
  "$xe" solve "$root/tests/data/onnx/$m.onnx" --devices "$devs" --heuristic-only -q -o "$tmp/$m.json" >/dev/null 2>&1 &&
    "$xe" run "$root/tests/data/onnx/$m.onnx" "$tmp/$m.json" --devices "$devs" --check-grads >"$tmp/$m.out" 2>&1
  check "$m: solve and run, gradient check passes" grep -q 'gradient check .*PASS' "$tmp/$m.out"
done

# PyTorch's x.view(x.size(0), -1) with a dynamic batch (Shape -> Gather -> Unsqueeze ->
# Concat -> Reshape, opsets 13 and 11; 2026-12-05): planned at batch 3, not the file's 2,
# on one device at 80% of the no-recomputation peak, which forces recomputations, and run
# with the gradient check
# and torch_sigmoid (nn.Sigmoid and torch.sigmoid; 2026-12-05) the same way
for m in torch_view13 torch_view11 torch_sigmoid; do
  "$xe" solve "$root/tests/data/onnx/$m.onnx" --batch 3 --devices "$root/tests/data/cpu1_devices.json" --budget 80% \
    --heuristic-only -q -o "$tmp/$m.json" >"$tmp/$m.solve" 2>&1
  check "$m: solve at batch 3 and 80% recomputes" grep -q ' computes ([1-9][0-9]* recomputations)' "$tmp/$m.solve"
  "$xe" run "$root/tests/data/onnx/$m.onnx" "$tmp/$m.json" --batch 3 --devices "$root/tests/data/cpu1_devices.json" \
    --check-grads >"$tmp/$m.out" 2>&1
  check "$m: run with recomputations, gradient check passes" grep -q 'gradient check .*PASS' "$tmp/$m.out"
done

# a plan run at another batch than planned that overflows a pool: the error line itself
# names both batches (only a note before it said so until 2026-12-05)
"$xe" solve "$root/tests/data/onnx/resnet18.onnx" --batch 1 --devices "$root/tests/data/cpu2_tight_devices.json" \
  --heuristic-only -o "$tmp/b1.json" >/dev/null 2>&1
"$xe" run "$root/tests/data/onnx/resnet18.onnx" "$tmp/b1.json" --batch 2 --devices "$root/tests/data/cpu2_tight_devices.json" \
  >"$tmp/b1.out" 2>"$tmp/b1.err"
code=$?
check "run at batch 2 of a batch-1 plan: exit 3 (got $code)" test "$code" -eq 3
check "run at batch 2 of a batch-1 plan: the error names both batches" \
  grep -q "over the budget .*(the schedule was planned for batch 1, run here at batch 2)$" "$tmp/b1.err"

# a device of kind gpu is a CPU engine here too: profile says so (silently before 2026-12-05)
"$xe" profile "$model" --devices gpu+cpu --runs 1 --warmup 0 -o "$tmp/gc.json" >"$tmp/gc.out" 2>&1
check "profile on gpu+cpu: a note says the gpu is measured on the CPU" \
  grep -q "^note: device 'gpu' (kind gpu) is measured on this machine's CPU" "$tmp/gc.out"

# a batch whose step cannot be held in this machine's memory: refused before anything
# is allocated (it allocated until something failed before 2026-12-05), one line, exit 5
"$xe" profile "$root/tests/data/onnx/resnet18.onnx" --batch 100000 -o "$tmp/huge.json" >"$tmp/huge.out" 2>"$tmp/huge.err"
code=$?
check "profile beyond the memory: exit 5 (got $code)" test "$code" -eq 5
check "profile beyond the memory: one line saying so" \
  test "$(grep -c "resnet18.onnx: profiling it needs about .* more than 90% of this machine's memory" "$tmp/huge.err")" -eq 1
check "profile beyond the memory: no costs file" test ! -e "$tmp/huge.json"

if [ "$fails" -ne 0 ]; then
  echo "--- run output"; cat "$tmp/run.out" "$tmp/run.err" "$tmp/small.err"
  exit 1
fi
echo "all exec_run checks passed"
