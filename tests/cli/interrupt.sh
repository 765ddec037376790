#!/usr/bin/env bash
# Ctrl-C (SIGINT) during `xengine solve`: the plan ends as at its time limit and the best
# schedule so far is still checked and written (docs/lns.md, "Interrupting a solve").
# The main job's instance (ResNet-18, batch 32, GPU + CPU, GPU at 50%), whose LNS runs
# to any time limit (gap 0.97%), given 300 s and interrupted one second into LNS:
#   - the process ends within 5 s of the signal, exit 0, no solver process left behind;
#   - stderr says "interrupted; stopped after ... keeping the best schedule found so far";
#   - the LNS row says "interrupted", and no MILP runs after it;
#   - the schedule file is written and `xengine simulate` finds it valid;
# SIGTERM does the same; the same signal twice 20 ms apart is one interrupt (coreutils'
# timeout sends it twice), a second one 0.4 s later ends the process at once, saying so;
# a SIGKILL leaves no CBC process behind either (it ends with its parent), and a
# background job whose SIGINT is ignored (no job control) keeps ignoring it.
set -u
xe=${1:?usage: interrupt.sh PATH_TO_XENGINE}
root=${XE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
model=$root/tests/data/onnx/resnet18.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check WHAT COND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# the solver processes are forks of xengine: same command line, with the run's output
# path; prints the pids of those still running with output path $1
left_behind() {
  local left="" f cmd
  for f in /proc/[0-9]*/cmdline; do
    cmd=$(tr '\0' ' ' <"$f" 2>/dev/null) || continue
    case $cmd in "$xe solve "*"$1"*) left="$left ${f#/proc/}" ;; esac
  done
  echo "$left"
}

# waits (at most 60 s) until the solve writing its table to $1 has printed the
# portfolio's row: LNS starts right after it
wait_portfolio() {
  for _ in $(seq 1 600); do
    grep -q '^greedy' "$1" && return
    sleep 0.1
  done
}

# job control: without it a background job starts with SIGINT ignored, and xengine
# leaves an ignored SIGINT alone (a script's Ctrl-C is not meant for its background jobs)
set -m
"$xe" solve "$model" --batch 32 --devices gpu+cpu --budget 50% --time-limit 300 -o "$tmp/s.json" \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
set +m
# wait for the portfolio's row (LNS starts right after it), then one second more
wait_portfolio "$tmp/out"
check "the portfolio's row came" grep -q '^greedy' "$tmp/out"
sleep 1
t0=$(date +%s.%N)
kill -INT "$pid"
wait "$pid"
code=$?
t1=$(date +%s.%N)
check "exit 0 after the interrupt (got $code)" test "$code" -eq 0
check "ended within 5 s of the signal ($(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') s)" \
  awk -v a="$t0" -v b="$t1" 'BEGIN {exit !(b - a < 5)}'
sleep 0.2
check "no solver process left behind" test -z "$(left_behind "$tmp/s.json")"
check "stderr: interrupted, keeping the best schedule" \
  grep -q "^xengine: .*resnet18.onnx: interrupted; stopped after .* s: keeping the best schedule found so far$" "$tmp/err"
check "the LNS row says interrupted" grep -q '^lns .* interrupted$' "$tmp/out"
check "no MILP after it (a milp row, if any, says not run (interrupted))" \
  test "$(grep '^milp' "$tmp/out" | grep -vc 'not run (interrupted)$')" -eq 0
check "the schedule was written" grep -q "^wrote $tmp/s.json" "$tmp/out"
"$xe" simulate "$model" "$tmp/s.json" --batch 32 --devices gpu+cpu --budget 50% >"$tmp/sim" 2>&1
check "simulate finds it valid" test $? -eq 0

