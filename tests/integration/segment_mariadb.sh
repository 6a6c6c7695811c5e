#!/usr/bin/env bash
# Segment generators on Flickr's ticket servers: two MariaDB servers counting apart
# (auto_increment_increment 2, offsets 1 and 2; scripts/mariadb-cluster.sh). Two
# processes sharing one name, kill -9 mid-block, both servers down and back under load,
# the step adapting, one server killed while the other carries on, servers that would
# collide refused, bad configuration.
# Usage: segment_mariadb.sh /path/to/idgen [PART...]   (tests/integration/parts.bash)
source "$(dirname "$0")/segment_common.bash"
source "$(dirname "$0")/parts.bash"
parts collide scenarios one-down restart init-down -- "${@:2}"
command -v mariadbd >/dev/null || "$SRC/scripts/deps.sh" test

EPS=$("$SRC/scripts/mariadb-cluster.sh" start "$T/mdb" 2)
stop_servers() { "$SRC/scripts/mariadb-cluster.sh" stop "$T/mdb"; }
echo "ticket servers at $EPS"
B=mariadb
DSN="servers=$EPS"
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

echo "segment_mariadb.sh: all passed"
