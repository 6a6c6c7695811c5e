#!/usr/bin/env bash
# server_opaque.sh: opaque IDs from `idgen serve --opaque-key-file`: format=opaque-* on
# /v1/id and /v1/ids, RESP ID/IDS with a form, /v1/decode/{id}?opaque=1 (a token only),
# agreement with `idgen opaque` and tests/tools/ff1_reference.py, and the errors.
source "$(dirname "$0")/server_common.bash"

"$IDGEN" opaque keygen "$WORK/key"
printf 'tok-opaque-0123456789\n' >"$WORK/token"
KEY=$(cat "$WORK/key")
AUTH="Authorization: Bearer tok-opaque-0123456789"
req() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$WORK/body"; }

# --- configuration surface ---
out=$("$IDGEN" serve --print-config --opaque-key-file "$WORK/key")
check_match "--print-config shows the key file" "opaque-key-file = \"$WORK/key\"  # flag" "$out"
out=$(IDGEN_OPAQUE_KEY_FILE="$WORK/key" "$IDGEN" serve --print-config)
check_match "IDGEN_OPAQUE_KEY_FILE" "opaque-key-file = \"$WORK/key\"  # env" "$out"
printf 'not a key\n' >"$WORK/badkey"
for k in badkey missing; do
  rc=0
  "$IDGEN" serve --http 127.0.0.1:0 --resp= --state-dir "$WORK/s-$k" \
    --opaque-key-file "$WORK/$k" 2>"$WORK/$k.log" || rc=$?
  check "bad key file ($k): exit 2 (a configuration mistake)" 2 "$rc"
  check_match "bad key file ($k): says why on one line" \
    "^idgen serve: --opaque-key-file $WORK/$k: [^"$'\n'"]*$" "$(cat "$WORK/$k.log")"
done

# --- key and token ---
start_server opaque --opaque-key-file "$WORK/key" --auth-token-file "$WORK/token"
U=http://$HTTP
for f in decimal base62 base32 hex; do
  code=$(req -H "$AUTH" "$U/v1/id?format=opaque-$f")
  check "format=opaque-$f" 200 "$code"
  text=$(field id)
  back=$("$IDGEN" opaque decode --key-file "$WORK/key" --from "$f" "$text")
  check_match "opaque-$f decodes to an ID of worker 0" '"worker":0' "$("$IDGEN" decode --json "$back")"
done
code=$(req -H "$AUTH" "$U/v1/ids?count=1000&format=opaque-decimal")
check "ids format=opaque-decimal" 200 "$code"
grep -o '"[0-9]*"' "$WORK/body" | tr -d '"' >"$WORK/opaque"
check "1000 distinct opaque IDs" 1000 "$(sort -u "$WORK/opaque" | wc -l)"
# the IDs behind them increase (one batch); the opaque IDs do not
"$IDGEN" opaque decode --key-file "$WORK/key" $(cat "$WORK/opaque") >"$WORK/ids"
check "the IDs behind a batch increase" 0 "$(sort -n -c "$WORK/ids" >/dev/null 2>&1; echo $?)"
check "the opaque IDs do not" 1 "$(sort -n -c "$WORK/opaque" >/dev/null 2>&1; echo $?)"
check "encode gives them back" "$(cat "$WORK/opaque")" \
  "$("$IDGEN" opaque encode --key-file "$WORK/key" $(cat "$WORK/ids"))"

# decode ?opaque=1: the ID behind it and its fields
o=$(head -1 "$WORK/opaque")
id=$(head -1 "$WORK/ids")
code=$(req -H "$AUTH" "$U/v1/decode/$o?opaque=1")
check "decode ?opaque=1" 200 "$code"
plain=$("$IDGEN" decode --json "$id")
check "decode ?opaque=1 body" "{\"opaque\":\"$o\",${plain:1}" "$(cat "$WORK/body")"
check "the default generator's tweak is \"default\" (Python reference)" "$id" \
  "$(/usr/bin/python3 "$SOURCE_DIR/tests/tools/ff1_reference.py" decode "$KEY" default "$o")"
