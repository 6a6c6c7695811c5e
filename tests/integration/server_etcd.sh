#!/usr/bin/env bash
# `idgen serve --lease etcd` against a real one-member etcd: two servers win distinct
# worker IDs, /readyz and /v1/info say so, /metrics times the etcd requests, and SIGTERM
# releases the worker ID at once (idgen lease shows no live holder).
source "$(dirname "$0")/server_common.bash"
ETCD_DIR=$WORK/etcd
stop_etcd() { "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$ETCD_DIR" >/dev/null 2>&1 || true; }
trap 'stop_etcd; cleanup' EXIT
EPS=$("$SOURCE_DIR/scripts/etcd-cluster.sh" start "$ETCD_DIR" 1)
LEASE=(--lease etcd --etcd "$EPS" --namespace srv --lease-ttl 3)

start_server a "${LEASE[@]}"
A_HTTP=$HTTP A_PID=$SERVER_PID
start_server b "${LEASE[@]}"
B_HTTP=$HTTP B_PID=$SERVER_PID

check "a ready" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://$A_HTTP/readyz")"
wa=$(curl -s "http://$A_HTTP/v1/info" | sed -n 's/.*"worker_id":\([0-9]*\).*/\1/p')
wb=$(curl -s "http://$B_HTTP/v1/info" | sed -n 's/.*"worker_id":\([0-9]*\).*/\1/p')
check_match "a has a worker ID" '^[0-9]+$' "$wa"
check_match "b has a worker ID" '^[0-9]+$' "$wb"
[[ "$wa" != "$wb" ]] && say "ok   distinct worker IDs ($wa, $wb)" || fail "both servers hold worker $wa"
check "provider" '"provider":"etcd"' "$(curl -s "http://$A_HTTP/v1/info" | grep -o '"provider":"etcd"' | head -1)"

curl -s "http://$A_HTTP/v1/ids?count=4096" | tr -d '{}[]"' | sed 's/ids://' | tr ',' '\n' > "$WORK/a.ids"
curl -s "http://$B_HTTP/v1/ids?count=4096" | tr -d '{}[]"' | sed 's/ids://' | tr ',' '\n' > "$WORK/b.ids"
check "IDs from both" 8192 "$(cat "$WORK/a.ids" "$WORK/b.ids" | sort -u | wc -l)"

sleep 1.5 # a keepalive (TTL/3) and HWM writes
metrics=$(curl -s "http://$A_HTTP/metrics")
count=$(sed -n 's/^idgen_lease_request_duration_seconds_count{generator="default",provider="etcd"} //p' <<<"$metrics")
check_match "etcd requests timed" '^[1-9][0-9]*$' "$count"
renewals=$(sed -n 's/^idgen_lease_renewals_total{generator="default",outcome="ok"} //p' <<<"$metrics")
check_match "keepalives counted" '^[1-9][0-9]*$' "$renewals"

rc=0; stop_server "$A_PID" || rc=$?
check "a exits 0 on SIGTERM" 0 "$rc"
holders=$("$IDGEN" lease "${LEASE[@]}")
live=$(awk -v w="$wa" '$1 == w {print $2}' <<<"$holders")
check "a's worker ID released at once" "no" "${live:-no}"
rc=0; stop_server "$B_PID" || rc=$?
check "b exits 0 on SIGTERM" 0 "$rc"
finish
