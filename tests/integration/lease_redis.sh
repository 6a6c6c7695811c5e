#!/usr/bin/env bash
# `idgen serve --lease redis` against Debian's redis-server (scripts/redis-server.sh):
# three servers claim distinct workers and issue 10^6 IDs, none twice; kill -9 and
# restart; a server paused past the TTL stops and loses its claim; Redis restarted with
# AOF always, and without persistence (the claim then waits TTL + ahead): no ID twice;
# a replica, idgen's own RESP port, bad URLs and auth failures are refused with one line.
source "$(dirname "$0")/server_common.bash"
RS=$SOURCE_DIR/scripts/redis-server.sh
stop_all() {
  local d
  for d in "$WORK"/r-*; do [[ -d $d ]] && "$RS" stop "$d" >/dev/null 2>&1; done
  return 0
}
trap 'stop_all; cleanup' EXIT
URL=$("$RS" start "$WORK/r-main")
# Short times, so that a pause and a restart fit in seconds.
LEASE=(--lease redis --redis "$URL" --namespace lr --lease-ttl 2 --hwm-ahead 1000
       --hwm-interval 200)

worker_of() { curl -s "http://$1/v1/info" | sed -n 's/.*"worker_id":\([0-9]*\).*/\1/p'; }
# grab HTTP N FILE: N batches of 4096 IDs appended to FILE (refusals leave nothing).
grab() {
  local i
  for ((i = 0; i < $2; i++)); do
    curl -s "http://$1/v1/ids?count=4096" | grep -o '"[0-9]*"' | tr -d '"' >>"$3" || true
  done
}
dups() { sort "$@" | uniq -d | wc -l; }

# 1. Three servers, three workers, 10^6 IDs.
start_server a "${LEASE[@]}"; A_HTTP=$HTTP A_PID=$SERVER_PID A_RESP=$RESP_PORT
start_server b "${LEASE[@]}"; B_HTTP=$HTTP B_PID=$SERVER_PID
start_server c "${LEASE[@]}"; C_HTTP=$HTTP C_PID=$SERVER_PID
wa=$(worker_of "$A_HTTP") wb=$(worker_of "$B_HTTP") wc=$(worker_of "$C_HTTP")
check "three distinct workers" 3 "$(printf '%s\n' "$wa" "$wb" "$wc" | grep -c . | sort -u)"
[[ $wa != "$wb" && $wb != "$wc" && $wa != "$wc" ]] || fail "workers $wa $wb $wc"
grab "$A_HTTP" 82 "$WORK/ids" & g1=$!
grab "$B_HTTP" 82 "$WORK/ids.b" & g2=$!
grab "$C_HTTP" 82 "$WORK/ids.c"
wait $g1 $g2
n=$(cat "$WORK/ids" "$WORK/ids.b" "$WORK/ids.c" | wc -l)
[[ $n -ge 1000000 ]] || fail "only $n IDs"
check "10^6 IDs from three servers, none twice ($n)" 0 "$(dups "$WORK/ids" "$WORK/ids.b" "$WORK/ids.c")"
cat "$WORK/ids.b" "$WORK/ids.c" >>"$WORK/ids"; rm -f "$WORK/ids.b" "$WORK/ids.c"
check "provider" '"provider":"redis"' "$(curl -s "http://$A_HTTP/v1/info" | grep -o '"provider":"redis"' | head -1)"

# 2. idgen's own RESP port is refused: it answers INFO with idgen_version.
rc=0; out=$("$IDGEN" lease --lease redis --redis "redis://127.0.0.1:$A_RESP" 2>&1) || rc=$?
check "idgen's RESP port refused, exit 1" 1 "$rc"
check_match "  names idgen_version" 'idgen_version' "$out"
check "  one line" 1 "$(wc -l <<<"$out")"

# 3. kill -9 and restart: the dead one's key lives out its TTL, then a new claim.
kill -KILL "$C_PID"; wait "$C_PID" 2>/dev/null || true
start_server c2 "${LEASE[@]}"; C_HTTP=$HTTP C_PID=$SERVER_PID
grab "$C_HTTP" 5 "$WORK/ids"
check "kill -9, restart: no ID twice" 0 "$(dups "$WORK/ids")"

# 4. A server paused past the TTL stops issuing, and its claim is gone when it resumes.
kill -STOP "$B_PID"
sleep 3 # > TTL 2 s: its key expires
start_server d "${LEASE[@]}"; D_HTTP=$HTTP D_PID=$SERVER_PID
wd=$(worker_of "$D_HTTP")
kill -CONT "$B_PID"
grab "$B_HTTP" 3 "$WORK/ids"
grab "$D_HTTP" 3 "$WORK/ids"
wb2=$(worker_of "$B_HTTP")
[[ $wb2 != "$wd" ]] && say "ok   paused server gave up worker $wb (now $wb2, d holds $wd)" ||
  fail "paused server b and d both hold worker $wd"
# The refusal is logged by b's keeper thread once it runs again: wait for its line.
for _ in $(seq 100); do
  grep -qE 'gone or another|no longer ours|claimed again' "$WORK/b.log" && break
  sleep 0.1
