#!/usr/bin/env bash
# /metrics as Prometheus reads it: after HTTP and RESP traffic and a wrong token on each
# listener, the text passes `promtool check metrics` (Debian's prometheus package: the
# format and the naming lints) and metrics_check.py (Debian's python3-prometheus-client
# parser): base units, idgen_build_info, process_*, one latency histogram per protocol,
# failed authentications counted, the per-generator families of a server with named
# generators (two snowflake, a segment one on the file backend, a uuid7 one) each
# labelled by generator; and every metric deploy/grafana/idgen.json queries is one this
# output holds.
source "$(dirname "$0")/server_common.bash"
for tool in promtool redis-cli curl /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import prometheus_client' ||
  { echo "FAIL: python3-prometheus-client not installed" >&2; exit 1; }

token=metrics-test-token-0123456789
printf '%s\n' "$token" >"$WORK/token"
cat >"$WORK/generators.yaml" <<'EOF'
generators:
  events: {kind: snowflake, layout: js53, namespace: metrics-events}
  orders: {kind: segment, step: 100, max_step: 100}
  tokens: {kind: uuid7}
EOF
start_server metrics --auth-token-file "$WORK/token" --config "$WORK/generators.yaml"
auth=(-H "Authorization: Bearer $token")
# 250 numbers of 'orders' (blocks of 100: three fetched), 2 tokens.
check "GET /v1/ids?name=orders" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "http://$HTTP/v1/ids?name=orders&count=250")"
check "GET /v1/ids?name=tokens" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "http://$HTTP/v1/ids?name=tokens&count=2")"
check "GET /v1/id" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "http://$HTTP/v1/id")"
check "GET /v1/ids" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "http://$HTTP/v1/ids?count=5")"
check "a wrong bearer token" 401 \
  "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong-token-000000000' "http://$HTTP/v1/id")"
rc() { redis-cli --no-auth-warning -h 127.0.0.1 -p "$RESP_PORT" "$@"; }
check_match "a wrong AUTH" 'WRONGPASS' "$(printf 'AUTH wrong-token-000000000\n' | rc 2>&1)"
check_match "RESP ID after AUTH" '^[0-9]+$' "$(printf 'AUTH %s\nID\n' "$token" | rc | tail -n 1)"

curl -sf "${auth[@]}" "http://$HTTP/metrics" >"$WORK/metrics" || fail "GET /metrics"
mkdir -p "$BUILD_DIR/metrics"
cp "$WORK/metrics" "$BUILD_DIR/metrics/server_metrics.txt" # for a reader of a failure
if promtool check metrics <"$WORK/metrics" >"$WORK/promtool" 2>&1 && [[ ! -s $WORK/promtool ]]; then
  say "ok   promtool check metrics: no problem"
else
  fail "promtool check metrics: $(cat "$WORK/promtool")"
fi
version=$("$IDGEN" --version | awk '{print $2}')
if /usr/bin/python3 "$SOURCE_DIR/tests/integration/metrics_check.py" "$WORK/metrics" "$version" \
  "$SOURCE_DIR/deploy/grafana/idgen.json" >"$WORK/check" 2>&1; then
  say "ok   $(tail -n 1 "$WORK/check")"
else
  fail "metrics_check.py: $(cat "$WORK/check")"
fi
finish
