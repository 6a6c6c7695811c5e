#!/usr/bin/env bash
# Segment generators on Flickr's ticket servers: two MariaDB servers counting apart
# (auto_increment_increment 2, offsets 1 and 2; scripts/mariadb-cluster.sh). Two
# processes sharing one name, kill -9 mid-block, both servers down and back under load,
# the step adapting, one server killed while the other carries on, servers that would
# collide refused, bad configuration. Then, on servers of their own started at each
# isolation level (READ-COMMITTED, REPEATABLE-READ, SERIALIZABLE) with a binary log in
# each format (ROW, STATEMENT, MIXED): 8 processes fetching small blocks at once, and 4
# processes sharing the ticket table (also a MyISAM one) with 4 of Flickr's one-number
# clients (segment_ticket_client); and READ-COMMITTED with a STATEMENT binlog refused.
# Usage: segment_mariadb.sh /path/to/idgen [PART...]   (tests/integration/parts.bash)
source "$(dirname "$0")/segment_common.bash"
source "$(dirname "$0")/parts.bash"
parts collide scenarios one-down restart init-down isolation shared isolation-rc shared-rc rc-statement \
  -- "${@:2}"
command -v mariadbd >/dev/null || "$SRC/scripts/deps.sh" test
CLIENT=$BUILD/segment_ticket_client
[[ -x $CLIENT ]] || fail "segment_ticket_client not built at $CLIENT"

CLUSTERS=()
stop_servers() {
  local d
  for d in "${CLUSTERS[@]}"; do "$SRC/scripts/mariadb-cluster.sh" stop "$d"; done
}
# ticket_servers DIR [MARIADBD_OPTION...]: two servers counting apart, under $T/DIR;
# sets EPS and DSN.
ticket_servers() {
  local dir=$T/$1
  shift
  CLUSTERS+=("$dir")
  EPS=$("$SRC/scripts/mariadb-cluster.sh" start "$dir" 2 "$@")
  DSN="servers=$EPS"
  echo "ticket servers at $EPS${*:+ ($*)}"
}
B=mariadb
if part collide || part scenarios || part one-down || part restart || part init-down; then
  ticket_servers mdb
fi
backend_stop() {
  "$SRC/scripts/mariadb-cluster.sh" kill "$T/mdb" 0
  "$SRC/scripts/mariadb-cluster.sh" kill "$T/mdb" 1
}
backend_start() {
  "$SRC/scripts/mariadb-cluster.sh" restart "$T/mdb" 0
  "$SRC/scripts/mariadb-cluster.sh" restart "$T/mdb" 1
}
odd_even() { numbers_of "$@" | awk '{ n[$1 % 2]++ } END { print n[1] + 0, n[0] + 0 }'; }

if part collide; then
  # Servers that would hand out the same numbers are refused, at init and as soon as a
  # generator meets both: here one server named twice.
  twice="servers=${EPS%%,*},${EPS%%,*}"
  status=0
  "$IDGEN" segment init --backend mariadb --dsn "$twice" twice >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] &&
    grep -q 'would hand out the same numbers' "$T/err" ||
    fail "init, one server twice: exit $status, $(cat "$T/err")"
  status=0
  "$IDGEN" segment next --backend mariadb --dsn "$twice" -n 2 --step 1 twice >"$T/out" 2>"$T/err" ||
    status=$?
  [[ $status -eq 1 && $(wc -l <"$T/out") -eq 1 && $(wc -l <"$T/err") -eq 1 ]] &&
    grep -q 'would hand out the same numbers' "$T/err" ||
    fail "next, one server twice: exit $status, $(cat "$T/err")"
  ok "one server named twice: $(cat "$T/err")"
fi

if part scenarios; then
  scenario_two_processes
  read -r odd even < <(odd_even "$T/p1.log" "$T/p2.log")
  [[ $odd -gt 0 && $even -gt 0 ]] || fail "blocks from one server only: $odd odd, $even even"
  ok "blocks came from both servers: $odd odd numbers, $even even"
  # A restarted generator starts above its server's counter, not above the other's.
  scenario_kill9 no
  scenario_outage
  scenario_step
  scenario_start_after
  scenario_bad_config "servers=127.0.0.1"
