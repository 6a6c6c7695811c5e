#!/usr/bin/env bash
# clients_cli.sh: redis-cli (RESP2 and -3), redis-cli --pipe, redis-benchmark and curl
# against idgen serve, with their default options.
source "$(dirname "$0")/server_common.bash"
for tool in redis-cli redis-benchmark curl; do
  command -v $tool >/dev/null || { fail "$tool missing (scripts/deps.sh test)"; finish; }
done
say "$(redis-cli --version), $(redis-benchmark --version), $(curl --version | head -1)"
start_client_servers
rc() { redis-cli -h 127.0.0.1 -p "$OPEN_RESP" "$@"; }
# increasing FILE: every line a decimal ID, each above the last (sort -n compares digit
# strings exactly; awk would round them to doubles)
increasing() { ! grep -qv '^[0-9]\+$' "$1" && sort -c -u -n "$1"; }

check "PING" PONG "$(rc PING)"
id=$(rc ID)
check_match "ID" '^[0-9]+$' "$id"
rc IDS 100 >"$WORK/ids"
check "IDS 100: 100 distinct" 100 "$(sort -u "$WORK/ids" | wc -l)"
increasing "$WORK/ids" && say "ok   IDS 100: increasing" || fail "IDS 100 not increasing"
rc -3 IDS 100 >"$WORK/ids3"
check "RESP3 (-3): IDS 100 as 100 strings" 100 "$(grep -c '^[0-9]\+$' "$WORK/ids3")"
check "DECODE = idgen decode --json" "$("$IDGEN" decode --json "$id")" "$(rc DECODE "$id")"

# --pipe: raw protocol in one stream; redis-cli ends it with an ECHO of its own.
for _ in $(seq 1000); do printf '*1\r\n$2\r\nID\r\n'; done >"$WORK/pipe"
out=$(rc --pipe <"$WORK/pipe" 2>&1)
check_match "--pipe: 1000 replies, no error" 'errors: 0, replies: 1000' "$out"
# Pipelined from stdin, answered in order.
out=$(printf 'PING\nIDS 2\nPING x\n' | rc | tr '\n' ' ')
check_match "stdin pipeline in order" '^PONG [0-9]+ [0-9]+ x $' "$out"

# Eight connections at once: 8 x IDS 500, 4000 distinct IDs.
pids=()
for i in $(seq 8); do rc IDS 500 >"$WORK/pool.$i" & pids+=($!); done
wait "${pids[@]}"
check "8 connections: 4000 distinct IDs" 4000 "$(cat "$WORK"/pool.* | sort -u | wc -l)"

# redis-benchmark: 8 clients, then 8 clients pipelining 16 deep; every ID issued counted.
before=$(rc INFO generator | tr -d '\r' | sed -n 's/^ids_issued://p')
out=$(redis-benchmark -h 127.0.0.1 -p "$OPEN_RESP" -c 8 -n 4000 -q ID 2>&1)
check_match "redis-benchmark -c 8 ID" 'ID: [0-9.]+ requests per second' "$out"
out=$(redis-benchmark -h 127.0.0.1 -p "$OPEN_RESP" -c 8 -n 4000 -P 16 -q IDS 10 2>&1)
check_match "redis-benchmark -c 8 -P 16 IDS 10" 'IDS 10: [0-9.]+ requests per second' "$out"
after=$(rc INFO generator | tr -d '\r' | sed -n 's/^ids_issued://p')
check "redis-benchmark got every ID (4000 + 40000)" 44000 "$((after - before))"

# AUTH with the token.
ra() { redis-cli -h 127.0.0.1 -p "$AUTH_RESP" --no-auth-warning "$@"; }
check "no token: NOAUTH" "NOAUTH Authentication required." "$(ra ID)"
check_match "-a token: ID" '^[0-9]+$' "$(ra -a "$CLIENT_TOKEN" ID)"
check_match "-3 -a token (HELLO 3 AUTH)" '^[0-9]+$' "$(ra -3 -a "$CLIENT_TOKEN" ID)"
check_match "-a wrong" 'WRONGPASS' "$(ra -a wrong-token-xyz ID 2>&1)"
out=$(redis-benchmark -h 127.0.0.1 -p "$AUTH_RESP" -a "$CLIENT_TOKEN" -c 8 -n 800 -q ID 2>&1)
check_match "redis-benchmark -a token" 'ID: [0-9.]+ requests per second' "$out"

# curl over HTTP: the ID is a JSON string; decoding it gives it back digit for digit.
id=$(curl -s "http://$OPEN_HTTP/v1/id" | sed 's/.*"id":"\([0-9]*\)".*/\1/')
check_match "curl /v1/id: a string" '^[0-9]{18,19}$' "$id"
check_match "curl /v1/decode/{id}: the same ID" "^\\{\"id\":\"$id\"" \
  "$(curl -s "http://$OPEN_HTTP/v1/decode/$id")"
check "curl with the token" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $CLIENT_TOKEN" "http://$AUTH_HTTP/v1/id")"
stop_client_servers || fail "a server did not stop cleanly"
finish
