#!/usr/bin/env bash
# Starts, inspects and stops a throwaway etcd cluster on free loopback ports, for tests.
# Usage:
#   scripts/etcd-cluster.sh start DIR [N]   start N members (default 1) under DIR; prints the
#                                           client endpoints, comma-separated
#   scripts/etcd-cluster.sh stop DIR        stop every member, followers first (by PID)
#   scripts/etcd-cluster.sh leader DIR      print the index of the current leader
#   scripts/etcd-cluster.sh kill DIR I [SIG]    signal member I (default KILL) and wait for it
#   scripts/etcd-cluster.sh restart DIR I   start member I again with its old data
#   scripts/etcd-cluster.sh auth DIR USER PASSWORD PREFIX
#                                           turn etcd's auth on: USER (PASSWORD) may read
#                                           and write the keys under PREFIX alone; root's
#                                           password is random (nothing here needs it)
# Files in DIR: endpoints, m<I>.pid, m<I>.url, m<I>.cmd, m<I>.log, m<I>/ (data).
# Environment of start:
#   ETCD_CLUSTER_TLS=CERTS  clients speak https:// only, with client certificates
#                           required (--client-cert-auth), from scripts/tls-certs.sh CERTS:
#                           etcd-server.pem/.key, CAs ca.pem; the script's own calls use
#                           client.pem/.key (kept in DIR/tls for later calls)
#   ETCD_CLUSTER_ARGS="..." more etcd flags for every member (--auth-token simple ...)
set -euo pipefail
# shellcheck source=scripts/cluster_common.bash
source "$(dirname "${BASH_SOURCE[0]}")/cluster_common.bash"

die() { echo "etcd-cluster.sh: $*" >&2; exit 1; }
command -v etcd >/dev/null || die "etcd not found (scripts/deps.sh test installs etcd-server)"

port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep . >/dev/null; }
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
    port_free "$p" && port_free "$((p + 1))" && { echo "$p"; return; }
  done
  die "no free port"
}

tls_args=() # curl's TLS options for a TLS cluster (load_tls)
load_tls() { # dir
  tls_args=()
  [[ -f "$1/tls" ]] || return 0
  local c; c=$(cat "$1/tls")
  tls_args=(--cacert "$c/ca.pem" --cert "$c/client.pem" --key "$c/client.key")
}

member_status() { # url -> JSON of /v3/maintenance/status, empty on failure
  curl -s -m 2 "${tls_args[@]}" -X POST "$1/v3/maintenance/status" -d '{}' 2>/dev/null || true
}

healthy() { # url: 0 if the member answers and knows a leader
  local s; s=$(member_status "$1")
  [[ "$s" == *'"leader"'* ]]
}

launch() { # dir i
  local dir=$1 i=$2
  # shellcheck disable=SC2046
  $(cat "$dir/m$i.cmd") >>"$dir/m$i.log" 2>&1 </dev/null &
  echo $! >"$dir/m$i.pid"
}

wait_healthy() { # dir i: 0 healthy, 1 exited, 2 not healthy in time
  local url; url=$(cat "$1/m$2.url")
  for _ in $(seq 150); do
    healthy "$url" && return 0
    kill -0 "$(cat "$1/m$2.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 2
}

# A port found free can be taken before etcd binds it (by another test's server, or a
# client's ephemeral port): then the member exits, and the whole start is tried again
# on new ports.
start() {
  local dir=$1 n=${2:-1} attempt i rc
  for attempt in 1 2 3; do
    start_once "$dir" "$n"
    rc=0
    for ((i = 0; i < n; i++)); do
      wait_healthy "$dir" "$i" || { rc=$?; break; }
    done
    if [[ $rc -eq 0 ]]; then
      cat "$dir/endpoints"
      return 0
    fi
    if [[ $rc -eq 2 ]] || ! grep -qs 'address already in use' "$dir/m$i.log"; then
      die "member $i $([[ $rc -eq 1 ]] && echo exited || echo 'not healthy after 15 s'); see $dir/m$i.log"
    fi
    echo "etcd-cluster.sh: port taken (attempt $attempt), starting again on new ports" >&2
    stop "$dir" >/dev/null 2>&1 || true
    rm -rf "${dir:?}"/m*
  done
  die "could not start $n members after 3 attempts; see $dir/m*.log"
}

