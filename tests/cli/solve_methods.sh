#!/usr/bin/env bash
# `solve --method`: every strategy on tests/data/tiny_graph.json (gpu+cpu, gpu budget
# 3000 B), whose optimum is 9.770125 ms (see json_output.sh: every node on the gpu, conv1
# parked on the cpu and brought back); auto, milp and lns reach it and prove it (gap 0);
# the portfolio alone finds it too; a baseline runs alone; an unknown method is a usage
# error (exit 1) and writes nothing.
set -u
xe=${1:?usage: solve_methods.sh PATH_TO_XENGINE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; }
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: no '$2' in: $(cat "$3")"; fi; }
g=tests/data/tiny_graph.json
for m in auto milp lns; do
    "$xe" solve "$g" --devices gpu+cpu --budget 3000 --method $m --time-limit 20 --json -o "$tmp/$m.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok "$m: exit 0" || bad "$m: exit $rc: $(cat "$tmp/err")"
    has "$m: objective" '"objective_s":0.00977012499999' "$tmp/out"
    has "$m: gap 0" '"gap":0.0' "$tmp/out"
    [ -s "$tmp/$m.json" ] && ok "$m: schedule written" || bad "$m: no schedule"
done
# the table's result line: the schedule written, its bound and gap, proven or not; the
# bound proving it is a stage bound (the MILP's), so the line says the proof covers stage
# schedules and gives the bound of every schedule: every node once on its cheapest device,
# 9.75 ms, gap (9.770125 - 9.75) / 9.770125 = 0.206% (docs/lns.md "Bounds" 1)
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --time-limit 20 -o "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
if grep -qE '^result: 0\.009770 s \([a-z-]+\), lower bound 0\.009770 s, gap 0\.000%: optimal within --gap 0\.0001 among stage schedules; over every schedule the bound is 0\.009750 s, gap 0\.206%$' "$tmp/out"; then
    ok "auto: result line, optimal"
else
    bad "auto: no result line in: $(cat "$tmp/out")"
fi
# one device: the search bound runs beside the phases (row search-bound, docs/lns.md
# "Bounds" 6), not with --no-bound-search; the result is optimal either way
"$xe" solve "$g" --devices gpu --budget 3000 --time-limit 20 -o "$tmp/sb.json" >"$tmp/out" 2>"$tmp/err"
has "one device: search-bound row" "search-bound " "$tmp/out"
has "one device: optimal" "optimal within --gap" "$tmp/out"
"$xe" solve "$g" --devices gpu --budget 3000 --time-limit 20 --no-bound-search -o "$tmp/sb.json" >"$tmp/out" 2>"$tmp/err"
if grep -q "^search-bound" "$tmp/out"; then bad "--no-bound-search: row still there"; else ok "--no-bound-search: no row"; fi
has "--no-bound-search: optimal" "optimal within --gap" "$tmp/out"
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method heuristic -o "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
# the cheap bounds (docs/lns.md "Bounds" 1 and 3): the eviction bound, a stage bound, a
# little above every node once on its cheapest device (0.009750 s, the bound of every
# schedule, gap 0.206% as above)
has "heuristic: result line with the cheap bound" "result: 0.009770 s (greedy), lower bound 0.009750 s, gap 0.204%: feasible, not proven optimal within --gap 0.0001 among stage schedules; over every schedule the bound is 0.009750 s, gap 0.206% (heuristic only: the bound without LP or MILP)" "$tmp/out"
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method heuristic --json -o "$tmp/h.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "heuristic: exit 0" || bad "heuristic: exit $rc"
has "heuristic: objective" '"objective_s":0.00977012499999' "$tmp/out"
has "heuristic: status" '"status":"heuristic only"' "$tmp/out"
# where the cheap bound proves the schedule (the default budget: every node once on the
# gpu), the JSON status says optimal, as the result line does ("heuristic only" before)
"$xe" solve "$g" --heuristic-only --json -o "$tmp/h2.json" >"$tmp/out" 2>"$tmp/err"
has "heuristic, proven by the cheap bound: status optimal" '"status":"optimal","exit_code":0' "$tmp/out"
has "heuristic: the cheap bound" '"bound_s":0.00975' "$tmp/out"
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method chen-sqrt --json -o "$tmp/c.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "chen-sqrt: exit 0" || bad "chen-sqrt: exit $rc: $(cat "$tmp/err")"
has "chen-sqrt: method" '"method":"chen-sqrt"' "$tmp/out"
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method chen-sqrt -o "$tmp/c2.json" >"$tmp/out2" 2>"$tmp/err"
has "chen-sqrt: result line without a bound" "(chen-sqrt); no lower bound (a baseline computes none)" "$tmp/out2"
# a baseline's summary carries what every solve's does: its row, the replay's totals and
# the per-device table (they were missing), the replayed total equal to the objective
has "chen-sqrt: methods row" '"methods":[{"method":"chen-sqrt","status":"valid"' "$tmp/out"
has "chen-sqrt: devices" '"devices":[{"name":"gpu"' "$tmp/out"
obj=$(sed -n 's/.*"objective_s":\([^,]*\),.*/\1/p' "$tmp/out" | head -1)
tot=$(sed -n 's/.*"total_time_s":\([^,]*\),.*/\1/p' "$tmp/out")
[ -n "$obj" ] && [ "$obj" = "$tot" ] && ok "chen-sqrt: total_time_s = objective_s ($tot)" ||
    bad "chen-sqrt: total_time_s '$tot' against objective_s '$obj'"
