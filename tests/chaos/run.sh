#!/usr/bin/env bash
# The fault campaign: real `idgen serve` replicas (each under libfaketime, so its wall
# clock can be stepped) on a real 3-member etcd cluster, clients recording every ID they
# receive over HTTP and RESP, a nemesis breaking clocks, processes, etcd and the state
# directory, and `idgen check` deciding after each scenario. Prints a table (and writes
# it with --table). Exit 0 only if every scenario passed its check (no duplicate, no
# ordering violation, some IDs recorded) and the negative control was caught.
#
# Usage: tests/chaos/run.sh [options] [SCENARIO...]      (default: all, in order)
#   --idgen PATH      the idgen binary (default $IDGEN_BUILD_DIR/idgen or build/idgen)
#   --client PATH     chaos_client (default: next to idgen)
#   --delay PATH      chaos_delay, the delaying TCP proxy (default: next to idgen)
#   --ticket PATH     segment_ticket_client, Flickr's one-number client (default: next
#                     to idgen; scenario segment-mariadb-flickr)
#   --phase S         seconds of load before and after each fault (default 2)
#   --minutes N       long mode: the mixed scenario repeats, in rounds of at most
#                     --round S seconds (default 120) each checked on its own, until N
#                     minutes have passed since the start
#   --batch N         IDs per batch request (default 256); --pause-ms N between requests
#                     of one client (default 5)
#   --ttl S           etcd lease TTL of the replicas (default 4)
#   --table FILE      also write the table there (markdown)
#   --work DIR        working directory (default a new one under /tmp); histories live
#                     there and are deleted after each scenario's check unless --keep
#   --seed N          seed of the random nemesis (default: from the time; printed)
#   --strict-liveness a replica that never serves again after a fault healed fails the
#                     run (default: it is reported as "NOT RECOVERED" and counted)
#   --keep            keep the working directory (it is kept anyway when a scenario fails)
# Scenarios: negative clock-5ms clock-200ms clock-3s clock-1h pause kill-restart
#   all-restart etcd-leader etcd-quorum regions exhausted file-restart file-statedir
#   file-removed netdelay etcd-tls segment segment-mariadb-rc segment-mariadb-flickr
#   mixed redis redis-volatile redis-negative segment-redis (on scripts/redis-server.sh)
#   zookeeper (its own 3-member ZooKeeper ensemble; its negative control is the mutant
#   zk-control-no-version of tests/mutants.txt, run by scripts/mutants.sh)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
source "$SRC/tests/integration/http.bash"
IDGEN="" CLIENT="" DELAY="" TICKET="" PHASE=2 MINUTES=0 ROUND=120 STRICT=0 BATCH=256 PAUSE_MS=5 TTL=4 TABLE="" WORK="" KEEP=0
SEED=$(( $(date +%s) % 100000 ))
ALL=(negative clock-5ms clock-200ms clock-3s clock-1h pause kill-restart all-restart
     etcd-leader etcd-quorum regions exhausted file-restart file-statedir file-removed netdelay
     etcd-tls segment segment-mariadb-rc segment-mariadb-flickr mixed zookeeper redis redis-volatile
     redis-negative segment-redis)
SCENARIOS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --idgen) IDGEN=$2; shift 2 ;;
    --client) CLIENT=$2; shift 2 ;;
    --delay) DELAY=$2; shift 2 ;;
    --ticket) TICKET=$2; shift 2 ;;
    --phase) PHASE=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --round) ROUND=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --pause-ms) PAUSE_MS=$2; shift 2 ;;
    --ttl) TTL=$2; shift 2 ;;
    --table) TABLE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --strict-liveness) STRICT=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) SCENARIOS+=("$1"); shift ;;
  esac
