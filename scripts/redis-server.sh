#!/usr/bin/env bash
# Starts and stops a throwaway Debian redis-server on a free loopback port, for tests.
# Usage:
#   scripts/redis-server.sh start DIR [--aof always|everysec|off] [--replica-of DIR2]
#                                     [--user NAME:PASS] [--pass PASS]
#                                     [--tls CERTS [--tls-pair NAME] [--tls-auth-clients
#                                      yes|no|optional]]
#        one server under DIR; prints its URL (redis://127.0.0.1:PORT). --aof off also
#        turns RDB snapshots off: a restart then starts empty (default: always).
#        --replica-of DIR2: a replica of the server started under DIR2.
#        --tls CERTS: TLS only (port 0, tls-port PORT; URL rediss://127.0.0.1:PORT) with
#        CERTS/NAME.pem and NAME.key (scripts/tls-certs.sh; NAME default server) and
#        CERTS/ca.pem for client certificates, which --tls-auth-clients asks for
#        (default no). The cli command speaks TLS to it without checking its
#        certificate (an expired one too) and shows CERTS/client.pem.
#   scripts/redis-server.sh stop DIR            stop it (TERM, then KILL), by its PID
#   scripts/redis-server.sh kill DIR [SIG]      signal it (default KILL) and wait for it
#   scripts/redis-server.sh restart DIR         start it again: same port, config, data
#   scripts/redis-server.sh cli DIR ARGS...     redis-cli against it
#   scripts/redis-server.sh history DIR         the server's history as the Redis lease
#        stamps a HWM hash with it (src/lease/redis.c, HISTORY_LUA), as HSET's field
#        value pairs: run_id R replid I replicas N attaches A (tests forge or seed a history so)
# Files in DIR: m0.pid, members (1), port, url, redis.conf, log, data/.
set -euo pipefail
# shellcheck source=scripts/cluster_common.bash
source "$(dirname "${BASH_SOURCE[0]}")/cluster_common.bash"

die() { echo "redis-server.sh: $*" >&2; exit 1; }
command -v redis-server >/dev/null || die "redis-server not found (scripts/deps.sh test)"
command -v redis-cli >/dev/null || die "redis-cli not found (scripts/deps.sh test)"

port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep . >/dev/null; }
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
    port_free "$p" && { echo "$p"; return; }
  done
  die "no free port"
}

cli() { # dir args...
  local dir=$1; shift
  local auth=() tls=()
  [[ -f "$dir/auth" ]] && auth=(--no-auth-warning $(cat "$dir/auth"))
  [[ -f "$dir/tls" ]] && tls=(--tls --insecure --cert "$(cat "$dir/tls")/client.pem"
    --key "$(cat "$dir/tls")/client.key")
  redis-cli -h 127.0.0.1 -p "$(cat "$dir/port")" "${tls[@]}" "${auth[@]}" "$@"
}

launch() { # dir
  redis-server "$1/redis.conf" >>"$1/log" 2>&1 </dev/null &
  echo $! >"$1/m0.pid"
}

wait_up() { # dir: 0 answering PING, 1 exited, 2 not in time
  for _ in $(seq 100); do
    [[ "$(cli "$1" PING 2>/dev/null)" == PONG ]] && return 0
    kill -0 "$(cat "$1/m0.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 2
}

