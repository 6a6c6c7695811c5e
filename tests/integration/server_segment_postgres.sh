#!/usr/bin/env bash
# A segment generator on PostgreSQL served by `idgen serve --config` (scripts/pg-cluster.sh):
# two servers sharing the name, kill -9 and a restart, the database stopped and started
# under load (buffer, then backend_unavailable, then numbers again), a bad DSN.
# Usage: server_segment_postgres.sh /path/to/idgen
source "$(dirname "$0")/server_segment_common.bash"
command -v psql >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
port=$("$SOURCE_DIR/scripts/pg-cluster.sh" start "$WORK/pg" | cut -d' ' -f1)
stop_backend() { "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg"; }
backend_stop() { "$SOURCE_DIR/scripts/pg-cluster.sh" stop "$WORK/pg"; }
backend_start() { "$SOURCE_DIR/scripts/pg-cluster.sh" restart "$WORK/pg" >/dev/null; }
say "PostgreSQL on port $port"
B=postgres
DSN="host=127.0.0.1 port=$port dbname=postgres user=postgres"
"$IDGEN" segment init --backend "$B" --dsn "$DSN" orders >/dev/null || fail "segment init"

scenario_two_servers
scenario_kill9
scenario_outage
scenario_bad_config "host=127.0.0.1 port"
finish