# term_in_lns NAME [GAP]: the main job's instance writing $tmp/NAME.json (table in
# $tmp/NAME.out, stderr in $tmp/NAME.err), sent SIGTERM one second into LNS, and a second
# SIGTERM GAP seconds later when GAP is given (0: right after, by the shell's own kill,
# as coreutils' timeout sends its two); sets code to its exit status
term_in_lns() {
  "$xe" solve "$model" --batch 32 --devices gpu+cpu --budget 50% --time-limit 300 -o "$tmp/$1.json" \
    >"$tmp/$1.out" 2>"$tmp/$1.err" &
  local p=$!
  wait_portfolio "$tmp/$1.out"
  sleep 1
  kill -TERM "$p"
  if [ $# -ge 2 ]; then
    [ "$2" = 0 ] || sleep "$2"
    kill -TERM "$p" 2>/dev/null
  fi
  wait "$p"
  code=$?
}

# SIGTERM (kill, a job runner's timeout, a batch system's notice) as Ctrl-C: the best
# schedule written, exit 0 (before 2026-12-05 it ended the process, the work lost)
term_in_lns term
check "SIGTERM: exit 0 (got $code)" test "$code" -eq 0
check "SIGTERM: stderr says interrupted, keeping the best schedule" \
  grep -q "interrupted; stopped after .* s: keeping the best schedule found so far$" "$tmp/term.err"
check "SIGTERM: the schedule was written" grep -q "^wrote $tmp/term.json" "$tmp/term.out"
sleep 0.2
check "SIGTERM: no solver process left behind" test -z "$(left_behind "$tmp/term.json")"

# the same signal twice, back to back (coreutils' timeout without --foreground signals
# the process, then its process group): one interrupt, the schedule written (until
# 2026-12-05 the second ended the process, so `timeout -s INT 2 xengine solve ...` lost
# the schedule on some runs). The gap was an external `sleep 0.02`, which under ASan on a
# loaded machine took long enough for the second to land after the write, once the
# handlers were restored: exit 143 with the schedule on disk; a signal after the write
# is now ignored.
term_in_lns twice 0
check "two signals back to back: one interrupt, exit 0 (got $code)" test "$code" -eq 0
check "two signals back to back: the schedule was written" grep -q "^wrote $tmp/twice.json" "$tmp/twice.out"
check "two signals back to back: no second-interrupt line" test "$(grep -c 'second interrupt' "$tmp/twice.err")" -eq 0

# a second signal 0.4 s after the first, while the solve still explains that it found no
# schedule (a generated 1,000-node DAG at 50% on one GPU: no schedule after 0.5 s, then
# the budgets it can vouch for, 0.25 s or more): the process ends at once, saying so,
# by the signal (exit 143), nothing written
python3 "$root/tools/layered_dag.py" 1000 --seed 3 >"$tmp/dag.json"
"$xe" solve "$tmp/dag.json" --devices gpu --budget 50% --time-limit 60 -o "$tmp/second.json" \
  >"$tmp/outs" 2>"$tmp/errs" &
pid=$!
sleep 0.5
kill -TERM "$pid"
sleep 0.4
kill -TERM "$pid" 2>/dev/null
wait "$pid"
code=$?
if grep -q "no schedule found yet" "$tmp/errs"; then
  check "a second signal 0.4 s later: ended by it, exit 143 (got $code)" test "$code" -eq 143
  check "a second signal 0.4 s later: stderr says so" \
    grep -q "^xengine: second interrupt: exiting without writing a schedule$" "$tmp/errs"
  check "a second signal 0.4 s later: nothing written, no temporary file" \
    test -z "$(ls "$tmp" | grep second)"
else
  echo "skip second-signal check: the first signal came after a schedule was found ($(head -c 120 "$tmp/errs"))"
fi

# SIGKILL (a job runner's timeout): xengine cannot clean up, so its CBC child must end
# by itself with its parent (PR_SET_PDEATHSIG). Without that it ended only when it next
# wrote its log to the dead parent's pipe (SIGPIPE): at once here, but a CBC in a silent
# phase (a long root LP) ran on for the rest of its limit, so this check passes without
# the fix too unless the kill lands in such a phase
"$xe" solve "$model" --batch 32 --devices gpu+cpu --budget 50% --method milp --time-limit 120 \
  -o "$tmp/k.json" >"$tmp/outk" 2>"$tmp/errk" &
pid=$!
wait_portfolio "$tmp/outk"
sleep 1
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sleep 0.5
check "SIGKILL: no solver process left behind" test -z "$(left_behind "$tmp/k.json")"
check "SIGKILL: nothing written" test ! -e "$tmp/k.json"

# without job control the background job inherits an ignored SIGINT: xengine keeps it
"$xe" solve "$model" --batch 32 --devices gpu+cpu --budget 50% --time-limit 8 -o "$tmp/t.json" \
  >"$tmp/out2" 2>"$tmp/err2" &
pid=$!
wait_portfolio "$tmp/out2"
kill -INT "$pid"
wait "$pid"
code=$?
check "an ignored SIGINT stays ignored: the solve runs to its limit, exit 0 (got $code)" test "$code" -eq 0
check "... and its LNS row ends at (or before) the time limit" grep -q '^lns .*time limit' "$tmp/out2"
check "... with no interrupt line" test ! -s "$tmp/err2"

# Ctrl-C while the portfolio runs and has no schedule yet (random_layered_n250 on one GPU
# at 60%, where its greedy fails after 0.15-0.3 s of work, longer in the ASan build): it
# stops at its next greedy pass (it ran to its end before 2026-12-01), no later phase
# starts, exit 4 with the one-line message. The portfolio's time depends on the build and
# the machine and its row shows only at its end (stdout is a file here), so the signal
# comes after a shorter wait each time until one attempt lands in the portfolio (a signal
# that comes later stops a later phase: that attempt is not checked, the next is)
n250=${XE_SHARED_GRAPHS:-$root/../shared/graphs}/random_layered_n250.json
if [ -r "$n250" ]; then
  landed=0
  for wait_s in 0.3 0.15 0.08 0.04 0.02; do
    rm -f "$tmp/p.json"
    set -m
    "$xe" solve "$n250" --devices gpu --budget 60% --time-limit 300 -o "$tmp/p.json" >"$tmp/out3" 2>"$tmp/err3" &
    pid=$!
    set +m
    sleep "$wait_s"
    kill -INT "$pid"
    wait "$pid"
    code=$?
    if grep -q '^greedy .* interrupted before a schedule was found$' "$tmp/out3"; then
      landed=1
      echo "the signal after ${wait_s} s came while the portfolio ran"
      break
    fi
  done
  # landed: the greedy row of that attempt says it was interrupted before a schedule
  check "portfolio interrupted: its row says so (in one attempt)" test "$landed" -eq 1
  check "portfolio interrupted: exit 4 (got $code)" test "$code" -eq 4
  check "portfolio interrupted: no later phase ran" test "$(grep -cE '^(pebbling|reorder|orders) ' "$tmp/out3")" -eq 0
  check "portfolio interrupted: the message says so" \
    grep -q "no schedule found before the interrupt (stopped after .* s) (the heuristic portfolio was interrupted before it found one)" "$tmp/err3"
  check "portfolio interrupted: nothing written" test ! -e "$tmp/p.json"
else
  echo "skip portfolio interrupt: $n250 not found"
fi

echo "$fails failure(s)"
test "$fails" -eq 0
