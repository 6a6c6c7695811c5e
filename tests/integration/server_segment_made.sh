#!/usr/bin/env bash
# A segment sequence's row (PostgreSQL) or key (etcd) that is lost is refused, never made
# again at 0 (issue 28): each backend records what it made (leaf_alloc_made,
# /idgen/segment-made/NAME) in the transaction that makes it. Parts, each on a fresh
# backend:
#   postgres, etcd  adopted: a row/key made without a record (before this change) gets one
#                   at its next block, then its loss is refused; lost: the row/key deleted
#                   under a running server, and after it stopped: a new server refuses it
#                   ("is gone"), `segment init` is refused, `--start-after N` makes it
#                   again and it continues above N; period: a day's row/key lost the same
#                   (faked) day is refused by a server started later, never from 1.
#   isolation       PostgreSQL at default_transaction_isolation serializable, then
#                   repeatable read: a fetch that waited on a row another transaction
#                   moved fails to serialize (40001, in the server's log) and is run again
#                   (the number above the other's); four processes draw at once, none fails,
#                   none twice; four inits of one name at once make it once; the refusals
#                   hold. (postgres also drops the record table under a running server: it
#                   serves on, the table made again and the row adopted.)
# Usage: server_segment_made.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts postgres etcd isolation -- "${@:2}"
for tool in psql etcdctl curl jq; do
  command -v "$tool" >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FT ]] || { echo "FAIL: libfaketime not installed at $FT (scripts/deps.sh test)" >&2; exit 1; }
chmod 755 "$WORK" # PostgreSQL runs as its own user
made_cleanup() {
  [[ ! -f $WORK/pg/pid ]] || "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  [[ ! -f $WORK/etcd/endpoints ]] || "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$WORK/etcd" || true
  cleanup
}
trap made_cleanup EXIT

sql() { psql -q "$DSN" -Atc "$1"; }
etcd_ctl() { ETCDCTL_API=3 etcdctl --endpoints="$DSN" "$@"; }
# use_backend postgres|etcd: starts it (once) and sets B and DSN.
use_backend() {
  B=$1
  case $B in
    postgres)
      local port
      [[ -f $WORK/pg/port ]] || "$SOURCE_DIR/scripts/pg-cluster.sh" start "$WORK/pg" >/dev/null
      port=$(cat "$WORK/pg/port")
      DSN="host=127.0.0.1 port=$port dbname=postgres user=postgres" ;;
    etcd)
      [[ -f $WORK/etcd/endpoints ]] || "$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd" 1 >/dev/null
      DSN=$(cat "$WORK/etcd/endpoints") ;;
  esac
}
remove() { # NAME: its row or key, gone (its record stays)
  case $B in
    postgres) sql "DELETE FROM leaf_alloc WHERE biz_tag = '$1'" ;;
    etcd) etcd_ctl del "/idgen/segment/$1" >/dev/null ;;
  esac
}
legacy() { # NAME MAX: a row or key made the way idgen did before the records
  case $B in
    postgres) sql "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('$1', $2, 10)" ;;
    etcd) etcd_ctl put "/idgen/segment/$1" "$2" >/dev/null ;;
  esac
}
has_record() { # NAME: 1 if the backend's record of it is there
  case $B in
    postgres) sql "SELECT count(*) FROM leaf_alloc_made WHERE biz_tag = '$1'" ;;
    etcd) etcd_ctl get --keys-only "/idgen/segment-made/$1" | grep -c '^/idgen' || true ;;
  esac
}
has_row() { # NAME: 1 if its row or key is there
  case $B in
    postgres) sql "SELECT count(*) FROM leaf_alloc WHERE biz_tag = '$1'" ;;
    etcd) etcd_ctl get --keys-only "/idgen/segment/$1" | grep -c '^/idgen' || true ;;
  esac
}
seg() { "$IDGEN" segment "$1" --backend "$B" --dsn "$DSN" "${@:2}"; }
# init_status ARGS...: "EXIT first-line-of-stderr"
init_status() {
  local rc=0
  seg init "$@" >/dev/null 2>"$WORK/init.err" || rc=$?
  echo "$rc $(head -1 "$WORK/init.err")"
}

