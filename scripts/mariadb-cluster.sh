#!/usr/bin/env bash
# scripts/mariadb-cluster.sh: throwaway MariaDB servers on 127.0.0.1, set up as Flickr's
# ticket servers: N servers, server I with auto_increment_increment = N and
# auto_increment_offset = I + 1, so they hand out disjoint numbers. For tests and benchmarks.
#   scripts/mariadb-cluster.sh start DIR [N] [MARIADBD_OPTION ...]
#       start N servers (default 2) under DIR, each on a free port and on a copy of a data
#       directory from mariadb-install-db (made once, cached: installed_data),
#       no grant tables (root, no password), database `test`; prints the endpoints
#       "127.0.0.1:P1,127.0.0.1:P2"; writes DIR/endpoints, DIR/m<I>.port, DIR/m<I>.pid
#   scripts/mariadb-cluster.sh stop DIR           stop every server (TERM, by PID)
#   scripts/mariadb-cluster.sh kill DIR I [SIG]   signal server I (default KILL), wait for it
#   scripts/mariadb-cluster.sh restart DIR I      start server I again on its port and data
# Files in DIR: members, endpoints, m<I>.cmd, m<I>.pid, m<I>.port, m<I>/ (data, logs), tls/.
# Environment of start:
#   MARIADB_CLUSTER_TLS=CERTS  TLS (1.2+) from scripts/tls-certs.sh CERTS: server.pem and
#                          .key, the CA ca.pem, copied to DIR/tls; require_secure_transport
#                          = ON, so with the grant tables (not skipped: the server checks
#                          the transport when it authenticates), root without a password.
#                          The script's own calls use TLS and CERTS/client.pem and .key.
#   MARIADB_CLUSTER_TLS_PAIR=NAME  CERTS/NAME.pem and .key instead of server (wronghost)
#   MARIADB_CLUSTER_TLS_CLIENT=x509  root over TCP must show a certificate signed by
#                          ca.pem (ALTER USER ... REQUIRE X509)
set -euo pipefail
# shellcheck source=scripts/cluster_common.bash
source "$(dirname "${BASH_SOURCE[0]}")/cluster_common.bash"

die() { echo "mariadb-cluster.sh: $*" >&2; exit "${2:-1}"; }
for tool in mariadbd mariadb-install-db mariadb; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh test installs mariadb-server)"
done

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
    port_free "$p" && { echo "$p"; return; }
  done
  die "no free port"
}

launch() { # dir i
  local dir=$1 i=$2
  # shellcheck disable=SC2046
  $(cat "$dir/m$i.cmd") >>"$dir/m$i/stderr.log" 2>&1 </dev/null &
  echo $! >"$dir/m$i.pid"
}

# client DIR I SQL: runs SQL on server I as root (over TLS with the client certificate
# if DIR's servers use TLS).
client() {
  local tls=()
  [[ -d $1/tls ]] && tls=(--ssl --ssl-ca="$1/tls/ca.pem" --ssl-cert="$1/tls/client.pem"
    --ssl-key="$1/tls/client.key")
  mariadb --no-defaults "${tls[@]}" -h 127.0.0.1 -P "$(cat "$1/m$2.port")" -u root -e "$3"
}

# 0 once server i answers a query, 1 if it exited, 2 if not in 30 s.
wait_ready() { # dir i
  local pid
  pid=$(cat "$1/m$2.pid")
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || return 1
    client "$1" "$2" "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 2
}

# tls_setup DIR: MARIADB_CLUSTER_TLS's pair, CA and client pair into DIR/tls.
tls_setup() {
  local certs=$MARIADB_CLUSTER_TLS pair=${MARIADB_CLUSTER_TLS_PAIR:-server} f
  for f in "$pair.pem" "$pair.key" ca.pem client.pem client.key; do
    [[ -r $certs/$f ]] || die "MARIADB_CLUSTER_TLS: no $certs/$f (scripts/tls-certs.sh $certs)" 2
  done
  [[ -z ${MARIADB_CLUSTER_TLS_CLIENT:-} || $MARIADB_CLUSTER_TLS_CLIENT == x509 ]] ||
    die "MARIADB_CLUSTER_TLS_CLIENT: '$MARIADB_CLUSTER_TLS_CLIENT' is not x509" 2
  mkdir -p "$1/tls"
  cp "$certs/$pair.pem" "$1/tls/server.pem"
  cp "$certs/$pair.key" "$1/tls/server.key"
  cp "$certs/ca.pem" "$certs/client.pem" "$certs/client.key" "$1/tls/"
}

# As root, the servers and the bootstrap run as root (mariadbd refuses root otherwise).
AS_USER=()
[[ $(id -u) -eq 0 ]] && AS_USER=(--user=root)
# mariadb-install-db's options, but for the directories.
INSTALL_OPTIONS=(--no-defaults "${AS_USER[@]}" --skip-test-db --auth-root-authentication-method=normal)

