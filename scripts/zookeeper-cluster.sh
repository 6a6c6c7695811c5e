#!/usr/bin/env bash
# Starts, inspects and stops a throwaway ZooKeeper (standalone, or an ensemble) on free
# loopback ports, for tests.
# Usage:
#   scripts/zookeeper-cluster.sh start DIR [N]   start N members (default 1: standalone;
#                                                3: an ensemble) under DIR; prints the
#                                                client addresses, comma-separated
#   scripts/zookeeper-cluster.sh stop DIR        stop every member, followers first (by PID)
#   scripts/zookeeper-cluster.sh leader DIR      print the index of the current leader
#   scripts/zookeeper-cluster.sh kill DIR I [SIG]    signal member I (default KILL), wait
#   scripts/zookeeper-cluster.sh restart DIR I   start member I again with its old data
#                                                (not waiting: alone it cannot serve)
#   scripts/zookeeper-cluster.sh wait DIR        wait until every member serves (30 s)
#   scripts/zookeeper-cluster.sh cli DIR ARGS... run zkCli-style commands (delete, get,
#                                                ls) through the Java client
# Environment: ZK_TICK_MS (default 500: sessions of 1-10 s, 2 to 20 ticks).
# Files in DIR: endpoints, members, m<I>.pid, m<I>.port, m<I>.cfg, m<I>.log, m<I>/ (data).
# The AdminServer is off (its default port 8080 is idgen's); maxClientCnxns is 0 (no
# limit per client address: a test opens many generators from 127.0.0.1).
set -euo pipefail
# shellcheck source=scripts/cluster_common.bash
source "$(dirname "${BASH_SOURCE[0]}")/cluster_common.bash"

die() { echo "zookeeper-cluster.sh: $*" >&2; exit 1; }
command -v java >/dev/null || die "java not found (scripts/deps.sh test installs zookeeper)"
[[ -d /usr/share/zookeeper || -f /usr/share/java/zookeeper.jar ]] ||
  die "ZooKeeper not installed (scripts/deps.sh test installs zookeeper)"
CP="/etc/zookeeper/conf_example:/usr/share/java/*"
# The JIT's first tier only, and one GC thread: a test's ensemble needs no peak speed,
# and a 3-member ensemble's first 15 s took 6.9 CPU-s with the JVM's defaults, 4.4 so.
JVM=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1)

port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep . >/dev/null; }
free_port() { # three consecutive free ports: client, peer, election
  local p
  for _ in $(seq 200); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
    port_free "$p" && port_free "$((p + 1))" && port_free "$((p + 2))" && { echo "$p"; return; }
  done
  die "no free port"
}

# "srvr" through bash's /dev/tcp (there is no nc here): its Mode line, empty on failure.
mode_of() { # port
  local out
  out=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; printf srvr >&3; cat <&3" \
    2>/dev/null || true)
  sed -n 's/^Mode: //p' <<<"$out"
}

launch() { # dir i
  local dir=$1 i=$2
  java -Xmx256m "${JVM[@]}" -Dzookeeper.log.dir="$dir" -Dzookeeper.root.logger=INFO,CONSOLE \
    -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/m$i.cfg" \
    >>"$dir/m$i.log" 2>&1 </dev/null &
  echo $! >"$dir/m$i.pid"
}

wait_serving() { # dir i: 0 serving, 1 exited, 2 not serving in time
  local port; port=$(cat "$1/m$2.port")
  for _ in $(seq 300); do
    [[ -n "$(mode_of "$port")" ]] && return 0
    kill -0 "$(cat "$1/m$2.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 2
}