"$xe" solve "$g" --method bogus -o "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok "unknown method: exit 1" || bad "unknown method: exit $rc"
[ ! -e "$tmp/b.json" ] && ok "unknown method: no file" || bad "unknown method: file written"
"$xe" solve "$g" --method -o "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok "--method without a known value: exit 1" || bad "--method -o: exit $rc"
# --help describes the real auto strategy and its large-model threshold
"$xe" solve --help >"$tmp/out" 2>&1
if grep -q 'which starts the exact' "$tmp/out"; then bad "--help: the old strategy text"; else ok "--help: no old strategy text"; fi
has "--help: auto skips the MILP on large models" "over 40,000 binary MILP" "$tmp/out"

# a limit too short to start a solver process (0.05 s: none would end in time, grace
# included): the MILP is not run, the portfolio's schedule is written, exit 0
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method milp --time-limit 0.05 -o "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "milp, 0.05 s: exit 0" || bad "milp, 0.05 s: exit $rc: $(cat "$tmp/err")"
has "milp, 0.05 s: not run" "not run (time limit reached)" "$tmp/out"
[ -s "$tmp/s.json" ] && ok "milp, 0.05 s: schedule written" || bad "milp, 0.05 s: no schedule"

# the MILP row when CBC gives no answer in time: resnet18 at batch 32 is too large for
# CBC's preprocessing in 1 s, so the watchdog stops it (its limit is cut so that it ends,
# with the 0.1 s grace, at the call's 1 s):
# the unknown bound is "-" (never -inf), the time is the real elapsed time, not 0.000:
# what the portfolio's row (greedy, or greedy-diverse after its randomised runs) left of
# the 1 s, less the child's start
"$xe" solve tests/data/onnx/resnet18.onnx --batch 32 --budget 50% --method milp --time-limit 1 \
    -o "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "milp, no answer in time: exit 0 (the portfolio's schedule)" || bad "milp, no answer: exit $rc: $(cat "$tmp/err")"
row=$(grep '^milp ' "$tmp/out")
if echo "$row" | grep -qE '^milp +- +- +- +[0-9]+\.[0-9]{3}  ' && ! echo "$row" | grep -qi 'inf\|nan'; then
    ok "milp, no answer: objective, bound and gap '-'"
else
    bad "milp, no answer: row '$row'"
fi
t=$(echo "$row" | awk '{print $5}')
tp=$(grep -E '^greedy[a-z-]* ' "$tmp/out" | awk '{print $5}')
awk -v t="$t" -v p="$tp" 'BEGIN { exit !(p > 0 && t >= 0.9 - p && t <= 1.2) }' && ok "milp, no answer: elapsed $t s (portfolio $tp s)" \
    || bad "milp, no answer: time '$t', portfolio '$tp'"
if grep -q ' 0 variables' "$tmp/out"; then bad "milp, no answer: a 0-variable model line"; else ok "milp, no answer: no empty model line"; fi
[ "$(grep -c 'warning' "$tmp/err")" -le 1 ] && ok "milp, no answer: at most one warning" || bad "milp, no answer: $(cat "$tmp/err")"

# VGG16 (shared Checkmate graph, when present): CBC 2.10 may crash or claim
# infeasibility when a 1 s limit stops it in preprocessing; either way the schedule in
# hand is kept, with one warning saying what happened, and the bound is never -inf
shared=${XE_SHARED_GRAPHS:-../shared/graphs} # the shared folder sits beside the checkout
vgg=$shared/checkmate_vgg16_b256_train.json
if [ -r "$vgg" ]; then
    "$xe" solve "$vgg" --budget 70% --method milp --time-limit 1 -o "$tmp/v.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok "vgg16 milp 1 s: exit 0" || bad "vgg16 milp 1 s: exit $rc: $(cat "$tmp/err")"
    if grep -qi 'inf *-\|-inf\|nan\| 0 variables' "$tmp/out"; then bad "vgg16 milp 1 s: $(cat "$tmp/out")"; else ok "vgg16 milp 1 s: no -inf, nan or empty model"; fi
    [ "$(grep -c 'warning' "$tmp/err")" -le 1 ] && ok "vgg16 milp 1 s: at most one warning" || bad "vgg16: $(cat "$tmp/err")"
    if grep -q 'ended without an answer; keeping the best schedule so far' "$tmp/err"; then bad "vgg16: old warning"; else ok "vgg16 milp 1 s: not the old, vague warning"; fi
    "$xe" solve "$vgg" --method revolve -o "$tmp/revolve.json" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] && ok "vgg16 revolve (not a chain): usage error" || bad "vgg16 revolve: exit $rc"
    has "vgg16 revolve: says why" "--method revolve does not apply to this graph" "$tmp/err"
    [ ! -e "$tmp/revolve.json" ] && ok "vgg16 revolve: no output" || bad "vgg16 revolve: output written"
