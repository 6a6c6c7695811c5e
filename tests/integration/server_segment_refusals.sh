#!/usr/bin/env bash
# What a segment generator of `idgen serve` refuses, on PostgreSQL and on etcd (each part
# runs on both):
#   partial  the backend stops: batches of K (HTTP /v1/ids, RESP IDS) up to the first
#            refusal are each K new numbers, above all before; the batch that meets the
#            end of the buffer is refused whole (its numbers burnt), never a short list
#            nor one with stale numbers of an earlier request in its tail;
#   vanish   the row (key) is deleted under the running server: its buffer, then
#            refusals (gone: the backend's record says it made it); `idgen segment init`
#            refuses to make it again; made again at 1 all the same (its record deleted
#            too): refused still, for good, and nothing at or below what it handed out;
#   reset    two servers share the name, the row is deleted and (record and all)
#            re-created: neither hands out a number the other (or itself) handed out
#            before.
# Usage: server_segment_refusals.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts partial vanish reset -- "${@:2}"
for tool in psql etcdctl redis-cli; do
  command -v "$tool" >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
done
chmod 755 "$WORK" # PostgreSQL runs as its own user
backends_cleanup() {
  [[ ! -f $WORK/pg/pid ]] || "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  [[ ! -f $WORK/etcd/endpoints ]] || "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$WORK/etcd" || true
  cleanup
}
trap backends_cleanup EXIT

PG_PORT=$("$SOURCE_DIR/scripts/pg-cluster.sh" start "$WORK/pg" | cut -d' ' -f1)
PG_DSN="host=127.0.0.1 port=$PG_PORT dbname=postgres user=postgres"
ETCD_DSN=$("$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd" 1)
say "PostgreSQL on port $PG_PORT, etcd at $ETCD_DSN"

# use_backend postgres|etcd: sets B and DSN, for backend_stop, backend_start, remove.
use_backend() {
  B=$1
  case $B in
    postgres) DSN=$PG_DSN ;;
    etcd) DSN=$ETCD_DSN ;;
  esac
}
backend_stop() {
  case $B in
    postgres) "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg" ;;
    etcd) "$SOURCE_DIR/scripts/etcd-cluster.sh" kill "$WORK/etcd" 0 TERM ;;
  esac
}
backend_start() {
  case $B in
    postgres) "$SOURCE_DIR/scripts/pg-cluster.sh" restart "$WORK/pg" >/dev/null ;;
    etcd) "$SOURCE_DIR/scripts/etcd-cluster.sh" restart "$WORK/etcd" 0 ;;
  esac
}
remove() { # NAME: its row or key, gone (the backend's record that it made it stays)
  case $B in
    postgres) psql -q "$DSN" -c "DELETE FROM leaf_alloc WHERE biz_tag = '$1'" >/dev/null ;;
    etcd) ETCDCTL_API=3 etcdctl --endpoints="$DSN" del "/idgen/segment/$1" >/dev/null ;;
  esac
}
forget() { # NAME: its row or key and its record, gone: init makes it again at 0
  remove "$1"
  case $B in
    postgres) psql -q "$DSN" -c "DELETE FROM leaf_alloc_made WHERE biz_tag = '$1'" >/dev/null ;;
    etcd) ETCDCTL_API=3 etcdctl --endpoints="$DSN" del "/idgen/segment-made/$1" >/dev/null ;;
  esac
}
init() { "$IDGEN" segment init --backend "$B" --dsn "$DSN" "$1" >/dev/null || fail "segment init $1"; }
# init_refused LABEL NAME: init exits 1, saying the row (key) is gone.
init_refused() {
  local rc=0
  "$IDGEN" segment init --backend "$B" --dsn "$DSN" "$2" >/dev/null 2>"$WORK/init.err" || rc=$?
  check_match "$1" "^1 .*is gone, but this (database|etcd) made it" "$rc $(cat "$WORK/init.err")"
}

# write_config FILE NAME...: segment generators on the backend, blocks of 10 (they do not
# adapt), a retry every 100 ms; the default generator a uuid7 one (no lease to wait for).
write_config() {
  local f=$1 n
  shift
  printf 'generators:\n  default: {kind: uuid7}\n' >"$f"
  for n in "$@"; do
    printf '  %s: {kind: segment, backend: %s, dsn: "%s", step: 10, max_step: 10, retry_ms: 100}\n' \
      "$n" "$B" "$DSN" >>"$f"
  done
}
# start NAME CONFIG GEN...: one event-loop thread (a batch's tail, if served, would be
# the previous request's), then waits until each GEN has its first block.
start() {
  local name=$1 config=$2 g i
  shift 2
  launch_server "$name" --config "$config" --threads 1 || return 1
  for g in "$@"; do
    for i in $(seq 1 200); do
      [[ $(http_code "http://$HTTP/readyz?name=$g") == 200 ]] && break
      sleep 0.05
    done
    [[ $i -lt 200 ]] || { fail "server $name: '$g' never became ready"; return 1; }
  done
}

