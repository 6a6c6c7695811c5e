#!/usr/bin/env bash
# The Redis provider's fences, one part each (tests/mutants.txt names them): a foreign
# token on our worker key ends our renewals (renew-token) and our HWM writes
# (hwm-token); a claim after ours (the counter bumped) ends our HWM writes (counter);
# a HWM above ours is never lowered (never-lower); a claim with no HWM history waits
# (no-history), and so does one whose HWM was written under another history of the
# server: another run_id (restart); a replica promoted, so another replication ID
# (promoted); the old primary after its replica was promoted, held a worker and died,
# which finds its own stamp but a replica gone (failback, issue 35: on a stamp of run_id
# alone it issued at once beside the promoted replica's holder); the same with a replica
# that attached after the stamp (late-replica); the old primary re-synced from a copy of
# its data on another primary and promoted again (resync); under a two-field layout, the
# alias's hash of another history (alias). A replica is refused
# (replica). Each part changes Redis behind a running `idgen serve` with redis-cli, as
# another client (or a lost write) would.
# Usage: lease_redis_fence.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts renew-token hwm-token counter never-lower no-history restart promoted failback \
  late-replica resync alias replica -- "${@:2}"
RS=$SOURCE_DIR/scripts/redis-server.sh
stop_all() {
  local d
  for d in "$WORK"/r-*; do [[ -d $d ]] && "$RS" stop "$d" >/dev/null 2>&1; done
  return 0
}
trap 'stop_all; cleanup' EXIT
URL=$("$RS" start "$WORK/r-main")
rcli() { "$RS" cli "$WORK/r-main" "$@"; }

# wait_log FILE REGEX: up to 10 s for a line matching REGEX; 0 found, 1 not.
wait_log() {
  local i
  for ((i = 0; i < 100; i++)); do grep -Eq "$2" "$1" && return 0; sleep 0.1; done
  return 1
}

# waited NS [DIR]: 0 when the server now holding worker 0 of NS (on the Redis under DIR,
# default r-main) armed with a floor at least
# TTL 2 s + ahead 1 s past its own start (read from its holder record): the wait for
# history that may be lost. No timing is measured: both values are the server's.
waited() {
  local start floor
  start=$("$RS" cli "${2:-$WORK/r-main}" HGET "${HASH:-idgen:$1:hwm:0}" record | sed -n 's/.*"start_ms":"\([0-9]*\)".*/\1/p')
  floor=$(curl -s "http://$HTTP/v1/info" | sed -n 's/.*"floor":"\([^"]*\)".*/\1/p')
  floor=$(date -d "$floor" +%s%3N 2>/dev/null || echo 0)
  say "     $1: start $start, floor $floor"
  [[ $start =~ ^[0-9]+$ && $floor -ge $((start + 3000)) ]]
}

# serve_ns NAME NS [options...]: a server on its own namespace, ready. Worker 0's history
# is seeded (a HWM under the server's history now), so the claim does not wait.
serve_ns() {
  local name=$1 ns=$2
  shift 2
  # shellcheck disable=SC2046 # the history's field value pairs
  rcli HSET "idgen:$ns:hwm:0" hwm 1 $("$RS" history "$WORK/r-main") >/dev/null
  start_server "$name" --lease redis --redis "$URL" --namespace "$ns" "$@"
}

if part renew-token; then
  # Renewals every 0.7 s, HWM writes every 5 s: the renewal meets the foreign token first.
  serve_ns rt rt --lease-ttl 2 --hwm-ahead 10000 --hwm-interval 5000 --hwm-wait-max 60000
  rcli SET idgen:rt:worker:0 foreign PX 60000 >/dev/null
  if wait_log "$WORK/rt.log" "gone or another's"; then say "ok   renew-token: a foreign token ends the renewals"
  else fail "renew-token: renewed over a foreign token"; fi
  stop_server "$SERVER_PID" || true
fi

if part hwm-token; then
  # Renewals every 10 s, HWM writes every 0.2 s: the HWM write meets the foreign token.
  serve_ns ht ht --lease-ttl 30 --hwm-ahead 1000 --hwm-interval 200 --hwm-wait-max 60000
  rcli SET idgen:ht:worker:0 foreign PX 60000 >/dev/null
  if wait_log "$WORK/ht.log" "no longer ours"; then say "ok   hwm-token: a foreign token ends the HWM writes"
  else fail "hwm-token: HWM written under a foreign token"; fi
  stop_server "$SERVER_PID" || true
fi

if part counter; then
  serve_ns ct ct --lease-ttl 30 --hwm-ahead 1000 --hwm-interval 200 --hwm-wait-max 60000
  rcli HINCRBY idgen:ct:hwm:0 fence 1 >/dev/null
  if wait_log "$WORK/ct.log" "claimed again"; then say "ok   counter: a later claim's counter ends the HWM writes"
  else fail "counter: HWM written past a later claim's counter"; fi
  stop_server "$SERVER_PID" || true
fi