start_once() {
  local dir=$1 n=$2
  mkdir -p "$dir"
  local cluster="" i cp pp scheme=http tls=""
  if [[ -n ${ETCD_CLUSTER_TLS:-} ]]; then
    local c; c=$(cd "$ETCD_CLUSTER_TLS" && pwd)
    for f in ca.pem etcd-server.pem etcd-server.key client.pem client.key; do
      [[ -r $c/$f ]] || die "ETCD_CLUSTER_TLS: no $c/$f (scripts/tls-certs.sh $c)"
    done
    echo "$c" >"$dir/tls"
    scheme=https
    tls="--cert-file $c/etcd-server.pem --key-file $c/etcd-server.key"
    tls+=" --client-cert-auth --trusted-ca-file $c/ca.pem"
  else
    rm -f "$dir/tls"
  fi
  load_tls "$dir"
  local -a cports pports
  for ((i = 0; i < n; i++)); do
    cp=$(free_port); pp=$((cp + 1))
    cports[i]=$cp; pports[i]=$pp
    cluster+="${cluster:+,}m$i=http://127.0.0.1:$pp"
  done
  local token="idgen-test-$$-$RANDOM"
  local eps=""
  for ((i = 0; i < n; i++)); do
    echo "$scheme://127.0.0.1:${cports[i]}" >"$dir/m$i.url"
    eps+="${eps:+,}$scheme://127.0.0.1:${cports[i]}"
    echo "etcd --name m$i --data-dir $dir/m$i" \
      "--listen-client-urls $scheme://127.0.0.1:${cports[i]}" \
      "--advertise-client-urls $scheme://127.0.0.1:${cports[i]} $tls ${ETCD_CLUSTER_ARGS:-}" \
      "--listen-peer-urls http://127.0.0.1:${pports[i]}" \
      "--initial-advertise-peer-urls http://127.0.0.1:${pports[i]}" \
      "--initial-cluster $cluster --initial-cluster-token $token" \
      "--initial-cluster-state new" >"$dir/m$i.cmd"
    launch "$dir" "$i"
  done
  echo "$n" >"$dir/members"
  echo "$eps" >"$dir/endpoints"
}

leader() {
  local dir=$1 n i s id lead
  n=$(cat "$dir/members")
  for ((i = 0; i < n; i++)); do
    s=$(member_status "$(cat "$dir/m$i.url")")
    [[ -n "$s" ]] || continue
    id=$(sed -n 's/.*"member_id":"\([0-9]*\)".*/\1/p' <<<"$s")
    lead=$(sed -n 's/.*"leader":"\([0-9]*\)".*/\1/p' <<<"$s")
    if [[ -n "$id" && "$id" == "$lead" ]]; then echo "$i"; return 0; fi
  done
  die "no leader found"
}

# A member has 10 s to exit before it is killed.
stop_member() { cluster_stop_member "$1" "$2" "$3" 100; } # dir i sig

# Followers first: a leader stopped together with its followers can hang handing over.
stop() {
  [[ -f "$1/members" ]] || return 0
  cluster_stop "$1" 100 "$(leader "$1" 2>/dev/null || echo -1)"
}

# auth DIR USER PASSWORD PREFIX: see the usage above. etcd refuses to enable auth
# without a root user, which also keeps every role.
auth() {
  local e=(etcdctl --endpoints "$(cat "$1/endpoints")" "${tls_args[@]}")
  {
    echo "root-$RANDOM$RANDOM" | "${e[@]}" user add root --interactive=false
    "${e[@]}" user grant-role root root
    echo "$3" | "${e[@]}" user add "$2" --interactive=false
    "${e[@]}" role add "$2-rw"
    "${e[@]}" role grant-permission "$2-rw" --prefix=true readwrite "$4"
    "${e[@]}" user grant-role "$2" "$2-rw"
    "${e[@]}" auth enable
  } >"$1/auth.log" 2>&1 || { cat "$1/auth.log" >&2; die "auth setup failed (DIR/auth.log)"; }
}

cmd=${1:-}
[[ $# -lt 2 || $cmd == start ]] || load_tls "$2"
case "$cmd" in
  start) [[ $# -ge 2 ]] || die "usage: start DIR [N]"; start "$2" "${3:-1}" ;;
  stop) [[ $# -ge 2 ]] || die "usage: stop DIR"; stop "$2" ;;
  leader) [[ $# -ge 2 ]] || die "usage: leader DIR"; leader "$2" ;;
  kill) [[ $# -ge 3 ]] || die "usage: kill DIR I [SIG]"; stop_member "$2" "$3" "${4:-KILL}" ;;
  restart)
    [[ $# -ge 3 ]] || die "usage: restart DIR I"
    sed -i 's/--initial-cluster-state new/--initial-cluster-state existing/' "$2/m$3.cmd"
    launch "$2" "$3" ;;
  auth) [[ $# -ge 5 ]] || die "usage: auth DIR USER PASSWORD PREFIX"; auth "$2" "$3" "$4" "$5" ;;
  *) die "usage: start|stop|leader|kill|restart|auth DIR ..." ;;
esac
