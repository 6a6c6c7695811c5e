#!/usr/bin/env bash
# libidgen-client against real `idgen serve` processes (tests/tools/client_tool.c):
#   unique   8 threads x 10^6 Snowflake IDs over 3 servers: no ID twice, each worker's
#            IDs rising in each thread (idgen check); 2 threads of ranges of a segment
#            generator: no number twice, rising in each thread (idgen check --integers)
#   kill9    one of 3 servers killed with -9 while refills run: no ID twice
#   down     every server stopped: callers drain, then IDGEN_EUNAVAIL; servers back:
#            served again; no ID twice
#   late     a server paused past the refill timeout, then resumed: the range it
#            answers late is discarded, never handed out
#   age      max_age_ms with a fake clock: no ID asked before the clock passed the bound
#   fork     a forked child never returns an ID its parent buffered
#   bad      bad addresses, options and names: clear errors; an unknown name: the
#            server's error
# Timings are printed, never asserted.
# Usage: client_lib.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts unique kill9 down late age fork bad -- "${@:2}"
TOOL=$BUILD_DIR/client_tool
[[ -x $TOOL ]] || { fail "no $TOOL (build the target client_tool)"; finish; }

# snowflake_servers N: N snowflake servers, worker IDs 1..N; sets ADDRS (host:port,...)
# and PIDS.
snowflake_servers() {
  local i
  ADDRS="" PIDS=()
  for ((i = 1; i <= $1; i++)); do
    start_server "sf$i-$RANDOM" --lease static --worker-id "$i" --threads 1 || return 1
    ADDRS+="${ADDRS:+,}127.0.0.1:$RESP_PORT"
    PIDS+=("$SERVER_PID")
  done
}
stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do stop_server "$pid" || true; done
}
# wait_for_line DIR REGEX: until a file of DIR has a line matching REGEX (20 s at most).
wait_for_line() {
  local i
  for ((i = 0; i < 400; i++)); do
    grep -qE "$2" "$1"/t* 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

if part unique; then
  snowflake_servers 3 || exit 1
  mkdir -p "$WORK/unique"
  start=$(date +%s%N)
  out=$("$TOOL" load "$ADDRS" default 8 1000000 "$WORK/unique") || fail "unique: client_tool"
  took=$((($(date +%s%N) - start) / 1000000))
  say "     8 x 10^6 over 3 servers in $took ms: $out"
  verdict=$("$IDGEN" check "$WORK"/unique/t* | tail -1)
  check "unique: 8 x 10^6 IDs, none twice, each worker's rising per thread" "verdict: PASS" "$verdict"
  check "unique: 8 x 10^6 IDs in all" 8000000 "$(cat "$WORK"/unique/t* | grep -vc ERR)"
  stop_all
  printf 'generators:\n  orders: {kind: segment, step: 1000, max_step: 100000}\n' >"$WORK/seg.yaml"
  start_server seg --lease static --worker-id 9 --config "$WORK/seg.yaml" || exit 1
  mkdir -p "$WORK/ranges"
  out=$("$TOOL" load "127.0.0.1:$RESP_PORT" orders 2 200000 "$WORK/ranges") || fail "ranges: client_tool"
  say "     ranges: $out"
  check "unique: ranges, none twice, rising per thread" "verdict: PASS" \
    "$("$IDGEN" check --integers "$WORK"/ranges/t* | tail -1)"
  stop_server || true
fi

if part kill9; then
  snowflake_servers 3 || exit 1
  mkdir -p "$WORK/kill9"
  STOP_FILE=$WORK/kill9.stop MAX_WAIT_MS=50 "$TOOL" load "$ADDRS" default 4 200000 "$WORK/kill9" \
    >"$WORK/kill9.out" &
  tool=$!
  sleep 0.5
  kill -KILL "${PIDS[1]}"
  sleep 1
  touch "$WORK/kill9.stop"
  wait "$tool" || fail "kill9: client_tool"
  say "     kill9: $(cat "$WORK/kill9.out")"
  check "kill9: no ID twice" "verdict: PASS" "$("$IDGEN" check "$WORK"/kill9/t* | tail -1)"
  check_match "kill9: the killed server was failed over" 'failovers=[1-9]' "$(cat "$WORK/kill9.out")"
  PIDS=("${PIDS[0]}" "${PIDS[2]}")
  stop_all
fi

if part down; then
  snowflake_servers 2 || exit 1
  ports=$ADDRS
  mkdir -p "$WORK/down"
  STOP_FILE=$WORK/down.stop MAX_WAIT_MS=50 "$TOOL" load "$ADDRS" default 2 1000 "$WORK/down" \
    >"$WORK/down.out" &
  tool=$!
  wait_for_line "$WORK/down" ' [0-9]+$' || fail "down: no ID at first"
  for pid in "${PIDS[@]}"; do kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; done
  wait_for_line "$WORK/down" 'ERR IDGEN_EUNAVAIL' || fail "down: no IDGEN_EUNAVAIL with every server down"
  # The same ports again (the client knows them), new processes with the same state.
  PIDS=()
  i=1
  for addr in ${ports//,/ }; do
    port=${addr##*:}
    "$IDGEN" serve --http 127.0.0.1:0 --resp "127.0.0.1:$port" --threads 1 --lease static \
      --worker-id "$i" --state-dir "$WORK/down-$i" 2>"$WORK/down-$i.log" &
    PIDS+=($!) SERVER_PIDS+=($!)
    i=$((i + 1))
  done
  ok=0
  for ((k = 0; k < 400; k++)); do
    if awk '/ERR/ {e = 1} e && / [0-9]+$/ {found = 1} END {exit !found}' "$WORK"/down/t0; then ok=1; break; fi
    sleep 0.05
  done
  check "down: served again once the servers are back" 1 "$ok"
  touch "$WORK/down.stop"
  wait "$tool" || fail "down: client_tool"
  say "     down: $(cat "$WORK/down.out")"
  check "down: no ID twice" "verdict: PASS" "$("$IDGEN" check "$WORK"/down/t* | tail -1)"
  stop_all
fi

if part late; then
  # A hands out 1, 2, ... in ranges of 256: its first range, asked while it is paused,
  # is 1..256; once it is resumed its late reply must be discarded, so the numbers handed
  # out start at 257.
  printf 'generators:\n  orders: {kind: segment, step: 256, max_step: 256}\n' >"$WORK/late.yaml"
  launch_server latea --lease static --worker-id 11 --config "$WORK/late.yaml" --threads 1 || exit 1
  for ((k = 0; k < 200; k++)); do
    [[ $(redis-cli -p "$RESP_PORT" INFO 2>/dev/null | grep -c 'gen_orders:.*ready=1') == 1 ]] && break
    sleep 0.05
  done
  kill -STOP "$SERVER_PID"
  mkdir -p "$WORK/late"
  STOP_FILE=$WORK/late.stop TIMEOUT_MS=200 MAX_WAIT_MS=100 \
    "$TOOL" load "127.0.0.1:$RESP_PORT" orders 1 1000 "$WORK/late" >"$WORK/late.out" &
  tool=$!
  wait_for_line "$WORK/late" 'ERR IDGEN_EUNAVAIL' || fail "late: no IDGEN_EUNAVAIL while paused"
  sleep 0.5 # past the refill's timeout (200 ms)
  kill -CONT "$SERVER_PID"
  wait_for_line "$WORK/late" ' [0-9]+$' || fail "late: not served once resumed"
  touch "$WORK/late.stop"
  wait "$tool" || fail "late: client_tool"
  say "     late: $(cat "$WORK/late.out")"
  check "late: no number of the late reply (1..256) handed out" 0 \
    "$(awk '$3 ~ /^[0-9]+$/ && $3 <= 256' "$WORK"/late/t0 | wc -l)"
  check_match "late: a late reply was discarded" 'late_discarded=[1-9]' "$(cat "$WORK/late.out")"
  check "late: no number twice" "verdict: PASS" "$("$IDGEN" check --integers "$WORK"/late/t0 | tail -1)"
  stop_server || true
fi

if part age; then
  snowflake_servers 1 || exit 1
  out=$("$TOOL" age "$ADDRS" default) || fail "age: an ID older than max_age_ms: $out"
  say "     age: $out"
  stop_all
fi

if part fork; then
  snowflake_servers 1 || exit 1
  mkdir -p "$WORK/fork"
  "$TOOL" fork "$ADDRS" default "$WORK/fork" || fail "fork: client_tool"
  check "fork: the child took IDs" 2000 "$(grep -cv ERR "$WORK/fork/child")"
  check "fork: none of the parent's in the child" "verdict: PASS" \
    "$("$IDGEN" check "$WORK/fork/child" "$WORK/fork/parent" | tail -1)"
  stop_all
fi

if part bad; then
  printf 'generators:\n  orders: {kind: segment}\n  items: {kind: segment}\n  tokens: {kind: uuid7}\n' >"$WORK/bad.yaml"
  start_server bad --lease static --worker-id 13 --config "$WORK/bad.yaml" || exit 1
  out=$("$TOOL" bad "127.0.0.1:$RESP_PORT" orders)
  for want in "empty: IDGEN_EINVAL servers: no server given" \
    "no port: IDGEN_EINVAL bad server address '127.0.0.1' (want host:port)" \
    "port 0: IDGEN_EINVAL bad port in '127.0.0.1:0'" "port 65536: IDGEN_EINVAL" \
    "port text: IDGEN_EINVAL" "trailing comma: IDGEN_EINVAL" "no host: IDGEN_EINVAL" \
    "max_wait -1: IDGEN_EINVAL max_wait_ms" "min_batch 0: IDGEN_EINVAL" "timeout 0: IDGEN_EINVAL" \
    "low_water 101: IDGEN_EINVAL" "next 'bad name!': IDGEN_EINVAL" \
    "next 'nope': IDGEN_EINVAL ERR unknown generator 'nope'" \
    "next 'tokens': IDGEN_EINVAL ERR only a segment generator has ranges" "next 'orders': ok" "free NULL: ok"; do
    check "bad: $want" 1 "$(grep -cF "$want" <<<"$out")"
  done
  check_match "bad: one buffer for two names, each its own sequence" \
    'one buffer, two names: orders=[0-9]+ \(0\) items=1 \(0\)' "$out"
  stop_server || true
fi
finish