b62=$("$IDGEN" opaque encode --key-file "$WORK/key" --format base62 "$id")
code=$(req -H "$AUTH" "$U/v1/decode/$b62?opaque=1")
check "decode ?opaque=1 reads base62" "$o" "$(field opaque)"
code=$(req -H "$AUTH" "$U/v1/decode/$id?opaque=0")
check "decode ?opaque=0 is the plain decode" "$("$IDGEN" decode --json "$id")" "$(cat "$WORK/body")"
for bad in 9223372036854775808 abc 20261130015148441-0-0 -1; do
  code=$(req -H "$AUTH" "$U/v1/decode/$bad?opaque=1")
  check "decode $bad ?opaque=1 -> 400" 400 "$code"
  check_match "decode $bad ?opaque=1 -> bad_id" '"code":"bad_id"' "$(cat "$WORK/body")"
done
for bad in 2 true "" "1&opaque=1"; do
  code=$(req -H "$AUTH" "$U/v1/decode/$o?opaque=$bad")
  check "opaque=$bad -> 400" 400 "$code"
done
check "decode ?opaque=1 without the token -> 401" 401 "$(req "$U/v1/decode/$o?opaque=1")"
code=$(req -H "$AUTH" "$U/v1/id?format=opaque-friendly")
check "opaque-friendly -> 400" 400 "$code"
check_match "opaque-friendly -> bad_format" '"code":"bad_format"' "$(cat "$WORK/body")"
code=$(req -H "$AUTH" "$U/v1/ids?count=2&opaque=1")
check "opaque= only on decode" 400 "$code"

# RESP: ID and IDS with a form
rc() { redis-cli -h 127.0.0.1 -p "$RESP_PORT" --no-auth-warning -a tok-opaque-0123456789 "$@"; }
text=$(rc ID opaque-base62)
check_match "RESP ID opaque-base62" '^[0-9A-Za-z]{11}$' "$text"
check_match "RESP ID opaque-base62 decodes" '^[0-9]+$' \
  "$("$IDGEN" opaque decode --key-file "$WORK/key" --from base62 "$text")"
rc IDS 50 opaque-decimal >"$WORK/resp"
check "RESP IDS 50 opaque-decimal" 50 "$(sort -u "$WORK/resp" | grep -c '^[0-9]\+$')"
check "RESP IDS decode" 50 "$("$IDGEN" opaque decode --key-file "$WORK/key" $(cat "$WORK/resp") | wc -l)"
# opaque, not plain IDs written in decimal: the IDs behind them increase, they do not
"$IDGEN" opaque decode --key-file "$WORK/key" $(cat "$WORK/resp") >"$WORK/resp-ids"
check "RESP IDS: the IDs behind a batch increase" 0 "$(sort -n -c "$WORK/resp-ids" >/dev/null 2>&1; echo $?)"
check "RESP IDS: the opaque IDs do not" 1 "$(sort -n -c "$WORK/resp" >/dev/null 2>&1; echo $?)"
check_match "RESP unknown form" '^ERR unknown format' "$(rc IDS 2 opaque-friendly)"
stop_server || true

# --- a key but no token: opaque IDs are issued, never decoded ---
start_server opaque-notoken --opaque-key-file "$WORK/key"
U=http://$HTTP
check "no token: format=opaque-base62" 200 "$(req "$U/v1/id?format=opaque-base62")"
code=$(req "$U/v1/decode/$o?opaque=1")
check "no token: decode ?opaque=1 -> 403" 403 "$code"
check_match "no token: forbidden, says why" '"code":"forbidden","message":"opaque decode needs --auth-token-file' \
  "$(cat "$WORK/body")"
stop_server || true

# --- a token but no key ---
start_server opaque-nokey --auth-token-file "$WORK/token"
U=http://$HTTP
code=$(req -H "$AUTH" "$U/v1/decode/$o?opaque=1")
check "no key: decode ?opaque=1 -> 404" 404 "$code"
check_match "no key: says why" 'without --opaque-key-file' "$(cat "$WORK/body")"
code=$(req -H "$AUTH" "$U/v1/id?format=opaque-hex")
check "no key: format=opaque-hex -> 400" 400 "$code"
check_match "no key: bad_format" '"code":"bad_format"' "$(cat "$WORK/body")"
check "no key: plain forms still served" 200 "$(req -H "$AUTH" "$U/v1/id?format=hex")"
rc=0; stop_server || rc=$?
check "SIGTERM exits 0" 0 "$rc"
finish