else
    echo "skip vgg16 check: $vgg not found"
fi
# below the stage heuristics' floor on one device, the exact search over all schedules
# (docs/pebble.md): at 55% of the peak the portfolio finds nothing and pebbling writes a
# schedule, its candidates restaged and improved (replayed again here by `xengine
# simulate`); at 50% it proves that no schedule
# of any form exists and names the exact smallest budget, where a schedule is written and
# one byte below which the budget is again proven infeasible
n100=$shared/random_layered_n100.json
if [ -r "$n100" ]; then
    # a baseline that does not fit gets the smallest budget, and exit 3 where no schedule
    # of any form fits (50%: the exact minimum is 25050 B, 54.1%); exit 4 where one does
    "$xe" solve "$n100" --devices gpu --budget 50% --method chen-sqrt -o "$tmp/n.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 3 ] && grep -q "chen-sqrt does not fit: .*the smallest budget that admits any schedule is 24.46 KiB (25050 B)" "$tmp/err" && [ ! -e "$tmp/n.json" ]; then
        ok "n100 50% chen-sqrt: exit 3, smallest budget 25050 B"
    else
        bad "n100 50% chen-sqrt: exit $rc: $(cat "$tmp/err")"
    fi
    "$xe" solve "$n100" --devices gpu --budget 70% --method chen-sqrt -o "$tmp/n.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 4 ] && grep -q "smallest budget that admits any schedule is 24.46 KiB" "$tmp/err" &&
        ok "n100 70% chen-sqrt: exit 4 with the smallest budget" || bad "n100 70% chen-sqrt: exit $rc: $(cat "$tmp/err")"
    "$xe" solve "$n100" --devices gpu --budget 55% --method heuristic -o "$tmp/n.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok "n100 55%: a schedule (exit 0)" || bad "n100 55%: exit $rc: $(cat "$tmp/err")"
    if grep -qE '^greedy +- .*no schedule found' "$tmp/out" && grep -qE '^pebbling +[0-9.]+ .*valid' "$tmp/out"; then
        ok "n100 55%: portfolio none, pebbling valid"
    else
        bad "n100 55%: rows in: $(cat "$tmp/out")"
    fi
    # its candidates restaged into stages and improved there (docs/reorder.md,
    # "Restaging"): the row restaged follows, no dearer
    pc=$(awk '$1 == "pebbling" {print $2}' "$tmp/out")
    rsc=$(awk '$1 == "restaged" {print $2}' "$tmp/out")
    if [ -n "$pc" ] && [ -n "$rsc" ] && awk -v a="$rsc" -v b="$pc" 'BEGIN { exit !(a <= b) }'; then
        ok "n100 55%: restaged $rsc s <= pebbling $pc s"
    else
        bad "n100 55%: restaged '$rsc' above pebbling '$pc': $(cat "$tmp/out")"
    fi
    has "n100 55%: written" "validated by the simulator" "$tmp/out"
    "$xe" simulate "$n100" "$tmp/n.json" --devices gpu --budget 55% >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok "n100 55%: simulate accepts it" || bad "n100 55% simulate: exit $rc: $(cat "$tmp/err")"
    "$xe" solve "$n100" --devices gpu --budget 50% --method heuristic -o "$tmp/n5.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 3 ] && ok "n100 50%: infeasible (exit 3)" || bad "n100 50%: exit $rc: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok "n100 50%: one line" || bad "n100 50%: $(cat "$tmp/err")"
    [ ! -e "$tmp/n5.json" ] && ok "n100 50%: no output" || bad "n100 50%: output written"
    has "n100 50%: proven for every schedule" "no schedule of any form fits" "$tmp/err"
    mb=$(sed -n 's/.*admits any schedule is [^(]*(\([0-9]*\) B).*/\1/p' "$tmp/err")
    if [ -n "$mb" ]; then
        ok "n100 50%: exact smallest budget $mb B"
        "$xe" solve "$n100" --devices gpu --budget "$mb" --method heuristic -o "$tmp/n.json" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ $rc -eq 0 ] && ok "n100 at the smallest budget: a schedule" || bad "n100 at $mb B: exit $rc: $(cat "$tmp/err")"
        "$xe" solve "$n100" --devices gpu --budget $((mb - 1)) --method heuristic -o "$tmp/n2.json" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ $rc -eq 3 ] && ok "n100 one byte below: infeasible (exit 3)" || bad "n100 at $((mb - 1)) B: exit $rc"
    else
        bad "n100 50%: no smallest budget in: $(cat "$tmp/err")"
    fi
    # the reach bound (docs/lns.md, "Bounds" 7) at 70%: exact in 0.3 s (Release; under
    # ASan a few times that, within its half of the 20 s), 48.793 s, and its cheapest path
    # is the result, optimal over every schedule (before: 48.793 s with a gap of 0.55%
    # after the full 60 s); simulate accepts it
    "$xe" solve "$n100" --devices gpu --budget 70% --time-limit 20 -o "$tmp/r70.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ] && grep -qE '^result: 48\.793000 s \(reach\), lower bound 48\.793000 s, gap 0\.000%: optimal within --gap 0\.0001$' "$tmp/out" &&
        grep -qE '^reach-bound +- +48\.793000 .*exact' "$tmp/out" && grep -qE '^reach +48\.793000 ' "$tmp/out"; then
        ok "n100 70%: the reach bound's path, optimal over every schedule"
    else
        bad "n100 70% reach: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    "$xe" simulate "$n100" "$tmp/r70.json" --devices gpu --budget 70% >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok "n100 70%: simulate accepts the reach schedule" || bad "n100 70% simulate: exit $rc: $(cat "$tmp/err")"
    # --no-reach-bound: neither row (the reach windows' row, reach-window, may show)
    "$xe" solve "$n100" --devices gpu --budget 70% --time-limit 2 --no-reach-bound -o "$tmp/r70b.json" >"$tmp/out" 2>"$tmp/err"
    if grep -qE '^reach(-bound)? ' "$tmp/out"; then bad "--no-reach-bound: a reach row: $(cat "$tmp/out")"; else ok "--no-reach-bound: no reach row"; fi