done
[[ ${#SCENARIOS[@]} -gt 0 ]] || SCENARIOS=("${ALL[@]}")
BUILD=${IDGEN_BUILD_DIR:-$SRC/build}
IDGEN=${IDGEN:-$BUILD/idgen}
CLIENT=${CLIENT:-$(dirname "$IDGEN")/chaos_client}
DELAY=${DELAY:-$(dirname "$IDGEN")/chaos_delay}
TICKET=${TICKET:-$(dirname "$IDGEN")/segment_ticket_client}
for b in "$IDGEN" "$CLIENT"; do [[ -x $b ]] || { echo "run.sh: $b not built" >&2; exit 2; }; done
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
command -v etcd >/dev/null && [[ -f $FAKETIME_LIB ]] && command -v jq >/dev/null ||
  "$SRC/scripts/deps.sh" test
RANDOM=$SEED
START_S=$SECONDS

own_work=0
if [[ -z $WORK ]]; then WORK=$(mktemp -d /tmp/idgen-chaos.XXXXXX); own_work=1; fi
mkdir -p "$WORK"
ETCD_DIR=$WORK/etcd
ETCD_B_DIR=$WORK/etcd-b # the second region's etcd (scenario regions)
ETCD_TLS_DIR=$WORK/etcd-tls # the client-certificate etcd (scenario etcd-tls)
ZK_DIR=$WORK/zk         # the ZooKeeper ensemble (scenario zookeeper)
ZK_EPS=""
PG_DIR=$WORK/pg         # PostgreSQL for the segment generators (scenario segment)
PG_PORT=""
MDB_DIRS=()            # MariaDB ticket servers (scenarios segment-mariadb-*)
REDIS_DIRS=()          # Redis servers (scenarios redis*, segment-redis)
EPS="" MOUNTED=() PROXIES=() FAILED=0 LIVENESS=0
declare -A RPID RHTTP RRESP RARGS CPID

log() { printf '%s [%3ds] %s\n' "$(date +%T)" $((SECONDS - START_S)) "$*" >&2; }

cleanup() {
  local rc=$?
  for k in "${!CPID[@]}"; do kill -KILL "${CPID[$k]}" 2>/dev/null || true; done
  for k in "${!RPID[@]}"; do
    kill -CONT "${RPID[$k]}" 2>/dev/null || true; kill -KILL "${RPID[$k]}" 2>/dev/null || true
  done
  for p in "${PROXIES[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  [[ -f $ETCD_DIR/members ]] && "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_DIR" >/dev/null 2>&1 || true
  [[ -f $ETCD_B_DIR/members ]] && "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_B_DIR" >/dev/null 2>&1 || true
  [[ -f $ETCD_TLS_DIR/members ]] && "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_TLS_DIR" >/dev/null 2>&1 || true
  if [[ -f $ZK_DIR/members ]]; then
    for i in 0 1 2; do [[ -f $ZK_DIR/m$i.pid ]] && kill -CONT "$(cat "$ZK_DIR/m$i.pid")" 2>/dev/null; done
    "$SRC/scripts/zookeeper-cluster.sh" stop "$ZK_DIR" >/dev/null 2>&1 || true
  fi
  [[ -n $PG_PORT ]] && "$SRC/scripts/pg-cluster.sh" stop "$PG_DIR" >/dev/null 2>&1 || true
  for d in "${MDB_DIRS[@]}"; do "$SRC/scripts/mariadb-cluster.sh" stop "$d" >/dev/null 2>&1 || true; done
  for d in "${REDIS_DIRS[@]}"; do "$SRC/scripts/redis-server.sh" stop "$d" >/dev/null 2>&1 || true; done
  for m in "${MOUNTED[@]}"; do umount -l "$m" 2>/dev/null || true; done
  if [[ $KEEP -eq 0 && $own_work -eq 1 && $FAILED -eq 0 && $rc -eq 0 ]]; then
    rm -rf "$WORK"
  else
    rm -rf "$ETCD_DIR"/m*/ "$ETCD_B_DIR"/m*/ "$ETCD_TLS_DIR"/m*/ "$ZK_DIR"/m*/ "$PG_DIR/data" 2>/dev/null || true
    for d in "${MDB_DIRS[@]}"; do rm -rf "$d"/m*/data; done
    log "work dir kept (logs; histories of checked scenarios deleted): $WORK"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Ports come from below the kernel's ephemeral range, where the clients' own outgoing
# connections (thousands of them, many in TIME_WAIT) cannot be sitting on them.
read -r EPH_LO _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || EPH_LO=32768
PORT_LO=20000 PORT_SPAN=$((EPH_LO > 21000 ? EPH_LO - 20000 : 10000))
port_free() { ! ss -Htan "sport = :$1" 2>/dev/null | grep . >/dev/null; }
# free_port: a free loopback port this run has not handed out before (a replica binds
# only later, so ss alone would not see the previous pick).
declare -A USED_PORTS
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((PORT_LO + RANDOM % PORT_SPAN))
    [[ -z ${USED_PORTS[$p]:-} ]] && port_free "$p" && { echo "$p"; return; }
  done
  echo "run.sh: no free port" >&2; return 1
}
now_ms() { date +%s%3N; }

# ---- replicas ---------------------------------------------------------------------

# set_clock I OFFSET: the wall clock of replica I (now and after restarts), in seconds
# ("-0.2", "+0"); libfaketime reads the file within ~1 s.
set_clock() { echo "$2" >"$SD/r$1.ft"; }

# start_replica I [serve args...]: starts replica I on its ports (kept across restarts)
# under libfaketime; the args are remembered for restarts. Returns at once.
start_replica() {
  local i=$1; shift
  [[ $# -gt 0 ]] && RARGS[$i]="$*"
  if [[ -z ${RHTTP[$i]:-} ]]; then
    RHTTP[$i]=$(free_port); USED_PORTS[${RHTTP[$i]}]=1
    RRESP[$i]=$(free_port); USED_PORTS[${RRESP[$i]}]=1
  fi
  [[ -f $SD/r$i.ft ]] || set_clock "$i" +0
  # shellcheck disable=SC2086
  env LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE="$SD/r$i.ft" \
    FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_CACHE_DURATION=1 \
    "$IDGEN" serve --http "127.0.0.1:${RHTTP[$i]}" --resp "127.0.0.1:${RRESP[$i]}" \
    --threads 1 --shutdown-timeout 1000 ${RARGS[$i]} >>"$SD/r$i.log" 2>&1 </dev/null &
  RPID[$i]=$!
}

# wait_ready I [SECONDS]: 0 once /readyz answers 200; 1 if the replica exited or the
# time ran out.
wait_ready() {
  local i=$1 limit=${2:-20} t0=$SECONDS
  while ((SECONDS - t0 < limit)); do
    kill -0 "${RPID[$i]}" 2>/dev/null || return 1
    [[ $(http_code -m 1 "http://127.0.0.1:${RHTTP[$i]}/readyz") == 200 ]] &&
      return 0
    sleep 0.1
  done
  return 1
}

# stop_replica I [SIG]: stops replica I (default TERM, then KILL after 5 s) and waits.
stop_replica() {
  local i=$1 sig=${2:-TERM} pid=${RPID[$1]:-}
  [[ -n $pid ]] || return 0
  { # bash's "Killed" job notices go nowhere
    kill -CONT "$pid" || true
    kill -"$sig" "$pid" || true
    for _ in $(seq 50); do kill -0 "$pid" || break; sleep 0.1; done
    kill -KILL "$pid" || true
    wait "$pid" || true
  } 2>/dev/null
  unset "RPID[$i]"
}

# worker_of I: the worker ID replica I holds now (from /v1/info), or "-".
worker_of() {
  curl -s -m 1 "http://127.0.0.1:${RHTTP[$1]}/v1/info" 2>/dev/null | jq -r '.worker_id // "-"' 2>/dev/null || echo -
}

# ---- clients ----------------------------------------------------------------------

# start_clients I: two clients on replica I: HTTP (batches, every 5th request a single
# ID) and RESP (the same), each writing its own history.
start_clients() {
  local i=$1
  "$CLIENT" --http "127.0.0.1:${RHTTP[$i]}" --replica "r$i" --out "$SD/h$i.hist" \
    --batch "$BATCH" --single-every 5 --pause-ms "$PAUSE_MS" --timeout-ms 2000 \
    --error-sleep-ms 50 2>>"$SD/clients.log" &
  CPID[h$i]=$!
  "$CLIENT" --resp "127.0.0.1:${RRESP[$i]}" --replica "r$i" --out "$SD/s$i.hist" \
    --batch "$BATCH" --single-every 5 --pause-ms "$PAUSE_MS" --timeout-ms 2000 \
    --error-sleep-ms 50 2>>"$SD/clients.log" &
  CPID[s$i]=$!
}

# start_named_clients I NAME: an HTTP and a RESP client of replica I asking the generator
# NAME (a segment one); each history line carries the name, the replica as the process.
start_named_clients() {
  local i=$1 name=$2
  "$CLIENT" --http "127.0.0.1:${RHTTP[$i]}" --replica "r$i" --name "$name" \
    --out "$SD/h$i-$name.hist" --batch "$BATCH" --single-every 5 --pause-ms "$PAUSE_MS" \
    --timeout-ms 2000 --error-sleep-ms 50 2>>"$SD/clients.log" &
  CPID[h$i-$name]=$!
  "$CLIENT" --resp "127.0.0.1:${RRESP[$i]}" --replica "r$i" --name "$name" \
    --out "$SD/s$i-$name.hist" --batch "$BATCH" --single-every 5 --pause-ms "$PAUSE_MS" \
    --timeout-ms 2000 --error-sleep-ms 50 2>>"$SD/clients.log" &
  CPID[s$i-$name]=$!
}

stop_clients() {
  local k
  for k in "${!CPID[@]}"; do kill -TERM "${CPID[$k]}" 2>/dev/null || true; done
  for k in "${!CPID[@]}"; do wait "${CPID[$k]}" 2>/dev/null || true; unset "CPID[$k]"; done
}

# ---- etcd -------------------------------------------------------------------------

# etcd_up: the 3-member cluster, started once. Its ports come from free_port (below the
# ephemeral range: a member restarted later must be able to bind its ports again, where
# a client's outgoing connection may be sitting on them; scripts/etcd-cluster.sh picks
# below it too, from 10000-32000). The directory has etcd-cluster.sh's layout, so its leader,
# kill, restart and stop commands work on it.
etcd_up() {
  [[ -n $EPS ]] && return 0
  local i cp pp cluster="" eps="" token="idgen-chaos-$$-$RANDOM"
  local -a cports pports
  mkdir -p "$ETCD_DIR"
  for i in 0 1 2; do
    cp=$(free_port); USED_PORTS[$cp]=1; pp=$(free_port); USED_PORTS[$pp]=1
    cports[i]=$cp pports[i]=$pp
    cluster+="${cluster:+,}m$i=http://127.0.0.1:$pp"
  done
  for i in 0 1 2; do
    echo "http://127.0.0.1:${cports[i]}" >"$ETCD_DIR/m$i.url"
    eps+="${eps:+,}http://127.0.0.1:${cports[i]}"
    echo "etcd --name m$i --data-dir $ETCD_DIR/m$i" \
      "--listen-client-urls http://127.0.0.1:${cports[i]}" \
      "--advertise-client-urls http://127.0.0.1:${cports[i]}" \
      "--listen-peer-urls http://127.0.0.1:${pports[i]}" \
      "--initial-advertise-peer-urls http://127.0.0.1:${pports[i]}" \
      "--initial-cluster $cluster --initial-cluster-token $token" \
      "--initial-cluster-state new" >"$ETCD_DIR/m$i.cmd"
    local -a cmd
    read -ra cmd <"$ETCD_DIR/m$i.cmd"
    "${cmd[@]}" >>"$ETCD_DIR/m$i.log" 2>&1 </dev/null &
    echo $! >"$ETCD_DIR/m$i.pid"
  done
  echo 3 >"$ETCD_DIR/members"
  echo "$eps" >"$ETCD_DIR/endpoints"
  EPS=$eps
  etcd_all_healthy || { log "etcd cluster did not start; see $ETCD_DIR/m*.log"; return 1; }
  log "etcd cluster at $EPS"
}

# etcd_restart I [DIR]: starts member I of the cluster in DIR (default the 3-member one)
# again and waits until it answers with a leader (over TLS with the client certificate
# if the cluster requires one: DIR/tls names the PKI, as scripts/etcd-cluster.sh keeps it).
etcd_restart() {
  local dir=${2:-$ETCD_DIR} url c tls=()
  "$SRC/scripts/etcd-cluster.sh" restart "$dir" "$1"
  url=$(cat "$dir/m$1.url")
  if [[ -f $dir/tls ]]; then
    c=$(cat "$dir/tls"); tls=(--cacert "$c/ca.pem" --cert "$c/client.pem" --key "$c/client.key")
  fi
  for _ in $(seq 100); do
    curl -s -m 1 "${tls[@]}" -X POST "$url/v3/maintenance/status" -d '{}' 2>/dev/null | grep '"leader"' >/dev/null && return 0
    sleep 0.2
  done
  log "etcd member $1 not healthy after restart"
}

# etcd_all_healthy: waits until every member answers and knows a leader.
etcd_all_healthy() {
  local n i url ok
  n=$(cat "$ETCD_DIR/members")
  for _ in $(seq 100); do
    ok=1
    for ((i = 0; i < n; i++)); do
      url=$(cat "$ETCD_DIR/m$i.url")
      curl -s -m 1 -X POST "$url/v3/maintenance/status" -d '{}' 2>/dev/null | grep '"leader"' >/dev/null || ok=0
    done
    [[ $ok -eq 1 ]] && return 0
    sleep 0.2
  done
  return 1
}

# ---- scenarios --------------------------------------------------------------------

ROWS=() TOTAL_IDS=0 NS_SEQ=0
SCN="" SD="" LAYOUT=snowflake INTEGERS=0 NOTES="" EXPECT=pass HEAL_MS=0 RECOVER=()

begin() { # name, description
  SCN=$1 SD=$WORK/$1 LAYOUT=snowflake INTEGERS=0 NOTES="" EXPECT=pass HEAL_MS=0 RECOVER=()
  NS_SEQ=$((NS_SEQ + 1))
  NS="chaos$$-$NS_SEQ"
  rm -rf "$SD"; mkdir -p "$SD"
  log "== $1: $2"
}

note() { NOTES+="${NOTES:+; }$*"; }

# The etcd provider's serve args for policy P.
etcd_args() {
  echo "--policy $1 --lease etcd --etcd $EPS --namespace $NS --lease-ttl $TTL --state-dir $SD/state${SERVE_CLOCK:+ --clock $SERVE_CLOCK}${ETCD_TLS_ARGS:+ $ETCD_TLS_ARGS}"
}

# start_n N POLICY...: replicas 0..N-1 with the etcd provider (policy per replica, the
# last one repeating), waits until each is ready, then starts their clients.
start_n() {
  local n=$1; shift
  local pols=("$@") i p
  for ((i = 0; i < n; i++)); do
    p=${pols[$((i < ${#pols[@]} ? i : ${#pols[@]} - 1))]}
    start_replica "$i" "$(etcd_args "$p")"
  done
  for ((i = 0; i < n; i++)); do
    wait_ready "$i" || { log "replica $i not ready"; tail -3 "$SD/r$i.log" >&2; return 1; }
  done
  for ((i = 0; i < n; i++)); do start_clients "$i"; done
}

# back_after I: ms from HEAL_MS to the first ID a client of replica I received after
# it (the newest lines only, read backwards); empty if none.
back_after() {
  local f t best=""
  for f in "$SD/h$1".hist "$SD/s$1".hist "$SD/h$1"-*.hist "$SD/s$1"-*.hist; do
    [[ -s $f ]] || continue
    t=$(tac "$f" | awk -v t="$HEAL_MS" '$1 < t { exit } $3 != "ERR" { first = $1 } END { if (first) print first - t }')
    [[ -n $t ]] && { [[ -z $best || $t -lt $best ]] && best=$t; }
  done
  echo "$best"
}

# finish: stops clients and replicas, checks the histories, adds a table row.
finish() {
  stop_clients
  measure_recovered
  local k
  for k in "${!RPID[@]}"; do stop_replica "$k"; done
  RHTTP=() RRESP=() RARGS=()
  local files=("$SD"/*.hist) rc=0
  local mode=(--layout "$LAYOUT")
  [[ $INTEGERS -eq 1 ]] && mode=(--integers) # segment numbers: unique per name, rising per replica
  "$IDGEN" check --json "${mode[@]}" "${files[@]}" >"$SD/check.json" 2>"$SD/check.err" || rc=$?
  local ids dups viol errs worst kinds verdict
  if [[ $rc -eq 2 || ! -s $SD/check.json ]]; then
    verdict="FAIL (checker: $(head -1 "$SD/check.err"))"; ids=0 dups=- viol=- errs=- worst=-
  else
    ids=$(jq .ids "$SD/check.json")
    dups=$(jq .duplicates "$SD/check.json")
    viol=$(jq .order_violations "$SD/check.json")
    errs=$(jq .errors "$SD/check.json")
    worst=$(jq '[.clients[] | [.longest_unavailability_ms, .longest_gap_ms] | max] | max // 0' "$SD/check.json")
    local open; open=$(trailing_outage)
    [[ $open -gt $worst ]] && worst="$open (still out at the end)"
    kinds=$(jq -r '.errors_by_kind | to_entries | sort_by(-.value) | .[:4] | map("\(.key) \(.value)") | join(", ")' "$SD/check.json")
    [[ $errs -gt 0 ]] && errs="$errs ($kinds)"
    if [[ $EXPECT == duplicates ]]; then
      if [[ $rc -eq 1 && $dups -gt 0 ]]; then verdict="PASS (caught)"; else verdict="FAIL (not caught)"; fi
    elif [[ $rc -eq 0 && $ids -gt 0 ]]; then
      verdict=PASS
    else
      verdict=FAIL
    fi
    TOTAL_IDS=$((TOTAL_IDS + ids))
  fi
  [[ $verdict == PASS* ]] || FAILED=$((FAILED + 1))
  if [[ $verdict == PASS* && $NOTES == *"NOT RECOVERED"* ]]; then
    LIVENESS=$((LIVENESS + 1))
    if [[ $STRICT -eq 1 ]]; then verdict="FAIL (liveness)"; FAILED=$((FAILED + 1)); else verdict="PASS, NOT RECOVERED"; fi
  fi
  ROWS+=("| $SCN | $ids | $dups | $viol | $worst | $errs | $verdict | $NOTES |")
  log "$SCN: $verdict: $ids IDs, duplicates $dups, violations $viol, worst $worst ms, errors $errs"
  [[ -n $NOTES ]] && log "$SCN: $NOTES"
  if [[ $KEEP -eq 0 ]]; then rm -f "$SD"/*.hist; fi
}

# trailing_outage: the longest outage still open at the end of a history (last lines
# are errors), over every client of the scenario; `idgen check` counts an outage only
# once an ID follows it.
trailing_outage() {
  local f t worst=0
  for f in "$SD"/*.hist; do
    [[ -s $f ]] || continue
    t=$(tac "$f" | awk '$3 == "ERR" { if (!end) end = $1; next } { if (end) print end - $1; else print 0; exit }')
    [[ -n $t && $t -gt $worst ]] && worst=$t
  done
  echo "$worst"
}

# check_recovered I...: notes when each replica served again after the fault healed
# (liveness: a replica that never does fails the scenario).
# Only names the replicas; finish measures once the clients have stopped and their
# histories are complete (a running client's file can end in half a line).
check_recovered() { RECOVER=("$@"); }
measure_recovered() {
  local i t
  for i in "${RECOVER[@]}"; do
    t=$(back_after "$i")
    if [[ -n $t ]]; then note "r$i serving ${t} ms after heal"; else note "r$i NOT RECOVERED"; fi
  done
}

scn_negative() {
  begin negative "two replicas forced onto static worker 1: the checker must see duplicates"
  EXPECT=duplicates
  # Two namespaces, or the host-wide claim of worker 1 would refuse the second replica.
  start_replica 0 "--lease static --worker-id 1 --policy wait --state-dir $SD/state0 --namespace $NS-a"
  start_replica 1 "--lease static --worker-id 1 --policy wait --state-dir $SD/state1 --namespace $NS-b"
  wait_ready 0 && wait_ready 1 || { note "replicas not ready"; }
  start_clients 0; start_clients 1
  sleep "$PHASE"
  finish
}

# 1-4: every replica's wall clock stepped back by D while it runs (r0 policy fail, r1
# wait, r2 logical); then each is restarted gracefully with its clock still back (it
# wins its worker ID again and must wait past the HWM); for 1 h the restart must be
# refused, and succeed once the clock is right again.
scn_clock() { # name, seconds
  local name=$1 d=$2 i
  # The replicas read the wall clock itself (--clock wall), so the step reaches their
  # generators and each meets its policy; with the default monotonic clock it would not.
  local SERVE_CLOCK=wall
  begin "$name" "wall clock stepped back $d s on running replicas under --clock wall (fail/wait/logical), then restarted"
  etcd_up
  start_n 3 fail wait logical || { finish; return; }
  sleep "$PHASE"
  local w0; w0="$(worker_of 0)/$(worker_of 1)/$(worker_of 2)"
  for i in 0 1 2; do set_clock "$i" "-$d"; done
  sleep $((PHASE + 1))
  note "workers $w0"
  local refused=()
  for i in 0 1 2; do
    stop_replica "$i" TERM
    local t0; t0=$(now_ms)
    start_replica "$i"
    if wait_ready "$i" 40; then
      note "r$i restarted with clock -$d s: worker $(worker_of "$i"), ready in $(($(now_ms) - t0)) ms"
    else
      note "r$i restart with clock -$d s refused: $(grep -v ' info ' "$SD/r$i.log" | tail -1 | cut -c26-110)"
      refused+=("$i")
    fi
  done
  # The refused ones start again once every clock is right (a replica whose clock is
  # right is refused while its live peers still report clocks an hour back).
  for i in "${refused[@]}"; do stop_replica "$i" KILL; set_clock "$i" +0; done
  for i in "${refused[@]}"; do start_replica "$i"; done
  for i in "${refused[@]}"; do
    wait_ready "$i" 40 && note "r$i started with the clock right: worker $(worker_of "$i")" ||
      note "r$i did not start with the clock right: $(grep -v ' info ' "$SD/r$i.log" | tail -1 | cut -c26-110)"
  done
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
}

scn_pause() {
  begin pause "r0 paused (SIGSTOP) past the lease TTL; r3 takes its worker ID; r0 resumed"
  etcd_up
  start_n 3 wait || { finish; return; }
  sleep "$PHASE"
  local w; w=$(worker_of 0)
  kill -STOP "${RPID[0]}"
  sleep $((TTL + 2))
  start_replica 3 "$(etcd_args wait)"
  if wait_ready 3 20; then
    note "r0 held worker $w; r3 took worker $(worker_of 3) while r0 was paused"
    start_clients 3
  else
    note "r3 not ready"
  fi
  sleep "$PHASE"
  kill -CONT "${RPID[0]}"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + TTL))
  note "r0 after resume: worker $(worker_of 0)"
  check_recovered 0 3
  finish
}

scn_kill_restart() {
  begin kill-restart "r0 killed (SIGKILL) and restarted at once with its clock 2 s back"
  etcd_up
  start_n 3 wait || { finish; return; }
  sleep "$PHASE"
  local w; w=$(worker_of 0)
  stop_replica 0 KILL
  set_clock 0 -2
  local t0; t0=$(now_ms)
  start_replica 0
  wait_ready 0 30 && note "r0 worker $w -> $(worker_of 0), ready in $(($(now_ms) - t0)) ms" ||
    note "r0 not ready after restart"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0
  finish
}

scn_all_restart() {
  begin all-restart "all replicas killed (SIGKILL) and restarted together"
  etcd_up
  start_n 3 fail wait logical || { finish; return; }
  sleep "$PHASE"
  local i t0
  { for i in 0 1 2; do kill -KILL "${RPID[$i]}"; done
    for i in 0 1 2; do wait "${RPID[$i]}" || true; done; } 2>/dev/null
  t0=$(now_ms)
  for i in 0 1 2; do start_replica "$i"; done
  for i in 0 1 2; do wait_ready "$i" 30 || note "r$i not ready"; done
  note "ready again in $(($(now_ms) - t0)) ms, workers $(worker_of 0)/$(worker_of 1)/$(worker_of 2)"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
}

scn_etcd_leader() {
  begin etcd-leader "the etcd leader killed (SIGKILL), restarted after a while"
  etcd_up
  start_n 3 wait || { finish; return; }
  sleep "$PHASE"
  local l; l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR")
  "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$l" KILL
  sleep $((PHASE + 3))
  etcd_restart "$l"
  note "killed leader m$l; new leader m$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR" 2>/dev/null || echo '?')"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + TTL))
  check_recovered 0 1 2
  finish
}

# lose_quorum I...: SIGKILLs a follower, then the leader, of the 3-member cluster for
# TTL + 3 s; notes meanwhile whether replicas I... are ready; restarts both, waits for
# the cluster, and sets HEAL_MS.
lose_quorum() {
  local l a b i
  l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR")
  a=$(( (l + 1) % 3 )) b=$l   # a follower first, then the leader
  "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$a" KILL
  "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$b" KILL
  sleep $((TTL + 3))
  note "during the loss: ready $(for i in "$@"; do curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:${RHTTP[$i]}/readyz"; echo -n ' '; done)"
  etcd_restart "$a"; etcd_restart "$b"
  etcd_all_healthy || note "etcd not healthy again"
  HEAL_MS=$(now_ms)
}

scn_etcd_quorum() {
  begin etcd-quorum "two of three etcd members killed (quorum lost) past the TTL, then restored"
  etcd_up
  start_n 3 wait || { finish; return; }
  sleep "$PHASE"
  lose_quorum 0 1 2
  sleep $((PHASE + TTL))
  note "after: workers $(worker_of 0)/$(worker_of 1)/$(worker_of 2)"
  check_recovered 0 1 2
  finish
}

# Two regions, layout twitter, one namespace name: r0 and r1 on the 3-member cluster as
# datacenter 1, r2 and r3 on a one-member etcd of their own as datacenter 2. Region 1's
# etcd loses quorum past the TTL: its replicas stop at their deadline, region 2 goes on
# serving (it must, or the scenario fails), and no ID repeats across the two.
scn_regions() {
  begin regions "two regions (datacenters 1 and 2, an etcd each); region 1's etcd loses quorum, region 2 keeps serving"
  etcd_up
  LAYOUT=twitter
  local eps_b i t_loss served
  eps_b=$("$SRC/scripts/etcd-cluster.sh" start "$ETCD_B_DIR" 1) || { note "region 2's etcd did not start"; finish; return; }
  for i in 0 1 2 3; do
    if ((i < 2)); then
      start_replica "$i" "$(etcd_args wait) --layout twitter --datacenter 1 --region one"
    else
      start_replica "$i" "$(EPS=$eps_b etcd_args wait) --layout twitter --datacenter 2 --region two"
    fi
  done
  for i in 0 1 2 3; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2 3; do start_clients "$i"; done
  sleep "$PHASE"
  note "workers $(worker_of 0)/$(worker_of 1) (dc 1), $(worker_of 2)/$(worker_of 3) (dc 2)"
  t_loss=$(now_ms)
  lose_quorum 0 1 2 3
  sleep $((PHASE + TTL))
  # Region 2 served all along: IDs its clients received while region 1 had no quorum.
  served=$(cat "$SD"/[hs][23].hist 2>/dev/null |
    awk -v a="$t_loss" -v b="$HEAL_MS" '$1 >= a && $1 < b && $3 != "ERR"' | wc -l)
  if [[ $served -gt 0 ]]; then note "region 2 issued $served IDs during the loss"; else
    note "region 2 issued nothing during the loss (FAIL)"; FAILED=$((FAILED + 1)); fi
  check_recovered 0 1
  finish
  "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_B_DIR" >/dev/null 2>&1 || true
  rm -rf "$ETCD_B_DIR"
}

scn_exhausted() {
  begin exhausted "2-bit worker field (4 IDs) held by r0-r3; r4 must be refused; r3 stops, r4 gets its ID"
  etcd_up
  LAYOUT="time:41,worker:2,seq:12,epoch:2026-01-01"
  local i
  for i in 0 1 2 3; do start_replica "$i" "$(etcd_args wait) --layout $LAYOUT"; done
  for i in 0 1 2 3; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2 3; do start_clients "$i"; done
  sleep "$PHASE"
  start_replica 4 "$(etcd_args wait) --layout $LAYOUT"
  local t0=$SECONDS
  while kill -0 "${RPID[4]}" 2>/dev/null && ((SECONDS - t0 < 15)); do sleep 0.2; done
  if kill -0 "${RPID[4]}" 2>/dev/null; then
    note "r4 still running with all IDs taken: $(worker_of 4)"; FAILED=$((FAILED + 1))
    stop_replica 4 KILL
  else
    wait "${RPID[4]}" 2>/dev/null && note "r4 exited 0?" || note "r4 refused: $(grep -v ' info ' "$SD/r4.log" | tail -1 | cut -c26-110)"
    unset "RPID[4]"
  fi
  # r3 leaves gracefully (revokes at once); a new process on r3's ports takes its ID and
  # must start above the HWM r3 left (r3's clients see both, in order).
  local w3; w3=$(worker_of 3)
  stop_replica 3 TERM
  start_replica 3
  wait_ready 3 20 && note "r3 replaced: worker $w3 -> $(worker_of 3)" || note "r3 replacement not ready"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 3
  finish
}

# The file provider on one host: replicas share a state directory (lock files) and a
# namespace of the scenario's own (worker IDs are claimed host-wide per namespace).
file_args() { echo "--policy $1 --lease file --state-dir $SD/state --namespace $NS"; }

scn_file_restart() {
  begin file-restart "file provider: r0 SIGKILLed and restarted with its clock 2 s back (same worker, HWM wait)"
  local i
  mkdir -p "$SD/state"
  for i in 0 1 2; do start_replica "$i" "$(file_args wait)"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_clients "$i"; done
  sleep "$PHASE"
  local w; w=$(worker_of 0)
  stop_replica 0 KILL
  set_clock 0 -2
  local t0; t0=$(now_ms)
  start_replica 0
  wait_ready 0 30 && note "r0 worker $w -> $(worker_of 0), ready in $(($(now_ms) - t0)) ms" || note "r0 not ready"
  sleep "$PHASE"
  kill -STOP "${RPID[1]}"; sleep 3; kill -CONT "${RPID[1]}"
  note "r1 paused 3 s"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1
  finish
}

# 11: the state directory full (a 256 KiB tmpfs filled up) and read-only.
scn_file_statedir() {
  begin file-statedir "file provider: state dir full (tmpfs filled) and read-only (remount)"
  local st=$SD/state i
  mkdir -p "$st"
  if ! mount -t tmpfs -o size=256k,mode=0755 tmpfs "$st" 2>/dev/null; then
    note "cannot mount a tmpfs here (not root?): skipped"; ROWS+=("| $SCN | - | - | - | - | - | SKIPPED | $NOTES |"); return
  fi
  MOUNTED+=("$st")
  for i in 0 1 2; do start_replica "$i" "$(file_args wait)"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_clients "$i"; done
  sleep "$PHASE"
  # Full: running holders rewrite their fixed-size record in place and keep going; a
  # new worker file cannot get a block.
  dd if=/dev/zero of="$st/filler" bs=4k 2>/dev/null || true
  note "state dir full ($(df --output=avail -k "$st" | tail -1 | tr -d ' ') KiB free)"
  sleep "$PHASE"
  stop_replica 0 KILL
  start_replica 0
  wait_ready 0 15 && note "r0 restarted while full: worker $(worker_of 0)" ||
    note "r0 restart while full refused: $(grep -v ' info ' "$SD/r0.log" | tail -1 | cut -c26-110)"
  start_replica 3 "$(file_args wait)"
  if wait_ready 3 10; then
    note "r3 (new worker file) started while full: worker $(worker_of 3) (FAIL: armed with no HWM written)"
    start_clients 3; FAILED=$((FAILED + 1))
  else
    note "r3 (new worker file) refused while full: $(grep -v ' info ' "$SD/r3.log" | tail -1 | cut -c26-110)"
    stop_replica 3 KILL
  fi
  rm -f "$st/filler"
  sleep "$PHASE"
  # Read-only: the kernel refuses to remount while the lock files are open for writing,
  # so the replicas stop first; restarted on a read-only dir they must refuse to start.
  for i in "${!RPID[@]}"; do stop_replica "$i" TERM; done
  if mount -o remount,ro "$st" 2>/dev/null; then
    start_replica 0
    if wait_ready 0 10; then note "r0 started on a read-only state dir?"; FAILED=$((FAILED + 1)); else
      note "read-only: r0 refused: $(grep -v ' info ' "$SD/r0.log" | tail -1 | cut -c26-110)"; fi
    stop_replica 0 KILL
    mount -o remount,rw "$st"
  else
    note "remount read-only refused by the kernel"
  fi
  for i in 0 1 2; do start_replica "$i"; done
  for i in 0 1 2; do wait_ready "$i" 20 || note "r$i not ready after the dir was writable again"; done
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
  umount "$st" 2>/dev/null && MOUNTED=("${MOUNTED[@]/$st}") || true
}

# The state files removed under load: a live replica's worker file, then two at once
# with another replica restarted meanwhile, then the whole state directory with a
# replica restarted. A holder must give its ID up at its next HWM write; nobody may
# take that ID while it lives (host-wide claim); a new worker file makes its holder
# wait past now + ahead + one HWM interval.
scn_file_removed() {
  begin file-removed "file provider: live replicas' worker files, then the whole state dir, removed under load, with restarts"
  local st=$SD/state i w
  for i in 0 1 2; do start_replica "$i" "$(file_args wait)"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_clients "$i"; done
  sleep "$PHASE"
  w=$(worker_of 0)
  rm -f "$st/worker-$w"
  note "removed r0's worker-$w"
  sleep 1.5
  rm -f "$st/worker-$(worker_of 1)" "$st/worker-$(worker_of 2)"
  stop_replica 2 KILL
  start_replica 2
  wait_ready 2 30 && note "r2 restarted meanwhile: worker $(worker_of 2)" || note "r2 not ready after restart"
  sleep "$PHASE"
  rm -rf "$st"
  note "removed the state dir"
  stop_replica 1 TERM
  start_replica 1
  wait_ready 1 30 && note "r1 restarted: worker $(worker_of 1)" || note "r1 not ready after restart"
  for i in 0 2; do wait_ready "$i" 30 || note "r$i not ready after the state dir went"; done
  note "workers now $(worker_of 0)/$(worker_of 1)/$(worker_of 2); $(grep -c 'removed or replaced' "$SD"/r*.log | awk -F: '{s += $2} END {print s}') notices"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
}

# 12: tc netem needs the sch_netem qdisc, which this kernel does not have (see
# docs/reliability.md); instead every replica reaches etcd through chaos_delay, a TCP
# proxy that holds each chunk for the delay in its control file.
scn_netdelay() {
  begin netdelay "latency to etcd: 200 ms, then 1500 ms (above TTL/3), then none (userspace proxy)"
  if [[ ! -x $DELAY ]]; then
    note "chaos_delay not built: skipped"; ROWS+=("| $SCN | - | - | - | - | - | SKIPPED | $NOTES |"); return
  fi
  etcd_up
  local eps_saved=$EPS proxied="" url p port
  echo 0 >"$SD/delay"
  IFS=, read -ra urls <<<"$EPS"
  for url in "${urls[@]}"; do
    port=$(free_port); USED_PORTS[$port]=1
    "$DELAY" --listen "127.0.0.1:$port" --to "${url#http://}" --delay-file "$SD/delay" \
      2>>"$SD/proxy.log" &
    PROXIES+=($!)
    proxied+="${proxied:+,}http://127.0.0.1:$port"
  done
  sleep 0.3
  EPS=$proxied
  start_n 3 wait || { EPS=$eps_saved; finish; return; }
  EPS=$eps_saved
  sleep "$PHASE"
  echo 200 >"$SD/delay"; sleep $((PHASE + 2))
  echo 1500 >"$SD/delay"; sleep $((PHASE + TTL))
  note "with 1500 ms: ready $(for i in 0 1 2; do curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:${RHTTP[$i]}/readyz"; echo -n ' '; done)"
  echo 0 >"$SD/delay"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + TTL))
  check_recovered 0 1 2
  finish
  for p in "${PROXIES[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PROXIES=()
}

# The etcd provider over TLS: a 3-member etcd of the scenario's own, https:// only with
# client certificates required (scripts/etcd-cluster.sh with ETCD_CLUSTER_TLS, the PKI
# of scripts/tls-certs.sh), the replicas presenting the client certificate
# (--etcd-cacert/--etcd-cert/--etcd-key), each member reached through chaos_delay (TLS
# passes it as bytes; the certificate names 127.0.0.1). Faults: r0 SIGKILLed and
# restarted at once with its clock 2 s back (a new TLS connection to claim), the etcd
# leader SIGKILLed and restarted (connections to it drop; the replicas handshake with
# the others), then 1500 ms each way to every member for TTL + 1 s (past the deadline).
scn_etcd_tls() {
  begin etcd-tls "etcd with client certificates required (TLS): r0 killed and restarted with its clock 2 s back, the etcd leader killed, 1500 ms latency to etcd"
  if [[ ! -x $DELAY ]]; then note "chaos_delay not built"; FAILED=$((FAILED + 1)); ROWS+=("| $SCN | - | - | - | - | - | FAIL | $NOTES |"); return; fi
  local certs=$WORK/certs eps url port proxied="" l w t0 eps_saved=$EPS
  if [[ ! -f $certs/client.pem ]] && ! "$SRC/scripts/tls-certs.sh" "$certs" >"$SD/certs.log" 2>&1; then
    note "tls-certs.sh failed: $(tail -1 "$SD/certs.log")"; FAILED=$((FAILED + 1)); ROWS+=("| $SCN | - | - | - | - | - | FAIL | $NOTES |"); return
  fi
  if ! eps=$(ETCD_CLUSTER_TLS=$certs "$SRC/scripts/etcd-cluster.sh" start "$ETCD_TLS_DIR" 3 2>"$SD/etcd.log"); then
    note "the TLS etcd did not start: $(tail -1 "$SD/etcd.log")"; FAILED=$((FAILED + 1)); ROWS+=("| $SCN | - | - | - | - | - | FAIL | $NOTES |"); return
  fi
  # The cluster must be what the scenario is about: a client without a certificate is
  # refused (etcd requires one with --client-cert-auth, and also with --trusted-ca-file
  # alone); else no load is run and the scenario fails.
  url=${eps%%,*}
  if curl -s -m 2 --cacert "$certs/ca.pem" -X POST "$url/v3/maintenance/status" -d '{}' 2>/dev/null | grep -q '"leader"'; then
    note "etcd answered a client without a certificate: no client-cert TLS to test"
    FAILED=$((FAILED + 1)); ROWS+=("| $SCN | - | - | - | - | - | FAIL | $NOTES |")
    "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_TLS_DIR" >/dev/null 2>&1 || true
    rm -rf "$ETCD_TLS_DIR"
    return
  fi
  echo 0 >"$SD/delay"
  IFS=, read -ra urls <<<"$eps"
  for url in "${urls[@]}"; do
    port=$(free_port); USED_PORTS[$port]=1
    "$DELAY" --listen "127.0.0.1:$port" --to "${url#https://}" --delay-file "$SD/delay" \
      2>>"$SD/proxy.log" &
    PROXIES+=($!)
    proxied+="${proxied:+,}https://127.0.0.1:$port"
  done
  sleep 0.3
  EPS=$proxied
  local ETCD_TLS_ARGS="--etcd-cacert $certs/ca.pem --etcd-cert $certs/client.pem --etcd-key $certs/client.key"
  if start_n 3 fail wait logical; then
    EPS=$eps_saved
    sleep "$PHASE"
    w=$(worker_of 0)
    stop_replica 0 KILL
    set_clock 0 -2
    t0=$(now_ms)
    start_replica 0
    wait_ready 0 30 && note "r0 killed: worker $w -> $(worker_of 0), ready in $(($(now_ms) - t0)) ms" ||
      note "r0 not ready after restart"
    sleep "$PHASE"
    l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_TLS_DIR")
    "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_TLS_DIR" "$l" KILL
    sleep $((PHASE + 1))
    etcd_restart "$l" "$ETCD_TLS_DIR"
    note "killed leader m$l"
    echo 1500 >"$SD/delay"; sleep $((TTL + 1))
    note "with 1500 ms: ready $(for i in 0 1 2; do curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:${RHTTP[$i]}/readyz"; echo -n ' '; done)"
    echo 0 >"$SD/delay"
    HEAL_MS=$(now_ms)
    sleep $((PHASE + TTL))
    check_recovered 0 1 2
  fi
  EPS=$eps_saved
  finish
  for p in "${PROXIES[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PROXIES=()
  "$SRC/scripts/etcd-cluster.sh" stop "$ETCD_TLS_DIR" >/dev/null 2>&1 || true
  rm -rf "$ETCD_TLS_DIR"
}

# pg_up: a PostgreSQL cluster for the segment generators, started once.
pg_up() {
  [[ -n $PG_PORT ]] && return 0
  chmod 755 "$WORK" # the postgres user must reach its directory
  PG_PORT=$("$SRC/scripts/pg-cluster.sh" start "$PG_DIR" | cut -d' ' -f1) || return 1
  log "PostgreSQL on port $PG_PORT"
}

# Segment generators on PostgreSQL (orders) and on the 3-member etcd (tickets), shared by
# three replicas; an HTTP and a RESP client per replica and name. Faults: r0 SIGKILLed
# and restarted, the etcd leader SIGKILLed, PostgreSQL stopped until every buffer ran dry
# and started again, r1 paused. Checked with `idgen check --integers`: no number twice
# per name, rising per replica (a restarted replica's blocks lie above every block leased
# before, so the check holds across its restart: stricter than per process).
scn_segment() {
  begin segment "segment generators on PostgreSQL and etcd: a replica killed, the etcd leader killed, PostgreSQL stopped and started, a replica paused"
  INTEGERS=1
  etcd_up
  pg_up || { note "PostgreSQL did not start"; FAILED=$((FAILED + 1)); return; }
  local dsn="host=127.0.0.1 port=$PG_PORT dbname=postgres user=postgres" i l t0 refused
  "$IDGEN" segment init --backend postgres --dsn "$dsn" orders >/dev/null &&
    "$IDGEN" segment init --backend etcd --dsn "$EPS" tickets >/dev/null ||
    { note "segment init failed"; FAILED=$((FAILED + 1)); return; }
  cat >"$SD/generators.yaml" <<EOF
generators:
  orders: {kind: segment, backend: postgres, dsn: "$dsn", step: 200, max_step: 2000, retry_ms: 200}
  tickets: {kind: segment, backend: etcd, dsn: "$EPS", step: 200, max_step: 2000, retry_ms: 200}
EOF
  for i in 0 1 2; do start_replica "$i" "$(etcd_args wait) --config $SD/generators.yaml"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_named_clients "$i" orders; start_named_clients "$i" tickets; done
  sleep "$PHASE"
  stop_replica 0 KILL
  start_replica 0
  wait_ready 0 30 && note "r0 killed and restarted" || note "r0 not ready after restart"
  l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR")
  "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$l" KILL
  sleep 2
  etcd_restart "$l"
  note "etcd leader m$l killed"
  t0=$(now_ms)
  "$SRC/scripts/pg-cluster.sh" stop "$PG_DIR"
  sleep 2
  "$SRC/scripts/pg-cluster.sh" restart "$PG_DIR" >/dev/null
  refused=$(cat "$SD"/*-orders.hist | awk -v t="$t0" '$1 >= t && $3 == "ERR" && $4 == "backend_unavailable"' | wc -l)
  note "PostgreSQL stopped for 2 s: $refused refusals (backend_unavailable)"
  kill -STOP "${RPID[1]}"; sleep 2; kill -CONT "${RPID[1]}"
  note "r1 paused 2 s"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
}

# Segment generators on one MariaDB ticket server (one counter, so a restarted replica
# starts above everything before it and `idgen check --integers` can ask each replica's
# numbers to rise), shared by three replicas taking small blocks, so that fetches meet
# all the time. Faults: r0 SIGKILLed and restarted, the ticket server SIGKILLed and
# restarted.
# mdb_segment NAME STEP FLICKR DESCRIPTION [MARIADBD_OPTION...]: the scenario; with
# FLICKR 1, one of Flickr's one-number clients takes numbers from the same table all
# along, its history judged with the replicas' (the name's numbers: none twice across
# both kinds). Fetches take the table's lock ahead of waiting one-number clients, so
# blocks of 10 from six clients would leave it a few numbers a second.
mdb_segment() {
  local name=$1 step=$2 flickr=$3 what=$4 dir i eps dsn
  shift 4
  begin "$name" "$what"
  INTEGERS=1
  dir=$WORK/mdb-$name
  MDB_DIRS+=("$dir")
  eps=$("$SRC/scripts/mariadb-cluster.sh" start "$dir" 1 "$@" 2>"$SD/mariadb.err") ||
    { note "MariaDB did not start: $(tail -1 "$SD/mariadb.err")"; FAILED=$((FAILED + 1)); return; }
  dsn="servers=$eps"
  "$IDGEN" segment init --backend mariadb --dsn "$dsn" orders >/dev/null ||
    { note "segment init failed"; FAILED=$((FAILED + 1)); return; }
  cat >"$SD/generators.yaml" <<EOF
generators:
  orders: {kind: segment, backend: mariadb, dsn: "$dsn", step: $step, max_step: $step, retry_ms: 200}
EOF
  mkdir -p "$SD/state"
  for i in 0 1 2; do start_replica "$i" "$(file_args wait) --config $SD/generators.yaml"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_named_clients "$i" orders; done
  [[ $flickr -eq 1 ]] && start_ticket_client "$eps"
  sleep "$PHASE"
  stop_replica 0 KILL
  start_replica 0
  wait_ready 0 30 && note "r0 killed and restarted" || note "r0 not ready after restart"
  "$SRC/scripts/mariadb-cluster.sh" kill "$dir" 0
  sleep 1
  "$SRC/scripts/mariadb-cluster.sh" restart "$dir" 0
  note "ticket server killed and restarted"
  # Its connection died with the server: a new client, as its user would start.
  [[ $flickr -eq 1 ]] && { wait "${CPID[flickr]}" 2>/dev/null || true; start_ticket_client "$eps"; }
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  [[ $flickr -eq 1 ]] && note "the one-number client took $(grep -c . "$SD/flickr.hist") numbers"
  finish
  "$SRC/scripts/mariadb-cluster.sh" stop "$dir"
}
start_ticket_client() { # HOST:PORT
  "$TICKET" --server "$1" --process flickr --name orders --out "$SD/flickr.hist" \
    2>>"$SD/flickr.log" &
  CPID[flickr]=$!
}

scn_segment_mariadb_rc() {
  mdb_segment segment-mariadb-rc 10 0 "segment generator on a READ-COMMITTED MariaDB ticket server: a replica killed, the server killed" \
    --transaction-isolation=READ-COMMITTED
}

scn_segment_mariadb_flickr() {
  mdb_segment segment-mariadb-flickr 200 1 "segment generator and one of Flickr's one-number clients on one ticket table: a replica killed, the server killed"
}

# Random faults, one after another, for the given seconds.
scn_mixed() { # name, seconds
  local dur=$2
  begin "$1" "random faults for $dur s (seed $SEED)"
  etcd_up
  start_n 3 fail wait logical || { finish; return; }
  local t0=$SECONDS i l a faults=()
  while ((SECONDS - t0 < dur)); do
    i=$((RANDOM % 3))
    case $((RANDOM % 7)) in
      0) local d; d=$(printf '%d.%03d' $((RANDOM % 4)) $((RANDOM % 1000)))
         set_clock "$i" "-$d"; faults+=("clock r$i -$d s") ;;
      1) kill -STOP "${RPID[$i]}"; sleep $((1 + RANDOM % (TTL + 3))); kill -CONT "${RPID[$i]}"
         faults+=("stop r$i") ;;
      2) stop_replica "$i" KILL; set_clock "$i" "-$((RANDOM % 3))"; start_replica "$i"
         wait_ready "$i" 30 || true; faults+=("kill r$i") ;;
      3) stop_replica "$i" TERM; start_replica "$i"; wait_ready "$i" 30 || true
         faults+=("term r$i") ;;
      4) l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR" 2>/dev/null || echo 0)
         "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$l" KILL; sleep $((1 + RANDOM % 4))
         etcd_restart "$l"; faults+=("etcd leader m$l") ;;
      5) l=$("$SRC/scripts/etcd-cluster.sh" leader "$ETCD_DIR" 2>/dev/null || echo 0)
         a=$(( (l + 1 + RANDOM % 2) % 3 ))
         "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$a" KILL
         "$SRC/scripts/etcd-cluster.sh" kill "$ETCD_DIR" "$l" KILL
         sleep $((1 + RANDOM % (TTL + 3)))
         etcd_restart "$a"; etcd_restart "$l"; etcd_all_healthy || true; faults+=("quorum") ;;
      6) set_clock "$i" +0; faults+=("clock r$i +0") ;;
    esac
    sleep "0.$((RANDOM % 10))"
    # A replica that exited (refused at start) comes back with a right clock.
    for i in 0 1 2; do
      if ! kill -0 "${RPID[$i]:-0}" 2>/dev/null; then
        set_clock "$i" +0; stop_replica "$i" KILL; start_replica "$i"; wait_ready "$i" 30 || true
      fi
    done
  done
  for i in 0 1 2; do set_clock "$i" +0; done
  etcd_all_healthy || note "etcd not healthy at the end"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + TTL))
  note "${#faults[@]} faults: $(printf '%s, ' "${faults[@]:0:12}")$([[ ${#faults[@]} -gt 12 ]] && echo ...)"
  check_recovered 0 1 2
  finish
}

# ---- Redis (scripts/redis-server.sh) ----------------------------------------------

# redis_up DIR [redis-server.sh start options]: a Redis of this scenario; sets REDIS_URL.
redis_up() {
  local dir=$1; shift
  REDIS_DIRS+=("$dir")
  REDIS_URL=$("$SRC/scripts/redis-server.sh" start "$dir" "$@") || { log "redis did not start"; return 1; }
}
redis_args() {
  echo "--policy $1 --lease redis --redis $REDIS_URL --namespace $NS --lease-ttl $TTL --state-dir $SD/state"
}

# Three replicas on one Redis (AOF always): r0 SIGKILLed and restarted, r1 paused past
# the TTL while r3 starts, then Redis itself SIGKILLed and restarted (its AOF brings the
# keys back; its new run_id makes each claim after it wait TTL + ahead).
scn_redis() {
  begin redis "Redis provider (AOF always): a replica killed, one paused past the TTL, Redis killed and restarted"
  redis_up "$SD/redis" --aof always || { finish; return; }
  local i w
  for i in 0 1 2; do start_replica "$i" "$(redis_args wait)"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_clients "$i"; done
  sleep "$PHASE"
  stop_replica 0 KILL
  start_replica 0
  wait_ready 0 30 && note "r0 killed, back with worker $(worker_of 0)" || note "r0 not ready after restart"
  w=$(worker_of 1)
  kill -STOP "${RPID[1]}"
  sleep $((TTL + 2))
  start_replica 3 "$(redis_args wait)"
  if wait_ready 3 30; then
    note "r3 took worker $(worker_of 3) while r1 (worker $w) was paused"; start_clients 3
  else
    note "r3 not ready"
  fi
  kill -CONT "${RPID[1]}"
  sleep "$PHASE"
  "$SRC/scripts/redis-server.sh" kill "$SD/redis" KILL
  sleep 1
  "$SRC/scripts/redis-server.sh" restart "$SD/redis" >/dev/null
  note "Redis killed and restarted"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + TTL + 4))
  check_recovered 0 1 2 3
  finish
}

# ---- ZooKeeper ----------------------------------------------------------------------

# zk_up: the 3-member ensemble (scripts/zookeeper-cluster.sh), started once. Ticks of
# 1 s: sessions of 2-20 s.
ZK_TTL=9
zk_up() {
  [[ -n $ZK_EPS ]] && return 0
  ZK_EPS=$(ZK_TICK_MS=1000 "$SRC/scripts/zookeeper-cluster.sh" start "$ZK_DIR" 3) ||
    { log "ZooKeeper ensemble did not start; see $ZK_DIR/m*.log"; return 1; }
  log "ZooKeeper ensemble at $ZK_EPS"
}

# The ZooKeeper provider's serve args for policy P. The session timeout (keepalive every
# third of it) is long beside the HWM's reach (ahead 1 s, a write every 250 ms): a holder
# that went on after losing its worker, unfenced, would issue above its successor's floor.
zk_args() {
  echo "--policy $1 --lease zookeeper --zookeeper $ZK_EPS --namespace $NS --lease-ttl $ZK_TTL --lease-margin 2000 --hwm-ahead 1000 --hwm-interval 250 --state-dir $SD/state"
}

# The nemesis of the etcd scenarios, in one run on ZooKeeper: clocks stepped, a worker
# node deleted by a foreign client (its holder's session alive) and claimed by a new
# replica, a replica paused past the session timeout, kill -9 with the clock set back,
# the leader killed, quorum lost past the session timeout.
scn_zookeeper() {
  begin zookeeper "ZooKeeper: clock steps, a worker node taken over, pause past the session, kill -9 with the clock back, leader kill, quorum loss"
  zk_up || { finish; return; }
  local i zkc=$SRC/scripts/zookeeper-cluster.sh
  for i in 0 1 2; do start_replica "$i" "$(zk_args wait)"; done
  for i in 0 1 2; do wait_ready "$i" 30 || { note "r$i not ready: $(tail -1 "$SD/r$i.log" | cut -c26-120)"; finish; return; }; done
  for i in 0 1 2; do start_clients "$i"; done
  sleep "$PHASE"
  # clocks: r1 back 3 s, r2 ahead 2 s, then right again
  set_clock 1 -3; set_clock 2 +2; sleep "$PHASE"; set_clock 1 +0; set_clock 2 +0
  # a worker node deleted under its live holder; r3 claims it (smallest free)
  local w; w=$(worker_of 0)
  "$zkc" cli "$ZK_DIR" delete "/idgen/$NS/workers/$w" >/dev/null
  start_replica 3 "$(zk_args wait)"
  if wait_ready 3 30; then start_clients 3; note "r0's worker $w deleted; r3 took $(worker_of 3)"; else note "r3 not ready"; fi
  sleep $((PHASE + 3))
  # r1 paused past its session timeout
  kill -STOP "${RPID[1]}"; sleep $((ZK_TTL + 3)); kill -CONT "${RPID[1]}"
  sleep "$PHASE"
  # r2 killed -9 and restarted at once with its clock 2 s back
  stop_replica 2 KILL; set_clock 2 -2; start_replica 2
  wait_ready 2 40 && note "r2 restarted, worker $(worker_of 2)" || note "r2 not ready after kill -9"
  sleep "$PHASE"
  # the leader killed, then back
  local l; l=$("$zkc" leader "$ZK_DIR")
  "$zkc" kill "$ZK_DIR" "$l" KILL; sleep $((PHASE + 2)); "$zkc" restart "$ZK_DIR" "$l"; "$zkc" wait "$ZK_DIR" || note "ensemble not back"
  note "killed leader m$l"
  sleep "$PHASE"
  # quorum lost past the session timeout, then restored
  l=$("$zkc" leader "$ZK_DIR")
  local a=$(( (l + 1) % 3 ))
  "$zkc" kill "$ZK_DIR" "$a" KILL; "$zkc" kill "$ZK_DIR" "$l" KILL
  sleep $((ZK_TTL + 2))
  note "during the loss: ready $(for i in 0 1 2 3; do curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:${RHTTP[$i]}/readyz"; echo -n ' '; done)"
  "$zkc" restart "$ZK_DIR" "$a"; "$zkc" restart "$ZK_DIR" "$l"; "$zkc" wait "$ZK_DIR" || note "ensemble not back"
  HEAL_MS=$(now_ms)
  sleep $((PHASE + ZK_TTL + 5))
  note "after: workers $(worker_of 0)/$(worker_of 1)/$(worker_of 2)/$(worker_of 3)"
  check_recovered 0 1 2 3
  finish
}

# Redis without persistence, killed and restarted empty under r0's load; r1 starts at
# once and claims r0's worker ID, whose history is gone: it must wait TTL + ahead, by
# which time r0 has stopped. r0 writes its HWM every 3 s (ahead 6 s), so it notices the
# loss only at its next renewal or HWM write, seconds after r1's claim; its first claim
# finds a history seeded under the server's history of the time (no wait at start). The negative control (forge 1) is the same with that wait
# removed: the history is forged after the restart (a HWM of 1 under the new history, what
# a provider that trusted it would act on), so r1 issues at once beside r0. For r1 to meet
# r0 on worker 0, r0 must not notice the loss (and claim worker 0 again) before r1's claim,
# however slowly a loaded machine restarts Redis and starts r1: there r0 touches Redis only
# every 20 s (keepalive and HWM write) and r1 may take worker 0 only.
scn_redis_volatile() {
  local forge=$1 name=redis-volatile what=""
  local slow="--lease-ttl 10 --hwm-interval 3000 --hwm-ahead 6000" only0=""
  if [[ $forge -eq 1 ]]; then
    name=redis-negative what=", its wait removed (history forged): the checker must see duplicates"
    slow="--lease-ttl 60 --hwm-interval 20000 --hwm-ahead 25000 --hwm-wait-max 120000"
    only0="--worker-id-range 0-0"
  fi
  begin "$name" "Redis without persistence killed and restarted under load; a new replica claims the same worker$what"
  [[ $forge -eq 1 ]] && EXPECT=duplicates
  redis_up "$SD/redis" --aof off || { finish; return; }
  # shellcheck disable=SC2046 # the history's field value pairs
  "$SRC/scripts/redis-server.sh" cli "$SD/redis" HSET "idgen:$NS:hwm:0" hwm 1 $("$SRC/scripts/redis-server.sh" history "$SD/redis") >/dev/null
  start_replica 0 "$(redis_args wait) $slow"
  wait_ready 0 || note "r0 not ready"
  start_clients 0
  sleep "$PHASE"
  "$SRC/scripts/redis-server.sh" kill "$SD/redis" KILL
  "$SRC/scripts/redis-server.sh" restart "$SD/redis" >/dev/null
  if [[ $forge -eq 1 ]]; then
    # shellcheck disable=SC2046 # the history's field value pairs
    "$SRC/scripts/redis-server.sh" cli "$SD/redis" HSET "idgen:$NS:hwm:0" hwm 1 $("$SRC/scripts/redis-server.sh" history "$SD/redis") >/dev/null
  fi
  start_replica 1 "$(redis_args wait) $slow $only0"
  if wait_ready 1 30; then note "r1 took worker $(worker_of 1)"; start_clients 1; else note "r1 not ready"; fi
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  [[ $forge -eq 1 ]] || check_recovered 1
  finish
}

# Segment generator 'tickets' on Redis (AOF always), shared by three replicas: r0
# SIGKILLed and restarted, Redis stopped 2 s (buffers, then backend_unavailable) and
# started again, r1 paused. Checked with `idgen check --integers`.
scn_segment_redis() {
  begin segment-redis "segment generator on Redis: a replica killed, Redis stopped and started, a replica paused"
  INTEGERS=1
  redis_up "$SD/redis" --aof always || { finish; return; }
  "$IDGEN" segment init --backend redis --dsn "$REDIS_URL" tickets >/dev/null ||
    { note "segment init failed"; FAILED=$((FAILED + 1)); return; }
  cat >"$SD/generators.yaml" <<EOF
generators:
  default: {kind: uuid7}
  tickets: {kind: segment, backend: redis, dsn: "$REDIS_URL", step: 200, max_step: 2000, retry_ms: 200}
EOF
  local i t0 refused
  for i in 0 1 2; do start_replica "$i" "--config $SD/generators.yaml --state-dir $SD/state"; done
  for i in 0 1 2; do wait_ready "$i" || note "r$i not ready"; done
  for i in 0 1 2; do start_named_clients "$i" tickets; done
  sleep "$PHASE"
  stop_replica 0 KILL
  start_replica 0
  wait_ready 0 30 && note "r0 killed and restarted" || note "r0 not ready after restart"
  t0=$(now_ms)
  "$SRC/scripts/redis-server.sh" stop "$SD/redis"
  sleep 2
  "$SRC/scripts/redis-server.sh" restart "$SD/redis" >/dev/null
  refused=$(cat "$SD"/*-tickets.hist | awk -v t="$t0" '$1 >= t && $3 == "ERR" && $4 == "backend_unavailable"' | wc -l)
  note "Redis stopped for 2 s: $refused refusals (backend_unavailable)"
  kill -STOP "${RPID[1]}"; sleep 2; kill -CONT "${RPID[1]}"
  note "r1 paused 2 s"
  HEAL_MS=$(now_ms)
  sleep "$PHASE"
  check_recovered 0 1 2
  finish
}

log "seed $SEED, phase $PHASE s, batch $BATCH, pause $PAUSE_MS ms, TTL $TTL s, work $WORK"
for s in "${SCENARIOS[@]}"; do
  case "$s" in negative|file-restart|file-statedir|file-removed|etcd-tls|segment-mariadb-*|redis*|segment-redis|zookeeper) ;; *) etcd_up; break ;; esac
done
for s in "${SCENARIOS[@]}"; do
  case "$s" in
    negative) scn_negative ;;
    clock-5ms) scn_clock clock-5ms 0.005 ;;
    clock-200ms) scn_clock clock-200ms 0.2 ;;
    clock-3s) scn_clock clock-3s 3 ;;
    clock-1h) scn_clock clock-1h 3600 ;;
    pause) scn_pause ;;
    kill-restart) scn_kill_restart ;;
    all-restart) scn_all_restart ;;
    etcd-leader) scn_etcd_leader ;;
    etcd-quorum) scn_etcd_quorum ;;
    regions) scn_regions ;;
    exhausted) scn_exhausted ;;
    file-restart) scn_file_restart ;;
    file-statedir) scn_file_statedir ;;
    file-removed) scn_file_removed ;;
    netdelay) scn_netdelay ;;
    etcd-tls) scn_etcd_tls ;;
    segment) scn_segment ;;
    segment-mariadb-rc) scn_segment_mariadb_rc ;;
    segment-mariadb-flickr) scn_segment_mariadb_flickr ;;
    redis) scn_redis ;;
    redis-volatile) scn_redis_volatile 0 ;;
    redis-negative) scn_redis_volatile 1 ;;
    segment-redis) scn_segment_redis ;;
    zookeeper) scn_zookeeper ;;
    mixed)
      if [[ $MINUTES -gt 0 ]]; then
        # Rounds of at most ROUND s, each checked on its own, until the time is up.
        round=1
        while :; do
          left=$((MINUTES * 60 - (SECONDS - START_S) - PHASE - TTL - 15))
          ((left >= 20)) || break
          scn_mixed "mixed-$round" $((left > ROUND ? ROUND : left))
          round=$((round + 1))
        done
      else
        scn_mixed mixed $((6 * PHASE))
      fi ;;
    *) echo "run.sh: unknown scenario '$s'" >&2; exit 2 ;;
  esac
done

{
  echo "| scenario | IDs recorded | duplicates | ordering violations | worst unavailability (ms) | client errors | result | what happened |"
  echo "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "Total: $TOTAL_IDS IDs recorded in $((SECONDS - START_S)) s; seed $SEED; $FAILED failed;" \
    "$LIVENESS with a replica that did not serve again after the fault healed."
} >"$WORK/table.md"
cat "$WORK/table.md"
[[ -z $TABLE ]] || cp "$WORK/table.md" "$TABLE"
[[ $FAILED -eq 0 ]]
