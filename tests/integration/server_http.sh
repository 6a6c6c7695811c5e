#!/usr/bin/env bash
# server_http.sh: every HTTP route and error of `idgen serve`, with curl, keep-alive,
# bearer token, flags, environment and --print-config.
source "$(dirname "$0")/server_common.bash"

# --- configuration surface ---
check "--help exits 0" 0 "$("$IDGEN" serve --help >/dev/null; echo $?)"
out=$("$IDGEN" serve --print-config)
check_match "--print-config shows defaults" 'http = "127.0.0.1:8080"  # default' "$out"
out=$(IDGEN_MAX_COUNT=99 "$IDGEN" serve --print-config --resp=)
check_match "env var reaches config" 'max-count = 99  # env' "$out"
check_match "empty --resp disables" 'resp = ""  # flag' "$out"
rc=0; err=$("$IDGEN" serve --max-count 0 2>&1 >/dev/null) || rc=$?
check "bad flag exits 2" 2 "$rc"
check_match "bad flag: one line" '^idgen serve: --max-count' "$err"
rc=0; IDGEN_THREADS=abc "$IDGEN" serve --print-config >/dev/null 2>&1 || rc=$?
check "bad env exits 2" 2 "$rc"

start_server http
U=http://$HTTP
# curl_code URL [args]: prints "STATUS BODY"
req() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }

code=$(req "$U/v1/id"); body=$(cat "$WORK/body")
check "GET /v1/id 200" 200 "$code"
check_match "/v1/id body is a string ID" '^\{"id":"[0-9]+"\}$' "$body"

code=$(req "$U/v1/ids?count=5"); body=$(cat "$WORK/body")
check "GET /v1/ids?count=5" 200 "$code"
check "five IDs" 5 "$(grep -o '"[0-9]*"' "$WORK/body" | sort -u | wc -l)"

code=$(req "$U/v1/ids?count=4096")
check "count=4096 (the default maximum)" 200 "$code"
check "4096 distinct IDs" 4096 "$(grep -o '"[0-9]*"' "$WORK/body" | sort -u | wc -l)"
code=$(req "$U/v1/ids"); check "/v1/ids without count is one ID" 200 "$code"

for bad in 0 -1 1000000000000 abc 4097 "" 1.5 0x10; do
  code=$(req "$U/v1/ids?count=$bad"); body=$(cat "$WORK/body")
  check "count=$bad -> 400" 400 "$code"
  check_match "count=$bad -> bad_count" '"code":"bad_count"' "$body"
done
code=$(req "$U/v1/ids?count=2&count=3"); check "count twice -> 400" 400 "$code"

for f in decimal base62 base32 hex friendly; do
  code=$(req "$U/v1/id?format=$f"); body=$(cat "$WORK/body")
  check "format=$f" 200 "$code"
  check_match "format=$f body" '^\{"id":"[^"]+"\}$' "$body"
  code=$(req "$U/v1/ids?count=3&format=$f"); check "ids format=$f" 200 "$code"
done
code=$(req "$U/v1/id?format=octal"); body=$(cat "$WORK/body")
check "format=octal -> 400" 400 "$code"
check_match "bad_format code" '"code":"bad_format"' "$body"
code=$(req "$U/v1/id?colour=red"); body=$(cat "$WORK/body")
check "unknown parameter -> 400" 400 "$code"
check_match "bad_parameter code" '"code":"bad_parameter"' "$body"
# Each parameter at most once, and only on the routes that take it (api.c's param_defs).
while IFS='|' read -r query message; do
  code=$(req "$U$query"); body=$(cat "$WORK/body")
  check "$query -> 400" 400 "$code"
  check_match "$query -> '$message'" "\"message\":\"$message" "$body"
done <<'EOF2'
/v1/ids?count=2&count=3|count given twice
/v1/id?format=hex&format=hex|format must be one of
/v1/id?name=default&name=default|name given twice
/v1/decode/1?opaque=0&opaque=1|opaque must be 0 or 1, given once
/v1/bounds?from=0&to=1&from=0|from given twice
/v1/bounds?from=0&to=1&to=1|to given twice
/v1/id?count=2|unknown query parameter 'count'
/v1/info?from=0|unknown query parameter 'from'
EOF2

# decode: an ID we were given, in each of its forms
id=$(curl -s "$U/v1/id" | grep -o '[0-9]\+')
code=$(req "$U/v1/decode/$id"); body=$(cat "$WORK/body")
check "decode 200" 200 "$code"
check_match "decode JSON shape" "^\\{\"id\":\"$id\",\"layout\":\"snowflake\",\"time\":\"[0-9T:.-]+Z\",\"time_ms\":[0-9]+,\"fields\":\\{\"worker\":0,\"sequence\":[0-9]+\\}\\}$" "$body"
check "decode JSON equals 'idgen decode --json'" "$("$IDGEN" decode --json "$id")" "$body"
for f in base62 base32 hex; do
  text=$(curl -s "$U/v1/id?format=$f" | sed 's/.*"id":"\([^"]*\)".*/\1/')
  code=$(req "$U/v1/decode/$text"); check "decode accepts $f ($text)" 200 "$code"
