#!/usr/bin/env bash
# Named generators in one `idgen serve` (--config): a snowflake default, a js53 one, a
# segment one on the file backend, uuid7 and ulid ones, over HTTP (curl) and RESP
# (redis-cli): names, forms that fit or not, the RESP grammar with the old forms, readiness
# by name, /v1/info, INFO, --print-config; bad files (exit 2, one line naming the line and
# the key); then the segment scenarios on the file backend: two servers sharing a name,
# kill -9 and a restart, the file gone and back under load.
# Usage: server_named.sh /path/to/idgen
source "$(dirname "$0")/server_segment_common.bash"
for tool in redis-cli curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done

cat >"$WORK/generators.yaml" <<EOF
generators:
  default:
    kind: snowflake
    layout: snowflake
  events:
    kind: snowflake
    layout: js53
    namespace: $IDGEN_NAMESPACE-events
    seq_reset_threshold: 255
  orders:
    kind: segment
    step: 100
    max_step: 400
  tokens: {kind: uuid7}
  sessions: {kind: ulid}
EOF
start_server named --config "$WORK/generators.yaml"
U=http://$HTTP
for _ in $(seq 100); do # events' worker file is new: its keeper waits past now + ahead
  [[ $(http_code "$U/readyz?name=events") == 200 ]] && break
  sleep 0.1
done
get() { curl -s -o "$WORK/body" -w '%{http_code}' "$U$1"; }
body() { cat "$WORK/body"; }

# --- HTTP ---------------------------------------------------------------------------------
check "GET /v1/id?name=orders" '200 {"id":"1"}' "$(get '/v1/id?name=orders') $(body)"
check "GET /v1/ids?name=orders&count=3" '200 {"ids":["2","3","4"]}' \
  "$(get '/v1/ids?name=orders&count=3') $(body)"
check "GET /v1/id?name=orders&format=hex" '200 {"id":"0000000000000005"}' \
  "$(get '/v1/id?name=orders&format=hex') $(body)"
check_match "GET /v1/id (the default)" '^200 \{"id":"[0-9]{18,19}"\}$' "$(get /v1/id) $(body)"
check_match "GET /v1/id?name=default&format=friendly" '^200 \{"id":"[0-9]+-0-[0-9]+"\}$' \
  "$(get '/v1/id?name=default&format=friendly') $(body)"
check_match "GET /v1/id?name=events (js53: below 2^53)" '^200 \{"id":"[0-9]{1,16}"\}$' \
  "$(get '/v1/id?name=events') $(body)"
events_id=$(body | jq -r .id)
check "decode with events' layout" js53 "$(curl -s "$U/v1/decode/$events_id?name=events" | jq -r .layout)"
check_match "GET /v1/id?name=tokens: a UUIDv7" '^200 \{"id":"[0-9a-f]{8}-[0-9a-f]{4}-7' \
  "$(get '/v1/id?name=tokens') $(body)"
check "GET /v1/ids?name=sessions&count=2: two ULIDs" "200 2 26" \
  "$(get '/v1/ids?name=sessions&count=2') $(body | jq '.ids | length') $(body | jq -r '.ids[0] | length')"
check "unknown name: 404 unknown_generator" "404 unknown_generator" \
  "$(get '/v1/id?name=nope') $(body | jq -r .error.code)"
check "a format for a text kind: 400" "400 bad_format" \
  "$(get '/v1/id?name=tokens&format=hex') $(body | jq -r .error.code)"
check "friendly for a segment generator: 400" "400 bad_format" \
  "$(get '/v1/id?name=orders&format=friendly') $(body | jq -r .error.code)"
check "/readyz?name=orders" 200 "$(get '/readyz?name=orders')"
check "/readyz lists the generators" "default events orders tokens sessions" \
  "$(curl -s "$U/readyz" | jq -r '.generators | keys_unsorted | join(" ")')"
info=$(curl -s "$U/v1/info")
check "/v1/info: generators and kinds" "default:snowflake events:snowflake orders:segment tokens:uuid7 sessions:ulid" \
  "$(jq -r '[.generators | to_entries[] | "\(.key):\(.value.kind)"] | join(" ")' <<<"$info")"
check "/v1/info: orders' numbers issued" 5 "$(jq .generators.orders.issued <<<"$info")"
check "/v1/info: events' threshold" 255 "$(jq .generators.events.seq_reset_threshold <<<"$info")"
check "/v1/info: two worker IDs (one per snowflake generator)" "2" \
  "$(jq '[.generators.default.worker_id, .generators.events.worker_id] | unique | length' <<<"$info")"

