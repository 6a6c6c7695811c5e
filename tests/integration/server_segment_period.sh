#!/usr/bin/env bash
# Time-scoped segment sequences (issue 28) over a faked midnight (libfaketime: each
# server's wall clock starts just before 2026-12-01T00:00:00Z and runs): on the file,
# PostgreSQL and etcd backends, two servers sharing 'orders' (period: day) with clocks
# 1.5 s apart cross midnight under load. Checked: no number twice; each server hands out
# the old day's numbers, then only the new day's (never back); the new day starts at 1
# under its own key (orders:20261201); the old day's buffered blocks were dropped; the
# file backend's key file and .created record exist, and a lost key file is refused at
# the next start. On MariaDB (two ticket servers counting apart, scripts/mariadb-cluster.sh)
# the same crossing, each day its own InnoDB ticket table (tickets64_20261201) recorded in
# tickets64_periods, both days from 1; a period table dropped is refused by the running
# server and by one started later, a start whose CREATE TABLE fails has left 'making'
# and a later start makes the table; the ticket servers killed and restarted, the
# period goes on above its numbers. A file-path DSN and a MariaDB table too long for its
# period tables' names are refused at config time.
# Then text forms (format:): a segment generator's ORD-{date:%Y%m%d}-{seq:06} over HTTP,
# format=raw, parsed back by `idgen decode --generator`; a snowflake generator's ord_
# prefix; bad formats refused at config time.
# Then a day in the hour before a midnight DST change (issue 35): America/Santiago on
# 2026-09-06, America/Havana on 2026-03-08, Atlantic/Azores on 2026-03-29 jump from
# 23:59:59 to 01:00, so the day after starts at 01:00. At 23:30 local the day before, a
# server with one thread answers with a number of that day, /healthz and the default
# generator answer too, and the day's counter stays within what was handed out (no
# blocks burnt in a loop); a second server started at 23:59:58 crosses the jump, hands
# out both days' numbers (the new one from 1), none twice, each day's rising.
# On Redis (AOF always) the same crossing; then each day's key made only by key_start:
# an old day's key and record removed (as the docs allow once the newest-period record
# idgen:default:segment-newest:orders:day is past it) is not made again by a server
# whose clock is behind; the current day's key lost, alone or with its record, is
# refused; a Redis with AOF off makes no day's key (so a restart repeats nothing); an
# allkeys-lru policy is refused at the first fetch.
# Parts: file postgres etcd mariadb mariadb-lost mariadb-restart redis redis-lost
# refusals formats dst.
# Usage: server_segment_period.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts file postgres etcd mariadb mariadb-lost mariadb-restart redis redis-lost refusals formats dst -- "${@:2}"
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FT ]] || { echo "FAIL: libfaketime not installed at $FT (scripts/deps.sh test)" >&2; exit 1; }
chmod 755 "$WORK" # PostgreSQL runs as its own user
BACKEND_STOP=()
period_cleanup() {
  local c
  for c in "${BACKEND_STOP[@]}"; do eval "$c" || true; done
  cleanup
}
trap period_cleanup EXIT

# write_config FILE BACKEND DSN
write_config() {
  cat >"$1" <<YAML
generators:
  default: {kind: uuid7}
  orders:
    kind: segment
    backend: $2
    dsn: "$3"
    step: 5
    max_step: 5
    prefetch_pct: 0
    retry_ms: 100
    period: day
    timezone: UTC
YAML
}

# start_at NAME CONFIG "FAKETIME" [serve options]: a server whose wall clock starts at
# the given time (libfaketime, UTC; the monotonic clock left alone), ready for 'orders'.
start_at() {
  local name=$1 config=$2 at=$3 i
  shift 3
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@$at" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server "$name" --config "$config" "$@" || return 1
  for i in $(seq 1 100); do
    [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] &&
      return 0
    sleep 0.05
  done
  fail "server $name: 'orders' never became ready"
  cat "$SERVER_LOG" >&2
  return 1
}

# draw_batch URL OUT: ten requests of draw_ids, then a pause. The loops below run for a
# time (to a server's midnight): flat out, with a curl and a jq per request, each kept a
# core busy (the file part took 19.5 CPU-s); with a pause of 0.05 s, about 140 requests
# a second (12.8 CPU-s); of 0.15 s, about 50 (100 numbers a second, in blocks of 5).
draw_batch() {
  draw_ids "$1" 10 "$2"
  sleep 0.15
}

