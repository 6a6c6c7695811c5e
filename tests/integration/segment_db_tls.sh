#!/usr/bin/env bash
# Segment backends over TLS to servers that require it (issue 36), with a throwaway PKI
# (scripts/tls-certs.sh): PostgreSQL taking TCP clients over TLS only (pg_hba hostssl),
# MariaDB with require_secure_transport. On each: two processes and two CLI runs sharing
# one name over verified TLS, no number twice; then one-line refusals naming the
# endpoint (exit 1) of a plain-text client, a wrong CA, an expired server certificate
# (PostgreSQL's: the cluster script's own mariadb client refuses to set up a server
# whose certificate has expired), a server certificate for another host name, a missing or expired client certificate
# where one is required (and the same options with ours accepted), TLS asked of a
# plain-text MariaDB server; bad TLS options (exit 2).
# Usage: segment_db_tls.sh /path/to/idgen [PART...]   (tests/integration/parts.bash)
source "$(dirname "$0")/segment_common.bash"
source "$(dirname "$0")/parts.bash"
parts postgres mariadb -- "${@:2}"
command -v psql >/dev/null && command -v mariadbd >/dev/null || "$SRC/scripts/deps.sh" test
# libpq's environment would add to (or override) the DSNs under test.
unset PGSSLMODE PGSSLROOTCERT PGSSLCERT PGSSLKEY PGHOST PGPORT PGUSER PGDATABASE

C=$T/certs
"$SRC/scripts/tls-certs.sh" "$C"
NONE=$T/no-such.pem # a client certificate that is not there: libpq then sends none

STARTED=() # "pg DIR" or "mariadb DIR", for stop_servers
stop_servers() {
  local s
  for s in "${STARTED[@]}"; do "$SRC/scripts/${s%% *}-cluster.sh" stop "${s#* }"; done
}
# start_bg KIND NAME [VAR=VALUE...] -- [ARG...]: starts a cluster (pg or mariadb) under
# $T/NAME in the background, its environment the VAR=VALUEs; `wait_started` waits for all.
START_PIDS=()
start_bg() {
  local kind=$1 name=$2 env=()
  shift 2
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  STARTED+=("$kind $T/$name")
  env "${env[@]}" "$SRC/scripts/$kind-cluster.sh" start "$T/$name" "$@" >"$T/$name.out" 2>"$T/$name.start" &
  START_PIDS+=($!)
}
wait_started() {
  local p
  for p in "${START_PIDS[@]}"; do wait "$p" || fail "a server did not start: $(cat "$T"/*.start)"; done
  START_PIDS=()
}

# refused STATUS PATTERN PORT DSN: `segment next` exits STATUS, prints no number and one
# line matching PATTERN (grep -E) that, for exit 1, names 127.0.0.1 and PORT.
refused() {
  local want=$1 pattern=$2 port=$3 dsn=$4 status=0
  "$IDGEN" segment next --backend "$B" --dsn "$dsn" tls >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq $want && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] &&
    grep -Eq "$pattern" "$T/err" ||
    fail "$B '$dsn': exit $status (want $want), out '$(cat "$T/out")', err '$(cat "$T/err")' (want /$pattern/)"
  [[ $want -ne 1 ]] || { grep -q '127\.0\.0\.1' "$T/err" && grep -q "$port" "$T/err"; } ||
    fail "$B '$dsn': the line names no endpoint: $(cat "$T/err")"
  echo "  refused (exit $status): $(cat "$T/err")"
}
# accepted DSN: init of the name tls, then one number from it
accepted() {
  "$IDGEN" segment init --backend "$B" --dsn "$1" tls >/dev/null 2>"$T/err" ||
    grep -q 'already exists' "$T/err" || fail "$B '$1': init: $(cat "$T/err")"
  "$IDGEN" segment next --backend "$B" --dsn "$1" tls >"$T/out" 2>"$T/err" &&
    [[ $(wc -l <"$T/out") -eq 1 ]] || fail "$B '$1': next: $(cat "$T/err")"
}