# write_config FILE NAME [period]: a segment generator on the backend, blocks of 5.
write_config() {
  {
    printf 'generators:\n  default: {kind: uuid7}\n'
    printf '  %s: {kind: segment, backend: %s, dsn: "%s", step: 5, max_step: 5, retry_ms: 100' \
      "$2" "$B" "$DSN"
    [[ -z ${3:-} ]] || printf ', period: day, timezone: UTC'
    printf '}\n'
  } >"$1"
}
# ready NAME: waits up to 5 s for /readyz?name=NAME to answer 200; 1 if it never did.
ready() {
  local i
  for i in $(seq 1 100); do
    [[ $(http_code "http://$HTTP/readyz?name=$1") == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
# reason NAME: the readiness error of NAME once the server has tried its backend.
reason() {
  local i msg=""
  for i in $(seq 1 100); do
    msg=$(curl -s "http://$HTTP/readyz?name=$1" | jq -r '.error.message // empty')
    ! tried_reason "$msg" || break
    sleep 0.05
  done
  echo "$msg"
}
# draw NAME K ROUNDS FILE: ROUNDS batches of K appended to FILE (served ones only).
draw() {
  local i
  for i in $(seq 1 "$3"); do
    curl -s "http://$HTTP/v1/ids?name=$1&count=$2" | jq -r '.ids[]?' >>"$4"
  done
}

# ---- adopted: a row or key from before the records ------------------------------------
scenario_adopted() {
  seg init other >/dev/null || fail "$B: segment init other"
  if [[ $B == postgres ]]; then
    # A database from before the records has no table for them: a fetch makes it.
    sql "DROP TABLE leaf_alloc_made"
    legacy legacy 40
    check "$B adopted: no table of records" t "$(sql "SELECT to_regclass('leaf_alloc_made') IS NULL")"
  else
    legacy legacy 40
    check "$B adopted: a legacy key has no record" 0 "$(has_record legacy)"
  fi
  check "$B adopted: its next number" 41 "$(seg next legacy)"
  check "$B adopted: the fetch wrote its record" 1 "$(has_record legacy)"
  remove legacy
  check_match "$B adopted: then lost, init is refused" '^1 .*is gone, but this (database|etcd) made it' \
    "$(init_status legacy)"
  check_match "$B adopted: and next is refused" "is gone" "$(seg next legacy 2>&1)"
}

# ---- lost: under a running server, and after it stopped --------------------------------
scenario_lost() {
  seg init orders >/dev/null || fail "$B: segment init orders"
  check "$B lost: init wrote the record" 1 "$(has_record orders)"
  write_config "$WORK/$B-lost.yaml" orders
  launch_server "$B-s1" --config "$WORK/$B-lost.yaml" || return
  ready orders || fail "$B lost: s1 never ready"
  : >"$WORK/$B-lost.seen"
  draw orders 3 4 "$WORK/$B-lost.seen"
  remove orders
  # Its buffer, then refusals: the row is gone and the record says it was made.
  draw orders 3 10 "$WORK/$B-lost.seen"
  check_match "$B lost: under the running server: refused as gone" "is gone" "$(reason orders)"
  stop_server || fail "$B lost: s1 exit status"
  local top
  top=$(sort -n "$WORK/$B-lost.seen" | tail -1)
  # A server started later: refused (no number from 1 again).
  launch_server "$B-s2" --config "$WORK/$B-lost.yaml" || return
  check_match "$B lost: a server started later refuses it" "is gone, but this (database|etcd) made it" \
    "$(reason orders)"
  check "$B lost: and hands out nothing" 503 \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/id?name=orders")"
  check_match "$B lost: segment init is refused" '^1 .*is gone.*--start-after N orders' "$(init_status orders)"
  check_match "$B lost: --start-after 0 is refused too" '^1 .*is gone' "$(init_status --start-after 0 orders)"
  check "$B lost: the record is still there, no row/key made" "1 0" \
    "$(has_record orders) $(has_row orders)"
  # The highest seen may lie below the record's highest (blocks the server leased and
  # never handed out): refused naming the record's, which makes it again.
  local refusal recorded
  refusal=$(init_status --start-after "$top" orders)
  if [[ $refusal != 0* ]]; then
    recorded=$(grep -o '[0-9]* was handed out' <<<"$refusal" | cut -d' ' -f1)
    check_match "$B lost: --start-after $top below the record's highest is refused" \
      "^1 .*--start-after $top is below it" "$refusal"
    check_match "$B lost: which is above every number seen" '^[0-9]+$' "$recorded"
    ((recorded >= top)) || fail "$B lost: the record's highest $recorded below $top"
    top=$recorded
    check "$B lost: --start-after $top makes it again" 0 "$(init_status --start-after "$top" orders | cut -d' ' -f1)"
  fi
  # The running server takes it from there (its fetches retry), above every number before.
  ready orders || fail "$B lost: s2 never served after init --start-after"
  local after=$WORK/$B-lost.after
  : >"$after"
  draw orders 3 3 "$after"
  check_match "$B lost: s2 serves again" '^[1-9]' "$(wc -l <"$after")"
  check "$B lost: every number above $top" "" "$(awk -v t="$top" '$1 <= t' "$after" | head -3)"
  check "$B lost: no number twice" "" "$(sort -n "$WORK/$B-lost.seen" "$after" | uniq -d | head -3)"
  if [[ $B == postgres ]]; then
    # The record table dropped under the running server (not refused: docs/segment.md):
    # its next fetch makes the table again and adopts the row.
    sql "DROP TABLE leaf_alloc_made"
    local n
    n=$(wc -l <"$after")
    draw orders 5 6 "$after"
    check_match "$B lost: the record table dropped: s2 serves on" '^[1-9]' "$(($(wc -l <"$after") - n))"
    check "$B lost: and the row has its record again" 1 "$(has_record orders)"
  fi
  stop_server || fail "$B lost: s2 exit status"
}

# ---- period: a day's row/key lost the same (faked) day ---------------------------------
# at TIME NAME CONFIG: a server whose wall clock starts at TIME (UTC, libfaketime).
at() {
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@$1" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server "$2" --config "$3"
}
scenario_period() {
  write_config "$WORK/$B-period.yaml" daily period
  at "2026-12-01 08:00:00" "$B-p1" "$WORK/$B-period.yaml" || return
  ready daily || fail "$B period: p1 never ready"
  : >"$WORK/$B-period.seen"
  draw daily 2 3 "$WORK/$B-period.seen"
  check "$B period: the day's numbers" "20261201000001 6" \
    "$(sort -n "$WORK/$B-period.seen" | head -1) $(wc -l <"$WORK/$B-period.seen")"
  check "$B period: the day's first fetch wrote its record" 1 "$(has_record daily:20261201)"
  stop_server || fail "$B period: p1 exit status"
  remove daily:20261201
  at "2026-12-01 09:00:00" "$B-p2" "$WORK/$B-period.yaml" || return
  check_match "$B period: a server started later the same day refuses the lost day" \
    "daily:20261201.* is gone, but this (database|etcd) made it" "$(reason daily)"
  draw daily 2 3 "$WORK/$B-period.seen"
  check "$B period: nothing handed out again" 6 "$(wc -l <"$WORK/$B-period.seen")"
  check "$B period: no row/key made again, its record kept" "0 1" \
    "$(has_row daily:20261201) $(has_record daily:20261201)"
  stop_server || fail "$B period: p2 exit status"
}

# ---- isolation: PostgreSQL at repeatable read and serializable --------------------------
scenario_isolation() {
  local level n=0
  for level in serializable "repeatable read"; do
    n=$((n + 1))
    sql "ALTER DATABASE postgres SET default_transaction_isolation = '$level'"
    check "isolation $level: a new session runs at it" "$level" "$(sql "SHOW transaction_isolation")"
    seg init "iso$n" >/dev/null || fail "isolation $level: init"
    # Another transaction moves the row and holds it; the fetch waits on the row, then
    # fails to serialize, and runs again.
    local before
    before=$(grep -c 'could not serialize access' "$WORK/pg/server.log" || true)
    psql -q "$DSN" -c "BEGIN" -c "UPDATE leaf_alloc SET max_id = max_id + 100 WHERE biz_tag = 'iso$n'" \
      -c "SELECT pg_sleep(1.5)" -c "COMMIT" >/dev/null &
    local holder=$! i
    for i in $(seq 1 100); do
      [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'") == 1 ]] && break
      sleep 0.02
    done
    check "isolation $level: the fetch after the other's commit" 101 "$(seg next "iso$n" 2>&1)"
    wait "$holder" || fail "isolation $level: the holding transaction failed"
    check_match "isolation $level: it failed to serialize first (server log)" '^[1-9]' \
      "$(($(grep -c 'could not serialize access' "$WORK/pg/server.log" || true) - before))"
    # Four processes at once, 15 blocks of 3 each.
    local p
    for p in 1 2 3 4; do
      (for _ in $(seq 1 15); do seg next -n 3 "iso$n" || echo "failed"; done) >"$WORK/iso$n-$p.out" 2>&1 &
    done
    wait
    local all
    all=$(cat "$WORK/iso$n"-*.out)
    check "isolation $level: four processes: none failed" 0 "$(grep -cv '^[0-9]*$' <<<"$all" || true)"
    check "isolation $level: 180 numbers, none twice" "180 0" \
      "$(wc -l <<<"$all") $(sort -n <<<"$all" | uniq -d | wc -l)"
    # Four inits of one new name at once: one makes it, three find it, none fails.
    for p in 1 2 3 4; do
      (seg init "isoinit$n" 2>&1 || true) >"$WORK/isoinit$n-$p.out" &
    done
    wait
    check "isolation $level: four inits at once: created, and 3 'already exists'" "1 3" \
      "$(cat "$WORK/isoinit$n"-*.out | grep -c '^created') $(cat "$WORK/isoinit$n"-*.out | grep -c 'already exists')"
    remove "iso$n"
    check_match "isolation $level: a lost row: init refused" '^1 .*is gone' "$(init_status "iso$n")"
    check "isolation $level: --start-after makes it again" 0 \
      "$(init_status --start-after 500 "iso$n" | cut -d' ' -f1)"
    check "isolation $level: above it" 501 "$(seg next "iso$n")"
  done
  sql "ALTER DATABASE postgres RESET default_transaction_isolation"
}

for backend in postgres etcd; do
  if part "$backend"; then
    use_backend "$backend"
    say "$B at $DSN"
    scenario_adopted
    scenario_lost
    scenario_period
  fi
done
if part isolation; then
  use_backend postgres
  scenario_isolation
fi
finish