# draw URL OUT SECONDS: draw_batch in a loop.
draw() {
  local end=$((SECONDS + $3))
  while ((SECONDS < end)); do draw_batch "$1" "$2"; done
}

# draw_across URL OUT: draw as above until OUT holds 6 numbers of the new day (at most
# 60 s): a server's midnight comes when its clock says, however long it took to start.
draw_across() {
  local end=$((SECONDS + 60))
  while ((SECONDS < end)) && [[ $(grep -c '^20261201' "$2") -lt 6 ]]; do
    draw_batch "$1" "$2"
  done
}

# crossing LABEL BACKEND DSN: two servers 1.5 s apart draw across their midnights. Their
# clocks start 10 and 8.5 s before it, so that a busy machine still starts both, and
# draws from both, in the old day.
crossing() {
  local label=$1 b=$2 dsn=$3
  write_config "$WORK/$label.yaml" "$b" "$dsn"
  start_at "$label-a" "$WORK/$label.yaml" "2026-11-30 23:59:50" || return
  local ua=http://$HTTP pa=$SERVER_PID
  start_at "$label-b" "$WORK/$label.yaml" "2026-11-30 23:59:51.5" || return
  local ub=http://$HTTP pb=$SERVER_PID
  : >"$WORK/$label-a.out"
  : >"$WORK/$label-b.out"
  draw_across "$ua" "$WORK/$label-a.out" &
  local da=$!
  draw_across "$ub" "$WORK/$label-b.out"
  wait "$da"
  local s
  for s in a b; do
    local f=$WORK/$label-$s.out
    check "$label $s: only the two days' numbers" 0 \
      "$(grep -cvE '^2026113000[0-9]{4}$|^2026120100[0-9]{4}$' "$f")"
    check_match "$label $s: both days drawn" "^[1-9][0-9]* [1-9][0-9]*$" \
      "$(grep -c '^20261130' "$f") $(grep -c '^20261201' "$f")"
    # One server's numbers: the old day's, then the new day's, never back; each day's
    # rise.
    check "$label $s: never back to the old day" "" \
      "$(awk 'substr($0,1,8)=="20261201"{n=1} n && substr($0,1,8)=="20261130"{print; exit}' "$f")"
    check "$label $s: rising" "" "$(awk 'NR>1 && $0+0 <= p {print p" then "$0; exit} {p=$0+0}' "$f")"
  done
  check "$label: no number twice across both servers" "" \
    "$(sort "$WORK/$label-a.out" "$WORK/$label-b.out" | uniq -d | head -3 | tr '\n' ' ')"
  check "$label: the old day started at 1" 20261130000001 \
    "$(cat "$WORK/$label-a.out" "$WORK/$label-b.out" | grep '^20261130' | sort -n | head -1)"
  check "$label: the new day starts at 1" 20261201000001 \
    "$(cat "$WORK/$label-a.out" "$WORK/$label-b.out" | grep '^20261201' | sort -n | head -1)"
  local info
  info=$(curl -s "$ua/v1/info" | jq -c '.generators.orders | [.period, .timezone, .current_period, (.period_dropped > 0)]')
  check "$label a: /v1/info shows the period, and the old day's blocks dropped" \
    '["day","UTC",20261201,true]' "$info"
  stop_server "$pa" || fail "$label a: exit status"
  stop_server "$pb" || fail "$label b: exit status"
}

if part file; then
  dir=$WORK/segdir
  mkdir -p "$dir"
  crossing file file "$dir/"
  check "file: a key file and a .created record per day, the days' newest record" \
    "segment-orders:20261130 segment-orders:20261130.created segment-orders:20261201 segment-orders:20261201.created segment-orders:YYYYMMDD.newest" \
    "$(cd "$dir" && ls segment-orders:* | sort | tr '\n' ' ' | sed 's/ $//')"
  # The 1st's file lost: a server on the 1st refuses it (not again from 1).
  rm "$dir/segment-orders:20261201"
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@2026-12-01 08:00:00" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server file-lost --config "$WORK/file.yaml"
  for _ in $(seq 40); do
    code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://$HTTP/v1/id?name=orders")
    grep -q "is gone" <(curl -s "http://$HTTP/readyz?name=orders") && break
    sleep 0.05
  done
  check "file: a lost day's key is refused (503), not made again at 1" 503 "$code"
  check_match "file: the reason names the lost file" "segment-orders:20261201 is gone" \
    "$(curl -s "http://$HTTP/readyz?name=orders" | jq -r .error.message)"
  stop_server || true
