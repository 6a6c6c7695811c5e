# shellcheck shell=bash disable=SC2154 # backend_stop/backend_start come from the caller
# server_segment_common.bash: sourced by tests/integration/server_segment_*.sh. A segment
# generator named 'orders' served by `idgen serve --config` against a real backend, the
# scenarios every backend passes: chaos_client records what HTTP and RESP clients get,
# `idgen check --integers` judges it. The caller sets B (backend) and DSN, defines
# backend_stop and backend_start, and stop_backend (run at exit).
source "$(dirname "${BASH_SOURCE[0]}")/server_common.bash"
source "$(dirname "${BASH_SOURCE[0]}")/history_common.bash"
CLIENT=$BUILD_DIR/chaos_client
[[ -x $CLIENT ]] || { echo "FAIL: $CLIENT not built" >&2; exit 1; }
chmod 755 "$WORK" # PostgreSQL runs as its own user
CLIENT_PIDS=()
stop_backend() { :; }
segment_cleanup() {
  local p
  for p in "${CLIENT_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  stop_backend || true
  cleanup
}
trap segment_cleanup EXIT
now_ms() { date +%s%3N; }

# write_config FILE STEP MAX_STEP: the default generator a uuid7 one (always ready, no
# lease to wait for), 'orders' a segment generator on the backend.
write_config() {
  cat >"$1" <<EOF
generators:
  default: {kind: uuid7}
  orders:
    kind: segment
    backend: $B
    dsn: "$DSN"
    step: $2
    max_step: $3
    retry_ms: 200
EOF
}

# start_segment_server NAME CONFIG [serve options]: launch_server, then waits until
# 'orders' has its first block (/readyz?name=orders).
start_segment_server() {
  local name=$1 config=$2 i
  shift 2
  launch_server "$name" --config "$config" "$@" || return 1
  for i in $(seq 1 200); do
    [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] &&
      return 0
    sleep 0.05
  done
  fail "server $name: 'orders' never became ready"
  cat "$SERVER_LOG" >&2
  return 1
}

# client LABEL http|resp PORT [chaos_client options]: records 'orders' numbers in
# $WORK/LABEL.hist, in the background; sets CLIENT_PID.
client() {
  local label=$1 proto=$2 port=$3
  shift 3
  "$CLIENT" "--$proto" "127.0.0.1:$port" --replica "$label" --name orders \
    --out "$WORK/$label.hist" --timeout-ms 3000 --error-sleep-ms 20 "$@" \
    2>>"$WORK/clients.log" &
  CLIENT_PID=$!
  CLIENT_PIDS+=("$CLIENT_PID")
}

check_histories() { # LABEL...: idgen check --integers over their histories
  local files=() l
  for l in "$@"; do files+=("$WORK/$l.hist"); done
  if "$IDGEN" check --integers "${files[@]}" >"$WORK/check.out" 2>&1; then
    say "ok   idgen check --integers $*: $(grep -o 'IDs: [0-9]*' "$WORK/check.out")"
  else
    fail "idgen check --integers $*: $(tr '\n' ' ' <"$WORK/check.out")"
  fi
}

# 1. Two servers sharing the name hand out disjoint numbers, over HTTP and RESP.
scenario_two_servers() {
  write_config "$WORK/two.yaml" 500 4000
  start_segment_server a "$WORK/two.yaml" || return
  local ah=$HTTP_PORT ar=$RESP_PORT apid=$SERVER_PID
  start_segment_server b "$WORK/two.yaml" || return
  local pids=()
  client a-http http "$ah" --count 15000 --batch 100 --single-every 7; pids+=("$CLIENT_PID")
  client a-resp resp "$ar" --count 15000 --batch 100 --single-every 7; pids+=("$CLIENT_PID")
  client b-http http "$HTTP_PORT" --count 15000 --batch 100 --single-every 7; pids+=("$CLIENT_PID")
  client b-resp resp "$RESP_PORT" --count 15000 --batch 100 --single-every 7; pids+=("$CLIENT_PID")
  local p
  for p in "${pids[@]}"; do wait "$p" || fail "a client failed"; done
  check_histories a-http a-resp b-http b-resp
  local all dup
  all=$(numbers_of "$WORK"/[ab]-*.hist | wc -l)
  dup=$(numbers_of "$WORK"/[ab]-*.hist | sort -n | uniq -d | wc -l)
  check "two servers sharing 'orders': numbers, none twice" "60000 0" "$all $dup"
  stop_server "$apid" || fail "server a did not stop cleanly"
  stop_server || fail "server b did not stop cleanly"
}