fi

if part one-down; then
  # One ticket server killed under load: the other carries on, with no refusal at all.
  seg init flickr >/dev/null
  load f1 flickr --step 500 --pace-us 50
  pid=$LOAD_PID
  wait_lines "$T/f1.log" 5000
  "$SRC/scripts/mariadb-cluster.sh" kill "$T/mdb" 0
  killed=$(wc -l <"$T/f1.log")
  wait_lines "$T/f1.log" $((killed + 20000))
  [[ $(tail -n 5000 "$T/f1.log" | awk '$3 % 2 == 1' | wc -l) -eq 0 ]] ||
    fail "odd numbers (the killed server's) in the last 5000 after the kill"
  "$SRC/scripts/mariadb-cluster.sh" restart "$T/mdb" 0
  back=$(wc -l <"$T/f1.log")
  for _ in $(seq 600); do
    tail -n +"$back" "$T/f1.log" | awk '$3 % 2 == 1 { found = 1 } END { exit !found }' && break
    sleep 0.1
  done
  tail -n +"$back" "$T/f1.log" | awk '$3 % 2 == 1 { found = 1 } END { exit !found }' ||
    fail "the restarted server was never used again"
  kill -TERM "$pid"
  wait "$pid" || fail "f1 failed"
  check_histories "$T/f1.log"
  ! grep -q ' ERR ' "$T/f1.log" || fail "refusals while one server was up: $(grep -c ' ERR ' "$T/f1.log")"
  ok "server 1 killed: server 2 carried on alone (no refusal), server 1 used again once back"
fi

if part restart; then
  # One ticket server alone (blocks hand out every other number), restarted between two
  # fetches.
  DSN="servers=${EPS%%,*}"
  restart_first() {
    "$SRC/scripts/mariadb-cluster.sh" kill "$T/mdb" 0 &&
      "$SRC/scripts/mariadb-cluster.sh" restart "$T/mdb" 0
  }
  scenario_restart_between_fetches single restart_first
  ok "one server restarted between two fetches: the next fetch reconnected, no error"
  DSN="servers=$EPS"
fi

if part init-down; then
  # init needs every server.
  "$SRC/scripts/mariadb-cluster.sh" kill "$T/mdb" 1
  status=0
  seg init late >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && $(wc -l <"$T/err") -eq 1 ]] && grep -q "${EPS#*,}" "$T/err" ||
    fail "init with a server down: exit $status, $(cat "$T/err")"
  ok "init with a server down: $(cat "$T/err")"
fi

# The server settings the isolation and shared parts run under: the block fetch must not
# depend on them.
SETTINGS=(
  "rc --transaction-isolation=READ-COMMITTED --log-bin --binlog-format=ROW"
  "rr --transaction-isolation=REPEATABLE-READ --log-bin --binlog-format=STATEMENT"
  "ser --transaction-isolation=SERIALIZABLE --log-bin --binlog-format=MIXED"
)
# twice FILES...: how many numbers occur more than once in the histories.
twice() { numbers_of "$@" | sort -n | uniq -d | wc -l; }

# isolation LEVEL: 8 processes, blocks of 10, one name: no two fetches may overlap.
isolation() {
  seg init iso >/dev/null
  local pids=() i p logs all dup
  for i in $(seq 8); do
    load "iso-$1-$i" iso --count 5000 --step 10 --max-step 10
    pids+=("$LOAD_PID")
  done
  for p in "${pids[@]}"; do wait "$p" || fail "a load process failed at $1"; done
  logs=("$T/iso-$1"-*.log)
  all=$(numbers_of "${logs[@]}" | wc -l) dup=$(twice "${logs[@]}")
  echo "$1: $dup of $all numbers handed out twice"
  [[ $all -eq 40000 && $dup -eq 0 ]] || fail "$1: $all numbers, $dup twice"
  check_histories "${logs[@]}"
  ok "$1: 8 processes taking blocks of 10: 40000 numbers, none twice"
}