fi

if part postgres; then
  command -v psql >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  port=$("$SOURCE_DIR/scripts/pg-cluster.sh" start "$WORK/pg" | cut -d' ' -f1)
  BACKEND_STOP+=("'$SOURCE_DIR/scripts/pg-cluster.sh' stop '$WORK/pg'")
  dsn="host=127.0.0.1 port=$port dbname=postgres user=postgres"
  # The table exists once any name was initialised; the period keys are rows made at
  # their first fetch.
  "$IDGEN" segment init --backend postgres --dsn "$dsn" other >/dev/null || fail "segment init"
  crossing postgres postgres "$dsn"
  check "postgres: a row per day" "orders:20261130 orders:20261201" \
    "$(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atc \
      "SELECT biz_tag FROM leaf_alloc WHERE biz_tag LIKE 'orders:%' ORDER BY 1" | tr '\n' ' ' | sed 's/ $//')"
fi

if part etcd; then
  command -v etcd >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  dsn=$("$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd" 1)
  BACKEND_STOP+=("'$SOURCE_DIR/scripts/etcd-cluster.sh' stop '$WORK/etcd'")
  crossing etcd etcd "$dsn"
fi

# The Redis parts share one server (AOF always).
if part redis || part redis-lost; then
  command -v redis-server >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  RS=$SOURCE_DIR/scripts/redis-server.sh
  redis_dsn=$("$RS" start "$WORK/redis")
  BACKEND_STOP+=("'$RS' stop '$WORK/redis'" "'$RS' stop '$WORK/redis-volatile'")
fi

if part redis; then
  crossing redis redis "$redis_dsn"
  check "redis: the newest period recorded" 20261201 \
    "$("$RS" cli "$WORK/redis" GET idgen:default:segment-newest:orders:day)"
  check "redis: each day's record holds its highest max" "$(
    "$RS" cli "$WORK/redis" GET idgen:default:segment:orders:20261201)" \
    "$("$RS" cli "$WORK/redis" GET idgen:default:segment-made:orders:20261201)"
fi

# refused_at LABEL CONFIG "FAKETIME" PATTERN: a server started then hands out no number
# of 'orders' (503) and its reason matches PATTERN.
refused_at() {
  local label=$1 config=$2 at=$3 pattern=$4 code="" reason="" i
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@$at" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server "$label" --config "$config" || return
  for i in $(seq 100); do
    code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://$HTTP/v1/id?name=orders")
    reason=$(curl -s "http://$HTTP/readyz?name=orders" | jq -r '.error.message // empty')
    # A number handed out fails the check at once: waiting longer cannot mend it.
    [[ $code == 200 ]] || tried_reason "$reason" && break
    sleep 0.05
  done
  check "$label: refused (503), no number handed out" "503" \
    "$code$(grep -o '"id":"[0-9]*"' "$WORK/body" | sed 's/^/ /')"
  check_match "$label: the reason" "$pattern" "$reason"
  stop_server || true
}