if part never-lower; then
  serve_ns nl nl --lease-ttl 30 --hwm-ahead 1000 --hwm-interval 200 --hwm-wait-max 60000
  high=$(($(date +%s%3N) + 600000))
  rcli HSET idgen:nl:hwm:0 hwm "$high" >/dev/null
  sleep 1.5 # several HWM writes of now + 1 s
  check "never-lower: a higher HWM stays" "$high" "$(rcli HGET idgen:nl:hwm:0 hwm)"
  stop_server "$SERVER_PID" || true
fi

if part no-history; then
  start_server nh --lease redis --redis "$URL" --namespace nh --lease-ttl 2 --hwm-ahead 1000 \
    --hwm-interval 200
  if waited nh; then say "ok   no-history: the claim waited TTL + ahead"
  else fail "no-history: the claim did not wait TTL + ahead"; fi
  [[ $(rcli HGET idgen:nh:hwm:0 hwm) =~ ^[0-9]+$ ]] || fail "no-history: no HWM written"
  stop_server "$SERVER_PID" || true
fi

if part restart; then
  # A HWM written under another run_id: the server restarted (or a replica took over)
  # since, and may have lost newer writes. The claim waits as if there were none.
  # The rest of the stamp is the server's now, so only the run_id tells.
  # shellcheck disable=SC2046 # the history's field value pairs
  rcli HSET idgen:rs:hwm:0 hwm 1 $("$RS" history "$WORK/r-main") >/dev/null
  rcli HSET idgen:rs:hwm:0 run_id 0000000000000000000000000000000000000000 >/dev/null
  start_server rs --lease redis --redis "$URL" --namespace rs --lease-ttl 2 --hwm-ahead 1000 \
    --hwm-interval 200
  if waited rs; then say "ok   restart: a HWM of another run_id makes the claim wait"
  else fail "restart: a HWM of another run_id was trusted"; fi
  stop_server "$SERVER_PID" || true
fi

# pair P S: a primary under $WORK/r-P and its replica under $WORK/r-S, the replica in
# sync (P sees it connected). Sets PURL, SURL.
pair() {
  local i
  PURL=$("$RS" start "$WORK/r-$1")
  SURL=$("$RS" start "$WORK/r-$2" --replica-of "$WORK/r-$1")
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-$2" INFO replication | grep -q '^master_link_status:up' && return 0
    sleep 0.1
  done
  fail "pair $1 $2: the replica never synced"
}

# hold NAME URL NS: a holder of worker 0 of NS on URL, ready; then it is stopped (its
# release leaves the HWM hash behind, as a holder that stops does).
hold() {
  start_server "$1" --lease redis --redis "$2" --namespace "$3" --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  stop_server "$SERVER_PID" || true
}

if part promoted; then
  # H1 on P stamps worker 0's HWM under P's history; S, promoted, has the hash with P's
  # stamp under a new replication ID (and run_id): a claim on S waits.
  pair pp ps
  hold pm1 "$PURL" pm
  "$RS" cli "$WORK/r-ps" REPLICAOF NO ONE >/dev/null
  start_server pm2 --lease redis --redis "$SURL" --namespace pm --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  if waited pm "$WORK/r-ps"; then say "ok   promoted: a claim on a promoted replica waits"
  else fail "promoted: a claim on a promoted replica trusted the old primary's stamp"; fi
  stop_server "$SERVER_PID" || true
  "$RS" stop "$WORK/r-pp"; "$RS" stop "$WORK/r-ps"
fi

if part failback; then
  # The review's case: H1 on P, stopped; S promoted; H2 claims worker 0 on S; S killed
  # while H2 holds it; H3 claims worker 0 on P, never demoted, whose hash still bears its
  # own run_id and replication ID: only the replica gone from it says S may have handed
  # worker 0 out since. H3 must wait TTL + ahead, by which H2 has stopped.
  pair fp fs
  hold fb1 "$PURL" fb
  "$RS" cli "$WORK/r-fs" REPLICAOF NO ONE >/dev/null
  start_server fb2 --lease redis --redis "$SURL" --namespace fb --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  h2=$SERVER_PID
  "$RS" kill "$WORK/r-fs" KILL
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-fp" INFO replication | grep -q '^connected_slaves:0' && break
    sleep 0.1
  done
  start_server fb3 --lease redis --redis "$PURL" --namespace fb --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  if waited fb "$WORK/r-fp"; then say "ok   failback: a claim on the old primary, its replica gone, waits"
  else fail "failback: a claim on the old primary trusted its own stamp beside the promoted replica's holder"; fi
  stop_server "$SERVER_PID" || true
  stop_server "$h2" || true
  "$RS" stop "$WORK/r-fp"
fi