if part postgres; then
  B=postgres
  # tls: TLS only; client: a certificate for another host name, client certificates required
  start_bg pg pg-tls PG_CLUSTER_TLS="$C" --
  start_bg pg pg-client PG_CLUSTER_TLS="$C" PG_CLUSTER_TLS_PAIR=wronghost \
    PG_CLUSTER_TLS_CLIENT=verify-ca --
  start_bg pg pg-expired PG_CLUSTER_TLS="$C" PG_CLUSTER_TLS_PAIR=expired --
  wait_started
  port=$(cut -d' ' -f1 "$T/pg-tls.out") client_port=$(cut -d' ' -f1 "$T/pg-client.out")
  expired_port=$(cut -d' ' -f1 "$T/pg-expired.out")
  at="host=127.0.0.1 port=$port dbname=postgres user=postgres"
  DSN="$at sslmode=verify-full sslrootcert=$C/ca.pem"
  scenario_two_processes
  ok "postgres over TLS (verify-full) to a server taking TLS only: no number twice"
  refused 1 'no pg_hba.conf entry .*no encryption' "$port" "$at sslmode=disable"
  ok "postgres: a plain-text client refused by the server"
  refused 1 'certificate verify failed' "$port" "$at sslmode=verify-full sslrootcert=$C/other-ca.pem"
  refused 1 'certificate verify failed' "$port" "$at sslmode=verify-ca sslrootcert=$C/other-ca.pem"
  ok "postgres: a server certificate from another CA refused (verify-full, verify-ca)"
  refused 1 'root certificate file .*no-such.pem" does not exist' "$port" \
    "$at sslmode=verify-full sslrootcert=$NONE"
  ok "postgres: a CA file that is not there refused"
  refused 1 'certificate verify failed' "$expired_port" \
    "host=127.0.0.1 port=$expired_port dbname=postgres user=postgres sslmode=verify-full sslrootcert=$C/ca.pem"
  ok "postgres: an expired server certificate refused (verify-full: the right CA and host name, so expiry alone; libpq says no more than \"certificate verify failed\")"
  at="host=127.0.0.1 port=$client_port dbname=postgres user=postgres"
  mine="sslcert=$C/client.pem sslkey=$C/client.key"
  refused 1 'does not match host name "127\.0\.0\.1"' "$client_port" \
    "$at sslmode=verify-full sslrootcert=$C/ca.pem $mine"
  ok "postgres: a server certificate for another host name refused (verify-full)"
  refused 1 'connection requires a valid client certificate' "$client_port" \
    "$at sslmode=verify-ca sslrootcert=$C/ca.pem sslcert=$NONE"
  refused 1 'alert unknown ca|server closed the connection|SSL SYSCALL' "$client_port" \
    "$at sslmode=verify-ca sslrootcert=$C/ca.pem sslcert=$C/other.pem sslkey=$C/other.key"
  refused 1 'certificate expired|server closed the connection|SSL SYSCALL' "$client_port" \
    "$at sslmode=verify-ca sslrootcert=$C/ca.pem sslcert=$C/client-expired.pem sslkey=$C/client-expired.key"
  accepted "$at sslmode=verify-ca sslrootcert=$C/ca.pem $mine"
  ok "postgres: client certificate required: none, an expired one or one from another CA refused; ours accepted"
  refused 2 "sslmode 'verify_full' is not one of disable, allow, prefer, require, verify-ca, verify-full" \
    "$port" "$at sslmode=verify_full sslrootcert=$C/ca.pem"
  refused 2 "ssl_min_protocol_version 'TLSv1.4' is not one of" "$port" \
    "postgresql://127.0.0.1:$port/postgres?sslmode=require&ssl_min_protocol_version=TLSv1.4"
  status=0
  "$IDGEN" adopt --dsn "$at sslmode=on" orders id >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 2 && $(wc -l <"$T/err") -eq 1 ]] && grep -q "sslmode 'on' is not one of" "$T/err" ||
    fail "adopt, sslmode=on: exit $status, $(cat "$T/err")"
  ok "postgres: a bad sslmode (and protocol version) is bad usage, exit 2; idgen adopt's too"
