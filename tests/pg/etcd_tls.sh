#!/usr/bin/env bash
# idgen.lease = etcd over TLS and with etcd's auth, against real etcd servers (issue 36):
# the extension's settings idgen.etcd_cacert, idgen.etcd_cert and idgen.etcd_key against
# an etcd that requires client certificates, and idgen.etcd_user with
# idgen.etcd_password_file against one with auth on. Each cluster holds a worker and
# issues IDs that decode to it (the TLS etcd's CA is in no system store, and it requires
# the client certificate: the settings reach the lease). Clusters with the wrong CA or a
# wrong password hold none, and idgen_next() is an ERROR while the lease's last error
# names the endpoint and the reason; never an ID. (A missing client certificate is the
# library's refusal, tests/integration/lease_etcd_tls.sh.)
# Usage: tests/pg/etcd_tls.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"
for tool in etcd etcdctl openssl faketime; do
  command -v "$tool" >/dev/null || fail "no $tool (scripts/deps.sh test)"
done

C=$T/certs
"$SRC/scripts/tls-certs.sh" "$C" >/dev/null
# The postmaster runs as postgres and reads the files at its lease's start.
[[ $(id -u) -ne 0 ]] || chown -R postgres: "$C"
ETCD_CLUSTER_TLS=$C "$SRC/scripts/etcd-cluster.sh" start "$T/etcd-tls" 1 >"$T/tls.eps" &
tls_start=$!
"$SRC/scripts/etcd-cluster.sh" start "$T/etcd-auth" 1 >"$T/auth.eps" & auth_start=$!
wait "$tls_start" || fail "the TLS etcd did not start"
wait "$auth_start" || fail "the auth etcd did not start"
EXTRA_CLEANUP="'$SRC/scripts/etcd-cluster.sh' stop '$T/etcd-tls'; '$SRC/scripts/etcd-cluster.sh' stop '$T/etcd-auth'"
TLS_EP=$(cat "$T/tls.eps") AUTH_EP=$(cat "$T/auth.eps")
[[ $TLS_EP == https://* ]] || fail "the TLS etcd's endpoint is $TLS_EP"
echo "etcd with TLS at $TLS_EP, with auth at $AUTH_EP"

"$SRC/scripts/etcd-cluster.sh" auth "$T/etcd-auth" idgen idgenpw /idgen/ || fail "etcd auth setup"
printf 'idgenpw\n' >"$T/password"
printf 'wrong\n' >"$T/bad-password"
chmod 600 "$T/password" "$T/bad-password"
[[ $(id -u) -ne 0 ]] || chown postgres: "$T/password" "$T/bad-password"

base=("idgen.lease=etcd" "idgen.lease_ttl=3")
tls=("idgen.etcd='$TLS_EP'" "idgen.etcd_cacert='$C/ca.pem'")
client=("idgen.etcd_cert='$C/client.pem'" "idgen.etcd_key='$C/client.key'")
auth=("idgen.etcd='$AUTH_EP'" "idgen.etcd_user='idgen'")
start_cluster tls "${base[@]}" "${tls[@]}" "${client[@]}"
start_cluster auth "${base[@]}" "${auth[@]}" "idgen.etcd_password_file='$T/password'"
start_cluster wrongca "${base[@]}" "idgen.etcd='$TLS_EP'" "idgen.etcd_cacert='$C/other-ca.pem'" \
  "${client[@]}"
start_cluster badpw "${base[@]}" "${auth[@]}" "idgen.etcd_password_file='$T/bad-password'"
for c in tls auth wrongca badpw; do sql "$c" "CREATE EXTENSION idgen"; done

# issues NAME: a held worker, and IDs of it.
issues() {
  wait_state "$1" held
  local w ids
  w=$(sql "$1" "SELECT worker FROM idgen_status()")
  ids=$(sql "$1" "SELECT count(DISTINCT id) FROM (SELECT idgen_next() AS id FROM generate_series(1, 1000)) s")
  [[ $ids == 1000 ]] || fail "$1: $ids distinct IDs of 1000"
  [[ $(sql "$1" "SELECT (idgen_decode(idgen_next())).worker") == "$w" ]] ||
    fail "$1: an ID not of worker $w"
  ok "$1: holds worker $w over $(sql "$1" "SELECT provider FROM idgen_status()"), 1000 distinct IDs"
}
issues tls
issues auth

# refused NAME REGEX: the lease never held; idgen_next() an ERROR whose text (with its
# detail) matches REGEX. The lease tries again and again: its last error is read until
# it says why (the first tries may still be starting).
refused() {
  local err="" got=""
  for _ in $(seq 100); do
    got=$(sql "$1" "SELECT coalesce(last_error, '') FROM idgen_status()" 2>/dev/null || true)
    [[ $got =~ $2 ]] && break
    sleep 0.1
  done
  [[ $got =~ $2 ]] || fail "$1: the lease's last error is '$got', not /$2/"
  [[ $(sql "$1" "SELECT state FROM idgen_status()") != held ]] || fail "$1: the lease is held"
  err=$(sql_error "$1" "SELECT idgen_next()") || fail "$1: idgen_next() issued an ID"
  grep -q '^ERROR:  55000: idgen: ' <<<"$err" || fail "$1: not the lease's ERROR: $err"
  ok "$1: no ID; $(head -n 1 <<<"$err" | cut -c1-70); last error: ${got:0:110}"
}
refused wrongca "etcd $TLS_EP.*certificate"
refused badpw "etcd $AUTH_EP: authenticating as 'idgen': .*invalid user ID or password"
echo "etcd_tls: all passed"
