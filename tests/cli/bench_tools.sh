#!/usr/bin/env bash
# The benchmark's tools as a user meets them (bench/README.md):
#  - xe_bench --help and bench/run.sh --help print their usage and exit 0 (before
#    2026-12-02 xe_bench said "--help needs a value" and run.sh took --help for its
#    build directory); an unknown xe_bench option, method or --only exits 1; --quick
#    keeps the --budgets and --limit given;
#  - bench/table.py on a hand-made CSV of one 200-node case: the auto table carries the
#    time to the first valid schedule and to the best (the issue's table asks for both),
#    and a 5.66% LNS gap is named as an LNS miss of the 5% target while the auto row
#    (3.85%) meets it.
# xe_bench is looked for beside the xengine binary given as $1 (skipped, saying so,
# where it was not built); python3 is needed for table.py (skipped likewise).
set -u
xe=${1:?usage: bench_tools.sh PATH_TO_XENGINE}
case $xe in /*) ;; *) xe=$PWD/$xe ;; esac
root=${XE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

bench=$(dirname "$xe")/xe_bench
if [ -x "$bench" ]; then
    out=$("$bench" --help 2>"$tmp/err"); rc=$?
    if [ $rc -eq 0 ] && [ "${out%%[*}" = "usage: xe_bench " ] && [ ! -s "$tmp/err" ]; then ok
    else bad "xe_bench --help: exit $rc, stdout '${out%%$'\n'*}', stderr '$(cat "$tmp/err")'"; fi
    "$bench" --no-such-option >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -q "unknown option --no-such-option" "$tmp/err"; then ok
    else bad "xe_bench --no-such-option: exit $rc, stderr '$(cat "$tmp/err")'"; fi
    # a misspelt method or an --only that matches nothing: exit 1, not an empty table and
    # exit 0 (before 2026-12-05; a new user's trial); checked before any graph is read
    "$bench" --methods heuristc,lns --limit 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -q "unknown method 'heuristc'" "$tmp/err"; then ok
    else bad "xe_bench --methods heuristc: exit $rc, stderr '$(cat "$tmp/err")'"; fi
    mkdir "$tmp/graphs" && cp "$root/tests/data/tiny_graph.json" "$tmp/graphs/"
    "$bench" --graphs "$tmp/graphs" --only nosuch --limit 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -q "no graph in $tmp/graphs matches --only nosuch" "$tmp/err"; then ok
    else bad "xe_bench --only nosuch: exit $rc, stderr '$(cat "$tmp/err")'"; fi
    # --quick keeps --budgets and --limit given before it (it replaced them before)
    "$bench" --graphs "$tmp/graphs" --budgets 95 --limit 2 --quick --presets gpu --methods heuristic \
        >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 0 ] && grep -q "limit 2 s per method" "$tmp/out" && grep -q "budget 95% of" "$tmp/out" &&
        ! grep -q "budget 90% of" "$tmp/out"; then ok
    else bad "xe_bench --budgets 95 --limit 2 --quick: exit $rc: $(cat "$tmp/out" "$tmp/err")"; fi
else
    echo "skipped: $bench not built (the xe_bench checks)"
fi

out=$(bash "$root/bench/run.sh" --help 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^  bench/run.sh \[BUILD_DIR\]" && [ ! -s "$tmp/err" ]; then ok
else bad "bench/run.sh --help: exit $rc, stdout '$out', stderr '$(cat "$tmp/err")'"; fi

if command -v python3 >/dev/null; then
    cat >"$tmp/r.csv" <<'CSV'
graph,nodes,preset,budget_pct,method,status,objective_s,rel_cost,bound_s,gap,t_first_s,t_best_s,t_total_s,t_reach_plain_s
g_small,200,gpu,80,heuristic,greedy,11,1.1,10.0,0.0909,0.2,0.2,0.2,nan
g_small,200,gpu,80,lns,time limit,10.6,1.06,10.0,0.0566,0.1,5.0,60,nan
g_small,200,gpu,80,auto,feasible (lns),10.4,1.04,10.0,0.0385,0.25,7.5,60,nan
CSV
    python3 "$root/bench/table.py" "$tmp/r.csv" >"$tmp/t.txt" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 0 ] && grep -qxF "| g_small | gpu | 80% | 1.1000 | 1.0400 | feasible (lns) | 3.85% | 0.25 | 7.50 |" "$tmp/t.txt"
    then ok; else bad "table.py: the auto row with t_first 0.25 and t_best 7.50 is missing (exit $rc): $(cat "$tmp/t.txt" "$tmp/err")"; fi
    if grep -qxF "  LNS 5% miss: g_small gpu 80%: 5.66%" "$tmp/t.txt" &&
        grep -qxF "target within 5% up to 250 nodes, auto rows (else LNS rows): 1 of 1 cases with a schedule" "$tmp/t.txt"
    then ok; else bad "table.py: the LNS 5% miss or the auto count is not as expected: $(cat "$tmp/t.txt")"; fi
else
    echo "skipped: python3 absent (the table.py checks)"
fi

echo "bench_tools: $passes passed, $fails failed"
[ $fails -eq 0 ]