write_conf() { # dir port aof replica_of user pass tls_dir tls_pair tls_auth
  local dir=$1 port=$2 aof=$3 primary=$4 user=$5 pass=$6 certs=$7 pair=$8 auth=$9
  mkdir -p "$dir/data"
  {
    if [[ -n "$certs" ]]; then
      echo "port 0"
      echo "tls-port $port"
      echo "tls-cert-file $certs/$pair.pem"
      echo "tls-key-file $certs/$pair.key"
      echo "tls-ca-cert-file $certs/ca.pem"
      echo "tls-auth-clients $auth"
    else
      echo "port $port"
    fi
    echo "bind 127.0.0.1"
    echo "dir $dir/data"
    echo "daemonize no"
    echo "logfile \"\""
    echo "save \"\""
    case "$aof" in
      off) echo "appendonly no" ;;
      always | everysec) echo "appendonly yes"; echo "appendfsync $aof" ;;
      *) die "--aof: always, everysec or off" ;;
    esac
    if [[ -n "$primary" ]]; then
      echo "replicaof 127.0.0.1 $(cat "$primary/port")"
      [[ -f "$primary/masterauth" ]] && cat "$primary/masterauth"
    fi
    if [[ -n "$pass" ]]; then
      echo "requirepass $pass"
      echo "masterauth $pass"
    fi
    if [[ -n "$user" ]]; then
      echo "user ${user%%:*} on >${user#*:} ~* &* +@all"
    fi
  } >"$dir/redis.conf"
  echo "$port" >"$dir/port"
  echo 1 >"$dir/members"
  rm -f "$dir/auth" "$dir/tls"
  [[ -n "$pass" ]] && echo "-a $pass" >"$dir/auth"
  [[ -n "$pass" ]] && echo "masterauth $pass" >"$dir/masterauth"
  if [[ -n "$certs" ]]; then
    echo "$certs" >"$dir/tls"
    echo "rediss://127.0.0.1:$port" >"$dir/url"
  else
    echo "redis://127.0.0.1:$port" >"$dir/url"
  fi
}

start() {
  local dir=$1; shift
  local aof=always primary="" user="" pass="" certs="" pair=server tls_auth=no attempt rc
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --aof) aof=$2; shift 2 ;;
      --replica-of) primary=$2; shift 2 ;;
      --user) user=$2; shift 2 ;;
      --pass) pass=$2; shift 2 ;;
      --tls) certs=$(cd "$2" && pwd); shift 2 ;;
      --tls-pair) pair=$2; shift 2 ;;
      --tls-auth-clients) tls_auth=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  mkdir -p "$dir"
  for attempt in 1 2 3; do
    write_conf "$dir" "$(free_port)" "$aof" "$primary" "$user" "$pass" "$certs" "$pair" \
      "$tls_auth"
    launch "$dir"
    rc=0
    wait_up "$dir" || rc=$?
    if [[ $rc -eq 0 ]]; then
      if [[ -n "$primary" ]]; then # until the replica has synced
        for _ in $(seq 100); do
          cli "$dir" INFO replication | grep -q 'master_link_status:up' && break
          sleep 0.1
        done
      fi
      cat "$dir/url"
      return 0
    fi
    if [[ $rc -eq 2 ]] || ! grep -qs 'Address already in use' "$dir/log"; then
      die "redis-server $([[ $rc -eq 1 ]] && echo exited || echo 'not up after 10 s'); see $dir/log"
    fi
    echo "redis-server.sh: port taken (attempt $attempt), again on a new port" >&2
    cluster_stop_member "$dir" 0 KILL 20
  done
  die "could not start after 3 attempts; see $dir/log"
}

cmd=${1:-}; [[ $# -ge 2 ]] || die "usage: $0 start|stop|kill|restart|cli DIR ..."
dir=$2; shift 2
case "$cmd" in
  start) start "$dir" "$@" ;;
  stop) cluster_stop_member "$dir" 0 TERM 50 ;;
  kill) cluster_stop_member "$dir" 0 "${1:-KILL}" 50 ;;
  restart)
    [[ -f "$dir/redis.conf" ]] || die "$dir has no redis.conf"
    launch "$dir"
    wait_up "$dir" || die "restart: not up; see $dir/log"
    cat "$dir/url" ;;
  cli) cli "$dir" "$@" ;;
  history)
    info=$(cli "$dir" INFO server; cli "$dir" INFO replication; cli "$dir" INFO stats)
    field() { sed -n "s/^$1:\([0-9a-f]*\).*/\1/p" <<<"$info"; }
    echo "run_id $(field run_id) replid $(field master_replid)" \
      "replicas $(field connected_slaves) attaches $(($(field sync_full) + $(field sync_partial_ok)))" ;;
  *) die "unknown command $cmd" ;;
esac