# 2. kill -9 of the server mid-block, then a restart on the same ports: no number comes
# back. With one counter (all but mariadb) the restarted server starts above them all.
scenario_kill9() {
  local above=${1:-yes}
  write_config "$WORK/kill.yaml" 50000 50000
  start_segment_server k1 "$WORK/kill.yaml" || return
  local hp=$HTTP_PORT rp=$RESP_PORT
  client k1 http "$hp" --batch 20 --pause-ms 1
  local c1=$CLIENT_PID
  wait_lines "$WORK/k1.hist" 3000 || return
  kill -KILL "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  kill -TERM "$c1"
  wait "$c1" 2>/dev/null || true
  start_segment_server k2 "$WORK/kill.yaml" --http "127.0.0.1:$hp" --resp "127.0.0.1:$rp" ||
    return
  client k2 resp "$rp" --count 3000 --batch 20
  wait "$CLIENT_PID" || fail "the client of the restarted server failed"
  check_histories k1 k2
  local last first
  last=$(max_of "$WORK/k1.hist")
  first=$(min_of "$WORK/k2.hist")
  if [[ $above == yes && $first -le $last ]]; then
    fail "after kill -9: the restarted server starts at $first, the killed one reached $last"
  fi
  say "ok   kill -9 mid-block (last $last), restart on the same ports: from $first, no number twice"
  stop_server || fail "server k2 did not stop cleanly"
}

# 3. The backend stops under load: numbers from the buffer, then a clear refusal (HTTP
# 503 backend_unavailable, RESP error, /readyz?name=orders 503 while /readyz stays 200),
# then numbers again by themselves once it is back.
scenario_outage() {
  write_config "$WORK/outage.yaml" 4000 4000
  start_segment_server o "$WORK/outage.yaml" || return
  local h=$HTTP
  client o-http http "$HTTP_PORT" --batch 10 --pause-ms 4
  local ch=$CLIENT_PID
  client o-resp resp "$RESP_PORT" --batch 10 --pause-ms 4
  local cr=$CLIENT_PID
  wait_lines "$WORK/o-http.hist" 3000 || return
  # From the moment the stop begins: a stopping backend refuses at once (PostgreSQL's
  # fast shutdown ends its sessions first), but its stop returns only after its
  # checkpoint, ~2 s here, when a buffer of two 4000-number blocks is long spent.
  local stopped
  stopped=$(now_ms)
  backend_stop
  wait_lines "$WORK/o-http.hist" 1 ' ERR backend_unavailable' || return
  wait_lines "$WORK/o-resp.hist" 1 ' ERR backend_unavailable' || return
  local served
  served=$(awk -v t="$stopped" '$3 == "ERR" { exit } $1 > t { n++ } END { print n + 0 }' \
    "$WORK/o-http.hist")
  [[ $served -gt 0 ]] || fail "nothing served from the buffer after the backend stopped"
  check "while refusing: /readyz?name=orders" 503 \
    "$(curl -s -o "$WORK/ready" -w '%{http_code}' "http://$h/readyz?name=orders")"
  check_match "its reason" 'backend unavailable' "$(cat "$WORK/ready")"
  check "while refusing: /readyz (the default generator)" 200 \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://$h/readyz")"
  local code
  code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://$h/v1/id?name=orders")
  check "while refusing: GET /v1/id?name=orders" "503 backend_unavailable" \
    "$code $(grep -o 'backend_unavailable' "$WORK/body")"
  check_match "while refusing: RESP ID orders" '^(ERR|TRYAGAIN) backend_unavailable' \
    "$(redis-cli -p "$RESP_PORT" ID orders 2>&1)"
  backend_start
  local f
  for f in o-http o-resp; do
    for _ in $(seq 600); do
      awk '$3 == "ERR" { e = NR } END { exit !(e && NR > e + 10) }' "$WORK/$f.hist" && break
      sleep 0.1
    done
    awk '$3 == "ERR" { e = NR } END { exit !(e && NR > e + 10) }' "$WORK/$f.hist" ||
      fail "$f: no number after the backend came back"
  done
  kill -TERM "$ch" "$cr"
  wait "$ch" "$cr" 2>/dev/null || true
  check_histories o-http o-resp
  curl -s "http://$h/metrics" >"$WORK/metrics"
  check_match "metrics: backend errors counted" \
    'idgen_segment_backend_errors_total\{generator="orders"\} [1-9]' "$(cat "$WORK/metrics")"
  check_match "metrics: refusals counted" \
    'idgen_segment_refused_total\{generator="orders"\} [1-9]' "$(cat "$WORK/metrics")"
  say "ok   backend stopped under load: $served numbers from the buffer, then backend_unavailable, then numbers again"
  stop_server || fail "server o did not stop cleanly"
}

# 4. A bad DSN for this backend: exit 2, one line, nothing started.
scenario_bad_config() {
  local saved=$DSN rc=0
  DSN=$1
  write_config "$WORK/bad.yaml" 1000 1000
  DSN=$saved
  "$IDGEN" serve --config "$WORK/bad.yaml" --http 127.0.0.1:0 --resp "" >"$WORK/out" \
    2>"$WORK/err" || rc=$?
  check "bad DSN: exit 2, one line, nothing on stdout" "2 1 0" \
    "$rc $(wc -l <"$WORK/err") $(wc -c <"$WORK/out")"
  check_match "bad DSN: the line names the generator" 'generators.orders' "$(cat "$WORK/err")"
}
