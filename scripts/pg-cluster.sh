#!/usr/bin/env bash
# scripts/pg-cluster.sh: a throwaway PostgreSQL 15 cluster on 127.0.0.1 for tests and benchmarks.
#   scripts/pg-cluster.sh start DIR [SETTING=VALUE ...]   initdb DIR/data, start on a free
#       port; prints "PORT PID"; writes DIR/port and DIR/pid. Settings go to postgresql.conf.
#   scripts/pg-cluster.sh stop DIR                         fast shutdown of the PID in DIR/pid
#   scripts/pg-cluster.sh restart DIR [NAME=VALUE ...]     start it again (same data and port);
#       each NAME=VALUE goes to the server's environment only (e.g. LD_PRELOAD of
#       libfaketime, which must not reach su: its semaphore would be root's)
# As root, initdb and the server run as the `postgres` user (initdb refuses root); DIR is
# then chowned to it, and DIR's parent must be searchable by that user (mktemp -d makes it
# 0700: chmod 755 it). The caller removes DIR after `stop`.
# Environment of start:
#   PG_CLUSTER_TLS=CERTS   ssl = on, and TCP clients over TLS only (pg_hba hostssl), with
#                          CERTS/server.pem and .key and the CA CERTS/ca.pem (from
#                          scripts/tls-certs.sh CERTS), copied to DIR/tls for the server
#   PG_CLUSTER_TLS_PAIR=NAME  CERTS/NAME.pem and .key instead of server (wronghost)
#   PG_CLUSTER_TLS_CLIENT=verify-ca|verify-full  clients must also show a certificate
#                          signed by ca.pem (pg_hba clientcert=...)
set -euo pipefail

die() { echo "pg-cluster.sh: $1" >&2; exit "${2:-2}"; }
[[ $# -ge 2 ]] || die "usage: scripts/pg-cluster.sh start|stop|restart DIR [SETTING=VALUE ...]"
action=$1 dir=$2
shift 2

pg_bin=""
if command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/initdb" ]]; then
  pg_bin=$(pg_config --bindir)
elif [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
  pg_bin=/usr/lib/postgresql/15/bin
fi

as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    su postgres -s /bin/bash -c "$*"
  else
    bash -c "$*"
  fi
}

# tls_setup DIR: the pair and the CA of PG_CLUSTER_TLS into DIR/tls, owned by the server's
# user (the server refuses a key that others can read); TCP clients on TLS only.
tls_setup() {
  local certs=$PG_CLUSTER_TLS pair=${PG_CLUSTER_TLS_PAIR:-server} client=${PG_CLUSTER_TLS_CLIENT:-}
  local f
  for f in "$pair.pem" "$pair.key" ca.pem; do
    [[ -r $certs/$f ]] || die "PG_CLUSTER_TLS: no $certs/$f (scripts/tls-certs.sh $certs)" 1
  done
  [[ -z $client || $client == verify-ca || $client == verify-full ]] ||
    die "PG_CLUSTER_TLS_CLIENT: '$client' is not verify-ca or verify-full"
  mkdir -p "$1/tls"
  cp "$certs/$pair.pem" "$1/tls/server.pem"
  cp "$certs/$pair.key" "$1/tls/server.key"
  cp "$certs/ca.pem" "$1/tls/ca.pem"
  chmod 600 "$1/tls/server.key"
  [[ $(id -u) -ne 0 ]] || chown -R postgres: "$1/tls"
  # initdb's host lines (trust), as hostssl: a plain-text TCP client finds no entry.
  sed -i -E "s/^host([[:space:]].*)$/hostssl\1${client:+ clientcert=$client}/" "$1/data/pg_hba.conf"
}

case "$action" in
  start)
    [[ -n "$pg_bin" ]] || die "PostgreSQL server not found (scripts/deps.sh bench)" 1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    chmod 755 "$dir"
    if [[ $(id -u) -eq 0 ]]; then
      chown postgres: "$dir"
      su postgres -s /bin/bash -c "test -x '$dir'" ||
        die "$dir is not reachable by the postgres user (chmod 755 its parents)" 1
    fi
    as_pg "'$pg_bin/initdb' -D '$dir/data' -U postgres -A trust --no-sync -E UTF8 --locale=C" \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    [[ -z ${PG_CLUSTER_TLS:-} ]] || tls_setup "$dir"
    {
      echo "listen_addresses = '127.0.0.1'"
      echo "unix_socket_directories = '$dir'"
      [[ -z ${PG_CLUSTER_TLS:-} ]] || printf '%s\n' "ssl = on" \
        "ssl_cert_file = '$dir/tls/server.pem'" "ssl_key_file = '$dir/tls/server.key'" \
        "ssl_ca_file = '$dir/tls/ca.pem'" "ssl_min_protocol_version = 'TLSv1.2'"
      for kv in "$@"; do
        [[ "$kv" == *=* ]] || die "setting '$kv' is not NAME=VALUE"
        echo "${kv%%=*} = ${kv#*=}"
      done
    } >>"$dir/data/postgresql.conf"
    port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
    for _ in 1 2 3 4 5; do
      port=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
      port_free "$port" || continue
      if as_pg "'$pg_bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 \
                -o '-p $port' start" >/dev/null 2>&1; then
        pid=$(head -n 1 "$dir/data/postmaster.pid")
        echo "$port" >"$dir/port"
        echo "$pid" >"$dir/pid"
        echo "$port $pid"
        exit 0
      fi
    done
    cat "$dir/server.log" >&2 2>/dev/null || true
    die "PostgreSQL did not start" 1
    ;;
  stop)
    [[ -f "$dir/pid" ]] || exit 0
    pid=$(cat "$dir/pid")
    if kill -0 "$pid" 2>/dev/null; then
      kill -INT "$pid" 2>/dev/null || true # fast shutdown
      for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -QUIT "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/pid"
    ;;
  restart)
    [[ -f "$dir/port" && -d "$dir/data" ]] || die "no cluster in $dir"
    port=$(cat "$dir/port")
    server_env=""
    for kv in "$@"; do
      [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "environment '$kv' is not NAME=VALUE"
      server_env+=" $(printf '%q' "$kv")"
    done
    as_pg "env$server_env '$pg_bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 -o '-p $port' start" \
      >/dev/null 2>&1 || { tail -n 20 "$dir/server.log" >&2; die "PostgreSQL did not restart" 1; }
    head -n 1 "$dir/data/postmaster.pid" >"$dir/pid"
    ;;
  *) die "unknown action '$action' (start, stop, restart)" ;;
esac