# ask http|resp HTTP PORT GEN K: one batch; prints "ok N N ..." or "refused WHAT".
ask() {
  local proto=$1 http=$2 port=$3 gen=$4 k=$5 out code
  if [[ $proto == http ]]; then
    code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://$http/v1/ids?name=$gen&count=$k")
    if [[ $code == 200 ]]; then
      echo "ok $(grep -o '"[0-9]*"' "$WORK/body" | tr -d '"' | tr '\n' ' ')"
    else
      echo "refused $code $(grep -o '"code":"[a-z_]*"' "$WORK/body" | cut -d'"' -f4)"
    fi
  else
    out=$(redis-cli -p "$port" IDS "$gen" "$k" 2>&1 | tr '\n' ' ')
    if [[ $out =~ ^[0-9\ ]+$ ]]; then echo "ok $out"; else echo "refused $out"; fi
  fi
}

# judge LABEL K LINE: an answer of K numbers, rising, each above every number before
# (SEEN_MAX, one server, one client at a time); adds them to $WORK/LABEL.seen.
judge() {
  local label=$1 k=$2 line=$3 n prev=$SEEN_MAX
  read -ra nums <<<"${line#ok }"
  [[ ${#nums[@]} -eq $k ]] || { fail "$label: a list of ${#nums[@]}, not $k: ${line#ok }"; return; }
  for n in "${nums[@]}"; do
    [[ $n -gt $prev ]] || { fail "$label: ${line#ok } is not $k new numbers above $SEEN_MAX (stale or repeated)"; return; }
    prev=$n
  done
  SEEN_MAX=$prev
  printf '%s\n' "${nums[@]}" >>"$WORK/$label.seen"
}

# ---- partial ------------------------------------------------------------------------
# 10 numbers buffered (one block, the next not yet due); batches of 6 (HTTP) and 7
# (RESP) meet the end of the buffer inside a batch.
scenario_partial() {
  write_config "$WORK/partial.yaml" orders invoices
  init orders
  init invoices
  start p "$WORK/partial.yaml" orders invoices || return
  backend_stop
  local proto gen k line answers refusals
  for proto in http resp; do
    if [[ $proto == http ]]; then gen=orders k=6; else gen=invoices k=7; fi
    SEEN_MAX=0 answers=0 refusals=0
    : >"$WORK/$B-$proto.seen"
    for _ in $(seq 1 20); do
      line=$(ask "$proto" "$HTTP" "$RESP_PORT" "$gen" "$k")
      if [[ $line == ok* ]]; then
        [[ $refusals -eq 0 ]] || { fail "$B $proto: numbers again after a refusal: ${line#ok }"; break; }
        judge "$B-$proto" "$k" "$line"
        answers=$((answers + 1))
      else
        [[ $refusals -gt 0 ]] || check_match "$B $proto: the refusal says the backend is unavailable" \
          '(503 backend_unavailable|^refused TRYAGAIN backend_unavailable)' "$line"
        refusals=$((refusals + 1))
        [[ $refusals -lt 3 ]] || break
      fi
    done
    check "$B $proto: batches of $k served whole from the buffer of 10, then refused" "1 3" \
      "$answers $refusals"
  done
  # Back: the burnt numbers never come back; the next ones lie above all of them.
  backend_start
  local last_http last_resp
  last_http=$(sort -n "$WORK/$B-http.seen" | tail -1)
  last_resp=$(sort -n "$WORK/$B-resp.seen" | tail -1)
  for _ in $(seq 1 100); do
    line=$(ask http "$HTTP" "$RESP_PORT" orders 6)
    [[ $line == ok* ]] && break
    sleep 0.1
  done
  SEEN_MAX=10 # block 1 was 1-10: its unserved tail was burnt
  if [[ $line == ok* ]]; then judge "$B-http" 6 "$line"; else fail "$B: orders never served again"; fi
  for _ in $(seq 1 100); do
    line=$(ask resp "$HTTP" "$RESP_PORT" invoices 7)
    [[ $line == ok* ]] && break
    sleep 0.1
  done
  SEEN_MAX=10
  if [[ $line == ok* ]]; then judge "$B-resp" 7 "$line"; else fail "$B: invoices never served again: $line"; fi
  check "$B: numbers handed out twice (HTTP, RESP)" "0 0" \
    "$(sort -n "$WORK/$B-http.seen" | uniq -d | wc -l) $(sort -n "$WORK/$B-resp.seen" | uniq -d | wc -l)"
  say "ok   $B: HTTP served up to $last_http, RESP up to $last_resp, then refused whole; back: above 10"
  stop_server || fail "$B: server p did not stop cleanly"
  forget orders
  forget invoices
}

# ---- vanish ---------------------------------------------------------------------------
# served HTTP K ROUNDS LABEL: asks 'orders' for ROUNDS batches of K, 50 ms apart, each
# served one judged against SEEN_MAX; SERVED: how many were served.
served() {
  local http=$1 k=$2 rounds=$3 label=$4 line
  SERVED=0
  for _ in $(seq 1 "$rounds"); do
    line=$(ask http "$http" 0 orders "$k")
    if [[ $line == ok* ]]; then judge "$label" "$k" "$line"; SERVED=$((SERVED + 1)); fi
    sleep 0.05
  done
}

scenario_vanish() {
  write_config "$WORK/vanish.yaml" orders
  init orders
  start v "$WORK/vanish.yaml" orders || return
  SEEN_MAX=0
  : >"$WORK/$B-v.seen"
  served "$HTTP" 5 5 "$B-v"
  local before
  before=$(sort -n "$WORK/$B-v.seen" | tail -1)
  remove orders
  # Its buffer (the rest of two blocks at most), then refusals: the row is gone.
  served "$HTTP" 5 10 "$B-v"
  check "$B: row deleted: the buffer, then refused" "503" \
    "$(curl -s -o "$WORK/ready" -w '%{http_code}' "http://$HTTP/readyz?name=orders")"
  check_match "$B: its reason: gone, and made by this backend" \
    'is gone, but this (database|etcd) made it' "$(cat "$WORK/ready")"
  local mid
  mid=$(sort -n "$WORK/$B-v.seen" | tail -1)
  init_refused "$B: segment init refuses to make it again" orders
  # Re-created at 1 under it all the same (its record deleted too): refused, for good.
  forget orders
  init orders
  served "$HTTP" 5 40 "$B-v"
  check "$B: re-created at 1: batches served after it (refused for good)" 0 "$SERVED"
  check_match "$B: the reason says the counter went back" 'was the counter reset' \
    "$(curl -s "http://$HTTP/readyz?name=orders")"
  check "$B: numbers handed out twice" 0 "$(sort -n "$WORK/$B-v.seen" | uniq -d | wc -l)"
  say "ok   $B: served up to $before, the row deleted: up to $mid then refused; re-created at 1: refused still"
  stop_server || fail "$B: server v did not stop cleanly"
  forget orders
}

# ---- reset ----------------------------------------------------------------------------
# a takes few numbers, b many (its floor far above a's); the row is deleted and
# re-created; both are asked on. Each try of a fetch takes a block, so the counter climbs
# back: a server that retried would take blocks above its own floor that b handed out.
scenario_reset() {
  write_config "$WORK/reset.yaml" orders
  init orders
  start a "$WORK/reset.yaml" orders || return
  local ah=$HTTP apid=$SERVER_PID
  start b "$WORK/reset.yaml" orders || return
  local bh=$HTTP bpid=$SERVER_PID
  : >"$WORK/$B-ra.seen"
  : >"$WORK/$B-rb.seen"
  SEEN_MAX=0
  served "$ah" 5 1 "$B-ra"
  local sa=$SEEN_MAX
  SEEN_MAX=0
  served "$bh" 50 4 "$B-rb"
  local sb=$SEEN_MAX
  remove orders
  init_refused "$B: two servers, the row deleted: segment init refuses it" orders
  forget orders
  init orders
  local h line
  for _ in $(seq 1 40); do
    for h in a b; do
      if [[ $h == a ]]; then SEEN_MAX=$sa; line=$(ask http "$ah" 0 orders 5); else
        SEEN_MAX=$sb; line=$(ask http "$bh" 0 orders 5); fi
      if [[ $line == ok* ]]; then
        judge "$B-r$h" 5 "$line"
        if [[ $h == a ]]; then sa=$SEEN_MAX; else sb=$SEEN_MAX; fi
      fi
    done
    sleep 0.05
  done
  local all dup
  all=$(cat "$WORK/$B-ra.seen" "$WORK/$B-rb.seen" | wc -l)
  dup=$(cat "$WORK/$B-ra.seen" "$WORK/$B-rb.seen" | sort -n | uniq -d | wc -l)
  check "$B: two servers, the row re-created under them: numbers handed out twice (of $all)" 0 "$dup"
  for h in "$ah" "$bh"; do
    check "$B: server at $h refuses" 503 \
      "$(curl -s -o /dev/null -w '%{http_code}' "http://$h/readyz?name=orders")"
  done
  stop_server "$apid" || fail "$B: server a did not stop cleanly"
  stop_server "$bpid" || fail "$B: server b did not stop cleanly"
  forget orders
}

for backend in postgres etcd; do
  use_backend "$backend"
  if part partial; then scenario_partial; fi
  if part vanish; then scenario_vanish; fi
  if part reset; then scenario_reset; fi
done
finish
