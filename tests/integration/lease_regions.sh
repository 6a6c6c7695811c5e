#!/usr/bin/env bash
# Two regions, each with an etcd of its own and three `idgen serve` replicas, layout
# twitter, one namespace name in both. With --datacenter 1 and 2: 10^6 IDs fetched from
# the six at once are unique, `idgen decode` shows both datacenters, and the workers
# inside each datacenter are distinct. The negative control, the same without
# --datacenter (both regions claim from worker ID 0), must find duplicates. Also: with
# --worker-id-range 0-3 the fifth of five replicas is refused naming the range (etcd and
# file); a replica of another region on the same datacenter and etcd is refused at
# start; an ID held under its other name (no --datacenter) is passed over, and its HWM
# there is the floor; idgen lease lists the holders per datacenter.
# Usage: lease_regions.sh /path/to/idgen [PART...]   (tests/integration/parts.bash)
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts unique claims control range -- "${@:2}"
command -v etcd >/dev/null && command -v jq >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
# The two regions' etcds start side by side, and stop so (each takes a second or two).
stop_etcd() {
  local r stops=()
  for r in 1 2; do
    "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$WORK/etcd$r" >/dev/null 2>&1 &
    stops+=($!)
  done
  wait "${stops[@]}" || true
}
trap 'stop_etcd; cleanup' EXIT
declare -A EPS HTTPS PIDS
starts=()
for r in 1 2; do
  "$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd$r" 1 >"$WORK/etcd$r.endpoints" &
  starts+=($!)
done
for p in "${starts[@]}"; do wait "$p"; done
EPS[1]=$(cat "$WORK/etcd1.endpoints") EPS[2]=$(cat "$WORK/etcd2.endpoints")
NAMES=(east west) NS=orders
say "region east: etcd ${EPS[1]}; region west: etcd ${EPS[2]}"

# region_args R: a replica of region R (1 east, 2 west) on its own etcd.
region_args() {
  echo "--layout twitter --lease etcd --etcd ${EPS[$1]} --namespace $NS --lease-ttl 3" \
    "--region ${NAMES[$(($1 - 1))]} --max-count 50000"
}

# start_regions NAME [extra args, "%R" replaced by the region]: three replicas per
# region, named NAME1..NAME3 (east) and NAME4..NAME6 (west).
start_regions() {
  local r i n=0
  for r in 1 2; do
    for i in 1 2 3; do
      n=$((n + 1))
      # shellcheck disable=SC2046
      start_server "$1$n" $(region_args "$r") ${2//%R/$r} || return 1
      HTTPS[$n]=$HTTP PIDS[$n]=$SERVER_PID
    done
  done
}

stop_regions() {
  local n
  for n in 1 2 3 4 5 6; do stop_server "${PIDS[$n]}" || fail "r$n did not stop cleanly"; done
}

# fetch DIR: 4 rounds; in each one curl asks all six replicas at once for 41667 IDs
# (the six start generating within a few ms of each other), 1,000,008 IDs in all; then
# one history per replica for idgen check.
fetch() {
  local dir=$WORK/$1 round n args
  mkdir -p "$dir"
  for round in 1 2 3 4; do
    args=()
    for n in 1 2 3 4 5 6; do
      args+=(-o "$dir/r$n.$round.json" "http://${HTTPS[$n]}/v1/ids?count=41667")
    done
    curl -s --no-progress-meter -Z --parallel-immediate --parallel-max 6 "${args[@]}"
  done
  for n in 1 2 3 4 5 6; do
    for round in 1 2 3 4; do
      jq -r --arg r "r$n" --arg t "$round" '.ids[] | "\($t) \($r) \(.)"' "$dir/r$n.$round.json"
    done >"$dir/r$n.hist"
  done
}

# check_histories DIR: prints "IDS DUPLICATES".
check_histories() {
  "$IDGEN" check --layout twitter --json "$WORK/$1"/r*.hist >"$WORK/$1/check.json" || true
  jq -r '"\(.ids) \(.duplicates)"' "$WORK/$1/check.json"
}

# node_fields DIR N: "datacenter worker" of replica N's first ID, from idgen decode.
node_fields() {
  local id
  id=$(awk 'NR == 1 {print $3}' "$WORK/$1/r$2.hist")
  "$IDGEN" decode --layout twitter --json "$id" | jq -r '"\(.fields.datacenter) \(.fields.worker)"'
}

# ---- 1. two regions, datacenters 1 and 2 (part unique) -------------------------------
# Part claims needs these replicas too: its mistakes meet them.
if part unique || part claims; then
  start_regions dc "--datacenter %R" || { finish; exit 1; }
fi
if part unique; then
  fetch dc
  read -r ids dups < <(check_histories dc)
  check "10^6 IDs from six replicas in two regions" 1000008 "$ids"
  check "no duplicate with --datacenter 1 and 2" 0 "$dups"
  declare -A seen
  for n in 1 2 3 4 5 6; do
    read -r dc w < <(node_fields dc "$n")
    want=$(( n <= 3 ? 1 : 2 ))
    check "r$n's IDs decode to datacenter $want" "$want" "$dc"
    [[ -z ${seen[$dc/$w]:-} ]] && say "ok   r$n: datacenter $dc, worker $w (distinct)" ||
      fail "r$n: datacenter $dc worker $w, already r${seen[$dc/$w]}'s"
    seen[$dc/$w]=$n
  done
  info=$(curl -s "http://${HTTPS[4]}/v1/info")
  check "/v1/info: datacenter, region, range" '2 west 0-31' \
    "$(jq -r '"\(.datacenter) \(.region) \(.worker_range.lo)-\(.worker_range.hi)"' <<<"$info")"
  check "metrics: the datacenter by region" 'idgen_lease_datacenter{generator="default",region="west"} 2' \
    "$(curl -s "http://${HTTPS[4]}/metrics" | grep '^idgen_lease_datacenter')"
  lease=$("$IDGEN" lease --layout twitter --lease etcd --etcd "${EPS[1]}" --namespace "$NS")
  check "idgen lease: east's holders under datacenter 1" "datacenter 1: 3 live east" \
    "$(awk '/^datacenter/ {d = $0} $2 == "yes" {n++; r = $NF} END {print d, n, "live", r}' <<<"$lease")"
fi

# ---- 2. the mistakes the startup check and the claim catch (part claims) -------------
# West's configuration pointed at east's etcd: a live holder of datacenter 1 there names
# region east, so a "west" replica on datacenter 1 is refused.
if part claims; then
  # shellcheck disable=SC2046
  rc=$(serve_refused "$WORK/mistake.log" --state-dir "$WORK/x" $(region_args 1) --region west \
    --datacenter 1)
  check "a second region on datacenter 1 exits 1" 1 "$rc"
  check_match "... naming the other region" "has a live holder in region 'east'.*this is region 'west'" \
    "$(grep ' error start ' "$WORK/mistake.log")"
  # A replica without --datacenter (a rolling change) names worker IDs whole: 32-34 are
  # datacenter 1's workers 0-2, held under their other name, so it takes 35.
  # shellcheck disable=SC2046
  start_server flat35 $(region_args 1) --worker-id-range 32-35
  check "no --datacenter, range 32-35: worker 35 (32-34 are dc 1's)" 35 \
    "$(curl -s "http://$HTTP/v1/info" | jq .worker_id)"
  stop_server "$SERVER_PID" || fail "flat replica did not stop cleanly"
fi
if part unique || part claims; then
  stop_regions
fi
if part claims; then
  # East gone, its HWMs stay: a replica without --datacenter taking worker ID 32 (east's
  # datacenter 1, worker 0) starts past the HWM east's worker 0 left under that name.
  hwm=$("$IDGEN" lease --layout twitter --lease etcd --etcd "${EPS[1]}" --namespace "$NS" |
    awk '/^datacenter 1:/ {d = 1; next} /^(datacenter|no)/ {d = 0} d && $1 == "0" {print $5}')
  # Worker ID 32's own HWM key, an old one: with none, its holder would wait past now +
  # ahead + one interval (docs/leases.md, step 11), above east's HWM, hiding the floor.
  curl -s -X POST "${EPS[1]%%,*}/v3/kv/put" -d "{\"key\":\"$(printf /idgen/%s/hwm/32 "$NS" |
    base64 -w0)\",\"value\":\"$(printf '{"hwm_ms":"1"}' | base64 -w0)\"}" | grep -q '"header"' ||
    fail "put /idgen/$NS/hwm/32"
  # shellcheck disable=SC2046
  start_server flat32 $(region_args 1) --worker-id-range 32-32
  check "worker ID 32's floor is the HWM left as datacenter 1, worker 0 ($hwm)" "$hwm" \
    "$(curl -s "http://$HTTP/v1/info" | jq -r .lease.floor)"
  stop_server "$SERVER_PID" || fail "flat32 did not stop cleanly"
