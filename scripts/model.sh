#!/usr/bin/env bash
# Model-checks the fence argument with SPIN: model/fence.pml must check clean at its
# bounds, and every negative control (a mutation of the model) must yield a trail.
# Usage: scripts/model.sh [--keep DIR] [-DNAME=VALUE ...]   (bounds: see model/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
model=$PWD/model/fence.pml

usage() { echo "usage: scripts/model.sh [--keep DIR] [-DNAME=VALUE ...]" >&2; exit 2; }
keep="" bounds=(-DN=3 -DW=1 -DVMAX=3 -DAHEAD=0 -DCRASHES=1 -DSTOPS=1 -DOUTAGES=1)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) [[ $# -ge 2 ]] || usage; keep=$2; shift 2 ;;
    -D?*=*) # replaces the default of the same name
      kept=(); for b in "${bounds[@]}"; do [[ ${b%%=*} == "${1%%=*}" ]] || kept+=("$b"); done
      bounds=("${kept[@]}" "$1"); shift ;;
    *) usage ;;
  esac
done
for tool in spin gcc; do
  command -v "$tool" >/dev/null || { echo "model.sh: $tool is missing (scripts/deps.sh test)" >&2; exit 1; }
done

if [[ -n $keep ]]; then
  mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi

# Each negative control: the macro that mutates the model, and what it breaks.
controls=(
  "MUT_NO_FENCE|HWM write without the fence compare"
  "MUT_CLAIM_NO_HWM|claim does not read the HWM"
  "MUT_CAP_EARLY|cap raised before the write succeeds"
  "MUT_STOP_RACE|final HWM written before the generator stopped"
)

# verify NAME [-DMUT...]: generates, compiles and runs pan in $work/NAME; leaves pan's
# output in $work/NAME/pan.out and any trail in $work/NAME/fence.pml.trail.
verify() {
  local name=$1; shift
  local dir=$work/$name
  rm -rf "$dir"; mkdir -p "$dir"; cp "$model" "$dir/fence.pml"
  (
    cd "$dir"
    spin -a "${bounds[@]}" "$@" fence.pml >spin.out 2>&1 || { cat spin.out >&2; exit 1; }
    # -w: pan.c's own code draws warnings from this gcc; they are not ours to fix
    gcc -O2 -w -DSAFETY -DMEMLIM=4096 -o pan pan.c || exit 1
    ./pan -m200000 >pan.out 2>&1 || true
  )
}

field() { # file, pattern, awk field: one figure from pan's report
  grep -m1 -E "$2" "$1" | awk "{print \$$3}"
}

row() { printf '%-48s %-9s %-9s %11s %9s %9s\n' "$@"; }

failed=0
echo "model: model/fence.pml  ${bounds[*]}"
row "run" "expected" "result" "states" "memory" "time"

verify clean
out=$work/clean/pan.out
errors=$(field "$out" 'errors:' 8)
result=clean
if [[ -z $errors ]]; then
  result=ERROR; failed=1
elif [[ $errors != 0 ]]; then
  result=TRAIL; failed=1
elif grep -qE 'max search depth too small|reached -DMEMLIM|out of memory' "$out"; then
  result=PARTIAL; failed=1
fi
row "the model, every fault" "clean" "$result" "$(field "$out" 'states, stored' 1)" \
  "$(field "$out" 'total actual memory' 1) MB" "$(field "$out" 'elapsed time' 4) s"
if [[ $result != clean ]]; then
  grep -E 'assertion violated|max search depth|MEMLIM' "$out" >&2 || true
  (cd "$work/clean" && spin -t "${bounds[@]}" fence.pml 2>&1 | grep -E '^ {6}[A-Za-z]' >&2) || true
fi

for entry in "${controls[@]}"; do
  macro=${entry%%|*} what=${entry#*|}
  verify "$macro" "-D$macro"
  dir=$work/$macro out=$work/$macro/pan.out
  result="NO TRAIL"
  if [[ -s $dir/fence.pml.trail ]] && grep -q 'assertion violated' "$out"; then
    result=trail
    # the trail in words, for the reader and for --keep
    (cd "$dir" && spin -t "${bounds[@]}" "-D$macro" fence.pml 2>&1 | grep -E '^ {6}[A-Za-z]|Error' \
      | sed -E 's/^ +//' >trail.txt) || true
  else
    failed=1
  fi
  row "$what" "trail" "$result" "$(field "$out" 'states, stored' 1)" \
    "$(field "$out" 'total actual memory' 1) MB" "$(field "$out" 'elapsed time' 4) s"
done

[[ -n $keep ]] && echo "model: runs kept in $work (each control's trail in words: */trail.txt)"
if [[ $failed -ne 0 ]]; then
  echo "model: FAILED: the model has a trail, or a negative control has none" >&2
  exit 1
fi
echo "model: the fence holds at these bounds, and every negative control breaks it"
