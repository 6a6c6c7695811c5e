#!/usr/bin/env bash
# Segment generators on etcd (one key per name, compare-and-swap on its mod_revision;
# scripts/etcd-cluster.sh): two processes sharing one name (their swaps conflict and
# are retried), kill -9 mid-block, the member stopped and started under load, the step
# adapting, bad configuration. Usage: segment_etcd.sh /path/to/idgen
source "$(dirname "$0")/segment_common.bash"
command -v etcd >/dev/null || "$SRC/scripts/deps.sh" test

B=etcd
DSN=$("$SRC/scripts/etcd-cluster.sh" start "$T/etcd" 1)
stop_servers() { "$SRC/scripts/etcd-cluster.sh" stop "$T/etcd"; }
echo "etcd at $DSN"
backend_stop() { "$SRC/scripts/etcd-cluster.sh" kill "$T/etcd" 0 TERM; }
backend_start() { "$SRC/scripts/etcd-cluster.sh" restart "$T/etcd" 0; }

scenario_two_processes
scenario_kill9
scenario_outage
scenario_step
scenario_start_after
scenario_bad_config "127.0.0.1:2379"
# The key holds the max in decimal, as the last block left it.
value=$(curl -s -X POST "$DSN/v3/kv/range" -d "{\"key\":\"$(printf /idgen/segment/adapt | base64 -w0)\"}" |
  sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d)
# (A block prefetched as s1 stopped may lie beyond its last.)
[[ $value =~ ^[0-9]+$ && $value -ge $(stat_of s1 last) ]] || fail "key /idgen/segment/adapt holds '$value'"
ok "key /idgen/segment/adapt holds $value, at or past the last block s1 leased"
echo "segment_etcd.sh: all passed"