# --- RESP: the grammar, old and new -------------------------------------------------------
rc() { redis-cli -p "$RESP_PORT" "$@" 2>&1; }
check "ID orders" 6 "$(rc ID orders)"
check "ID orders hex" 0000000000000007 "$(rc ID orders hex)"
check "IDS orders 3" "$(printf '8\n9\n10')" "$(rc IDS orders 3)"
check "IDS orders 2 base62" "$(printf '0000000000B\n0000000000C')" "$(rc IDS orders 2 base62)"
check_match "ID (the default, as before)" '^[0-9]{18,19}$' "$(rc ID)"
check_match "ID base62 (a form, as before)" '^[0-9A-Za-z]{11}$' "$(rc ID base62)"
check_match "IDS 2 hex (count then form, as before)" '^[0-9a-f]{16}'$'\n''[0-9a-f]{16}$' "$(rc IDS 2 hex)"
check_match "ID default friendly" '^[0-9]+-0-[0-9]+$' "$(rc ID default friendly)"
check_match "ID tokens: a UUIDv7" '^[0-9a-f]{8}-[0-9a-f]{4}-7' "$(rc ID tokens)"
check "IDS sessions 3: three ULIDs" 3 "$(rc IDS sessions 3 | grep -cE '^[0-9A-Z]{26}$')"
check_match "ID nope" "^ERR unknown generator 'nope'" "$(rc ID nope)"
check_match "IDS nope 2" "^ERR unknown generator 'nope'" "$(rc IDS nope 2)"
check_match "IDS orders (no count)" '^ERR wrong number of arguments|^ERR value is not an integer' "$(rc IDS orders)"
check_match "ID tokens hex" '^ERR .*text' "$(rc ID tokens hex)"
check_match "ID orders friendly" '^ERR friendly needs a snowflake layout' "$(rc ID orders friendly)"
check_match "IDS orders 0" '^ERR count must be from 1' "$(rc IDS orders 0)"
check_match "ID orders hex extra" '^ERR wrong number of arguments' "$(rc ID orders hex extra)"
rinfo=$(rc INFO)
check_match "INFO: # Generators" '# Generators' "$rinfo"
check_match "INFO: a line for orders" 'gen_orders:kind=segment,ready=1,issued=1[0-9],backend=file' "$rinfo"
check_match "INFO: a line for events" 'gen_events:kind=snowflake,ready=1,.*layout=js53' "$rinfo"

# --- --print-config -----------------------------------------------------------------------
out=$("$IDGEN" serve --config "$WORK/generators.yaml" --layout twitter --print-config)
check_match "--print-config: the flag wins over the file" 'layout = "twitter"  # flag' "$out"
check_match "--print-config: orders' section" '\[generators.orders\]  # file:10' "$out"
check_match "--print-config: orders' step from the file" 'step = 100  # file:12' "$out"
check_match "--print-config: events' namespace" "namespace = \"$IDGEN_NAMESPACE-events\"  # file:8" "$out"
stop_server || fail "the server did not stop cleanly"

# --- Bad files: exit 2, one line naming the line and the key -------------------------------
bad() { # NAME WANT-REGEX YAML
  printf '%s\n' "$3" >"$WORK/bad.yaml"
  local rc=0
  "$IDGEN" serve --config "$WORK/bad.yaml" --http 127.0.0.1:0 --resp 127.0.0.1:0 \
    --state-dir "$WORK/bad-state" >"$WORK/out" 2>"$WORK/err" || rc=$?
  check "bad file, $1: exit 2, one line" "2 1" "$rc $(wc -l <"$WORK/err")"
  check_match "bad file, $1: the message" "$2" "$(cat "$WORK/err")"
}
bad "step 0" 'bad.yaml:4: generators.orders.step: .0. is not a number' \
  $'generators:\n  orders:\n    kind: segment\n    step: 0'
bad "an unknown kind" 'bad.yaml:2: generators.o.kind: .segmnt. is not a kind' \
  $'generators:\n  o: {kind: segmnt}'
bad "an option of another kind" 'bad.yaml:3: generators.o.layout: not an option of a segment generator' \
  $'generators:\n  o:\n    layout: js53\n    kind: segment'
bad "a format's name" 'bad.yaml:2: generators.hex: not a generator name' $'generators:\n  hex: {kind: uuid7}'
bad "YAML syntax" 'bad.yaml:3:1: YAML: ' $'generators:\n  a: {kind: uuid7'
bad "a bad layout" "bad.yaml:2: generators.e.layout 'js54'" $'generators:\n  e: {kind: snowflake, layout: js54}'

# --- The file backend through the server ---------------------------------------------------
B=file
DSN=$WORK/shared/
mkdir -p "$DSN"
"$IDGEN" segment init --backend file --dsn "$DSN" orders >/dev/null || fail "segment init"
backend_stop() { mv "$DSN/segment-orders" "$WORK/segment-orders.away"; }
backend_start() { mv "$WORK/segment-orders.away" "$DSN/segment-orders"; }
scenario_two_servers
scenario_kill9
scenario_outage
finish