fi

if part mariadb; then
  B=mariadb
  rm -f "$T"/p[12].log "$T"/p[12].err "$T"/cli[12].txt # the load appends: postgres's went before
  # tls: TLS required; client: a certificate for another host name, client certificates
  # required; plain: no TLS at all
  start_bg mariadb mdb-tls MARIADB_CLUSTER_TLS="$C" -- 1
  start_bg mariadb mdb-client MARIADB_CLUSTER_TLS="$C" MARIADB_CLUSTER_TLS_PAIR=wronghost \
    MARIADB_CLUSTER_TLS_CLIENT=x509 -- 1
  start_bg mariadb mdb-plain -- 1
  wait_started
  eps=$(cat "$T/mdb-tls.out") client_eps=$(cat "$T/mdb-client.out") plain_eps=$(cat "$T/mdb-plain.out")
  port=${eps#*:} client_port=${client_eps#*:} plain_port=${plain_eps#*:}
  DSN="servers=$eps ssl-ca=$C/ca.pem"
  scenario_two_processes
  ok "mariadb over TLS (verified) to a server with require_secure_transport: no number twice"
  refused 1 'Access denied.*sent in plain text' "$port" "servers=$eps"
  ok "mariadb: a plain-text client refused by the server"
  refused 1 'certificate' "$port" "servers=$eps ssl-ca=$C/other-ca.pem"
  refused 1 'certificate' "$port" "servers=$eps ssl-ca=$C/other-ca.pem ssl-verify=off"
  refused 1 'certificate' "$port" "servers=$eps ssl-verify=on" # the system's CAs
  ok "mariadb: a server certificate from another CA refused (also ssl-verify=off)"
  mine="ssl-cert=$C/client.pem ssl-key=$C/client.key"
  refused 1 'Validation of SSL server certificate failed' "$client_port" \
    "servers=$client_eps ssl-ca=$C/ca.pem $mine"
  ok "mariadb: a server certificate for another host name refused (the default check)"
  refused 1 'Access denied' "$client_port" "servers=$client_eps ssl-ca=$C/ca.pem ssl-verify=off"
  # TLS 1.3: the server's alert meets the client in its handshake or at its next read
  refused 1 'Lost connection|Access denied|alert unknown ca' "$client_port" \
    "servers=$client_eps ssl-ca=$C/ca.pem ssl-verify=off ssl-cert=$C/other.pem ssl-key=$C/other.key"
  refused 1 'Lost connection|Access denied|certificate expired' "$client_port" \
    "servers=$client_eps ssl-ca=$C/ca.pem ssl-verify=off ssl-cert=$C/client-expired.pem ssl-key=$C/client-expired.key"
  accepted "servers=$client_eps ssl-ca=$C/ca.pem ssl-verify=off $mine"
  ok "mariadb: client certificate required: none, an expired one or one from another CA refused; ours accepted"
  refused 1 'TLS asked .*plain text: refused' "$plain_port" "servers=$plain_eps ssl-verify=off"
  refused 1 'SSL is required, but the server does not support it' "$plain_port" \
    "servers=$plain_eps ssl-ca=$C/ca.pem"
  ok "mariadb: TLS asked of a plain-text server refused (libmariadb went on in plain text with ssl-verify=off)"
  refused 2 "bad ssl-verify 'maybe' \(on or off\)" "$port" "servers=$eps ssl-verify=maybe"
  refused 2 'ssl-cert and ssl-key go together' "$port" "servers=$eps ssl-cert=$C/client.pem"
  refused 2 'unknown key .ssl-mode.' "$port" "servers=$eps ssl-mode=REQUIRED"
  ok "mariadb: bad TLS options are bad usage, exit 2"
fi
echo "segment_db_tls.sh: all passed"