start_once() {
  local dir=$1 n=$2 i p servers="" eps=""
  local -a ports
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    p=$(free_port); ports[i]=$p
    servers+="server.$((i + 1))=127.0.0.1:$((p + 1)):$((p + 2))"$'\n'
    eps+="${eps:+,}127.0.0.1:$p"
  done
  for ((i = 0; i < n; i++)); do
    mkdir -p "$dir/m$i"
    echo "${ports[i]}" >"$dir/m$i.port"
    [[ $n -gt 1 ]] && echo "$((i + 1))" >"$dir/m$i/myid"
    {
      echo "tickTime=${ZK_TICK_MS:-500}"
      echo "initLimit=20"
      echo "syncLimit=10"
      echo "dataDir=$dir/m$i"
      echo "clientPort=${ports[i]}"
      echo "clientPortAddress=127.0.0.1"
      echo "admin.enableServer=false"
      echo "4lw.commands.whitelist=ruok,srvr,mntr,stat"
      echo "maxClientCnxns=0"
      echo "preAllocSize=4096"
      [[ $n -gt 1 ]] && printf '%s' "$servers"
    } >"$dir/m$i.cfg"
    launch "$dir" "$i"
  done
  echo "$n" >"$dir/members"
  echo "$eps" >"$dir/endpoints"
}

# A port found free can be taken before ZooKeeper binds it: then the member exits, and
# the whole start is tried again on new ports.
start() {
  local dir=$1 n=${2:-1} attempt i rc
  for attempt in 1 2 3; do
    start_once "$dir" "$n"
    rc=0
    for ((i = 0; i < n; i++)); do
      wait_serving "$dir" "$i" || { rc=$?; break; }
    done
    if [[ $rc -eq 0 ]]; then
      cat "$dir/endpoints"
      return 0
    fi
    if [[ $rc -eq 2 ]] || ! grep -qs 'Address already in use' "$dir/m$i.log"; then
      die "member $i $([[ $rc -eq 1 ]] && echo exited || echo 'not serving after 30 s'); see $dir/m$i.log"
    fi
    echo "zookeeper-cluster.sh: port taken (attempt $attempt), starting again" >&2
    stop "$dir" >/dev/null 2>&1 || true
    rm -rf "${dir:?}"/m*
  done
  die "could not start $n members after 3 attempts; see $dir/m*.log"
}

leader() {
  local dir=$1 n i m
  n=$(cat "$dir/members")
  for ((i = 0; i < n; i++)); do
    [[ -f "$dir/m$i.pid" ]] || continue
    m=$(mode_of "$(cat "$dir/m$i.port")")
    if [[ "$m" == leader || "$m" == standalone ]]; then echo "$i"; return 0; fi
  done
  die "no leader found"
}

stop() {
  [[ -f "$1/members" ]] || return 0
  cluster_stop "$1" 100 "$(leader "$1" 2>/dev/null || echo -1)"
}

# cli: its answers on stdout, a refusal's too ("Insufficient permission : PATH", which
# ZooKeeperMain writes on stderr); SLF4J's start-up lines dropped.
cli() { # dir args...: one command through ZooKeeperMain against member 0's address
  local dir=$1; shift
  java "${JVM[@]}" -cp "$CP" org.apache.zookeeper.ZooKeeperMain -server "$(cat "$dir/endpoints")" "$@" \
    2>&1 | grep -v '^SLF4J\|^WATCHER::\|^WatchedEvent\|^$\|^Connecting' || true
}

cmd=${1:-}
case "$cmd" in
  start) [[ $# -ge 2 ]] || die "usage: start DIR [N]"; start "$2" "${3:-1}" ;;
  stop) [[ $# -ge 2 ]] || die "usage: stop DIR"; stop "$2" ;;
  leader) [[ $# -ge 2 ]] || die "usage: leader DIR"; leader "$2" ;;
  kill) [[ $# -ge 3 ]] || die "usage: kill DIR I [SIG]"; cluster_stop_member "$2" "$3" "${4:-KILL}" 100 ;;
  restart) [[ $# -ge 3 ]] || die "usage: restart DIR I"; launch "$2" "$3" ;;
  wait)
    [[ $# -ge 2 ]] || die "usage: wait DIR"
    for ((i = 0; i < $(cat "$2/members"); i++)); do
      wait_serving "$2" "$i" || die "member $i not serving; see $2/m$i.log"
    done ;;
  cli) [[ $# -ge 3 ]] || die "usage: cli DIR COMMAND..."; d=$2; shift 2; cli "$d" "$@" ;;
  *) die "usage: start|stop|leader|kill|restart|wait|cli DIR ..." ;;
esac