if part redis-lost; then
  rc=("$RS" cli "$WORK/redis")
  write_config "$WORK/redis-lost.yaml" redis "$redis_dsn"
  # Two days, as a crossing leaves them: the 30th's key and record, the 1st's.
  start_at rl-a "$WORK/redis-lost.yaml" "2026-11-30 12:00:00"
  curl -s "http://$HTTP/v1/ids?name=orders&count=7" >/dev/null
  stop_server || true
  start_at rl-b "$WORK/redis-lost.yaml" "2026-12-01 12:00:00"
  curl -s "http://$HTTP/v1/ids?name=orders&count=7" >/dev/null
  stop_server || true
  # The 30th's key and record removed as the docs allow (the newest period, the 1st, is
  # past it): a server whose clock still reads the 30th does not make it again.
  # (an older idgen's registry entry too).
  "${rc[@]}" DEL idgen:default:segment:orders:20261130 idgen:default:segment-made:orders:20261130 >/dev/null
  "${rc[@]}" HDEL idgen:default:segments orders:20261130 >/dev/null
  refused_at rl-behind "$WORK/redis-lost.yaml" "2026-11-30 23:59:40" \
    "segment-newest:orders:day says servers have entered period 20261201"
  check "redis-lost: the 30th's key not made again" 0 \
    "$("${rc[@]}" EXISTS idgen:default:segment:orders:20261130)"
  # The 1st's key lost alone: refused, naming its record's max.
  "${rc[@]}" DEL idgen:default:segment:orders:20261201 >/dev/null
  refused_at rl-gone "$WORK/redis-lost.yaml" "2026-12-01 13:00:00" \
    "orders:20261201 is gone, but idgen:default:segment-made:orders:20261201 records it made, up to [1-9]"
  # ... and with its record (a foreign client): the newest period still refuses it.
  "${rc[@]}" DEL idgen:default:segment-made:orders:20261201 >/dev/null
  "${rc[@]}" HDEL idgen:default:segments orders:20261201 >/dev/null
  refused_at rl-both "$WORK/redis-lost.yaml" "2026-12-01 13:00:00" "entered period 20261201"
  # An evicting policy: refused at the first fetch, naming the policy.
  "${rc[@]}" CONFIG SET maxmemory-policy allkeys-lru >/dev/null
  refused_at rl-lru "$WORK/redis-lost.yaml" "2026-12-02 10:00:00" "maxmemory-policy allkeys-lru"
  "${rc[@]}" CONFIG SET maxmemory-policy noeviction >/dev/null
  # AOF off: no day's key is made, so a restart that empties Redis repeats nothing.
  vdsn=$("$RS" start "$WORK/redis-volatile" --aof off)
  write_config "$WORK/redis-volatile.yaml" redis "$vdsn"
  refused_at rl-volatile "$WORK/redis-volatile.yaml" "2026-12-01 10:00:00" "AOF off"
  "$RS" kill "$WORK/redis-volatile"
  "$RS" restart "$WORK/redis-volatile" >/dev/null
  refused_at rl-volatile2 "$WORK/redis-volatile.yaml" "2026-12-01 10:00:30" "AOF off"
fi

# The MariaDB parts share two ticket servers (each part its own days).
MDB_DSN=""
mariadb_up() {
  [[ -n $MDB_DSN ]] && return
  command -v mariadbd >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
  MDB_DSN="servers=$("$SOURCE_DIR/scripts/mariadb-cluster.sh" start "$WORK/mdb" 2)"
  BACKEND_STOP+=("'$SOURCE_DIR/scripts/mariadb-cluster.sh' stop '$WORK/mdb'")
}
# sql I STATEMENT: on ticket server I, its rows tab-separated.
sql() {
  mariadb --no-defaults -h 127.0.0.1 -P "$(cat "$WORK/mdb/m$1.port")" -u root -N -B test -e "$2"
}
# refusal_of NAME WANT-REGEX: /v1/id until a 503 whose reason matches (a running
# server's buffered numbers go first); the last code and reason.
refusal_of() {
  local code msg
  for _ in $(seq 100); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/id?name=orders")
    msg=$(curl -s "http://$HTTP/readyz?name=orders" | jq -r '.error.message // empty')
    [[ $code == 503 && $msg =~ $2 ]] && break
    sleep 0.05
  done
  check "$1: refused (503)" 503 "$code"
  check_match "$1: the reason" "$2" "$msg"
}

if part mariadb; then
  mariadb_up
  crossing mariadb mariadb "$MDB_DSN"
  for i in 0 1; do
    check "mariadb server $i: an InnoDB ticket table per day, and the record" \
      "tickets64_20261130 InnoDB tickets64_20261201 InnoDB tickets64_newest InnoDB tickets64_periods InnoDB" \
      "$(sql "$i" "SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME LIKE 'tickets64%' ORDER BY 1" | tr '\t\n' '  ' | sed 's/ $//')"
    check "mariadb server $i: both days recorded made" \
      "tickets64_20261130 made tickets64_20261201 made" \
      "$(sql "$i" "SELECT period_table, state FROM tickets64_periods ORDER BY 1" | tr '\t\n' '  ' | sed 's/ $//')"
  done
  check_match "mariadb: both ticket servers' numbers (odd and even)" "^[1-9][0-9]* [1-9][0-9]*$" \
    "$(cat "$WORK"/mariadb-?.out | awk '{ n[$1 % 2]++ } END { print n[1] + 0, n[0] + 0 }')"
