#!/usr/bin/env bash
# server_tokens.sh: per-generator tokens (the config file's tokens: section): every
# permission pair over HTTP and RESP, --auth-token-file beside them, the configuration
# errors, and SIGHUP reading the token files again without dropping a connection.
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts config http resp reload -- "${@:2}"

A=tok-team-a-0123456789 B=tok-team-b-0123456789 C=tok-team-c-0123456789
OLD=tok-single-0123456789
printf '%s\n' "$A" >"$WORK/a.token"
printf '%s\n' "$B" >"$WORK/b.token"
printf '%s\n' "$C" >"$WORK/c.token"
printf '%s\n' "$OLD" >"$WORK/old.token"
"$IDGEN" opaque keygen "$WORK/key"
# team-a: orders and the default generator, and decode; team-b: invoices, no decode;
# team-c: every generator (omitted), no decode.
cat >"$WORK/idgen.yaml" <<YAML
generators:
  orders: {kind: uuid7}
  invoices: {kind: ulid}
tokens:
  team-a: {file: $WORK/a.token, generators: [orders, default], decode: true}
  team-b:
    file: $WORK/b.token
    generators: [invoices]
  team-c: {file: $WORK/c.token, generators: ["*"]}
YAML
req() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
# http TOKEN PATH: the status code ("-" for no Authorization header)
http() {
  if [[ $1 == - ]]; then req "http://$HTTP$2"; else req -H "Authorization: Bearer $1" "http://$HTTP$2"; fi
}
# resp TOKEN COMMAND...: the first word of the reply (an ID is "id")
resp() {
  local tok=$1 out
  shift
  out=$(redis-cli -p "$RESP_PORT" --no-auth-warning ${tok:+-a "$tok"} "$@" 2>&1 | head -1)
  if [[ $out =~ ^[0-9A-Za-z-]{20,}$ ]]; then echo id; else echo "${out%% *}"; fi
}

if part config; then
  # unknown generator, duplicate value, unreadable file, no file: exit 2, one line
  bad() { # NAME YAML-TOKENS-LINES REGEX
    printf 'generators:\n  orders: {kind: uuid7}\ntokens:\n%s\n' "$2" >"$WORK/$1.yaml"
    rc=0
    "$IDGEN" serve --http 127.0.0.1:0 --resp= --state-dir "$WORK/s-$1" \
      --config "$WORK/$1.yaml" 2>"$WORK/$1.log" || rc=$?
    check "config $1: exit 2" 2 "$rc"
    check "config $1: one line" 1 "$(wc -l <"$WORK/$1.log")"
    check_match "config $1: says why" "$3" "$(cat "$WORK/$1.log")"
  }
  bad unknown-gen "  t: {file: $WORK/a.token, generators: [orders, nosuch]}" \
    "tokens\\.t\\.generators: 'nosuch' is not a generator"
  bad duplicate "  t: {file: $WORK/a.token}
  u: {file: $WORK/a.token}" "tokens 't' and 'u' hold the same token"
  bad unreadable "  t: {file: $WORK/missing.token}" "tokens\\.t\\.file $WORK/missing\\.token: No such file"
  bad no-file "  t: {generators: [orders]}" "tokens\\.t: no file"
  printf 'short\n' >"$WORK/short.token"
  bad short "  t: {file: $WORK/short.token}" "tokens\\.t\\.file $WORK/short\\.token: the token has 5 characters"
  bad decode-word "  t: {file: $WORK/a.token, decode: maybe}" "tokens\\.t\\.decode: 'maybe' is not true or false"
  bad unknown-key "  t: {file: $WORK/a.token, speed: 5}" "tokens\\.t\\.speed: unknown option"
  # the same value as --auth-token-file's
  printf '%s\n' "$OLD" >"$WORK/old-copy.token"
  printf 'tokens:\n  t: {file: %s}\n' "$WORK/old-copy.token" >"$WORK/duplicate-old.yaml"
  rc=0
  "$IDGEN" serve --http 127.0.0.1:0 --resp= --state-dir "$WORK/s-dupold" --auth-token-file "$WORK/old.token" \
    --config "$WORK/duplicate-old.yaml" 2>"$WORK/dupold.log" || rc=$?
  check "config: a token equal to --auth-token-file's: exit 2" 2 "$rc"
  check_match "config: ... says so" "tokens 'auth-token-file' and 't' hold the same token" "$(cat "$WORK/dupold.log")"
fi

# Which token covers which generator, as the config file above says: both protocols'
# parts check every pair.
GRANTS=("$A orders yes" "$A invoices no" "$A default yes"
  "$B orders no" "$B invoices yes" "$B default no"
  "$C orders yes" "$C invoices yes" "$C default yes"
  "$OLD orders yes" "$OLD invoices yes" "$OLD default yes")

if part http || part resp; then
  start_server tokens --config "$WORK/idgen.yaml" --auth-token-file "$WORK/old.token" \
    --opaque-key-file "$WORK/key"
fi