if part late-replica; then
  # As failback, but the replica attaches after the last HWM write on P: the stamp saw
  # no replica, and P has none again when H3 claims. A first replica would change P's
  # replication ID (Redis makes a backlog, and a new ID with it), so an earlier one came
  # and went first: P keeps its backlog and its ID. Only the attach counted since the
  # stamp (and gone) says one may have been promoted.
  PURL=$("$RS" start "$WORK/r-lp")
  "$RS" start "$WORK/r-l0" --replica-of "$WORK/r-lp" >/dev/null
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-l0" INFO replication | grep -q '^master_link_status:up' && break
    sleep 0.1
  done
  "$RS" stop "$WORK/r-l0"
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-lp" INFO replication | grep -q '^connected_slaves:0' && break
    sleep 0.1
  done
  hold lr1 "$PURL" lr
  replid=$("$RS" cli "$WORK/r-lp" INFO replication | sed -n 's/^master_replid:\([0-9a-f]*\).*/\1/p')
  SURL=$("$RS" start "$WORK/r-ls" --replica-of "$WORK/r-lp")
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-ls" INFO replication | grep -q '^master_link_status:up' && break
    sleep 0.1
  done
  check "late-replica: the attach kept P's replication ID" "$replid" \
    "$("$RS" cli "$WORK/r-lp" INFO replication | sed -n 's/^master_replid:\([0-9a-f]*\).*/\1/p')"
  "$RS" cli "$WORK/r-ls" REPLICAOF NO ONE >/dev/null
  start_server lr2 --lease redis --redis "$SURL" --namespace lr --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  h2=$SERVER_PID
  "$RS" kill "$WORK/r-ls" KILL
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-lp" INFO replication | grep -q '^connected_slaves:0' && break
    sleep 0.1
  done
  start_server lr3 --lease redis --redis "$PURL" --namespace lr --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  if waited lr "$WORK/r-lp"; then say "ok   late-replica: a claim on the old primary, a replica attached and gone since its stamp, waits"
  else fail "late-replica: a claim on the old primary trusted a stamp older than a replica that was promoted"; fi
  stop_server "$SERVER_PID" || true
  stop_server "$h2" || true
  "$RS" stop "$WORK/r-lp"
fi

if part resync; then
  # H1 on P alone stamps worker 0's hash; S, another primary, holds a copy of that hash
  # (a data directory copied, an old snapshot restored); P, demoted, re-syncs as S's
  # replica, S dies and P is promoted again. P's run_id is the stamp's, no replica of P
  # ever left it, but the hash may be older than P's own writes: only the replication
  # ID, new with the re-sync, tells. A claim on P waits.
  PURL=$("$RS" start "$WORK/r-rp")
  hold rs1 "$PURL" rz
  SURL=$("$RS" start "$WORK/r-rs2")
  for f in hwm fence run_id replid replicas attaches; do
    "$RS" cli "$WORK/r-rs2" HSET idgen:rz:hwm:0 "$f" \
      "$("$RS" cli "$WORK/r-rp" HGET idgen:rz:hwm:0 "$f")" >/dev/null
  done
  port=$("$RS" cli "$WORK/r-rs2" CONFIG GET port | tail -1)
  "$RS" cli "$WORK/r-rp" REPLICAOF 127.0.0.1 "$port" >/dev/null
  for ((i = 0; i < 100; i++)); do
    "$RS" cli "$WORK/r-rp" INFO replication | grep -q '^master_link_status:up' && break
    sleep 0.1
  done
  "$RS" kill "$WORK/r-rs2" KILL
  "$RS" cli "$WORK/r-rp" REPLICAOF NO ONE >/dev/null
  start_server rs3 --lease redis --redis "$PURL" --namespace rz --lease-ttl 2 \
    --hwm-ahead 1000 --hwm-interval 200
  if waited rz "$WORK/r-rp"; then say "ok   resync: a claim on the old primary, re-synced from a copy and promoted, waits"
  else fail "resync: a claim on the re-synced old primary trusted the hash"; fi
  stop_server "$SERVER_PID" || true
  "$RS" stop "$WORK/r-rp"
fi

if part alias; then
  # A two-field layout: worker 0 of datacenter 1 is whole worker ID 32, whose hash the
  # holders without --datacenter write. Ours is stamped under the server's history now,
  # the alias's under another run_id: the claim, whose floor is both, waits.
  # shellcheck disable=SC2046 # the history's field value pairs
  rcli HSET idgen:al:dc:1:hwm:0 hwm 1 $("$RS" history "$WORK/r-main") >/dev/null
  # shellcheck disable=SC2046 # the history's field value pairs
  rcli HSET idgen:al:hwm:32 hwm 1 $("$RS" history "$WORK/r-main") >/dev/null
  rcli HSET idgen:al:hwm:32 run_id 0000000000000000000000000000000000000000 >/dev/null
  start_server al --lease redis --redis "$URL" --namespace al --layout twitter --datacenter 1 \
    --lease-ttl 2 --hwm-ahead 1000 --hwm-interval 200
  if HASH=idgen:al:dc:1:hwm:0 waited al; then say "ok   alias: a claim whose alias hash has another history waits"
  else fail "alias: a claim trusted its own hash beside an alias hash of another history"; fi
  stop_server "$SERVER_PID" || true
fi

if part replica; then
  RURL=$("$RS" start "$WORK/r-replica" --replica-of "$WORK/r-main")
  rc=0; out=$("$IDGEN" lease --lease redis --redis "$RURL" 2>&1) || rc=$?
  check "replica: refused, exit 1" 1 "$rc"
  check_match "replica: says so" 'replica' "$out"
fi
finish
