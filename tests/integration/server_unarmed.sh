#!/usr/bin/env bash
# A Snowflake server that holds a worker ID but waits for the clock to pass its HWM
# issues nothing: while /readyz says so (and /v1/info says waiting-hwm), /v1/id and
# /v1/ids answer 503 not_armed, RESP ID and IDS -TRYAGAIN not_armed. Server a holds
# worker 0; b, started beside it in the same namespace from another state directory,
# wins worker 1 with a new worker file (no history), so it waits --hwm-ahead plus one
# --hwm-interval (docs/leases.md): 21 s here, the window of the checks. An ID it served
# in that window would be of a worker it does not hold yet (a generator armed early has
# the default worker, 0: server a's).
# Usage: server_unarmed.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
command -v redis-cli >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test

start_server a --lease file --hwm-ahead 200 --hwm-interval 200 || exit 1
apid=$SERVER_PID
a_worker=$(curl -s "http://$HTTP/v1/info" | grep -o '"worker_id":[0-9]*' | head -1 | cut -d: -f2)
check "server a holds worker 0" 0 "$a_worker"

launch_server b --lease file --hwm-ahead 20000 --hwm-interval 1000 || exit 1
for _ in $(seq 1 200); do
  grep -q ' lease state=waiting-hwm' "$SERVER_LOG" && break
  sleep 0.05
done
info() { curl -s "http://$HTTP/v1/info"; }
state() { info | grep -o '"lease":{"state":"[a-z-]*"' | cut -d'"' -f6 | head -1; }
check "server b: lease state" waiting-hwm "$(state)"
check_match "server b holds worker 1" '"worker_id":1[,}]' "$(info)"

code=$(curl -s -o "$WORK/ready" -w '%{http_code}' "http://$HTTP/readyz")
check "b waiting: /readyz" 503 "$code"
check_match "b waiting: its reason" 'waiting for the clock to pass the HWM' "$(cat "$WORK/ready")"
# decoded: the worker of an ID wrongly served, for the failure's message
worker_of() { grep -o '"[0-9]*"' "$WORK/body" | head -1 | tr -d '"' |
  xargs -r -I{} curl -s "http://$HTTP/v1/decode/{}" | grep -o '"worker":[0-9]*'; }
for target in /v1/id "/v1/ids?count=3" "/v1/id?format=base62"; do
  code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://$HTTP$target")
  check "b waiting: GET $target" "503 not_armed" \
    "$code $(grep -o '"code":"[a-z_]*"' "$WORK/body" | cut -d'"' -f4)$(worker_of)"
done
for cmd in "ID" "IDS 3" "ID base62"; do
  # shellcheck disable=SC2086 # the command's words
  check_match "b waiting: RESP $cmd" '^TRYAGAIN not_armed' \
    "$(redis-cli -p "$RESP_PORT" $cmd 2>&1 | tr '\n' ' ')"
done
# The checks above fell inside the wait.
check "server b: lease state after the checks" waiting-hwm "$(state)"

stop_server || fail "server b did not stop cleanly"
stop_server "$apid" || fail "server a did not stop cleanly"
finish
