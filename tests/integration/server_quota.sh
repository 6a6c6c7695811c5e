#!/usr/bin/env bash
# server_quota.sh: the tokens' quotas (tokens.NAME.rate and burst) on a real server: over
# HTTP and RESP a token over its quota gets 429 + Retry-After or -BUSY and no ID is made,
# one bucket for every connection of a token, a request over the burst is refused for
# good (400 over_burst, -ERR over_burst), the per-token metrics; a quota under load
# (team-f hammers above its rate while team-b is measured: figures printed, only bounds
# asserted); and 200 SIGHUPs keeping each bucket and at most threads + 1 token sets.
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts http resp load reload -- "${@:2}"
command -v redis-benchmark >/dev/null || { fail "redis-benchmark is missing"; finish; }

Q=tok-team-q-0123456789 F=tok-team-f-0123456789 B=tok-team-b-0123456789
printf '%s\n' "$Q" >"$WORK/q.token"
printf '%s\n' "$F" >"$WORK/f.token"
printf '%s\n' "$B" >"$WORK/b.token"
# team-q: 1 ID/s, 1000 at once: emptied, it takes 100 s to refill the 100 IDs the
# checks ask.
# team-f: 100/s (burst: one second's worth). team-b: no quota.
cat >"$WORK/idgen.yaml" <<YAML
generators:
  orders: {kind: segment, step: 1000}
tokens:
  team-q: {file: $WORK/q.token, rate: 1, burst: 1000}
  team-f: {file: $WORK/f.token, rate: 100}
  team-b: {file: $WORK/b.token}
YAML
# http TOKEN PATH: the status code; the body in $WORK/body, the headers in $WORK/head
http() { curl -s -o "$WORK/body" -D "$WORK/head" -w '%{http_code}' -H "Authorization: Bearer $1" "http://$HTTP$2"; }
# resp TOKEN COMMAND...: the reply's first line
resp() {
  local tok=$1
  shift
  redis-cli -p "$RESP_PORT" --no-auth-warning -a "$tok" "$@" 2>&1 | head -1
}
# metric NAME{LABELS}: its value on /metrics (0 when absent)
metric() {
  curl -s -H "Authorization: Bearer $B" "http://$HTTP/metrics" |
    awk -v k="$1" 'index($0, k " ") == 1 { v = $2 } END { print v + 0 }'
}
issued() { metric "idgen_generator_ids_issued_total{generator=\"${1:-default}\"}"; }

start_server quota --config "$WORK/idgen.yaml"

if part http; then
  "$IDGEN" serve --config "$WORK/idgen.yaml" --state-dir "$WORK/print" --print-config >"$WORK/print.out"
  check "print-config: team-q's quota" "rate = 1 burst = 1000" \
    "$(sed -n '/^\[tokens.team-q\]/,/^\[/p' "$WORK/print.out" | grep -E '^(rate|burst) =' | tr '\n' ' ' | sed 's/ $//')"
  check_match "print-config: team-f's default burst" '^burst = 100  # default: one second' \
    "$(sed -n '/^\[tokens.team-f\]/,/^\[/p' "$WORK/print.out" | grep '^burst')"
  check "print-config: team-b, no quota" "rate = none  # no quota" \
    "$(sed -n '/^\[tokens.team-b\]/,/^\[/p' "$WORK/print.out" | grep '^rate')"
  check "http: over the burst is 400" 400 "$(http "$Q" '/v1/ids?count=1001')"
  check_match "http: ... over_burst, saying why" '"code":"over_burst".*more than its burst of 1000' "$(cat "$WORK/body")"
  check "http: the whole burst at once" 200 "$(http "$Q" '/v1/ids?count=1000')"
  before=$(issued)
  check "http: then 429" 429 "$(http "$Q" '/v1/ids?count=1000')"
  check_match "http: ... over_quota" '"code":"over_quota".*quota of 1 IDs/s' "$(cat "$WORK/body")"
  ra=$(tr -d '\r' <"$WORK/head" | awk -F': ' 'tolower($1) == "retry-after" { print $2 }')
  # 1000 IDs at 1/s: whole seconds, rounded up, less what passed since the 200.
  check_match "http: Retry-After in whole seconds (~1000, got $ra)" '^(9[0-9][0-9]|1000)$' "$ra"
  check "http: 100 IDs (100 s of refill) are 429 too" 429 "$(http "$Q" '/v1/ids?count=100')"
  check "http: builtin uuid7s count too" 429 "$(http "$Q" '/v1/uuid7?count=100')"
  check "http: no ID was made" "$before" "$(issued)"
  check "http: range over the burst" 400 "$(http "$Q" '/v1/range?name=orders&count=5000')"
  check "http: team-b has no quota" 200 "$(http "$B" '/v1/ids?count=4096')"
  check "metrics: team-q's quota refusals (1001, 3 x 429, a range)" 5 "$(metric 'idgen_token_quota_total{token="team-q"}')"
  check "metrics: team-q's IDs" 1000 "$(metric 'idgen_token_ids_total{token="team-q"}')"
  check "metrics: the 429 status series (two /v1/ids)" 2 "$(metric 'idgen_http_requests_total{route="/v1/ids",status="429"}')"
  check "metrics: no token's value" 0 "$(curl -s -H "Authorization: Bearer $B" "http://$HTTP/metrics" | grep -c -- "$Q" || true)"
fi

