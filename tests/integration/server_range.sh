#!/usr/bin/env bash
# RANGE (RESP) and /v1/range (HTTP) of a segment generator: ranges, IDS and /v1/ids from
# clients running at once share no number, across a server killed with -9 and started
# again on the same state; a snowflake generator, unknown names and bad counts are
# refused with their errors.
# Usage: server_range.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
command -v redis-cli >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test

printf 'generators:\n  orders: {kind: segment, step: 50, max_step: 400}\n' >"$WORK/g.yaml"
serve() { start_server seg --lease static --worker-id 5 --config "$WORK/g.yaml"; }
serve || exit 1
for i in $(seq 1 100); do
  [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] && break
  sleep 0.05
done

# expand: "first last" lines (RESP replies two lines each) into one number a line.
ranges_of() { awk 'NR % 2 == 1 {f = $1} NR % 2 == 0 {for (i = f; i <= $1; i++) print i}'; }

# Two RESP clients and one HTTP client at once, then the server killed and restarted.
round() {
  local tag=$1 k pids=()
  for k in 1 2; do
    for i in $(seq 1 60); do printf 'RANGE orders %d\n' $((i * 7)); done |
      redis-cli -p "$RESP_PORT" | ranges_of >"$WORK/r-$tag-$k" &
    pids+=($!)
  done
  for i in $(seq 1 40); do printf 'IDS orders 9\n'; done | redis-cli -p "$RESP_PORT" >"$WORK/i-$tag" &
  pids+=($!)
  for i in $(seq 1 30); do
    curl -s "http://$HTTP/v1/range?name=orders&count=13"
  done | grep -oE '"(first|last)":"[0-9]+"' | grep -oE '[0-9]+' | ranges_of >"$WORK/h-$tag"
  wait "${pids[@]}"
}
round a
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
serve || exit 1
for i in $(seq 1 100); do
  [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] && break
  sleep 0.05
done
round b
cat "$WORK"/r-* "$WORK"/i-* "$WORK"/h-* >"$WORK/all"
total=$(wc -l <"$WORK/all")
uniq=$(sort -n "$WORK/all" | uniq | wc -l)
check "numbers handed out ($total) are all distinct" "$total" "$uniq"
if [[ $total != "$uniq" ]]; then
  wc -l "$WORK"/r-* "$WORK"/i-* "$WORK"/h-* >&2
  sort -n "$WORK/all" | uniq -d | head -5 >&2
fi
check_match "there were many" '^[0-9]{4,}$' "$total"
# A range is at most count long and at least one; a short one ends a block.
got=$(redis-cli -p "$RESP_PORT" RANGE orders 5 | tr '\n' ' ')
check_match "RANGE orders 5 is two numbers" '^[0-9]+ [0-9]+ $' "$got"
read -r f l <<<"$got"
check_match "RANGE orders 5 holds 1 to 5 numbers" '^[1-5]$' "$((l - f + 1))"

check "RANGE of a snowflake generator" \
  "ERR a snowflake generator has no ranges: its IDs are not contiguous (use IDS)" \
  "$(redis-cli -p "$RESP_PORT" RANGE default 5)"
check "RANGE of an unknown name" "ERR unknown generator 'nope' (INFO lists them)" \
  "$(redis-cli -p "$RESP_PORT" RANGE nope 5)"
check "RANGE count 0" "ERR count must be from 1 to 1073741824" "$(redis-cli -p "$RESP_PORT" RANGE orders 0)"
check "RANGE count too big" "ERR count must be from 1 to 1073741824" \
  "$(redis-cli -p "$RESP_PORT" RANGE orders 1073741825)"
check "RANGE arity" "ERR wrong number of arguments for 'range' command" \
  "$(redis-cli -p "$RESP_PORT" RANGE orders)"
check "/v1/range of a snowflake generator" 400 \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/range?name=default&count=3")"
check "/v1/range without a name" 400 \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/range?count=3")"
check "/v1/range of an unknown name" 404 \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/range?name=nope&count=3")"
check_match "COMMAND DOCS RANGE" 'Returns the first and last' "$(redis-cli -p "$RESP_PORT" COMMAND DOCS range)"
metrics=$(curl -s "http://$HTTP/metrics")
check_match "range commands counted" 'idgen_resp_commands_total\{command="range",outcome="ok"\} [1-9]' "$metrics"
check_match "/v1/range requests counted" 'idgen_http_requests_total\{route="/v1/range",status="200"\} [1-9]' "$metrics"
stop_server || fail "server did not exit 0"
finish
