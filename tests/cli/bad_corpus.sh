#!/usr/bin/env bash
# The malformed-input corpus: every tests/data/bad/NAME.expect describes NAME:
#   # one line saying what is wrong with NAME
#   kind: graph | devices | costs | schedule | onnx
#   exit: the exit code xengine must return
#   error: the exact line xengine must print on stderr (its only output there)
#   args: (optional) the command line instead of the default for the kind, with FILE
#         standing for the bad file and OUT for the output path
# Defaults: graph and onnx files go to `solve FILE -q -o OUT`, devices and costs files to
# `solve tests/data/tiny_graph.json --devices|--costs FILE -q -o OUT`, schedules to
# `simulate tests/data/tiny_graph.json FILE` and, when gnuplot is installed, to `plot`
# with --out-dir OUT (same line, same code). In every case nothing may be written: OUT's
# directory stays empty (no output, no temporary file).
set -u
xe=${1:?usage: bad_corpus.sh PATH_TO_XENGINE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0 cases=0
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

field() { sed -n "s/^$1: //p" "$2" | head -n 1; }

# run NAME CODE LINE -- ARGS...: ARGS run with OUT's directory $tmp/out (empty before)
run() {
  local name=$1 code=$2 line=$3
  shift 4
  rm -rf "$tmp/out" && mkdir "$tmp/out"
  "$xe" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$? lines left
  lines=$(wc -l <"$tmp/stderr")
  left=$(find "$tmp/out" -mindepth 1 | wc -l)
  if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && [ "$(cat "$tmp/stderr")" = "$line" ] && [ "$left" -eq 0 ]; then
    passes=$((passes + 1))
  else
    fails=$((fails + 1))
    echo "FAIL $name ($*): exit $rc (want $code), $lines stderr lines, $left files written"
    echo "     want: $line"
    sed 's/^/     got:  /' "$tmp/stderr"
  fi
}

for exp in tests/data/bad/*.expect; do
  file=${exp%.expect}
  name=$(basename "$file")
  kind=$(field kind "$exp")
  code=$(field exit "$exp")
  line=$(field error "$exp")
  args=$(field args "$exp")
  cases=$((cases + 1))
  if [ ! -f "$file" ] || [ -z "$kind" ] || [ -z "$code" ] || [ -z "$line" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: $exp needs kind, exit and error lines, and $file must exist"
    continue
  fi
  out=$tmp/out/out.json
  if [ -n "$args" ]; then
    # shellcheck disable=SC2206 # the args line is split on blanks on purpose
    words=($args)
    for i in "${!words[@]}"; do
      case ${words[$i]} in FILE) words[$i]=$file ;; OUT) words[$i]=$out ;; esac
    done
    run "$name" "$code" "$line" -- "${words[@]}"
    continue
  fi
  case $kind in
    graph | onnx) run "$name" "$code" "$line" -- solve "$file" -q -o "$out" ;;
    devices) run "$name" "$code" "$line" -- solve tests/data/tiny_graph.json --devices "$file" -q -o "$out" ;;
    costs) run "$name" "$code" "$line" -- solve tests/data/tiny_graph.json --costs "$file" -q -o "$out" ;;
    schedule)
      run "$name" "$code" "$line" -- simulate tests/data/tiny_graph.json "$file"
      if [ $have_gnuplot -eq 1 ]; then
        run "$name" "$code" "$line" -- plot tests/data/tiny_graph.json "$file" --out-dir "$tmp/out/plots"
      fi
      ;;
    *)
      fails=$((fails + 1))
      echo "FAIL $name: unknown kind '$kind'"
      ;;
  esac
done
echo "$cases files: $passes checks passed, $fails failed"
[ "$cases" -gt 0 ] && [ "$fails" -eq 0 ]