if part resp; then
  # team-q's bucket, emptied over HTTP (or here), is the one every connection draws on.
  http "$Q" '/v1/ids?count=1000' >/dev/null
  before=$(issued)
  before_orders=$(issued orders)
  check_match "resp: over the quota is BUSY" "^BUSY token 'team-q' is over its quota of 1 IDs/s: retry in [0-9]+ s$" "$(resp "$Q" IDS 100)"
  check_match "resp: IDS orders too" '^BUSY ' "$(resp "$Q" IDS orders 100)"
  check_match "resp: UUID7 too" '^BUSY ' "$(resp "$Q" UUID7 100)"
  check_match "resp: over the burst says so" "^ERR over_burst: token 'team-q' asks 1001 IDs at once, more than its burst of 1000" "$(resp "$Q" IDS 1001)"
  check_match "resp: RANGE over the burst" '^ERR over_burst' "$(resp "$Q" RANGE orders 5000)"
  check "resp: no ID was made" "$before" "$(issued)"
  check "resp: no number of orders taken" "$before_orders" "$(issued orders)"
  check_match "resp: team-b has no quota" '^[0-9]+$' "$(resp "$B" ID)"
  check_match "metrics: team-q's refusals over RESP counted" '^[1-9][0-9]*$' "$(metric 'idgen_token_quota_total{token="team-q"}')"
fi

# p50 and p99 (ms) of N RESP IDs of token T on C connections: "p50 p99"
latency() {
  redis-benchmark -p "$RESP_PORT" -a "$1" -c "${3:-2}" -n "$2" --csv ID 2>/dev/null |
    awk -F, '/^"ID"/ { gsub(/"/, ""); print $5, $7 }'
}

if part load; then
  # team-f's hammer: AUTH, then 20000 IDs pipelined (redis-cli --pipe reads every reply,
  # BUSY ones counted as errors), again and again until $WORK/stop.
  { printf '*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n' "${#F}" "$F"
    for ((i = 0; i < 20000; i++)); do printf '*1\r\n$2\r\nID\r\n'; done; } >"$WORK/hammer.resp"
  read -r b50 b99 <<<"$(latency "$B" 20000)"
  ids0=$(metric 'idgen_token_ids_total{token="team-f"}')
  t0=$(date +%s.%N)
  # Two loops, a new connection each round: both server threads take some (one bucket
  # for every connection and thread).
  hammers=()
  for h in 1 2; do
    (while [[ ! -e $WORK/stop ]]; do
      redis-cli -p "$RESP_PORT" --pipe <"$WORK/hammer.resp" >>"$WORK/hammer.$h.out" 2>&1 || true
    done) &
    hammers+=($!)
  done
  sleep 0.5
  read -r d50 d99 <<<"$(latency "$B" 20000)"
  touch "$WORK/stop"
  wait "${hammers[@]}"
  t1=$(date +%s.%N)
  ids=$(($(metric 'idgen_token_ids_total{token="team-f"}') - ids0))
  refused=$(metric 'idgen_token_quota_total{token="team-f"}')
  sent=$(awk '/replies:/ { gsub(/,/, ""); n += $NF } END { print n + 0 }' "$WORK"/hammer.*.out)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  bound=$(awk -v s="$secs" 'BEGIN { printf "%d", 100 * s + 100 + 50 }')
  say "load: team-b RESP ID p50/p99 ms: alone $b50/$b99, while team-f hammers $d50/$d99"
  say "load: team-f sent $sent commands, got $ids IDs in ${secs}s at 100/s (burst 100; at most $bound), $refused refused"
  check "load: team-b measured" 1 "$([[ -n $b50 && -n $d99 ]] && echo 1 || echo 0)"
  check "load: team-f held to its rate (ids $ids <= $bound)" 1 "$((ids <= bound))"
  check "load: team-f was refused (BUSY)" 1 "$((refused > 0))"
fi

if part reload; then
  # A connection authenticated as team-b before 200 reloads, kept open.
  exec 3<>"/dev/tcp/127.0.0.1/$RESP_PORT"
  line() { local l; IFS= read -r -t 10 -u 3 l; printf '%s' "${l%$'\r'}"; }
  printf 'AUTH %s\r\n' "$B" >&3
  check "reload: the kept connection authenticates" "+OK" "$(line)"
  http "$Q" '/v1/ids?count=1000' >/dev/null # emptied (if a part above did not)
  reloads0=$(grep -c 'info tokens_reload' "$SERVER_LOG" || true)
  for i in $(seq 1 200); do
    kill -HUP "$SERVER_PID"
    sleep 0.01
  done
  sleep 0.5
  reloads=$(($(grep -c 'info tokens_reload' "$SERVER_LOG" || true) - reloads0))
  alive=$(metric idgen_token_sets_alive)
  say "reload: $reloads reloads from 200 SIGHUPs; idgen_token_sets_alive $alive"
  check "reload: reloads happened" 1 "$((reloads >= 2))"
  check "reload: at most threads + 1 sets alive (2 threads; $alive)" 1 "$((alive >= 1 && alive <= 3))"
  check "reload: team-q's bucket is still empty" 429 "$(http "$Q" '/v1/ids?count=100')"
  printf 'ID\r\n' >&3
  check_match "reload: the kept connection issues" '^\$[0-9]+$' "$(line)"
  exec 3>&-
  # A new quota by SIGHUP of the token files only: rate and burst come from --config,
  # read at start; `idgen__svc_tokens_reload(svc, cfg)` takes a new one (unit test).
fi

stop_server
finish