else
    echo "skip n100 check: $n100 not found"
fi
# no schedule found and none proven impossible (exit 4): random_layered_n250 at its
# smallest budget (87600 B, the largest footprint) in 0.1 s: the portfolio's greedy alone
# takes 0.15-0.5 s and finds nothing, the exact search then gets a quarter of the limit
# (0.025 s, even past it) and needs 0.2 s here (docs/pebble.md); the message gives the
# budgets the tool can vouch for, and writes nothing
n250=$shared/random_layered_n250.json
if [ -r "$n250" ]; then
    "$xe" solve "$n250" --devices gpu --budget 87600 --method heuristic --time-limit 0.1 -o "$tmp/m.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 4 ] && ok "n250 at 87600 B in 0.1 s: exit 4" || bad "n250 at 87600 B: exit $rc: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok "n250 at 87600 B: one line" || bad "n250 at 87600 B: $(cat "$tmp/err")"
    [ ! -e "$tmp/m.json" ] && ok "n250 at 87600 B: no output" || bad "n250 at 87600 B: output written"
    has "n250 at 87600 B: pebbling row" "unknown at its time limit" "$tmp/out"
    has "n250 at 87600 B: lower bound" "every schedule needs at least" "$tmp/err"
    # auto: once the failing portfolio has used up the limit no later phase starts (the
    # exact search keeps its quarter of the limit): before 2026-12-01 the reorder,
    # restarts, further orders and descent each ran a portfolio's worth past it
    "$xe" solve "$n250" --devices gpu --budget 87600 --time-limit 0.1 -o "$tmp/m.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 4 ] && ok "n250 auto in 0.1 s: exit 4" || bad "n250 auto in 0.1 s: exit $rc: $(cat "$tmp/err")"
    for m in reorder greedy-random descent milp; do
        if grep -qE "^$m +- +- +- +0\.000 +not run \(time limit reached\)" "$tmp/out"; then
            ok "n250 auto in 0.1 s: $m not run"
        else
            bad "n250 auto in 0.1 s: $m row in: $(cat "$tmp/out")"
        fi
    done