fi

if part mariadb-lost; then
  mariadb_up
  write_config "$WORK/lost.yaml" mariadb "$MDB_DSN"
  start_at lost-a "$WORK/lost.yaml" "2026-12-05 08:00:00" || true
  pa=$SERVER_PID
  check "mariadb-lost: the day starts at 1" 20261205000001 \
    "$(curl -s "http://$HTTP/v1/id?name=orders" | jq -r .id)"
  sql 0 "DROP TABLE tickets64_20261205"
  sql 1 "DROP TABLE tickets64_20261205"
  refusal_of "mariadb-lost: the running server" "period table tickets64_20261205 is gone"
  stop_server "$pa" || fail "mariadb-lost a: exit status"
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@2026-12-05 09:00:00" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server lost-b --config "$WORK/lost.yaml"
  refusal_of "mariadb-lost: a server started later" "period table tickets64_20261205 is gone"
  check "mariadb-lost: not made again" 0 \
    "$(sql 0 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = 'tickets64_20261205'")"
  stop_server || fail "mariadb-lost b: exit status"
  # A start that stops at its CREATE TABLE: server 0 holds every CREATE of a new table
  # back for 8 s (BACKUP STAGE BLOCK_DDL), past idgen's lock_wait_timeout (its 5 s
  # request timeout), so the CREATE fails. The record says 'making' already while the
  # CREATE waits (no number came from the table), and a later start makes the table.
  sql 0 "SELECT 1 FROM tickets64_periods LIMIT 0" # the record table is there
  mariadb --no-defaults -h 127.0.0.1 -P "$(cat "$WORK/mdb/m0.port")" -u root test \
    -e "BACKUP STAGE START; BACKUP STAGE BLOCK_DDL; SELECT SLEEP(8); BACKUP STAGE END" >/dev/null &
  blocker=$!
  sleep 0.5
  TZ=UTC LD_PRELOAD=$FT FAKETIME="@2026-12-06 08:00:00" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    launch_server lost-c --config "$WORK/lost.yaml"
  for _ in $(seq 60); do
    [[ -n $(sql 0 "SELECT state FROM tickets64_periods WHERE period_table = 'tickets64_20261206'") ]] && break
    sleep 0.05
  done
  check "mariadb-lost: a start held at its CREATE TABLE has recorded 'making', no table yet" "making 0" \
    "$(sql 0 "SELECT state FROM tickets64_periods WHERE period_table = 'tickets64_20261206'") $(sql 0 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = 'tickets64_20261206'")"
  wait "$blocker" || fail "mariadb-lost: the DDL blocker failed"
  : >"$WORK/lost-c.out"
  for _ in $(seq 100); do
    curl -s "http://$HTTP/v1/ids?name=orders&count=2" | jq -r '.ids[]?' >>"$WORK/lost-c.out"
    [[ $(sql 0 "SELECT state FROM tickets64_periods WHERE period_table = 'tickets64_20261206'") == made ]] &&
      awk '$1 % 2 == 1 { f = 1 } END { exit !f }' "$WORK/lost-c.out" && break
    sleep 0.05
  done
  check "mariadb-lost: made later, and server 0's (odd) numbers handed out" "made 1" \
    "$(sql 0 "SELECT state FROM tickets64_periods WHERE period_table = 'tickets64_20261206'") $(awk '$1 % 2 == 1 { f = 1 } END { print f + 0 }' "$WORK/lost-c.out")"
  check "mariadb-lost: no number twice" "" "$(sort "$WORK/lost-c.out" | uniq -d | head -3 | tr '\n' ' ')"
  stop_server || fail "mariadb-lost c: exit status"
fi

