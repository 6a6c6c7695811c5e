#!/usr/bin/env bash
# Segment generators on PostgreSQL (Leaf's leaf_alloc table, scripts/pg-cluster.sh): two
# processes sharing one name, kill -9 mid-block, the server stopped and started under
# load, the step adapting (and recorded in the row), bad configuration.
# Usage: segment_postgres.sh /path/to/idgen
source "$(dirname "$0")/segment_common.bash"
command -v psql >/dev/null || "$SRC/scripts/deps.sh" test

port=$("$SRC/scripts/pg-cluster.sh" start "$T/pg" | cut -d' ' -f1)
stop_servers() { "$SRC/scripts/pg-cluster.sh" stop "$T/pg"; }
echo "PostgreSQL on port $port"
B=postgres
DSN="host=127.0.0.1 port=$port dbname=postgres user=postgres"
backend_stop() { "$SRC/scripts/pg-cluster.sh" stop "$T/pg"; }
backend_start() { "$SRC/scripts/pg-cluster.sh" restart "$T/pg"; }
sql() { psql -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atc "$1"; }

scenario_two_processes
scenario_kill9
scenario_outage
scenario_step
# The row says which block was leased last: [max_id - step + 1, max_id], step adapted.
# (A block prefetched as s1 stopped may lie beyond its last.)
row=$(sql "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = 'adapt'")
last=$(stat_of s1 last)
[[ ${row#*|} == 6400 && ${row%|*} -ge $last ]] || fail "leaf_alloc row for 'adapt': '$row', s1's last $last"
ok "leaf_alloc row: max_id ${row%|*}, step 6400 (the last block leased)"
scenario_bad_config "host=127.0.0.1 port"

# A server restart between two fetches costs no refusal: the kept connection is found
# broken at the next fetch, which tries again at once on a new one. Blocks of 50000:
# block 3 is fetched at number 60000, block 4 at 110000; the restart (about 1.5 s
# here) happens in between, while tens of thousands of numbers are handed out.
seg init restart >/dev/null
load r1 restart --step 50000 --pace-us 100
pid=$LOAD_PID
wait_lines "$T/r1.log" 65000
backend_stop
backend_start
wait_lines "$T/r1.log" 115000
kill -TERM "$pid"
wait "$pid" || fail "r1 failed"
check_histories "$T/r1.log"
[[ $(stat_of r1 backend_errors) -eq 0 && $(stat_of r1 refused) -eq 0 ]] ||
  fail "a restart between fetches: $(tail -1 "$T/r1.err")"
ok "server restarted between two fetches: the next fetch reconnected, no error"
# A missing table is named as such.
sql "DROP TABLE leaf_alloc"
status=0
seg next orders 2>"$T/err" || status=$?
[[ $status -eq 1 ]] && grep -q 'table leaf_alloc does not exist' "$T/err" ||
  fail "no table: exit $status, $(cat "$T/err")"
ok "no table: $(cat "$T/err")"
echo "segment_postgres.sh: all passed"