else
    echo "skip n250 check: $n250 not found"
fi
# a budget that the exact search proves infeasible lies below the smallest budget the
# message states: tests/data/layered_n120.json (tools/layered_dag.py) at 41100 B, its
# largest footprint, where no schedule of any form fits; the exact bisection for the
# smallest budget does not finish in its time there (0.25-2 s), so the message gives a
# lower bound, which before 2026-12-02 was the footprint itself, the budget just proven
# infeasible ("is infeasible ...; every schedule needs at least 41100 B")
lg=tests/data/layered_n120.json
"$xe" solve "$lg" --devices gpu --budget 41100 --time-limit 1 --json -o "$tmp/l.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && ok "layered_n120 at its largest footprint: infeasible (exit 3)" || bad "layered_n120 at 41100 B: exit $rc: $(cat "$tmp/err")"
lower=$(grep -o '"budget_lower_bytes":[0-9]*' "$tmp/out" | grep -o '[0-9]*$')
if [ -n "$lower" ] && [ "$lower" -gt 41100 ]; then
    ok "layered_n120: the stated smallest budget ($lower B) is above the infeasible one"
else
    bad "layered_n120: budget_lower_bytes '$lower' not above 41100 in: $(cat "$tmp/out")"
fi
said=$(grep -oE '(needs at least|any schedule is) [^;]*\(([0-9]+) B\)' "$tmp/err" | grep -oE '[0-9]+ B\)$' | grep -oE '[0-9]+')
if [ -n "$said" ] && [ "$said" -gt 41100 ]; then
    ok "layered_n120: the message's smallest budget ($said B) is above 41100 B"
else
    bad "layered_n120: the message's smallest budget '$said' in: $(cat "$tmp/err")"