if part mariadb-restart; then
  mariadb_up
  write_config "$WORK/restart.yaml" mariadb "$MDB_DSN"
  start_at restart-a "$WORK/restart.yaml" "2026-12-10 08:00:00" || true
  ua=http://$HTTP pa=$SERVER_PID
  : >"$WORK/restart-1.out"
  draw "$ua" "$WORK/restart-1.out" 2
  before=$(sort -n "$WORK/restart-1.out" | tail -1)
  for i in 0 1; do
    "$SOURCE_DIR/scripts/mariadb-cluster.sh" kill "$WORK/mdb" "$i"
    "$SOURCE_DIR/scripts/mariadb-cluster.sh" restart "$WORK/mdb" "$i"
  done
  : >"$WORK/restart-2.out"
  draw "$ua" "$WORK/restart-2.out" 1
  start_at restart-b "$WORK/restart.yaml" "2026-12-10 09:00:00" || true
  ub=http://$HTTP pb=$SERVER_PID
  : >"$WORK/restart-3.out"
  draw "$ub" "$WORK/restart-3.out" 1
  check_match "mariadb-restart: numbers drawn before, then by the running and a new server" \
    "^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$" \
    "$(wc -l <"$WORK/restart-1.out") $(wc -l <"$WORK/restart-2.out") $(wc -l <"$WORK/restart-3.out")"
  check "mariadb-restart: the day's numbers only, from 1" "0 20261210000001" \
    "$(cat "$WORK"/restart-?.out | grep -cv '^20261210') $(sort -n "$WORK/restart-1.out" | head -1)"
  check "mariadb-restart: after the restart, all above the numbers before ($before)" "" \
    "$(cat "$WORK/restart-2.out" "$WORK/restart-3.out" | awk -v b="$before" '$1 + 0 <= b + 0 { print; exit }')"
  check "mariadb-restart: no number twice" "" \
    "$(sort "$WORK"/restart-?.out | uniq -d | head -3 | tr '\n' ' ')"
  stop_server "$pa" || fail "mariadb-restart a: exit status"
  stop_server "$pb" || fail "mariadb-restart b: exit status"
fi

