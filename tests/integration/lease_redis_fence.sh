#!/usr/bin/env bash
# The Redis provider's fences, one part each (tests/mutants.txt names them): a foreign
# token on our worker key ends our renewals (renew-token) and our HWM writes
# (hwm-token); a claim after ours (the counter bumped) ends our HWM writes (counter);
# a HWM above ours is never lowered (never-lower); a claim with no HWM history waits
# (no-history), and so does one whose HWM was written under another run_id of the
# server (restart); a replica is refused (replica). Each part changes Redis behind a
# running `idgen serve` with redis-cli, as another client (or a lost write) would.
# Usage: lease_redis_fence.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts renew-token hwm-token counter never-lower no-history restart replica -- "${@:2}"
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

# waited NS: 0 when the server now holding worker 0 of NS armed with a floor at least
# TTL 2 s + ahead 1 s past its own start (read from its holder record): the wait for
# history that may be lost. No timing is measured: both values are the server's.
waited() {
  local start floor
  start=$(rcli HGET "idgen:$1:hwm:0" record | sed -n 's/.*"start_ms":"\([0-9]*\)".*/\1/p')
  floor=$(curl -s "http://$HTTP/v1/info" | sed -n 's/.*"floor":"\([^"]*\)".*/\1/p')
  floor=$(date -d "$floor" +%s%3N 2>/dev/null || echo 0)
  say "     $1: start $start, floor $floor"
  [[ $start =~ ^[0-9]+$ && $floor -ge $((start + 3000)) ]]
}

# serve_ns NAME NS [options...]: a server on its own namespace, ready. Worker 0's history
# is seeded (a HWM under the server's run_id now), so the claim does not wait.
serve_ns() {
  local name=$1 ns=$2 run
  shift 2
  run=$(rcli INFO server | sed -n 's/^run_id:\([0-9a-f]*\).*/\1/p')
  rcli HSET "idgen:$ns:hwm:0" hwm 1 run_id "$run" >/dev/null
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
  rcli HSET idgen:rs:hwm:0 hwm 1 run_id 0000000000000000000000000000000000000000 >/dev/null
  start_server rs --lease redis --redis "$URL" --namespace rs --lease-ttl 2 --hwm-ahead 1000 \
    --hwm-interval 200
  if waited rs; then say "ok   restart: a HWM of another run_id makes the claim wait"
  else fail "restart: a HWM of another run_id was trusted"; fi
  stop_server "$SERVER_PID" || true
fi

if part replica; then
  RURL=$("$RS" start "$WORK/r-replica" --replica-of "$WORK/r-main")
  rc=0; out=$("$IDGEN" lease --lease redis --redis "$RURL" 2>&1) || rc=$?
  check "replica: refused, exit 1" 1 "$rc"
  check_match "replica: says so" 'replica' "$out"
fi
finish
