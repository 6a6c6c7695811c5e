#!/usr/bin/env bash
# A period only moves forward across the fleet, and init --start-after stays above what
# was handed out (issue 35, items 4 and 7), on each backend (file, PostgreSQL, etcd,
# MariaDB), each part on a fresh backend:
#   fleet: server A hands out 30 Nov's numbers (faked clock, libfaketime); server C
#     enters 1 Dec; A stops; the 30 Nov row/key/file/table and its made record are
#     deleted, as the docs allow for an old period once the newest-period record is
#     past it; server B, its clock 20 s behind C's, starts in 30 Nov: refused ("period
#     20261130 is behind 20261201"), never 20261130000001 again; so is `segment init
#     orders:20261130`. Then the record itself
#     deleted by a foreign client: documented as losing the made record (B makes 30 Nov
#     again); the record kept, two servers racing on the boundary (one each side) hand
#     out no number twice.
#   below: a sequence with 1..30 handed out loses its row/key/file (its made record
#     kept): `init --start-after 5` is refused naming 30; `--force` makes it at 5; on
#     MariaDB the ticket servers' counters keep it above 30 whatever N (nothing to
#     refuse).
# Parts: postgres etcd file mariadb postgres-below etcd-below file-below mariadb-below
#   postgres-rc, mariadb-rc: the fleet case at read committed and repeatable read
#   (PostgreSQL: then two inits racing on the boundary, one each side, 8 times: each
#   made or refused behind, none failing), on ticket servers at READ-COMMITTED (MariaDB).
# Usage: server_segment_fleet.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts postgres etcd file mariadb postgres-below etcd-below file-below mariadb-below \
  postgres-rc mariadb-rc -- "${@:2}"
for tool in psql etcdctl curl jq mariadb; do
  command -v "$tool" >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FT ]] || { echo "FAIL: libfaketime not installed at $FT (scripts/deps.sh test)" >&2; exit 1; }
chmod 755 "$WORK" # PostgreSQL runs as its own user
export IDGEN_NAMESPACE=fleet-test-$$
fleet_cleanup() {
  [[ ! -f $WORK/pg/pid ]] || "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  [[ ! -f $WORK/etcd/endpoints ]] || "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$WORK/etcd" || true
  local d
  for d in "$WORK/mdb" "$WORK/mdb-rc"; do
    [[ ! -f $d/endpoints ]] || "$SOURCE_DIR/scripts/mariadb-cluster.sh" stop "$d" || true
  done
  cleanup
}
trap fleet_cleanup EXIT

sql() { psql -q "$DSN" -Atc "$1"; }
etcd_ctl() { ETCDCTL_API=3 etcdctl --endpoints="$DSN" "$@"; }
MDB=$WORK/mdb MDB_OPTIONS=() # the ticket servers in use, and their options
mdb() { # I STATEMENT: on ticket server I
  mariadb --no-defaults -h 127.0.0.1 -P "$(cat "$MDB/m$1.port")" -u root -N -B test -e "$2"
}
# use_backend postgres|etcd|file|mariadb: starts it (once) and sets B and DSN.
use_backend() {
  B=$1
  case $B in
    postgres)
      [[ -f $WORK/pg/port ]] || "$SOURCE_DIR/scripts/pg-cluster.sh" start "$WORK/pg" >/dev/null
      DSN="host=127.0.0.1 port=$(cat "$WORK/pg/port") dbname=postgres user=postgres" ;;
    etcd)
      [[ -f $WORK/etcd/endpoints ]] || "$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd" 1 >/dev/null
      DSN=$(cat "$WORK/etcd/endpoints") ;;
    file)
      mkdir -p "$WORK/segdir"
      DSN=$WORK/segdir/ ;;
    mariadb)
      [[ -f $MDB/endpoints ]] || "$SOURCE_DIR/scripts/mariadb-cluster.sh" start "$MDB" 2 "${MDB_OPTIONS[@]}" >/dev/null
      DSN="servers=$(cat "$MDB/endpoints")" ;;
  esac
}
seg() { "$IDGEN" segment "$1" --backend "$B" --dsn "$DSN" "${@:2}"; }
# init_status ARGS...: "EXIT first-line-of-stderr"
init_status() {
  local rc=0 err=$WORK/init.$BASHPID.err # its own file: inits may run at once
  seg init "$@" >/dev/null 2>"$err" || rc=$?
  echo "$rc $(head -1 "$err")"
}
# remove KEY: its row, key, file or period table gone (its made record stays).
remove() {
  case $B in
    postgres) sql "DELETE FROM leaf_alloc WHERE biz_tag = '$1'" ;;
    etcd) etcd_ctl del "/idgen/segment/$1" >/dev/null ;;
    file) rm -f "$WORK/segdir/segment-$1" ;;
    mariadb)
      local i
      for i in 0 1; do
        if [[ $1 == *:* ]]; then mdb "$i" "DROP TABLE tickets64_${1#*:}"
        else mdb "$i" "DELETE FROM tickets64 WHERE stub = '$1'"; fi
      done ;;
  esac
}
# remove_record KEY: its made record gone too (the docs allow it for an old period).
remove_record() {
  case $B in
    postgres) sql "DELETE FROM leaf_alloc_made WHERE biz_tag = '$1'" ;;
    etcd) etcd_ctl del "/idgen/segment-made/$1" >/dev/null ;;
    file) rm -f "$WORK/segdir/segment-$1.created" ;;
    mariadb)
      local i
      for i in 0 1; do mdb "$i" "DELETE FROM tickets64_periods WHERE period_table = 'tickets64_${1#*:}'"; done ;;
  esac
}
# remove_newest NAME: the newest-period record of NAME's days, by a foreign client.
remove_newest() {
  case $B in
    postgres) sql "DELETE FROM leaf_alloc_newest WHERE family = '$1:YYYYMMDD'" || true ;;
    etcd) etcd_ctl del "/idgen/segment-newest/$1:YYYYMMDD" >/dev/null ;;
    file) rm -f "$WORK/segdir/segment-$1:YYYYMMDD.newest" ;;
    mariadb)
      local i
      for i in 0 1; do mdb "$i" "DELETE FROM tickets64_newest WHERE family = 'tickets64_YYYYMMDD'" || true; done ;;
  esac
}

