#!/usr/bin/env bash
# Named snowflake generators under the k8s provider, across pods (issue 23, item 5). Each
# pod is an `idgen serve` in a network and UTS namespace of its own (`unshare --net
# --uts`, hostname idgen-N: the provider reads its ordinal from it), so pods share no
# host-wide claim and no loopback port, as on two nodes; all use one namespace and one
# layout. Parts:
#   collide  the review's configuration (offset 1 for 'events', no bound on the pods: pod
#            0's events and pod 1's default are both worker 1) is refused by every pod,
#            exit 2 and one line; where it starts (main), the pods' IDs are collected and
#            the duplicates counted;
#   unique   --k8s-replicas 2, three generators at offsets 0, 2, 4: 1,200,000 IDs from
#            the six (pod, generator) pairs at once, no duplicate (`idgen check`), each
#            pair on its own worker, the default on its ordinal;
#   bound    a third pod (idgen-2) under --k8s-replicas 2, and offsets 1 apart under it,
#            are refused: exit 2, one line naming the reason.
# Usage: server_k8s_pods.sh /path/to/idgen [PART...]   (tests/integration/parts.bash)
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts collide unique bound -- "${@:2}"
for tool in unshare ip hostname curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
unset IDGEN_POD_INDEX IDGEN_K8S_REPLICAS IDGEN_WORKER_ID_OFFSET
export IDGEN_NAMESPACE=orders # one namespace in every pod: the point of the test
POD_PIDS=()
# A pod's own trap stops its server: TERM (not cleanup's KILL) lets it run.
trap 'for p in "${POD_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
      wait 2>/dev/null || true; cleanup' EXIT

# pod_run IDGEN DIR ORDINAL NAMES ROUNDS COUNT [serve options...]: one pod, run inside
# its own namespaces. Writes DIR/log (the server's), DIR/rc (its exit status, or
# "started" while it runs), DIR/info.json and DIR/ready once every generator in NAMES
# is ready; then waits for DIR/../go and fetches ROUNDS x COUNT IDs of each generator,
# the generators at once, into DIR/NAME.ROUND.json.
pod_run() {
  local idgen=$1 dir=$2 ord=$3 names=$4 rounds=$5 count=$6 i http name round args
  shift 6
  if ! ip link set lo up || ! hostname "idgen-$ord"; then
    echo "no namespace" >"$dir/rc"
    return
  fi
  "$idgen" serve --http 127.0.0.1:0 --resp "" --threads 1 --lease k8s --max-count "$count" \
    --state-dir "$dir/state" "$@" 2>"$dir/log" &
  spid=$!
  trap 'kill -TERM $spid 2>/dev/null; wait $spid' EXIT
  for ((i = 0; i < 300; i++)); do
    grep -q ' info start ' "$dir/log" && break
    if ! kill -0 "$spid" 2>/dev/null; then
      trap - EXIT
      wait "$spid"
      echo $? >"$dir/rc"
      return
    fi
    sleep 0.05
  done
  echo started >"$dir/rc"
  http=$(grep -o ' http=[^ ]*' "$dir/log" | head -1 | cut -d= -f2)
  for name in $names; do # a new worker file: the keeper waits past now + ahead
    for ((i = 0; i < 300; i++)); do
      [[ $(http_code "http://$http/readyz?name=$name") == 200 ]] &&
        break
      sleep 0.1
    done
  done
  curl -s "http://$http/v1/info" >"$dir/info.json"
  : >"$dir/ready"
  for ((i = 0; i < 6000; i++)); do [[ -e $dir/../go ]] && break; sleep 0.01; done
  for ((round = 1; round <= rounds; round++)); do
    args=()
    for name in $names; do
      args+=(-o "$dir/$name.$round.json" "http://$http/v1/ids?name=$name&count=$count")
    done
    curl -s --no-progress-meter -Z --parallel-immediate --parallel-max 8 "${args[@]}"
  done
}