# installed_data DIR: a data directory as mariadb-install-db makes it, kept in the cache
# (IDGEN_TEST_CACHE, as scripts/image-test.sh's) per MariaDB version, install options and
# user, made once: each server starts on a copy. A bootstrap took 1 CPU-s and 2 s of
# wall time, a copy 0.2 s, and a run of the suite starts about 50 servers. Prints its
# path; DIR/install.log holds a bootstrap's output.
installed_data() {
  local work=$1 cache key ready tmp
  cache=${IDGEN_TEST_CACHE:-${XDG_CACHE_HOME:-/var/cache}/idgen-test}/mariadb
  key=$({ mariadbd --version; echo "${INSTALL_OPTIONS[*]}"; } | sha256sum | cut -c1-16)-uid$(id -u)
  ready=$cache/$key
  if [[ ! -d $ready ]]; then
    mkdir -p "$cache" || die "cannot make $cache"
    tmp=$(mktemp -d "$cache/.new.XXXXXX")
    # A temporary directory of its own: servers bootstrapped at once in a shared /tmp
    # lost each other's temporary tables ("Unknown table 'mysql.tmp_user_sys'").
    mkdir -p "$tmp/tmp"
    mariadb-install-db "${INSTALL_OPTIONS[@]}" --datadir="$tmp/data" --tmpdir="$tmp/tmp" \
      >"$work/install.log" 2>&1 ||
      { cat "$work/install.log" >&2; rm -rf "$tmp"; die "mariadb-install-db failed"; }
    # Another run may have made it meanwhile: the first one in stays.
    mv -T "$tmp/data" "$ready" 2>/dev/null || true
    rm -rf "$tmp"
  fi
  echo "$ready"
}

start_one() { # dir i n options...: 0 started, 1 failed (port taken: try another)
  local dir=$1 i=$2 n=$3 d
  shift 3
  d="$dir/m$i"
  if [[ ! -d "$d/data" ]]; then
    mkdir -p "$d/tmp"
    cp -a "$(installed_data "$d")" "$d/data" || die "cannot copy the installed data directory"
  fi
  local port access=--skip-grant-tables
  if [[ -d $dir/tls ]]; then # the grant tables on: without them no transport is checked
    access="--ssl-cert=$dir/tls/server.pem --ssl-key=$dir/tls/server.key --ssl-ca=$dir/tls/ca.pem"
    access+=" --tls-version=TLSv1.2,TLSv1.3 --require-secure-transport=ON"
  fi
  port=$(free_port)
  echo "$port" >"$dir/m$i.port"
  echo "mariadbd --no-defaults --datadir=$d/data ${AS_USER[*]} --bind-address=127.0.0.1" \
    "--port=$port --socket=$d/sock --pid-file=$d/pid --log-error=$d/error.log --tmpdir=$d/tmp" \
    "$access --skip-name-resolve --innodb-buffer-pool-size=32M" \
    "--max-connections=500 --auto-increment-increment=$n --auto-increment-offset=$((i + 1))" \
    "$*" >"$dir/m$i.cmd"
  launch "$dir" "$i"
  local rc=0
  wait_ready "$dir" "$i" || rc=$?
  [[ $rc -eq 0 ]] && return 0
  if [[ $rc -eq 1 ]] && grep -qs 'Address already in use\|Can.t start server: Bind' "$d/error.log"; then
    return 1
  fi
  cat "$d/error.log" >&2 2>/dev/null || true
  die "server $i did not start; see $d/error.log"
}

start() {
  local dir=$1 n=${2:-2} i eps=""
  shift 2 || shift $#
  [[ "$n" =~ ^[1-9]$ ]] || die "N must be 1 to 9, not '$n'" 2
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  chmod 755 "$dir"
  echo "$n" >"$dir/members"
  [[ -z ${MARIADB_CLUSTER_TLS:-} ]] || tls_setup "$dir"
  for ((i = 0; i < n; i++)); do
    local ok=0
    for _ in 1 2 3; do
      if start_one "$dir" "$i" "$n" "$@"; then ok=1; break; fi
      echo "mariadb-cluster.sh: port taken, starting server $i on another" >&2
    done
    [[ $ok -eq 1 ]] || die "server $i: no free port after 3 attempts"
    client "$dir" "$i" "CREATE DATABASE IF NOT EXISTS test" ||
      die "server $i: cannot create the database"
    if [[ ${MARIADB_CLUSTER_TLS_CLIENT:-} == x509 ]]; then
      client "$dir" "$i" "ALTER USER root@'127.0.0.1' REQUIRE X509" ||
        die "server $i: cannot require client certificates"
    fi
    eps+="${eps:+,}127.0.0.1:$(cat "$dir/m$i.port")"
  done
  echo "$eps" >"$dir/endpoints"
  echo "$eps"
}

# A server has 30 s to shut down (InnoDB flushes on TERM) before it is killed.
stop_one() { cluster_stop_member "$1" "$2" "$3" 300; } # dir i sig
stop() { cluster_stop "$1" 300; }

restart() { # dir i: same port, same data
  local dir=$1 i=$2 rc=0
  [[ -f "$dir/m$i.cmd" ]] || die "no server $i in $dir"
  launch "$dir" "$i"
  wait_ready "$dir" "$i" || rc=$?
  [[ $rc -eq 0 ]] || die "server $i did not restart; see $dir/m$i/error.log"
}

cmd=${1:-}
case "$cmd" in
  start) [[ $# -ge 2 ]] || die "usage: start DIR [N] [MARIADBD_OPTION ...]" 2; shift; start "$@" ;;
  stop) [[ $# -ge 2 ]] || die "usage: stop DIR" 2; stop "$2" ;;
  kill) [[ $# -ge 3 ]] || die "usage: kill DIR I [SIG]" 2; stop_one "$2" "$3" "${4:-KILL}" ;;
  restart) [[ $# -ge 3 ]] || die "usage: restart DIR I" 2; restart "$2" "$3" ;;
  *) die "usage: scripts/mariadb-cluster.sh start|stop|kill|restart DIR ..." 2 ;;
esac