if part refusals; then
  # usage: the line of serve --config, exit 2, one line.
  refused() { # NAME CONFIG-TEXT REGEX
    printf '%s\n' "$2" >"$WORK/bad.yaml"
    local rc=0
    # bounded: a config taken by mistake would serve on (exit 124, not 2)
    timeout 20 "$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --state-dir "$WORK/st" \
      --config "$WORK/bad.yaml" >/dev/null 2>"$WORK/bad.err" || rc=$?
    check "$1: exit 2, one line" "2 1" "$rc $(wc -l <"$WORK/bad.err")"
    check_match "$1: the reason" "$3" "$(cat "$WORK/bad.err")"
  }
  mkdir -p "$WORK/st"
  # MariaDB: a period table TABLE_YYYYMMDD and the record TABLE_periods must fit its
  # 64-character names (a table of 55 is fine for a day, 57 for a month).
  refused "mariadb: a table too long for a day's tables" 'generators:
  orders: {kind: segment, backend: mariadb, dsn: "servers=127.0.0.1:3306 table=tttttttttttttttttttttttttttttttttttttttttttttttttttttttt", period: day}' \
    "table 'tttttttttttttttttttttttttttttttttttttttttttttttttttttttt' is too long for a day period"
  refused "mariadb: a table too long for TABLE_periods" 'generators:
  orders: {kind: segment, backend: mariadb, dsn: "servers=127.0.0.1:3306 table=mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", period: month}' \
    "table 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm' is too long for a month period: .*use at most 56"
  refused "a file path" "generators:
  orders: {kind: segment, backend: file, dsn: \"$WORK/st/one-file\", period: day}" \
    "needs a directory"
  refused "unknown period" 'generators:
  orders: {kind: segment, period: week}' "'week' is not a period"
  refused "unknown timezone" 'generators:
  orders: {kind: segment, period: day, timezone: Mars/Olympus}' "timezone 'Mars/Olympus'"
  refused "digits 11" 'generators:
  orders: {kind: segment, period: day, digits: 11}' "digits"
  refused "a format too narrow" 'generators:
  orders: {kind: segment, period: day, digits: 7, format: "ORD-{date:%Y%m%d}-{seq:06}"}' \
    "format: \{seq:06\} cannot hold the largest number of a period, 9999999"
  refused "a format not parsed back (%y)" 'generators:
  orders: {kind: segment, period: day, format: "ORD-{date:%y%m%d}-{seq:06}"}' \
    "%y cannot be read back"
  refused "a format without the day" 'generators:
  orders: {kind: segment, period: day, format: "ORD-{date:%Y%m}-{seq:06}"}' \
    "cannot be read back to a day"
  refused "a format without a period" 'generators:
  orders: {kind: segment, format: "ORD-{seq:06}"}' "needs a period"
  refused "a snowflake format that is not PREFIX{base62}" 'generators:
  charges: {kind: snowflake, format: "ch_{hex}"}' "PREFIX\{base62\}"
fi

if part formats; then
  mkdir -p "$WORK/fmt"
  cat >"$WORK/fmt.yaml" <<YAML
generators:
  default: {kind: uuid7}
  orders:
    kind: segment
    dsn: "$WORK/fmt/"
    period: day
    timezone: Europe/Berlin
    format: "ORD-{date:%Y%m%d}-{seq:06}"
  charges:
    kind: snowflake
    format: "ch_{base62}"
    namespace: $IDGEN_NAMESPACE-charges
YAML
  launch_server formats --config "$WORK/fmt.yaml"
  U=http://$HTTP
  for _ in $(seq 100); do
    [[ $(http_code "$U/readyz?name=orders") == 200 &&
       $(http_code "$U/readyz?name=charges") == 200 ]] && break
    sleep 0.1
  done
  today=$(TZ=Europe/Berlin date +%Y%m%d)
  check "orders: its text form" "ORD-$today-000001" "$(curl -s "$U/v1/id?name=orders" | jq -r .id)"
  check "orders: format=raw is the integer" "${today}000002" \
    "$(curl -s "$U/v1/id?name=orders&format=raw" | jq -r .id)"
  check "orders: a batch" "ORD-$today-000003 ORD-$today-000004" \
    "$(curl -s "$U/v1/ids?name=orders&count=2" | jq -r '.ids | join(" ")')"
  check "decode --generator: period and number" \
    "{\"id\":\"ORD-$today-000123\",\"generator\":\"orders\",\"value\":\"${today}000123\",\"period\":$today,\"number\":123}" \
    "$("$IDGEN" decode --json --generator orders --config "$WORK/fmt.yaml" "ORD-$today-000123")"
  check "decode --generator via IDGEN_CONFIG" 123 \
    "$(IDGEN_CONFIG=$WORK/fmt.yaml "$IDGEN" decode --json --generator orders "ORD-$today-000123" | jq .number)"
  for bad in "ORD-$today-00012" "ORD-${today}-0000123" "ord-$today-000123" "ORD-20261301-000001" \
             "ORD-$today-000000" "ORD-20260229-000001"; do
    rc=0
    "$IDGEN" decode --generator orders --config "$WORK/fmt.yaml" "$bad" >"$WORK/out" 2>"$WORK/err" || rc=$?
    check "decode --generator refuses $bad: exit 2, one line, no output" "2 1 0" \
      "$rc $(wc -l <"$WORK/err") $(wc -c <"$WORK/out")"
  done
  ch=$(curl -s "$U/v1/id?name=charges" | jq -r .id)
  check_match "charges: ch_ and 11 base62 characters" '^ch_[0-9A-Za-z]{11}$' "$ch"
  raw=$(curl -s "$U/v1/decode/$ch?name=charges" | jq -r .id)
  check "charges: /v1/decode reads its text form" \
    "$("$IDGEN" decode --json "${ch#ch_}" | jq -r .id)" "$raw"
  check "charges: decode --generator gives the same ID" "$raw" \
    "$("$IDGEN" decode --json --generator charges --config "$WORK/fmt.yaml" "$ch" | jq -r .id)"
  check_match "charges: format=raw is decimal" '^[0-9]{17,19}$' \
    "$(curl -s "$U/v1/id?name=charges&format=raw" | jq -r .id)"
  check "no generator of that name" "2" \
    "$("$IDGEN" decode --generator nope --config "$WORK/fmt.yaml" x 2>/dev/null; echo $?)"
  stop_server || fail "formats: exit status"
fi
if part dst; then
  # dst_case ZONE UTC-AT-23:30-LOCAL UTC-AT-23:59:58-LOCAL DAY NEXT-DAY
  dst_case() {
    local zone=$1 at=$2 near=$3 day=$4 next=$5 dir=$WORK/dst-$4 code body
    mkdir -p "$dir"
    write_config "$WORK/dst-$day.yaml" file "$dir/"
    sed -i "s|timezone: UTC|timezone: $zone|" "$WORK/dst-$day.yaml"
    # One serving thread: a request that spun would stall every other request.
    TZ=UTC LD_PRELOAD=$FT FAKETIME="@$at" FAKETIME_DONT_FAKE_MONOTONIC=1 \
      launch_server "dst-$day" --config "$WORK/dst-$day.yaml" --threads 1 || return
    # Bounded: on the code before issue 35 the request never answers.
    code=$(curl -s -m 10 -o "$WORK/body" -w '%{http_code}' "http://$HTTP/v1/id?name=orders" || true)
    body=$(jq -r '.id // empty' "$WORK/body" 2>/dev/null || true)
    check "$zone 23:30: an answer" 200 "$code"
    if [[ $code != 200 ]]; then # a server that spins answers nothing more: stopped
      kill -KILL "$SERVER_PID" 2>/dev/null || true
      return
    fi
    check_match "$zone 23:30: a number of $day" "^${day}00000[1-9]$" "$body"
    check "$zone 23:30: /healthz answers" 200 \
      "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://$HTTP/healthz" || true)"
    check "$zone 23:30: the default generator answers" 200 \
      "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://$HTTP/v1/id" || true)"
    local i
    for i in $(seq 20); do curl -s -m 10 -o /dev/null "http://$HTTP/v1/id?name=orders" || true; done
    # 21 numbers in blocks of 5: the day's counter holds at most a few blocks more.
    local info
    info=$(curl -s -m 10 "http://$HTTP/v1/info" |
      jq -r '.generators.orders | "\(.current_period) \(.last_leased) \(.blocks_fetched)"' || true)
    check_match "$zone 23:30: the day's counter bounded (period last_leased blocks)" \
      "^$day ([1-9]|[1-3][0-9]|40) ([1-8])$" "$info"
    stop_server || fail "$zone 23:30: exit status"
    # Across the jump: 23:59:58 local, then 01:00 of the next day 2 s later.
    TZ=UTC LD_PRELOAD=$FT FAKETIME="@$near" FAKETIME_DONT_FAKE_MONOTONIC=1 \
      launch_server "dst-$day-near" --config "$WORK/dst-$day.yaml" --threads 1 || return
    : >"$WORK/dst-$day.out"
    local end=$((SECONDS + 30))
    until grep -q "^$next" "$WORK/dst-$day.out" || ((SECONDS > end)); do
      curl -s -m 10 "http://$HTTP/v1/ids?name=orders&count=2" | jq -r '.ids[]?' >>"$WORK/dst-$day.out" || true
    done
    check_match "$zone across the jump: both days drawn" "^[1-9][0-9]* [1-9][0-9]*$" \
      "$(grep -c "^$day" "$WORK/dst-$day.out") $(grep -c "^$next" "$WORK/dst-$day.out")"
    check "$zone across the jump: only the two days' numbers" 0 \
      "$(grep -cvE "^${day}[0-9]{6}$|^${next}[0-9]{6}$" "$WORK/dst-$day.out")"
    check "$zone across the jump: the new day starts at 1" "${next}000001" \
      "$(grep "^$next" "$WORK/dst-$day.out" | sort -n | head -1)"
    check "$zone across the jump: no number twice" "" \
      "$(sort "$WORK/dst-$day.out" | uniq -d | head -3 | tr '\n' ' ')"
    check "$zone across the jump: rising" "" \
      "$(awk 'NR>1 && $0+0 <= p {print p" then "$0; exit} {p=$0+0}' "$WORK/dst-$day.out")"
    stop_server || fail "$zone across the jump: exit status"
  }
  dst_case America/Santiago "2026-09-06 03:30:00" "2026-09-06 03:59:58" 20260905 20260906
  dst_case America/Havana "2026-03-08 04:30:00" "2026-03-08 04:59:58" 20260307 20260308
  dst_case Atlantic/Azores "2026-03-29 00:30:00" "2026-03-29 00:59:58" 20260328 20260329
fi
finish