done
# Everything `idgen decode` reads, the server reads too, and HTTP, RESP DECODE and the
# CLI print the same bytes: 64-bit IDs in every form, UUIDs of every version (v1, v6 and
# v7 with their time), nil and max, ULIDs (the last one past year 9999).
uuid7=$(curl -s "$U/v1/uuid7" | sed 's/.*"uuid":"\([^"]*\)".*/\1/')
ulid=$(curl -s "$U/v1/ulid" | sed 's/.*"ulid":"\([^"]*\)".*/\1/')
friendly=$(curl -s "$U/v1/id?format=friendly" | sed 's/.*"id":"\([^"]*\)".*/\1/')
for text in "$id" "$friendly" "$uuid7" "$ulid" 6ba7b810-9dad-11d1-80b4-00c04fd430c8 \
  1ef21d2f-1207-6660-8c4f-419efbd44d48 f81d4fae-7dec-41d0-a765-00a0c91e6bf6 \
  00000000-0000-0000-0000-000000000000 FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF \
  01ARZ3NDEKTSV4RRFFQ69G5FAV 7ZZZZZZZZZZZZZZZZZZZZZZZZZ; do
  cli=$("$IDGEN" decode --json "$text")
  code=$(req "$U/v1/decode/$text")
  check "decode $text: 200" 200 "$code"
  check "decode $text: HTTP = idgen decode --json" "$cli" "$(cat "$WORK/body")"
  check "decode $text: RESP = idgen decode --json" "$cli" \
    "$(redis-cli -p "$RESP_PORT" --no-raw DECODE "$text" | sed 's/^"//; s/"$//; s/\\"/"/g')"
done
code=$(req "$U/v1/decode/018f3c2a-7b00-7cde-8f00-123456789abg")
check "a malformed UUID -> 400" 400 "$code"
check_match "a malformed UUID: said so" '"message":"not a UUID: ' "$(cat "$WORK/body")"
check_match "RESP: a malformed ULID" '^ERR invalid ULID: ' \
  "$(redis-cli -p "$RESP_PORT" DECODE 01ARZ3NDEKTSV4RRFFQ69G5FAU)"
for bad in abc 9223372036854775808 -1 "%00" ""; do
  code=$(req "$U/v1/decode/$bad")
  if [[ -z "$bad" ]]; then check "decode/ (empty) -> 404" 404 "$code"; continue; fi
  check "decode/$bad -> 400" 400 "$code"
  check_match "decode/$bad -> bad_id" '"code":"bad_id"' "$(cat "$WORK/body")"
done

code=$(req "$U/v1/info"); body=$(cat "$WORK/body")
check "info 200" 200 "$code"
for key in '"layout":{"name":"snowflake"' '"worker_id":0' '"provider":' '"lease":{"state":"held"' \
           '"hwm":' '"policy":"wait"' '"version":'; do
  check_match "info has $key" "$(printf '%s' "$key" | sed 's/[{}]/\\&/g')" "$body"
done
check "healthz" 200 "$(req "$U/healthz")"
check "readyz" 200 "$(req "$U/readyz")"
code=$(req "$U/metrics"); body=$(cat "$WORK/body")
check "metrics 200" 200 "$code"
for m in 'idgen_ids_issued_total\{kind="snowflake"\} [1-9]' 'idgen_http_requests_total\{route="/v1/ids",status="400"\} [1-9]' \
         'idgen_http_request_duration_seconds_bucket\{le="\+Inf"\}' idgen_sequence_exhausted_waits_total \
         'idgen_clock_back_total\{generator="default",outcome="failed"\}' idgen_cap_waits_total idgen_worker_id \
         idgen_hwm_persisted_timestamp_seconds idgen_last_issued_timestamp_seconds \
         idgen_lease_renewals_total; do
  check_match "metrics has $m" "$m" "$body"
done
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$U/metrics")
check_match "metrics content type" '^text/plain; version=0.0.4' "$ctype"

# UUIDs and ULIDs (404 with a JSON error when the build has no uuid module)
for r in uuid7 uuid4 ulid; do
  code=$(req "$U/v1/$r")
  if [[ $code == 200 ]]; then
    check_match "/v1/$r body" '^\{"(uuid|ulid)":"[0-9A-Za-z-]+"\}$' "$(cat "$WORK/body")"
    code=$(req "$U/v1/$r?count=3"); check "/v1/$r?count=3" 200 "$code"
    code=$(req "$U/v1/$r?count=0"); check "/v1/$r?count=0" 400 "$code"
  else
    check "/v1/$r absent -> 404" 404 "$code"
  fi