# write_config FILE: 'orders', a day period on the backend, blocks of 5.
write_config() {
  cat >"$1" <<YAML
generators:
  default: {kind: uuid7}
  orders: {kind: segment, backend: $B, dsn: "$DSN", step: 5, max_step: 5, prefetch_pct: 0, retry_ms: 100, period: day, timezone: UTC}
YAML
}
# at NAME CONFIG TIME: a server whose wall clock starts at TIME (UTC, libfaketime; the
# monotonic clock left alone).
at() {
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@$3" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server "$1" --config "$2"
}
# ready: waits up to 10 s for /readyz?name=orders to answer 200; 1 if it never did.
ready() {
  local i
  for i in $(seq 1 200); do
    [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
# reason: the readiness error of orders once the server has tried its backend (up to
# 10 s; "" once it serves).
reason() {
  local i msg="" code
  for i in $(seq 1 200); do
    code=$(curl -s -o "$WORK/readyz" -w '%{http_code}' "http://$HTTP/readyz?name=orders")
    msg=$(jq -r '.error.message // empty' "$WORK/readyz" 2>/dev/null)
    [[ $code != 200 ]] && ! tried_reason "$msg" || break
    sleep 0.05
  done
  echo "$msg"
}

scenario_fleet() {
  local label=$1 cfg=$WORK/$1.yaml seen=$WORK/$1.seen
  write_config "$cfg"
  : >"$seen"
  at "$label-a" "$cfg" "2026-11-30 23:59:00" || return
  local pa=$SERVER_PID ua=http://$HTTP
  ready || fail "$label: A never ready"
  draw_ids "$ua" 15 "$seen"
  check "$label: A handed out 30 of 30 Nov's, from its first" "30 20261130000001" \
    "$(wc -l <"$seen") $(sort -n "$seen" | head -1)"
  at "$label-c" "$cfg" "2026-12-01 00:00:05" || return
  local pc=$SERVER_PID uc=http://$HTTP
  ready || fail "$label: C never ready"
  draw_ids "$uc" 10 "$seen"
  check "$label: C hands out 1 Dec's" 20 "$(grep -c '^20261201' "$seen")"
  stop_server "$pa" || fail "$label: A exit status"
  remove orders:20261130
  remove_record orders:20261130
  # B, some 20 s behind C (C started at 00:00:05 and has run since).
  at "$label-b" "$cfg" "2026-11-30 23:59:45" || return
  local pb=$SERVER_PID ub=http://$HTTP
  check_match "$label: B refuses 30 Nov, behind the newest period" \
    "period 20261130 is behind 20261201, the newest period a server of 'orders' entered" "$(reason)"
  local before
  before=$(wc -l <"$seen")
  draw_ids "$ub" 5 "$seen"
  check "$label: B hands out nothing of 30 Nov" 0 "$(tail -n +$((before + 1)) "$seen" | grep -c '^20261130' || true)"
  check "$label: no number twice" "" "$(sort -n "$seen" | uniq -d | head -3 | tr '\n' ' ')"
  stop_server "$pb" || fail "$label: B exit status"
  check_match "$label: segment init of the 30 Nov key is refused too" \
    "^1 .*period 20261130 is behind 20261201" "$(init_status orders:20261130)"
  # The newest-period record deleted by a foreign client: as deleting the made record
  # (docs/segment.md), 30 Nov is made again at 0 by D. D (30 Nov) and C (1 Dec) then
  # race on the boundary: no 1 Dec number twice.
  remove_newest orders
  at "$label-d" "$cfg" "2026-11-30 23:59:45" || return
  local pd=$SERVER_PID ud=http://$HTTP
  ready || fail "$label: the newest record deleted: D never ready"
  local race=$WORK/$label.race
  : >"$race"
  draw_ids "$ud" 5 "$race" &
  local dd=$!
  draw_ids "$uc" 5 "$race"
  wait "$dd"
  check_match "$label: the record deleted: 30 Nov made again (documented limit)" \
    '^[1-9][0-9]* [1-9][0-9]*$' "$(grep -c '^20261130' "$race") $(grep -c '^20261201' "$race")"
  check "$label: racing on the boundary: no 1 Dec number twice" "" \
    "$(grep -h '^20261201' "$seen" "$race" | sort -n | uniq -d | head -3 | tr '\n' ' ')"
  stop_server "$pd" || fail "$label: D exit status"
  stop_server "$pc" || fail "$label: C exit status"
}

scenario_below() {
  local label=$B-below
  seg init below >/dev/null || fail "$label: init"
  seg next -n 30 below >"$WORK/below.out" || fail "$label: next"
  local top
  top=$(sort -n "$WORK/below.out" | tail -1)
  remove below
  if [[ $B == mariadb ]]; then
    check "$label: --start-after 5 (nothing to refuse: the counters go on)" 0 \
      "$(init_status --start-after 5 below | cut -d' ' -f1)"
    seg next -n 30 below >"$WORK/below.after" || fail "$label: next after"
    check "$label: every number above $top" "" "$(awk -v t="$top" '$1 <= t' "$WORK/below.after" | head -3)"
    return
  fi
  check "$label: the first 30" "1 30" "$(head -1 "$WORK/below.out") $top"
  check_match "$label: --start-after 5 below the recorded 30 is refused, naming it" \
    "^1 .*30 was handed out.*--start-after 5 is below it" "$(init_status --start-after 5 below)"
  check "$label: and nothing made" "" "$(seg next below 2>/dev/null || true)"
  check "$label: --start-after 30 is accepted" 0 "$(init_status --start-after 30 below | cut -d' ' -f1)"
  check "$label: above it" 31 "$(seg next below)"
  remove below
  check_match "$label: the record follows each block: --start-after 30 refused, naming 31" \
    "^1 .*31 was handed out" "$(init_status --start-after 30 below)"
  check "$label: --force accepts --start-after 5" 0 "$(init_status --start-after 5 --force below | cut -d' ' -f1)"
  check "$label: from 6 (the operator's choice)" 6 "$(seg next below)"
}

for backend in postgres etcd file mariadb; do
  if part "$backend"; then
    use_backend "$backend"
    say "$B at $DSN"
    [[ $B != postgres ]] || seg init other >/dev/null # leaf_alloc exists once any name does
    scenario_fleet "$B"
  fi
  if part "$backend-below"; then
    use_backend "$backend"
    say "$B at $DSN"
    scenario_below
  fi
done
if part postgres-rc; then
  use_backend postgres
  seg init other >/dev/null 2>&1 || true
  for level in "read committed" "repeatable read"; do
    sql "ALTER DATABASE postgres SET default_transaction_isolation = '$level'"
    sql "DELETE FROM leaf_alloc WHERE biz_tag LIKE 'orders:%'"
    sql "DELETE FROM leaf_alloc_made WHERE biz_tag LIKE 'orders:%'"
    sql "DELETE FROM leaf_alloc_newest" 2>/dev/null || true
    scenario_fleet "postgres-${level// /-}"
    # Two makers racing on the boundary, one each side, 8 times: each is made, or the
    # earlier day refused behind the later; none fails otherwise (a racing raise at
    # repeatable read fails to serialize and runs again), and the record ends at 1 Dec.
    race_out=$WORK/race-${level// /-}
    : >"$race_out"
    for r in 1 2 3 4 5 6 7 8; do
      (init_status "race$r:20261130" >>"$race_out.a") &
      (init_status "race$r:20261201" >>"$race_out.b") &
      wait
    done
    cat "$race_out.a" "$race_out.b" >"$race_out"
    check "postgres ${level}: racing makers: each made or refused behind" 0 \
      "$(grep -cvE '^0 $|^1 .*period 20261130 is behind 20261201' "$race_out" || true)"
    check "postgres ${level}: racing makers: every 1 Dec made, the record at it" "8 8" \
      "$(grep -c '^0 $' "$race_out.b") $(sql "SELECT count(*) FROM leaf_alloc_newest WHERE family LIKE 'race%' AND period = 20261201")"
    sql "DELETE FROM leaf_alloc_newest WHERE family LIKE 'race%'"
    sql "DELETE FROM leaf_alloc WHERE biz_tag LIKE 'race%'"
    sql "DELETE FROM leaf_alloc_made WHERE biz_tag LIKE 'race%'"
    rm -f "$race_out".*
  done
  sql "ALTER DATABASE postgres RESET default_transaction_isolation"
fi
if part mariadb-rc; then
  MDB=$WORK/mdb-rc MDB_OPTIONS=(--transaction-isolation=READ-COMMITTED)
  use_backend mariadb
  check "mariadb-rc: the servers run at READ-COMMITTED" READ-COMMITTED "$(mdb 0 "SELECT @@tx_isolation")"
  scenario_fleet mariadb-rc
fi
finish
