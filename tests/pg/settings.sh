#!/usr/bin/env bash
# The settings' error cases on a real server: a bad idgen.* setting stops the server
# from starting, with a line that names it; the library loaded without preloading; the
# opaque key file missing, malformed, then good after a reload; a lease that cannot be
# held yet fails at once with idgen.start_wait = 0; a first call after a start waits
# for the lease rather than fail; the lease worker terminated comes back.
# Usage: tests/pg/settings.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"

start_cluster s "idgen.lease=static" "idgen.worker_id=3"
conf=$T/s/data/postgresql.conf
cp "$conf" "$T/conf.good"
"$SRC/scripts/pg-cluster.sh" stop "$T/s"

# refuses PATTERN SETTING...: the server does not start with these settings, and its log
# says PATTERN.
refuses() {
  local pattern=$1
  shift
  cp "$T/conf.good" "$conf"
  printf '%s\n' "$@" >>"$conf"
  : >"$T/s/server.log"
  if "$SRC/scripts/pg-cluster.sh" restart "$T/s" 2>/dev/null; then
    "$SRC/scripts/pg-cluster.sh" stop "$T/s"
    fail "started with $*"
  fi
  grep -q -- "$pattern" "$T/s/server.log" && grep -q 'FATAL: ' "$T/s/server.log" ||
    fail "with $*: no '$pattern' and FATAL in: $(cat "$T/s/server.log")"
  ok "refused to start with $*: $(grep -m 1 'FATAL: ' "$T/s/server.log" | sed 's/^.*\] //')"
}
refuses 'invalid value for parameter "idgen.layout": "bogus"' "idgen.layout = 'bogus'"
refuses 'fields add up to 64 bits' "idgen.layout = 'time:41,worker:10,seq:13'"
refuses 'epoch.*future' "idgen.layout = 'time:41,worker:10,seq:12,epoch:2999-01-01'"
refuses 'invalid value for parameter "idgen.policy"' "idgen.policy = 'hope'"
refuses 'invalid value for parameter "idgen.lease"' "idgen.lease = 'k8s'"
refuses 'lease settings do not fit together' "idgen.worker_id = -1"
refuses 'lease settings do not fit together' "idgen.worker_id = 1024"
refuses 'lease settings do not fit together' "idgen.lease = 'etcd'"
refuses 'invalid value for parameter "idgen.etcd"' "idgen.lease = 'etcd'" "idgen.etcd = 'ftp://x'"
refuses 'invalid value for parameter "idgen.namespace"' "idgen.namespace = 'a b'"
refuses 'outside the valid range for parameter "idgen.lease_ttl"' "idgen.lease_ttl = 1"

# A start waits for the lease: a new worker file has no history, so the static lease
# waits past now + ahead + one HWM interval (about 4 s) before it arms the generator;
# the first call right after the start waits for it (idgen.start_wait) and succeeds.
cp "$T/conf.good" "$conf"
rm -rf "$T/s/data/pg_idgen"
"$SRC/scripts/pg-cluster.sh" restart "$T/s"
start_ms=$(date +%s%3N)
sql s "CREATE EXTENSION IF NOT EXISTS idgen"
id=$(sql s "SELECT idgen_next()")
waited=$(($(date +%s%3N) - start_ms))
[[ $id -gt 0 ]] || fail "first call: '$id'"
[[ $(sql s "SELECT (idgen_decode($id)).worker") == 3 ]] || fail "worker of $id"
ok "the first call after a start waited $waited ms for the lease and issued $id"

# pg_terminate_backend on the lease worker: it releases the ID, the postmaster starts it
# again, it holds the ID again, and IDs go on increasing.
old_pid=$(sql s "SELECT pid FROM idgen_status()")
sql s "SELECT pg_terminate_backend($old_pid)" >/dev/null
for _ in $(seq 100); do
  new_pid=$(sql s "SELECT pid FROM idgen_status() WHERE state = 'held'")
  [[ -n "$new_pid" && "$new_pid" != "$old_pid" ]] && break
  sleep 0.1