fi
[ ! -e "$tmp/l.json" ] && ok "layered_n120: no output" || bad "layered_n120: output written"
# once_optimal NAME GRAPH BUDGET NODES ROW [LIMIT]: solve GRAPH on one GPU at BUDGET with
# a LIMIT-s limit (10 unless given); exit 0, the result optimal (gap 0) from ROW (an
# extended regex for the name in parentheses), NODES computes without recomputation, the
# schedule written
once_optimal() {
    "$xe" solve "$2" --devices gpu --budget "$3" --time-limit "${6:-10}" -o "$tmp/o1.json" >"$tmp/o1out" 2>"$tmp/o1err"
    local rc=$?
    if [ $rc -eq 0 ] && grep -qE "^result: [0-9.]+ s \\($5\\), lower bound [0-9.]+ s, gap 0\\.000%: optimal" "$tmp/o1out" &&
        grep -qE "^ +$4 computes \\(0 recomputations\\)" "$tmp/o1out" && [ -s "$tmp/o1.json" ]; then
        ok "$1: every node once, optimal, written"
    else
        bad "$1: exit $rc: $(cat "$tmp/o1out" "$tmp/o1err")"
    fi
}
# the message's last clause (docs/reorder.md, "In the budget messages"): the lowest
# budget at which the fit search finds an order. Two chains joined at the end (a0 10 B ->
# a1 1 B, b0 10 B -> b1 1 B, a1 and b1 -> j 1 B): 21 B in index order (a0 and b0 held
# while a1 runs), 12 B chain by chain, which is also the least any schedule needs (at the
# later of a1 and b1 the other is held beside a 10-B input and its output). At 11 B:
# infeasible (exit 3), the exact smallest budget 12 B, and every node once fits at 12 B,
# found in microseconds (on layered_n120 the probes could not finish under ASan); a solve
# there computes every node once, optimal, in the fit search's order; budget_found_bytes
# 12; with --no-fit-order the clause is left out
cat >"$tmp/chains.json" <<'JSON'
{"format": "xengine-graph", "name": "two chains",
 "nodes": [{"name": "a0", "mem": 10, "cost": 1}, {"name": "b0", "mem": 10, "cost": 1},
           {"name": "a1", "mem": 1, "cost": 1}, {"name": "b1", "mem": 1, "cost": 1},
           {"name": "j", "mem": 1, "cost": 1}],
 "edges": [[0, 2], [1, 3], [2, 4], [3, 4]]}
JSON
"$xe" solve "$tmp/chains.json" --devices gpu --budget 11 --time-limit 1 --json -o "$tmp/ch11.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 3 ] && grep -qF 'the smallest budget that admits any schedule is 12 B (57.2% of the no-recomputation peak; exact' "$tmp/err" &&
    grep -qF '; computing every node once fits at 12 B (57.2%; in a topological order of the fit search' "$tmp/err" &&
    grep -qF '"budget_found_bytes":12,' "$tmp/out" && [ ! -e "$tmp/ch11.json" ]; then
    ok "two chains at 11 B: infeasible, smallest 12 B, every node once fits at 12 B"
else
    bad "two chains at 11 B: exit $rc: $(cat "$tmp/err" "$tmp/out")"