# run_pods RUN NPODS NAMES ROUNDS COUNT [serve options...]: NPODS pods (ordinals 0 ..
# NPODS-1) side by side in WORK/RUN/pN; the pods that start fetch together. Sets
# STARTED (how many started).
run_pods() {
  local run=$WORK/$1 npods=$2 names=$3 rounds=$4 count=$5 p i pids=()
  shift 5
  mkdir -p "$run"
  for ((p = 0; p < npods; p++)); do
    mkdir -p "$run/p$p/state"
    unshare --net --uts bash -c "$(declare -f pod_run http_code); pod_run \"\$@\"" pod \
      "$IDGEN" "$run/p$p" "$p" "$names" "$rounds" "$count" "$@" &
    pids+=($!)
    POD_PIDS+=($!)
  done
  STARTED=0
  for ((p = 0; p < npods; p++)); do
    for ((i = 0; i < 600; i++)); do
      [[ -e $run/p$p/ready || ( -s $run/p$p/rc && $(cat "$run/p$p/rc") != started ) ]] && break
      sleep 0.05
    done
    [[ -e $run/p$p/ready ]] && STARTED=$((STARTED + 1))
  done
  : >"$run/go"
  wait "${pids[@]}" || true
}

# histories RUN NAMES: one history per (pod, generator) for idgen check; prints
# "IDS DUPLICATES".
histories() {
  local run=$WORK/$1 d name round
  for d in "$run"/p*; do
    for name in $2; do
      for round in "$d/$name".*.json; do
        [[ -e $round ]] || continue
        jq -r --arg r "$(basename "$d").$name" '.ids[] | "1 \($r) \(.)"' "$round"
      done >"$d/$name.hist"
    done
  done
  "$IDGEN" check --json "$run"/p*/*.hist >"$run/check.json" || true
  jq -r '"\(.ids) \(.duplicates)"' "$run/check.json"
}

# refused RUN NPODS WHY-REGEX: every pod of RUN exited 2 with one line matching WHY-REGEX.
refused() {
  local run=$WORK/$1 p
  for ((p = 0; p < $2; p++)); do
    check "$1: pod $p exits 2 with one line" "2 1" \
      "$(cat "$run/p$p/rc") $(wc -l <"$run/p$p/log")"
    check_match "$1: pod $p names the reason" "$3" "$(cat "$run/p$p/log")"
  done
}

cat >"$WORK/collide.yaml" <<EOF
generators:
  events: {kind: snowflake, worker_id_offset: 1}
EOF

# ---- 1. the review's configuration: refused, not colliding (part collide) -------------
if part collide; then
  run_pods collide 2 "default events" 6 50000 --config "$WORK/collide.yaml"
  if ((STARTED > 0)); then
    read -r ids dups < <(histories collide "default events")
    fail "collide: $STARTED of 2 pods started with offsets 0 and 1 and no bound; $dups duplicates among $ids IDs"
  fi
  refused collide 2 "share namespace 'orders' under the k8s provider with no bound on the pods.*--k8s-replicas"
fi

# ---- 2. a bound and offsets that far apart: no duplicate (part unique) ---------------
if part unique; then
  cat >"$WORK/unique.yaml" <<EOF
generators:
  events: {kind: snowflake, worker_id_offset: 2}
  audit: {kind: snowflake, worker_id_offset: 4}
EOF
  NAMES="default events audit"
  run_pods unique 2 "$NAMES" 4 50000 --config "$WORK/unique.yaml" --k8s-replicas 2
  check "unique: both pods started" 2 "$STARTED"
  read -r ids dups < <(histories unique "$NAMES")
  check "unique: 1,200,000 IDs from 2 pods x 3 generators" 1200000 "$ids"
  check "unique: no duplicate (idgen check)" 0 "$dups"
  check "unique: no ordering violation" 0 "$(jq .order_violations "$WORK/unique/check.json")"
  for p in 0 1; do
    check "unique: pod $p's workers (default events audit)" "$p $((p + 2)) $((p + 4))" \
      "$(jq -r '[.generators.default.worker_id, .generators.events.worker_id,
                 .generators.audit.worker_id] | map(tostring) | join(" ")' \
        "$WORK/unique/p$p/info.json")"
  done
fi

# ---- 3. a pod past the bound, offsets closer than it (part bound) ---------------------
if part bound; then
  run_pods past 3 default 1 1 --k8s-replicas 2
  check "past: pods 0 and 1 start under --k8s-replicas 2" 2 "$STARTED"
  check "past: pod 2 exits 2 with one line" "2 1" \
    "$(cat "$WORK/past/p2/rc") $(wc -l <"$WORK/past/p2/log")"
  check_match "past: pod 2 names the bound" "--k8s-replicas 2: pod ordinal 2 is not below it" \
    "$(cat "$WORK/past/p2/log")"
  run_pods close 2 "default events" 1 1 --config "$WORK/collide.yaml" --k8s-replicas 2
  refused close 2 "'default' takes 0-1 and 'events' 1-2 .*at least 2 apart"
fi
finish
