#!/usr/bin/env bash
# The static lease and copies of a data directory: a standby made with pg_basebackup
# issues no ID while in recovery; promoted with the primary's worker ID, its lease
# refuses (the primary may still run); given its own worker ID it issues. State files
# copied into another cluster are refused by their system identifier.
# Usage: tests/pg/standby.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"

as_pg() {
  if [[ $(id -u) -eq 0 ]]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

start_cluster p "idgen.lease=static" "idgen.worker_id=6"
sql p "CREATE EXTENSION idgen"
wait_state p held

# The standby: pg_basebackup copies everything, postgresql.conf and pg_idgen included.
# Its namespace is changed to stand for another host (the host-wide claim would stop it
# on this one anyway): what refuses it below is the identity record alone.
mkdir -p "$T/sb"
chmod 755 "$T/sb"
[[ $(id -u) -ne 0 ]] || chown postgres: "$T/sb"
as_pg "'$PG_BIN/pg_basebackup' -h 127.0.0.1 -p $(port_of p) -U postgres -D '$T/sb/data' -R -X stream" ||
  fail "pg_basebackup"
[[ -f "$T/sb/data/pg_idgen/identity" ]] || fail "the copy has no identity record"
echo "idgen.namespace = '$NS-elsewhere'" >>"$T/sb/data/postgresql.conf"
echo "unix_socket_directories = '$T/sb'" >>"$T/sb/data/postgresql.conf"
for _ in $(seq 20); do
  PORT_sb=$((10000 + RANDOM % 22000)) # below the ephemeral range, as pg-cluster.sh picks
  ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT_sb") 2>/dev/null && break
done
echo "$PORT_sb" >"$T/sb/port"
CLUSTERS+=(sb)
"$SRC/scripts/pg-cluster.sh" restart "$T/sb"
[[ $(sql sb "SELECT pg_is_in_recovery()") == t ]] || fail "the standby is not in recovery"
err=$(sql_error sb "SELECT idgen_next()") || fail "a standby issued: $err"
grep -q '55000: idgen: no worker ID held' <<<"$err" && grep -q 'This server is in recovery' <<<"$err" ||
  fail "standby: $err"
ok "standby in recovery: $(grep -m 1 DETAIL <<<"$err" | sed 's/^DETAIL:  //')"

# Promoted with worker 6, the primary's: refused, and said why.
sql sb "SELECT pg_promote()" >/dev/null
wait_state sb refused 30
why=$(sql sb "SELECT last_error FROM idgen_status()")
grep -q 'timeline 1 to 2 .* with worker ID 6' <<<"$why" || fail "refused for: $why"
err=$(PGOPTIONS="-c idgen.start_wait=0" sql_error sb "SELECT idgen_next()") || fail "the promoted standby issued"
grep -q '55000: idgen: no worker ID held' <<<"$err" && grep -q 'Lease static: refused; last error: this cluster moved from timeline 1 to 2' <<<"$err" ||
  fail "promoted: $err"
[[ $(sql p "SELECT state FROM idgen_status()") == held ]] || fail "the primary lost its lease"
ok "promoted with the primary's worker ID: refused: $why"

# Given a worker ID of its own, it issues; the primary still does, under 6.
sql sb "ALTER SYSTEM SET idgen.worker_id = 8" >/dev/null
"$SRC/scripts/pg-cluster.sh" stop "$T/sb"
"$SRC/scripts/pg-cluster.sh" restart "$T/sb"
wait_state sb held 30
[[ $(sql sb "SELECT (idgen_decode(idgen_next())).worker") == 8 ]] || fail "standby's worker"
[[ $(sql p "SELECT (idgen_decode(idgen_next())).worker") == 6 ]] || fail "primary's worker"
grep -q '^worker 8$' "$T/sb/data/pg_idgen/identity" || fail "identity: $(cat "$T/sb/data/pg_idgen/identity")"
ok "with idgen.worker_id = 8 the promoted standby issues; the primary goes on with 6"

# The primary's state files copied into another cluster: another system identifier.
start_cluster other "idgen.lease=static" "idgen.worker_id=6" "idgen.namespace='$NS-other'"
"$SRC/scripts/pg-cluster.sh" stop "$T/other"
rm -rf "$T/other/data/pg_idgen"
cp -a "$T/p/data/pg_idgen" "$T/other/data/pg_idgen"
"$SRC/scripts/pg-cluster.sh" restart "$T/other"
sql other "CREATE EXTENSION idgen"
wait_state other refused 30
why=$(sql other "SELECT last_error FROM idgen_status()")
grep -q 'belongs to database system [0-9]*, this is [0-9]*: these files were copied from another cluster' <<<"$why" ||
  fail "copied state: $why"
ok "state files from another cluster: refused: ${why%%:*}: ..."
