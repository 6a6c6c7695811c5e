#!/usr/bin/env bash
# Model-checks the fence argument with SPIN: each model under model/ must check clean at
# its bounds, and each negative control (a mutation of the model, or a fault outside the
# argument's assumptions) must yield a counterexample trail. Prints a table.
# Usage: scripts/model.sh [--keep DIR] [MODEL:NAME=VALUE ...]   e.g. fence:VMAX=4
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/model.sh [--keep DIR] [fence|file:NAME=VALUE ...]" >&2; exit 2; }
# The bounds of the clean runs (model/README.md says what each means and costs).
fence_bounds=(N=3 W=1 VMAX=3 AHEAD=0 CRASHES=1 STOPS=1 OUTAGES=1 LATES=1)
file_bounds=(N=3 TMAX=5 AHEAD=1 INTERVAL=1 BACK=1 REMOVES=1 CRASHES=1 STOPS=1)

# with NAME=VALUE LIST...: LIST with NAME set to VALUE
with() {
  local set=$1 b; shift
  for b in "$@"; do [[ ${b%%=*} == "${set%%=*}" ]] || echo "$b"; done
  echo "$set"
}

keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) [[ $# -ge 2 ]] || usage; keep=$2; shift 2 ;;
    fence:?*=*) mapfile -t fence_bounds < <(with "${1#fence:}" "${fence_bounds[@]}"); shift ;;
    file:?*=*) mapfile -t file_bounds < <(with "${1#file:}" "${file_bounds[@]}"); shift ;;
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

# model | what the run checks | its changes to the bounds (space-separated) | clean or
# trail | how pan is compiled: -O2 for a clean run, which explores every state, and
# -DNOCOMP: its states stored as they are, not byte-masked first (the ZooKeeper run, two
# at once: 128 CPU-s and 1.8 GB, against 133 and 1.7 GB; a hash table of 2^26 slots as
# well, pan -w26, made no difference to the script's CPU). -O0 for a negative control, which
# ends at its first trail (fence.pml's pan.c takes 21 CPU-s to compile at -O2 and 2.4
# at -O0). -DT_REVERSE tries each process's transitions last to
# first: the same states and the same property, searched in another order, and any trail
# it finds is a real counterexample. It reaches most controls' trail far sooner (the
# stop race: 644,100 states and 11 CPU-s at -O0, against 7,675,543 and 43 at -O2 in the
# forward order); the two file controls that are faster forward keep it.
runs=(
  "fence|etcd: the protocol, every fault||clean|-O2 -DNOCOMP"
  "fence|etcd: HWM write without the fence compare|MUT_NO_FENCE=1|trail|-O0 -DT_REVERSE"
  "fence|etcd: claim does not read the HWM|MUT_CLAIM_NO_HWM=1|trail|-O0 -DT_REVERSE"
  "fence|etcd: cap raised before the write succeeds|MUT_CAP_EARLY=1|trail|-O0 -DT_REVERSE"
  "fence|etcd: final HWM written before the gen. stopped|MUT_STOP_RACE=1|trail|-O0 -DT_REVERSE"
  "fence|etcd: HWM write without the revision compare|MUT_NO_REV=1|trail|-O0 -DT_REVERSE"
  "fence|zookeeper: the protocol, every fault|ZK=1|clean|-O2 -DNOCOMP"
  "fence|zookeeper: setData without the version|ZK=1 MUT_NO_REV=1|trail|-O0 -DT_REVERSE"
  "fence|zookeeper: claim does not bump the HWM node|ZK=1 MUT_ZK_NO_BUMP=1|trail|-O0 -DT_REVERSE"
  "file|file: the protocol, every fault||clean|-O2 -DNOCOMP"
  "file|file: HWM write without the inode check|MUT_NO_INODE_CHECK=1|trail|-O0 -DT_REVERSE"
  "file|file: a fresh file read as HWM 0|MUT_NO_FRESH_WAIT=1|trail|-O0"
  "file|file: assumed: no wall step back > 1 interval|BACK=2|trail|-O0 -DT_REVERSE"
  "file|file: assumed: no file restored from a copy|STALE_COPY=1|trail|-O0"
)

