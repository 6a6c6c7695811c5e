#!/usr/bin/env bash
# A segment generator on etcd served by `idgen serve --config` (scripts/etcd-cluster.sh):
# two servers sharing the name (their swaps conflict and are retried), kill -9 and a
# restart, the member stopped and started under load (buffer, then backend_unavailable,
# then numbers again), a bad DSN. Usage: server_segment_etcd.sh /path/to/idgen
source "$(dirname "$0")/server_segment_common.bash"
command -v etcd >/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
DSN=$("$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd" 1)
stop_backend() { "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$WORK/etcd"; }
backend_stop() { "$SOURCE_DIR/scripts/etcd-cluster.sh" kill "$WORK/etcd" 0 TERM; }
backend_start() { "$SOURCE_DIR/scripts/etcd-cluster.sh" restart "$WORK/etcd" 0; }
say "etcd at $DSN"
B=etcd
"$IDGEN" segment init --backend "$B" --dsn "$DSN" orders >/dev/null || fail "segment init"

scenario_two_servers
scenario_kill9
scenario_outage
scenario_bad_config "127.0.0.1:2379"
finish
