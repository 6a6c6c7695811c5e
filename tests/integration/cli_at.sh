#!/usr/bin/env bash
# IDs from a time (issue 28): `idgen at` for every preset layout and for UUIDv7 and ULID,
# round trips through `idgen decode` against the systems' documented examples, bad input
# (one line, exit 2, nothing on stdout); then GET /v1/bounds on a server with snowflake,
# twitter, uuid7 and segment generators. Parts: cli http.
# Usage: cli_at.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts cli http -- "${@:2}"
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
at() { "$IDGEN" at "$@"; }
# usage_error NAME ARGS...: exit 2, no stdout, one line on stderr starting "idgen at:".
usage_error() {
  local name=$1 rc=0
  shift
  "$IDGEN" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  check "$name" "2 0 1 1" "$rc $(wc -c <"$WORK/out") $(wc -l <"$WORK/err") \
$(grep -c '^idgen at: ' "$WORK/err")"
}

if part cli; then
  # Documented IDs: each lies between the bounds of its own ms, which decode to that ms.
  # layout id time(ms, as its docs give it)
  while read -r layout id iso; do
    first=$(at --layout "$layout" "$iso") last=$(at --layout "$layout" --last "$iso")
    check "$layout $id: first <= id <= last" 1 "$((first <= id && id <= last))"
    check "$layout: first decodes to $iso" "$iso" \
      "$("$IDGEN" decode --layout "$layout" --json "$first" | jq -r .time)"
    check "$layout: last decodes to $iso" "$iso" \
      "$("$IDGEN" decode --layout "$layout" --json "$last" | jq -r .time)"
    check "$layout: first has every field zero" 0 \
      "$("$IDGEN" decode --layout "$layout" --json "$first" | jq '[.fields[]] | add')"
  done <<'KNOWN'
discord 175928847299117063 2016-04-30T11:18:25.796Z
twitter 1541815603606036480 2022-06-28T16:07:40.105Z
sonyflake 282372624892494081 2020-01-01T00:00:00.010Z
snowflake 4198399 2026-01-01T00:00:00.001Z
KNOWN
  # The exact ends, as text.
  check "discord first of 2016-04-30T11:18:25.796Z (Discord's docs: worker 1, increment 7)" \
    175928847298985984 "$(at --layout discord 2016-04-30T11:18:25.796Z)"
  check "discord last" 175928847303180287 "$(at --layout discord --last 1462015105796)"
  check "twitter first of 2022-06-28T16:07:40.105Z (machine 378, sequence 0)" \
    1541815603604488192 "$(at --layout twitter 2022-06-28T16:07:40.105Z)"
  check "twitter: an offset and a fraction past the ms" 1541815603604488192 \
    "$(at --layout twitter 2022-06-28T18:07:40.105999+02:00)"
  # Instagram's media 2384288897814875714, posted 2020-08-26T13:43:27Z (to the second):
  # the first ID of that second is below it, the last ID of its end above it.
  check "instagram: the second of 2384288897814875714 holds it" 1 \
    "$(($(at --layout instagram 2020-08-26T13:43:27Z) <= 2384288897814875714 &&
      2384288897814875714 <= $(at --layout instagram --last 2020-08-26T13:43:27.999Z)))"
  # Sonyflake counts 10 ms: a time inside a unit is that unit's.
  check "sonyflake: .019 is the unit of .010" "$(at --layout sonyflake 2020-01-01T00:00:00.010Z)" \
    "$(at --layout sonyflake 2020-01-01T00:00:00.019Z)"
  # js53 ends at its epoch + 2^41 ms: the last ID of the ms before is 2^53 - 1.
  check "js53: the last ID of its last ms is 2^53 - 1" 9007199254740991 \
    "$(at --layout js53 --last $((1767225600000 + (1 << 41) - 1)))"
  usage_error "js53: its end date is refused" at --layout js53 $((1767225600000 + (1 << 41)))
  # Every preset: a round trip at now-1d, both ends.
  for layout in snowflake twitter discord instagram sonyflake js53; do
    t=$(date -u -d '1 day ago' +%Y-%m-%dT%H:%M:%S.000Z)
    check "$layout: at $t round trips" "$t $t" \
      "$("$IDGEN" decode --layout "$layout" --json "$(at --layout "$layout" "$t")" | jq -r .time) \
$("$IDGEN" decode --layout "$layout" --json "$(at --layout "$layout" --last "$t")" | jq -r .time)"
  done
  # UUIDv7 (RFC 9562's example 017F22E2-79B0-7CC3-98C4-DC0C0C07398F) and ULID (the spec's
  # 01ARZ3NDEKTSV4RRFFQ69G5FAV, time 01ARZ3NDEK).
  check "uuidv7 first of RFC 9562's example's ms" 017f22e2-79b0-7000-8000-000000000000 \
    "$(at --scheme uuidv7 $((0x017F22E279B0)))"
  check "uuidv7 last" 017f22e2-79b0-7fff-bfff-ffffffffffff \
    "$(at --scheme uuidv7 --last 2022-02-22T19:22:22Z)"
  check "uuidv7 bounds decode as v7 of their time" "7 2022-02-22T19:22:22.000Z" \
    "$("$IDGEN" decode --json "$(at --scheme uuidv7 2022-02-22T19:22:22Z)" | jq -r '"\(.version) \(.time)"')"
  check "ulid first of the spec's example" 01ARZ3NDEK0000000000000000 \
    "$(at --scheme ulid 1469922850259)"
  check "ulid last" 01ARZ3NDEKZZZZZZZZZZZZZZZZ "$(at --scheme ulid --last 1469922850259)"
  check "several TIMEs, one line each" 2 "$(at now now-1h | wc -l)"
  { read -r now; read -r day_ago; } < <(at now now-1d)
  check "now-1d is a day before now (one clock read for both)" 86400000 \
    "$(( $("$IDGEN" decode --json "$now" | jq .time_ms) - \
         $("$IDGEN" decode --json "$day_ago" | jq .time_ms) ))"
  # Bad input: one line, exit 2, nothing printed.
  usage_error "before the epoch" at 2025-12-31T23:59:59.999Z
  check_match "before the epoch: the range in the message" \
    "before snowflake's range: 2026-01-01T00:00:00.000Z to 2095-09-07" "$(cat "$WORK/err")"
  usage_error "past the end date" at 2095-09-07T15:47:35.552Z
  check_match "past the end: the range" "is past snowflake's range" "$(cat "$WORK/err")"
  usage_error "twitter before its epoch" at --layout twitter 2010-11-04T01:42:54.656Z
  usage_error "not a time" at yesterday
  usage_error "no offset" at 2026-12-01T00:00:00
  usage_error "bad month" at 2026-13-01
  usage_error "now-1y (no unit y)" at now-1y
  usage_error "no TIME" at
  usage_error "--layout and --scheme" at --layout twitter --scheme ulid now
  usage_error "unknown scheme" at --scheme uuidv4 now
  usage_error "bad layout" at --layout nope now
  usage_error "one bad TIME of two prints nothing" at now 2020-01-01