fi
once_optimal "two chains at 12 B (fit-order)" "$tmp/chains.json" 12 5 'fit-order'
"$xe" solve "$tmp/chains.json" --devices gpu --budget 11 --time-limit 1 --no-fit-order -o "$tmp/ch11.json" >/dev/null 2>"$tmp/err"
if grep -q "computing every node once" "$tmp/err"; then bad "--no-fit-order: fit clause still there"; else ok "--no-fit-order: no fit clause"; fi
# the fit search with its lookahead (docs/reorder.md, "Fitting an order to a budget") on
# a generated 1,000-node DAG at 58% of its graph order's peak, one GPU: DTR thrashes
# there and the stage greedy finds nothing; the order (0.07 s in a Release build, 0.47 s
# before the lookahead) gives every node once, optimal, the result written
python3 tools/layered_dag.py 1000 --seed 3 >"$tmp/dag.json"
once_optimal "1,000-node DAG at 58% (fit-order)" "$tmp/dag.json" 58% 1000 'fit-order'
# below what the search reaches (none at 55% in 5 s alone): the annealing over orders
# (docs/reorder.md, "Annealing over orders") finds one at 54% (0.2 s in a Release build,
# 0.3 s under ASan, of the phase's 1 s); before it, the 10-s solve wrote a schedule 25%
# dearer (621 s, pebbling's)
once_optimal "1,000-node DAG at 54% (fit-order, annealing)" "$tmp/dag.json" 54% 1000 'fit-order'
if grep -qF "by annealing): optimal" "$tmp/o1out"; then ok "54%: the annealing's order"; else bad "54%: $(cat "$tmp/o1out")"; fi
# the second try (src/solvers/plan.c, phase 1f): a generated 400-node DAG at 65%, where
# the first try's 0.1 s is not enough (the annealing alone needs 0.18 s with its seed)
# and a 10-s solve ended at 279.7 s, gap 30.8%: once the exact search's schedule is in
# hand, the annealing again (another seed) finds an order, every node once, optimal
python3 tools/layered_dag.py 400 --seed 5 >"$tmp/dag400.json"
once_optimal "400-node DAG at 65% (fit-order, the late annealing)" "$tmp/dag400.json" 65% 400 'fit-order' 30
if grep -qF "by annealing, late): optimal" "$tmp/o1out"; then ok "65%: the late annealing's order"; else bad "65%: $(cat "$tmp/o1out")"; fi
# the event-list local search (docs/anneal.md) runs last on one device where no stage
# schedule is found: layered_n120 at 70000 B (45.6% of its peak, below the portfolio's
# floor of 62.8%), heuristic mode: its row follows the exact search's, and its schedule,
# cheaper (165.417 s -> 127.8-130.5 s in Release builds), is the one written, valid in the
# simulator at that budget; --no-anneal leaves the row out and writes the search's
"$xe" solve "$lg" --devices gpu --budget 70000 --method heuristic --time-limit 20 -o "$tmp/a.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "layered_n120 at 70000 B: exit 0" || bad "layered_n120 at 70000 B: exit $rc: $(cat "$tmp/err")"
peb=$(awk '$1 == "pebbling" {print $2}' "$tmp/out")
ann=$(awk '$1 == "anneal" {print $2}' "$tmp/out")
res=$(sed -n 's/^result: \([0-9.]*\) s (anneal).*/\1/p' "$tmp/out")
if [ -n "$peb" ] && [ -n "$ann" ] && [ "$res" = "$ann" ] && awk -v a="$ann" -v p="$peb" 'BEGIN { exit !(a < p) }'; then
    ok "layered_n120 at 70000 B: annealed $ann s < the exact search's $peb s, written"
else
    bad "layered_n120 at 70000 B: pebbling '$peb', anneal '$ann', result '$res' in: $(cat "$tmp/out")"
fi
"$xe" simulate "$lg" "$tmp/a.json" --devices gpu --budget 70000 >"$tmp/out2" 2>"$tmp/err"
[ $? -eq 0 ] && ok "layered_n120 at 70000 B: simulate accepts the annealed schedule" || bad "layered_n120 anneal: simulate: $(cat "$tmp/err")"
"$xe" solve "$lg" --devices gpu --budget 70000 --method heuristic --time-limit 20 --no-anneal -o "$tmp/a.json" >"$tmp/out" 2>"$tmp/err"
if grep -q "^anneal" "$tmp/out"; then bad "--no-anneal: row still there"; else ok "--no-anneal: no row"; fi
has "--no-anneal: the search's schedule written" "(pebbling)" "$tmp/out"
# below the portfolio's floor budget descent makes a schedule: tests/data/descent_case_*
# (8 nodes, made by build/find_descent_case) at 34 B, its exact minimum budget, where a
# schedule exists (brute force: stage optimum 18 s) but neither the greedy nor its
# randomised restarts find one (heuristic mode: only pebbling's schedule, outside the
# stage structure); auto's descent row says it fits, LNS proves the optimum 18 s, and
# the schedule written passes the simulator at that budget
dg=tests/data/descent_case_graph.json
dc=tests/data/descent_case_costs.json
"$xe" solve "$dg" --devices gpu --costs "$dc" --budget 34 --method heuristic -o "$tmp/d.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "descent case, heuristic mode: a schedule" || bad "descent case heuristic: exit $rc"
if grep -qE '^greedy +- .*no schedule found' "$tmp/out" && grep -qE '^pebbling +[0-9.]+ .*valid' "$tmp/out"; then
    ok "descent case, heuristic mode: portfolio none, pebbling valid"
else
    bad "descent case heuristic: rows in: $(cat "$tmp/out")"