field() { # file, pattern, awk field: one figure from pan's report
  grep -m1 -E "$2" "$1" | awk "{print \$$3}"
}
row() { printf '%-52s %-8s %-8s %10s %8s %8s\n' "$@"; }

# verify N: runs entry N of runs in $work/N-MODEL; never fails (pan.out says how it went)
verify() {
  local model what change expect opt cflags bounds defs dir
  IFS='|' read -r model what change expect opt <<<"${runs[$1]}"
  read -ra cflags <<<"$opt"
  if [[ $model == fence ]]; then bounds=("${fence_bounds[@]}"); else bounds=("${file_bounds[@]}"); fi
  local c
  for c in $change; do mapfile -t bounds < <(with "$c" "${bounds[@]}"); done
  defs=("${bounds[@]/#/-D}")
  dir=$work/$1-$model
  rm -rf "$dir"; mkdir -p "$dir"; cp "model/$model.pml" "$dir/"
  printf '%s\n' "${defs[@]}" >"$dir/defs" # to replay by hand: spin -t $(cat defs) MODEL.pml
  cd "$dir"
  spin -a "${defs[@]}" "$model.pml" >spin.out 2>&1 &&
    # -w: pan.c's own code draws warnings from this gcc; they are not ours to fix
    gcc "${cflags[@]}" -w -DSAFETY -DMEMLIM=4096 -o pan pan.c >>spin.out 2>&1 &&
    ./pan -m200000 >pan.out 2>&1
  if [[ -s $model.pml.trail ]]; then
    # the trail in words, one event a line, for the reader and for --keep
    spin -t "${defs[@]}" "$model.pml" 2>&1 | grep -E '^ {6}[A-Za-z]|Error' | sed -E 's/^ +//' >trail.txt
  fi
  return 0
}

# The runs share the machine's cores, the longest first; the table keeps their order.
for i in "${!runs[@]}"; do
  (verify "$i") &
  while [[ $(jobs -rp | wc -l) -ge $(nproc) ]]; do wait -n || true; done
done
wait

echo "model: fence.pml ${fence_bounds[*]}"
echo "model: file.pml ${file_bounds[*]}"
row "run" "expected" "result" "states" "memory" "time"
failed=0
for i in "${!runs[@]}"; do
  IFS='|' read -r model what change expect _ <<<"${runs[$i]}"
  dir=$work/$i-$model out=$dir/pan.out
  errors=$( [[ -f $out ]] && field "$out" 'errors:' 8 || true)
  if [[ -z $errors ]]; then
    result=ERROR
  elif grep -qE 'max search depth too small|reached -DMEMLIM|out of memory' "$out"; then
    result=PARTIAL
  elif [[ $errors == 0 ]]; then
    result=clean
  elif grep -q 'assertion violated' "$out"; then
    result=trail
  else
    result=ERROR # a trail, but not to a duplicate (an invalid end state, say)
  fi
  if [[ $result == ERROR && ! -s $out ]]; then
    row "$what" "$expect" "$result" "" "" ""
    cat "$dir/spin.out" >&2 || true
  else
    row "$what" "$expect" "$result" "$(field "$out" 'states, stored' 1)" \
      "$(field "$out" 'total actual memory|memory usage \(Mbyte\)' 1 | cut -d. -f1) MB" "$(field "$out" 'elapsed time' 4) s"
  fi
  if [[ $result != "$expect" ]]; then
    failed=1
    [[ ! -s $dir/trail.txt ]] || { echo "model: the trail, in words:" >&2; cat "$dir/trail.txt" >&2; }
    [[ $result != PARTIAL ]] || grep -E 'max search depth|MEMLIM|memory' "$out" >&2 || true
  fi
done

[[ -z $keep ]] || echo "model: runs kept in $work (each trail in words: */trail.txt)"
if [[ $failed -ne 0 ]]; then
  echo "model: FAILED: a model has a trail, a negative control has none, or a run did not finish" >&2
  exit 1
fi
echo "model: clean where expected, and every negative control yields a trail"