fi

if part http; then
  cat >"$WORK/gens.yaml" <<YAML
generators:
  default: {kind: snowflake, layout: snowflake}
  tweets:
    kind: snowflake
    layout: twitter
    namespace: $IDGEN_NAMESPACE-tweets
  tokens: {kind: uuid7}
  sessions: {kind: ulid}
  orders: {kind: segment, step: 10}
YAML
  start_server bounds --config "$WORK/gens.yaml"
  U=http://$HTTP
  get() { curl -s -o "$WORK/body" -w '%{http_code}' "$U$1"; }
  check "bounds of 1 December (default)" \
    "200 $(at 2026-12-01) $(at --last 2026-12-01T23:59:59.999Z)" \
    "$(get '/v1/bounds?from=2026-12-01&to=2026-12-01T23:59:59.999Z') $(jq -r '"\(.first) \(.last)"' "$WORK/body")"
  check "bounds under twitter's layout (name=tweets)" \
    "200 1541815603604488192 $(at --layout twitter --last 2022-06-28T16:07:40.105Z)" \
    "$(get '/v1/bounds?name=tweets&from=1656432460105&to=2022-06-28T16:07:40.105Z') $(jq -r '"\(.first) \(.last)"' "$WORK/body")"
  check "an offset, percent-encoded" "200 $(at --layout twitter 2022-06-28T16:07:40.105Z)" \
    "$(get '/v1/bounds?name=tweets&from=2022-06-28T18:07:40.105%2B02:00&to=now') $(jq -r .first "$WORK/body")"
  check "uuid7 generator" "200 017f22e2-79b0-7000-8000-000000000000 017f22e2-79b0-7fff-bfff-ffffffffffff" \
    "$(get '/v1/bounds?name=tokens&from=1645557742000&to=1645557742000') $(jq -r '"\(.first) \(.last)"' "$WORK/body")"
  check "ulid generator" "200 01ARZ3NDEK0000000000000000" \
    "$(get '/v1/bounds?name=sessions&from=1469922850259&to=now') $(jq -r .first "$WORK/body")"
  # A real ID of now-ish lies within the bounds of [now-1m, now+1m].
  id=$(curl -s "$U/v1/id" | jq -r .id)
  get '/v1/bounds?from=now-1m&to=now%2B1m' >/dev/null
  check "an ID just made is inside [now-1m, now+1m]" 1 \
    "$(( $(jq -r .first "$WORK/body") <= id && id <= $(jq -r .last "$WORK/body") ))"
  while read -r name query code; do
    check "$name: $code" "$code" "$(get "/v1/bounds?$query") $(jq -r .error.code "$WORK/body")"
  done <<'BAD'
no-to from=now 400 bad_parameter
no-times name=default 400 bad_parameter
before-epoch from=2025-01-01&to=now 400 bad_parameter
reversed from=now&to=now-1d 400 bad_parameter
not-a-time from=tomorrow&to=now 400 bad_parameter
segment name=orders&from=now&to=now 400 bad_parameter
twice from=now&from=now&to=now 400 bad_parameter
unknown-key from=now&to=now&count=2 400 bad_parameter
unknown-name name=nope&from=now&to=now 404 unknown_generator
BAD
  get '/v1/bounds?from=2025-01-01&to=now' >/dev/null
  check_match "before the epoch: the range in the message" "before snowflake's range: 2026-01-01" \
    "$(jq -r .error.message "$WORK/body")"
  stop_server
fi
finish