fi
# (30 s: LNS, 60% of what is left, stops once it proves the optimum, 0.1 s in the release
# build and 1.4 s in the ASan build alone, but 5.5 s did not suffice in the ASan build
# beside another test under ctest -j2)
# (--no-bound-search: the search bound proves pebbling's 17 s optimal over every event
# list at once, and the planner stops there, before descent; checked below)
"$xe" solve "$dg" --devices gpu --costs "$dc" --budget 34 --time-limit 30 --no-bound-search -o "$tmp/d.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "descent case, auto: a schedule" || bad "descent case auto: exit $rc: $(cat "$tmp/err")"
if grep -qE '^descent +[0-9.]+ .*fits the budgets' "$tmp/out"; then ok "descent case: descent row fits"; else bad "descent case: descent row in: $(cat "$tmp/out")"; fi
if grep -qE '^lns +18\.000000 +18\.000000 +0\.000% .*optimal' "$tmp/out"; then ok "descent case: LNS proves the brute-force optimum 18 s"; else bad "descent case: no proven 18 s in: $(cat "$tmp/out")"; fi
"$xe" simulate "$dg" "$tmp/d.json" --devices gpu --costs "$dc" --budget 34 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "descent case: simulate accepts the schedule" || bad "descent case simulate: exit $rc: $(cat "$tmp/err")"
# the same case with the search bound: it ends (exact, 17 s) while pebbling's schedule
# of 17 s (outside the stage structure, below the stage optimum 18 s) is in hand, so the
# planner stops at the next phase boundary: proven optimal, no descent, LNS or MILP row
# (without the reach bound, whose own optimal path can be taken first: timing decides)
"$xe" solve "$dg" --devices gpu --costs "$dc" --budget 34 --time-limit 30 --no-reach-bound -o "$tmp/d2.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -qE '^search-bound +- +17\.000000 .*optimum of the relaxed game' "$tmp/out" &&
   grep -qE '^result: 17\.000000 s \(pebbling\), lower bound 17\.000000 s, gap 0\.000%: optimal' "$tmp/out" &&
   ! grep -qE '^(descent|lns|milp) ' "$tmp/out"; then
    ok "descent case: the search bound proves pebbling's 17 s and the planner stops"
else
    bad "descent case with the search bound: exit $rc: $(cat "$tmp/out")"
fi
# the schedule written is the cheapest the table shows: GoogLeNet at batch 32, 50%, where
# the low-peak order's portfolio is under 1% cheaper than the graph order's (so the later
# phases stay in the graph order) and was dropped before 2026-12-01 (0.029911 s written,
# 0.029904 s in the reorder row); now kept aside and written unless something beats it
"$xe" solve tests/data/onnx/googlenet.onnx --batch 32 --budget 50% --time-limit 5 -o "$tmp/gn.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "googlenet 50%: exit 0" || bad "googlenet 50%: exit $rc: $(cat "$tmp/err")"
if grep -q '^reorder .*not run' "$tmp/out"; then # a slow build: the portfolio took more than the share
    echo "skip googlenet 50% kept aside: $(grep '^reorder' "$tmp/out")"
else
    has "googlenet 50%: the low-peak order's schedule kept aside" "valid, cheaper by under 1%, kept aside" "$tmp/out"
fi
res=$(sed -n 's/^result: \([0-9.]*\) s .*/\1/p' "$tmp/out")
low=$(awk '/^method / { t = 1; next } t && /^$/ { exit } t && $2 ~ /^[0-9.]+$/ && (m == "" || $2 < m) { m = $2 } END { print m }' "$tmp/out")
if [ -n "$res" ] && [ "$res" = "$low" ]; then ok "googlenet 50%: result $res = the cheapest row"; else bad "googlenet 50%: result '$res', cheapest row '$low' in: $(cat "$tmp/out")"; fi
"$xe" simulate tests/data/onnx/googlenet.onnx "$tmp/gn.json" --budget 50% --json >"$tmp/out2" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "googlenet 50%: simulate accepts it" || bad "googlenet 50%: simulate exit $rc: $(cat "$tmp/err")"
simt=$(sed -n 's/.*"total_time_s": *\([0-9.e+-]*\).*/\1/p' "$tmp/out2" | head -1)
if [ -n "$simt" ] && [ "$(printf '%.6f' "$simt")" = "$res" ]; then ok "googlenet 50%: the simulator measures $res s"; else bad "googlenet 50%: simulator '$simt' vs result '$res'"; fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