done
check_match "  its renewal was refused" 'gone or another|no longer ours|claimed again' "$(cat "$WORK/b.log")"
check "pause past the TTL: no ID twice (d took worker $wd)" 0 "$(dups "$WORK/ids")"

# 5. Redis restarted with AOF always (kill -9): the servers go on, no ID twice.
"$RS" kill "$WORK/r-main"
"$RS" restart "$WORK/r-main" >/dev/null
sleep 1
grab "$A_HTTP" 5 "$WORK/ids"; grab "$D_HTTP" 5 "$WORK/ids"; grab "$C_HTTP" 5 "$WORK/ids"
check "Redis kill -9 and restart with AOF: no ID twice" 0 "$(dups "$WORK/ids")"
for pid in "$A_PID" "$B_PID" "$C_PID" "$D_PID"; do stop_server "$pid" || true; done

# 6. Redis without persistence, restarted under a running server: its keys are gone, so a
# new claim of the same worker waits TTL + ahead, and the old holder has stopped by then.
VURL=$("$RS" start "$WORK/r-volatile" --aof off)
VLEASE=(--lease redis --redis "$VURL" --namespace lv --lease-ttl 2 --hwm-ahead 1000
        --hwm-interval 200)
start_server v1 "${VLEASE[@]}"; V1_HTTP=$HTTP V1_PID=$SERVER_PID
check_match "AOF off is warned, saying what repeats" 'AOF off.*repeat' "$(grep 'warn lease' "$WORK/v1.log")"
grab "$V1_HTTP" 3 "$WORK/vids"
# Its own file: two writers appending to one would interleave their buffers mid-line
# (issue 35: the "one ID twice" under load was two such fragments).
( grab "$V1_HTTP" 60 "$WORK/vids.1" ) & g1=$!
"$RS" kill "$WORK/r-volatile"
"$RS" restart "$WORK/r-volatile" >/dev/null
start_server v2 "${VLEASE[@]}"; V2_HTTP=$HTTP V2_PID=$SERVER_PID
check_match "the claim with no history waited" 'state=waiting-hwm' "$(cat "$WORK/v2.log")"
grab "$V2_HTTP" 20 "$WORK/vids"
wait $g1
cat "$WORK/vids.1" >>"$WORK/vids"
check "volatile restart: every line an ID" 0 "$(grep -cvE '^[0-9]{6,20}$' "$WORK/vids")"
check "volatile restart: no ID twice ($(wc -l <"$WORK/vids") IDs)" 0 "$(dups "$WORK/vids")"
stop_server "$V1_PID" || true; stop_server "$V2_PID" || true

# 7. Refusals, one line each: a replica (exit 1), bad URLs (exit 2), auth (exit 1).
RURL=$("$RS" start "$WORK/r-replica" --replica-of "$WORK/r-main")
rc=$(serve_refused "$WORK/replica.log" --lease redis --redis "$RURL")
check "replica refused, exit 1" 1 "$rc"
check "  one error line" 1 "$(grep -c ' error ' "$WORK/replica.log")"
check_match "  says replica" 'replica' "$(cat "$WORK/replica.log")"
for bad in "http://127.0.0.1:1" "redis://" "redis://127.0.0.1:99999" "redis://127.0.0.1:1/x" "redis://:@h:1"; do
  rc=0; out=$("$IDGEN" lease --lease redis --redis "$bad" 2>&1) || rc=$?
  check "bad URL $bad: exit 2, one line" "2 1" "$rc $(wc -l <<<"$out")"
done
rc=0; out=$(IDGEN_REDIS=nope "$IDGEN" lease --lease redis 2>&1) || rc=$?
check "bad IDGEN_REDIS: exit 2" 2 "$rc"
check_match "  names the variable" '^idgen lease: IDGEN_REDIS' "$out"
AURL=$("$RS" start "$WORK/r-auth" --pass s3cret --user alice:wonder)
APORT=${AURL##*:}
rc=0; out=$("$IDGEN" lease --lease redis --redis "$AURL" 2>&1) || rc=$?
check "no password: exit 1, one line" "1 1" "$rc $(wc -l <<<"$out")"
rc=0; out=$("$IDGEN" lease --lease redis --redis "redis://:wrong@127.0.0.1:$APORT" 2>&1) || rc=$?
check "wrong password: exit 1, one line" "1 1" "$rc $(wc -l <<<"$out")"
check_match "  says AUTH" 'AUTH' "$out"
rc=0; "$IDGEN" lease --lease redis --redis "redis://:s3cret@127.0.0.1:$APORT/3" >/dev/null || rc=$?
check "password and db 3: exit 0" 0 "$rc"
rc=0; "$IDGEN" lease --lease redis --redis "redis://alice:wonder@127.0.0.1:$APORT" >/dev/null || rc=$?
check "ACL user: exit 0" 0 "$rc"
rc=0; out=$("$IDGEN" lease --lease redis --redis "redis://alice:nope@127.0.0.1:$APORT" 2>&1) || rc=$?
check "ACL user, wrong password: exit 1" 1 "$rc"
finish
