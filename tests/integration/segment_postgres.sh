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
scenario_start_after
# The row says which block was leased last: [max_id - step + 1, max_id], step adapted.
# (A block prefetched as s1 stopped may lie beyond its last.)
row=$(sql "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = 'adapt'")
last=$(stat_of s1 last)
[[ ${row#*|} == 6400 && ${row%|*} -ge $last ]] || fail "leaf_alloc row for 'adapt': '$row', s1's last $last"
ok "leaf_alloc row: max_id ${row%|*}, step 6400 (the last block leased)"
scenario_bad_config "host=127.0.0.1 port"

restart_backend() { backend_stop && backend_start; }
# block_leased NAME MAX: the row says a block up to MAX is leased
block_leased() { [[ $(sql "SELECT max_id >= $2 FROM leaf_alloc WHERE biz_tag = '$1'") == t ]]; }
scenario_restart_between_fetches restart restart_backend
ok "server restarted between two fetches: the next fetch reconnected, no error"
# A missing table is named as such.
sql "DROP TABLE leaf_alloc"
status=0
seg next orders 2>"$T/err" || status=$?
[[ $status -eq 1 ]] && grep -q 'table leaf_alloc does not exist' "$T/err" ||
  fail "no table: exit $status, $(cat "$T/err")"
ok "no table: $(cat "$T/err")"
echo "segment_postgres.sh: all passed"