if part http; then
  # token x generator: 200 where covered, 403 where not
  for row in "${GRANTS[@]}"; do
    read -r tok gen covered <<<"$row"
    if [[ $covered == yes ]]; then want=200; else want=403; fi
    check "http ${tok:4:6} /v1/id?name=$gen" "$want" "$(http "$tok" "/v1/id?name=$gen")"
    check "http ${tok:4:6} /v1/ids?name=$gen" "$want" "$(http "$tok" "/v1/ids?name=$gen&count=3")"
  done
  check "http team-b: the default generator (no name)" 403 "$(http "$B" /v1/id)"
  check_match "http 403 body" '^\{"error":\{"code":"forbidden","message":"token .team-b. may not use generator .default."\}\}$' "$(cat "$WORK/body")"
  check "http team-b: a builtin uuid7" 200 "$(http "$B" /v1/uuid7)"
  check "http team-b: /v1/info" 200 "$(http "$B" /v1/info)"
  # opaque decode: the decode flag and the generator both
  http "$OLD" "/v1/id?format=opaque-decimal" >/dev/null
  o=$(sed -n 's/.*"id":"\([0-9]*\)".*/\1/p' "$WORK/body")
  for row in "$A 200" "$B 403" "$C 403" "$OLD 200"; do
    read -r tok want <<<"$row"
    check "http ${tok:4:6} decode ?opaque=1" "$want" "$(http "$tok" "/v1/decode/$o?opaque=1")"
  done
  # no token, a wrong one, one with a byte more, one with a byte less: 401
  check "http no token" 401 "$(http - /v1/id?name=orders)"
  check "http wrong token" 401 "$(http tok-wrong-0123456789xx /v1/id?name=orders)"
  check "http a token with a byte more" 401 "$(http "${A}x" /v1/id?name=orders)"
  check "http a token with a byte less" 401 "$(http "${A%?}" /v1/id?name=orders)"
fi

if part resp; then
  for row in "${GRANTS[@]}"; do
    read -r tok gen covered <<<"$row"
    if [[ $covered == yes ]]; then want=id; else want=NOPERM; fi
    if [[ $gen == default ]]; then args=(ID); else args=(ID "$gen"); fi
    got=$(resp "$tok" "${args[@]}")
    [[ $gen == default && $got =~ ^[0-9]+$ ]] && got=id
    check "resp ${tok:4:6} ID $gen" "$want" "$got"
    got=$(resp "$tok" IDS "$gen" 2)
    [[ $got =~ ^[0-9]+$ ]] && got=id
    check "resp ${tok:4:6} IDS $gen 2" "$want" "$got"
  done
  check "resp team-b: ID (the default)" NOPERM "$(resp "$B" ID)"
  check_match "resp NOPERM line" "^NOPERM token 'team-b' may not use generator 'orders'$" \
    "$(redis-cli -p "$RESP_PORT" --no-auth-warning -a "$B" ID orders)"
  check "resp no token" NOAUTH "$(resp '' ID orders)"
  check "resp wrong token" AUTH "$(resp tok-wrong-0123456789xx ID orders)"
  check "resp a token with a byte more" AUTH "$(resp "${A}x" ID orders)"
fi

if part http || part resp; then
  stop_server
fi

if part reload; then
  start_server reload --config "$WORK/idgen.yaml" --auth-token-file "$WORK/old.token"
  # A connection that authenticated as team-b before the reload, kept open.
  exec 3<>"/dev/tcp/127.0.0.1/$RESP_PORT"
  line() { local l; IFS= read -r -t 10 -u "${1:-3}" l; printf '%s' "${l%$'\r'}"; }
  printf 'AUTH %s\r\nPING\r\n' "$B" >&3
  check "reload: the kept connection authenticates" "+OK" "$(line)"
  check "reload: ... and answers" "+PONG" "$(line)"
  # team-a's connection, whose token stays the same
  exec 4<>"/dev/tcp/127.0.0.1/$RESP_PORT"
  printf 'AUTH %s\r\n' "$A" >&4
  IFS= read -r -t 10 l <&4
  B2=tok-team-b-new-0123456789
  printf '%s\n' "$B2" >"$WORK/b.token"
  kill -HUP "$SERVER_PID"
  for i in $(seq 1 100); do grep -q 'tokens_reload' "$SERVER_LOG" && break; sleep 0.05; done
  # The file read again: the tokens come from it (its reload applied, nothing changed)
  check_match "reload: logged" 'info tokens_reload .*4 token\(s\) loaded from the new configuration' "$(grep tokens_reload "$SERVER_LOG")"
  check "reload: the old team-b value is refused" 401 "$(http "$B" /v1/id?name=invoices)"
  check "reload: the new one is taken" 200 "$(http "$B2" /v1/id?name=invoices)"
  check "reload: ... over RESP" id "$(resp "$B2" ID invoices)"
  check "reload: the old one over RESP" AUTH "$(resp "$B" ID invoices)"
  check "reload: ... and keeps its generators" NOPERM "$(resp "$B2" ID orders)"
  printf 'ID invoices\r\n' >&3
  check_match "reload: the kept connection is asked to AUTH again" '^-NOAUTH .*reload' "$(line)"
  printf 'AUTH %s\r\nID invoices\r\n' "$B2" >&3
  check "reload: the kept connection is still open, AUTH with the new token" "+OK" "$(line)"
  check_match "reload: ... then issues" '^\$26$' "$(line)"
  line >/dev/null
  printf 'ID orders\r\n' >&4
  check_match "reload: team-a's connection, token unchanged, goes on" '^\$36$' "$(line 4)"
  exec 3>&- 4>&-
  # A file that fails to read: the set in force stays, one line says why
  rm "$WORK/a.token"
  kill -HUP "$SERVER_PID"
  for i in $(seq 1 100); do grep -q 'warn tokens_reload' "$SERVER_LOG" && break; sleep 0.05; done
  check_match "reload: a missing file is logged" "warn tokens_reload kept the tokens in force: tokens\\.team-a\\.file $WORK/a\\.token: No such file" \
    "$(grep 'warn tokens_reload' "$SERVER_LOG")"
  check "reload: ... and team-a still works" 200 "$(http "$A" /v1/id?name=orders)"
  check "reload: ... and team-b's new value too" 200 "$(http "$B2" /v1/id?name=invoices)"
  printf '%s\n' "$A" >"$WORK/a.token"
  stop_server
fi
finish
