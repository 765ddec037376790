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
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method heuristic --json -o "$tmp/h.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "heuristic: exit 0" || bad "heuristic: exit $rc"
has "heuristic: objective" '"objective_s":0.00977012499999' "$tmp/out"
"$xe" solve "$g" --devices gpu+cpu --budget 3000 --method chen-sqrt --json -o "$tmp/c.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "chen-sqrt: exit 0" || bad "chen-sqrt: exit $rc: $(cat "$tmp/err")"
has "chen-sqrt: method" '"method":"chen-sqrt"' "$tmp/out"
"$xe" solve "$g" --method bogus -o "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok "unknown method: exit 1" || bad "unknown method: exit $rc"
[ ! -e "$tmp/b.json" ] && ok "unknown method: no file" || bad "unknown method: file written"
"$xe" solve "$g" --method -o "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok "--method without a known value: exit 1" || bad "--method -o: exit $rc"
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