fi

# ---- 3. the negative control: no --datacenter (part control) -------------------------
if part control; then
  start_regions flat "" || { finish; exit 1; }
  fetch flat
  read -r ids dups < <(check_histories flat)
  for n in 1 4; do
    read -r dc w < <(node_fields flat "$n")
    say "     r$n without --datacenter: datacenter $dc, worker $w"
  done
  if [[ $ids -gt 0 && $dups -gt 0 ]]; then
    say "ok   negative control: without --datacenter both regions claim from worker ID 0: $dups duplicates in $ids IDs"
  else
    fail "negative control found no duplicate in $ids IDs: the test cannot see a collision"
  fi
  stop_regions
fi

# ---- 4. --worker-id-range 0-3: the fifth of five replicas is refused (part range) -----
range_test() { # provider args...
  local what=$1; shift
  local i rc ws=""
  for i in 1 2 3 4; do
    start_server "$what$i" "$@" --worker-id-range 0-3 || return
    ws+="$(curl -s "http://$HTTP/v1/info" | jq .worker_id) "
    PIDS[$i]=$SERVER_PID
  done
  check "$what: four replicas hold 0-3" "0 1 2 3" "$(tr ' ' '\n' <<<"$ws" | sort -n | xargs)"
  rc=$(serve_refused "$WORK/$what.fifth.log" "$@" --worker-id-range 0-3)
  check "$what: the fifth exits 1" 1 "$rc"
  check_match "$what: ... naming the range" "all 4 worker IDs 0-3 \(--worker-id-range\) of namespace '[^']*' are taken" \
    "$(grep ' error start ' "$WORK/$what.fifth.log")"
  for i in 1 2 3 4; do stop_server "${PIDS[$i]}" || fail "$what$i did not stop cleanly"; done
}
if part range; then
  range_test etcd --lease etcd --etcd "${EPS[1]}" --namespace ranged --lease-ttl 3
  # file: one state dir; a fresh worker file waits ahead + one interval, kept short here
  range_test file --lease file --state-dir "$WORK/ranged-state" --namespace "ranged-$$" \
    --hwm-ahead 300 --hwm-interval 100
fi
finish