done

# errors
code=$(req "$U/nope"); check "unknown path 404" 404 "$code"
check_match "404 JSON error" '^\{"error":\{"code":"not_found","message":"[^"]+"\}\}$' "$(cat "$WORK/body")"
code=$(req -X POST "$U/v1/id"); check "POST 405" 405 "$code"
allow=$(curl -s -o /dev/null -D - -X DELETE "$U/v1/id" | tr -d '\r' | grep -i '^allow:')
check_match "405 has Allow" '^allow: GET, HEAD' "$allow"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "$U/healthz"); check "HEAD 200" 200 "$code"
long=$(head -c 3000 /dev/zero | tr '\0' a)
code=$(req "$U/v1/decode/$long"); check "request line > 2048 -> 414" 414 "$code"
big=$(head -c 9000 /dev/zero | tr '\0' b)
code=$(req -H "X-Big: $big" "$U/v1/id"); check "headers > 8192 -> 431" 431 "$code"
check_match "431 JSON error" '"code":"headers_too_large"' "$(cat "$WORK/body")"
code=$(req --data-binary @<(head -c 4096 /dev/zero) "$U/v1/id"); check "4 KiB body -> 413" 413 "$code"

# keep-alive: several requests on one connection
out=$(curl -sv "$U/v1/id" "$U/v1/ids?count=2" "$U/healthz" 2>&1 >/dev/null)
check_match "keep-alive reuses the connection" 'Re-using existing connection' "$out"
check "one connection for three requests" 1 "$(grep -c 'Connected to' <<<"$out")"

rc=0; stop_server || rc=$?
check "SIGTERM exits 0" 0 "$rc"
check_match "final HWM logged" 'final_hwm' "$(cat "$SERVER_LOG")"

# bearer token: /v1/* and /metrics need it, probes do not
printf 's3cret-token-0123456789\n' >"$WORK/token"
start_server auth --auth-token-file "$WORK/token"
U=http://$HTTP
code=$(req "$U/v1/id"); check "no token -> 401" 401 "$code"
check_match "401 JSON" '"code":"unauthorized"' "$(cat "$WORK/body")"
www=$(curl -s -o /dev/null -D - "$U/v1/id" | tr -d '\r' | grep -i '^www-authenticate:')
check_match "401 has WWW-Authenticate" 'Bearer' "$www"
code=$(req -H "Authorization: Bearer wrong" "$U/v1/id"); check "wrong token -> 401" 401 "$code"
code=$(req -H "Authorization: Bearer s3cret-token-0123456789" "$U/v1/id"); check "right token -> 200" 200 "$code"
code=$(req "$U/metrics"); check "metrics needs the token" 401 "$code"
check "healthz needs none" 200 "$(req "$U/healthz")"
check "readyz needs none" 200 "$(req "$U/readyz")"
rc=0; stop_server || rc=$?
check "SIGTERM exits 0 (auth)" 0 "$rc"

# restart on the same state dir: the lease was released with the final HWM, and the
# next holder of worker 0 issues only above it
start_server again-a --state-dir "$WORK/same-state"
last=$(curl -s "http://$HTTP/v1/ids?count=100" | grep -o '[0-9]\{6,\}' | tail -1)
stop_server || true
check_match "final HWM written and the ID released" 'final_hwm .*worker=0 .*release=ok' "$(cat "$SERVER_LOG")"
start_server again-b --state-dir "$WORK/same-state"
first=$(curl -s "http://$HTTP/v1/id" | grep -o '[0-9]\{6,\}')
check_match "worker 0 again after the release" 'lease state=held worker_id=0' "$(cat "$SERVER_LOG")"
if ((first > last)); then say "ok   first ID after restart ($first) above the last before ($last)"; else fail "restart: $first <= $last"; fi
stop_server || true

# two servers on one state dir get different worker IDs (file provider)
start_server w1 --state-dir "$WORK/shared"
pid1=$SERVER_PID; h1=$HTTP
start_server w2 --state-dir "$WORK/shared"
w1=$(curl -s "http://$h1/v1/info" | grep -o '"worker_id":[0-9]*' | head -1)
w2=$(curl -s "http://$HTTP/v1/info" | grep -o '"worker_id":[0-9]*' | head -1)
check "two holders, two worker IDs" '"worker_id":0 "worker_id":1' "$w1 $w2"
stop_server || true
stop_server "$pid1" || true

# listeners: one port cannot be taken twice; empty --http disables HTTP
start_server one
rc=0; "$IDGEN" serve --http "$HTTP" --resp= --state-dir "$WORK/dup" 2>"$WORK/dup.log" || rc=$?
check "second server on the same port fails" 1 "$rc"
check_match "it says why" 'already in use' "$(cat "$WORK/dup.log")"
stop_server || true

finish