# shared LEVEL [TABLE ENGINE]: 4 processes and 4 of Flickr's one-number clients (two
# on each server) on one ticket table (default tickets64, as init makes it): no number
# may reach both.
shared() {
  local table=${2:-tickets64} pids=() i p server both retries
  DSN="servers=$EPS table=$table" seg init shared >/dev/null
  if [[ $# -gt 1 ]]; then
    for server in ${EPS//,/ }; do
      mariadb --no-defaults -h "${server%:*}" -P "${server#*:}" -u root test \
        -e "ALTER TABLE $table ENGINE=$3" || fail "ALTER TABLE $table ENGINE=$3 failed"
    done
  fi
  for i in 1 2 3 4; do
    DSN="servers=$EPS table=$table" load "seg-$1-$i" shared --count 5000 --step 50 --max-step 50
    pids+=("$LOAD_PID")
    server=$(cut -d, -f$((i % 2 + 1)) <<<"$EPS")
    "$CLIENT" --server "$server" --table "$table" --process "flickr-$1-$i" --name shared \
      --out "$T/flickr-$1-$i.log" --count 5000 2>"$T/flickr-$1-$i.err" &
    pids+=($!)
    load_pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "a process failed at $1"; done
  both=$(comm -12 <(numbers_of "$T/seg-$1"-*.log | sort -u) \
    <(numbers_of "$T/flickr-$1"-*.log | sort -u) | wc -l)
  retries=$(sed -n 's/^TICKETCLIENT.* retries=//p' "$T/flickr-$1"-*.err |
    awk '{ n += $1 } END { print n + 0 }')
  echo "$1: $both numbers handed out by both, of 20000 on each side ($retries retries" \
    "of the one-number clients)"
  [[ $both -eq 0 ]] || fail "$1: $both numbers handed out both by idgen and by Flickr's clients"
  check_histories "$T/seg-$1"-*.log "$T/flickr-$1"-*.log
  ok "$1: 4 processes and 4 one-number clients on one ${3:-InnoDB} table: none shared"
}

# isolation-rc and shared-rc: the same at READ-COMMITTED alone, the level that broke the
# old statement: the mutants' killers, at a third of the time.
if part isolation || part shared || part isolation-rc || part shared-rc; then
  for s in "${SETTINGS[@]}"; do
    read -r level opts <<<"$s"
    read -ra opts <<<"$opts"
    want_isolation=0 want_shared=0
    if part isolation || { [[ $level == rc ]] && part isolation-rc; }; then want_isolation=1; fi
    if part shared || { [[ $level == rc ]] && part shared-rc; }; then want_shared=1; fi
    [[ $want_isolation$want_shared != 00 ]] || continue
    ticket_servers "$level" "${opts[@]}"
    if [[ $want_isolation == 1 ]]; then isolation "$level"; fi
    if [[ $want_shared == 1 ]]; then shared "$level"; fi
    # Flickr's own tables were MyISAM: no transactions, the lock alone.
    if part shared && [[ $level == rr ]]; then shared myisam tickets_myisam MyISAM; fi
    stop_servers
    CLUSTERS=()
  done
fi

if part rc-statement; then
  # READ-COMMITTED with a STATEMENT binlog: the server refuses every InnoDB write (its
  # error 1665), idgen's as Flickr's clients': one clear line, nothing handed out.
  ticket_servers rc-statement --transaction-isolation=READ-COMMITTED --log-bin --binlog-format=STATEMENT
  status=0
  seg init refused >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] &&
    grep -q 'BINLOG_FORMAT = STATEMENT' "$T/err" || fail "init at READ-COMMITTED, STATEMENT: exit $status, $(cat "$T/err")"
  status=0
  seg next -n 3 --step 5 refused >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] &&
    grep -q 'BINLOG_FORMAT = STATEMENT' "$T/err" || fail "next at READ-COMMITTED, STATEMENT: exit $status, $(cat "$T/err")"
  ok "READ-COMMITTED with a STATEMENT binlog: refused by the server, one line: $(cut -c1-100 "$T/err")"
  stop_servers
  CLUSTERS=()
fi

echo "segment_mariadb.sh: all passed"