done
[[ -n "$new_pid" && "$new_pid" != "$old_pid" ]] || fail "the lease worker did not come back"
next=$(sql s "SELECT idgen_next()")
[[ $next -gt $id ]] || fail "after the lease worker's restart $next, before $id"
ok "lease worker $old_pid terminated: worker $new_pid holds the ID again; $next > $id"

# Opaque IDs: no key set, a missing file, a malformed one, then a good one (a reload).
err=$(sql_error s "SELECT idgen_opaque(1)") || fail "opaque IDs without a key: $err"
grep -q '55000: idgen: no key for opaque IDs' <<<"$err" || fail "no key: $err"
set_key_file() {
  sql s "ALTER SYSTEM SET idgen.opaque_key_file = '$1'" "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 50); do
    [[ $(sql s "SHOW idgen.opaque_key_file") == "$1" ]] && return 0
    sleep 0.1
  done
  fail "idgen.opaque_key_file not reloaded"
}
set_key_file "$T/missing.key"
err=$(sql_error s "SELECT idgen_opaque(1)") || fail "a missing key file: $err"
grep -q "58P01: idgen: key file \"$T/missing.key\" (idgen.opaque_key_file): " <<<"$err" || fail "missing: $err"
printf 'not a key\n' >"$T/bad.key"
chmod 644 "$T/bad.key"
set_key_file "$T/bad.key"
err=$(sql_error s "SELECT idgen_opaque(1)") || fail "a malformed key file: $err"
grep -q 'F0000: idgen: key file .*: invalid character' <<<"$err" || fail "malformed: $err"
printf '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n' >"$T/good.key"
chmod 644 "$T/good.key"
set_key_file "$T/good.key"
[[ $(sql s "SELECT idgen_opaque(120705948263120896)") == 8296964069946032915 ]] ||
  fail "opaque ID under the good key"
cli=$("$IDGEN" opaque encode --key-file "$T/good.key" 42)
[[ $(sql s "SELECT idgen_opaque(42)") == "$cli" ]] || fail "idgen_opaque(42) is not the CLI's $cli"
ok "opaque key file: none, missing (58P01), malformed (F0000), then good after a reload, as the CLI"
"$SRC/scripts/pg-cluster.sh" stop "$T/s"

# Not preloaded: CREATE EXTENSION works, the functions without shared state too; the
# generator says what is missing.
cp "$T/conf.good" "$conf"
sed -i '/^shared_preload_libraries/d' "$conf"
"$SRC/scripts/pg-cluster.sh" restart "$T/s"
err=$(sql_error s "SELECT idgen_next()") || fail "idgen_next() without preloading: $err"
grep -q '55000: idgen: no generator: the idgen library was not loaded at server start' <<<"$err" ||
  fail "not preloaded: $err"
sql_error s "SELECT * FROM idgen_status()" >/dev/null || fail "idgen_status() without preloading"
[[ $(sql s "SELECT (idgen_decode(120888658071941120)).worker") == 7 ]] || fail "decode without preloading"
[[ $(sql s "SELECT length(idgen_uuidv7()::text)") == 36 ]] || fail "uuidv7 without preloading"
ok "not preloaded: $(head -n 1 <<<"$err" | sed 's/^ERROR:  //'); decoding and UUIDs work"
"$SRC/scripts/pg-cluster.sh" stop "$T/s"

# A lease that cannot be held (etcd on a port nobody listens on): with start_wait 0 the
# first call fails at once, and says why.
port=$((10000 + RANDOM % 20000))
cp "$T/conf.good" "$conf"
printf '%s\n' "idgen.lease = 'etcd'" "idgen.etcd = 'http://127.0.0.1:$port'" >>"$conf"
"$SRC/scripts/pg-cluster.sh" restart "$T/s"
wait_state s acquiring 20
err=$(PGOPTIONS="-c idgen.start_wait=0" sql_error s "SELECT idgen_next()") || fail "issued without etcd"
grep -q '55000: idgen: no worker ID held: not issuing' <<<"$err" || fail "no etcd: $err"
grep -q "Lease etcd: acquiring; last error: .*127.0.0.1:$port" <<<"$err" || fail "no etcd detail: $err"
ok "etcd unreachable: $(grep -m 1 DETAIL <<<"$err")"
