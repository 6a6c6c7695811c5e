#!/usr/bin/env bash
# A segment generator on Flickr's two MariaDB ticket servers (odd and even numbers,
# scripts/mariadb-cluster.sh) served by `idgen serve --config`: two servers sharing the
# name, kill -9 and a restart, both ticket servers stopped and started under load
# (buffer, then backend_unavailable, then numbers again), a bad DSN.
# Usage: server_segment_mariadb.sh /path/to/idgen
source "$(dirname "$0")/server_segment_common.bash"
command -v mariadbd >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
eps=$("$SOURCE_DIR/scripts/mariadb-cluster.sh" start "$WORK/mdb" 2)
stop_backend() { "$SOURCE_DIR/scripts/mariadb-cluster.sh" stop "$WORK/mdb"; }
backend_stop() {
  "$SOURCE_DIR/scripts/mariadb-cluster.sh" kill "$WORK/mdb" 0
  "$SOURCE_DIR/scripts/mariadb-cluster.sh" kill "$WORK/mdb" 1
}
backend_start() {
  "$SOURCE_DIR/scripts/mariadb-cluster.sh" restart "$WORK/mdb" 0
  "$SOURCE_DIR/scripts/mariadb-cluster.sh" restart "$WORK/mdb" 1
}
say "ticket servers at $eps"
B=mariadb
DSN="servers=$eps"
"$IDGEN" segment init --backend "$B" --dsn "$DSN" orders >/dev/null || fail "segment init"

scenario_two_servers
# Each ticket server counts on its own: a restarted generator starts above its server's
# counter, not above every number before (docs/segment.md).
scenario_kill9 no
scenario_outage
scenario_bad_config "servers=127.0.0.1"
finish
