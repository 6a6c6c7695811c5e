# scripts/cluster_common.bash: what the throwaway-cluster scripts (mariadb-cluster.sh,
# etcd-cluster.sh) share, sourced by them: stopping members by the PIDs they wrote.
# A member I of a cluster in DIR has its PID in DIR/m<I>.pid and DIR/members holds N.

# cluster_stop_member DIR I SIG WAIT: signals member I with SIG and waits up to WAIT
# tenths of a second for it to exit, then SIGKILLs it; removes its PID file. A member
# with no PID file is already stopped.
cluster_stop_member() {
  local pidf="$1/m$2.pid" pid
  [[ -f "$pidf" ]] || return 0
  pid=$(cat "$pidf")
  kill -"$3" "$pid" 2>/dev/null || true
  for _ in $(seq "$4"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidf"
}

# cluster_stop DIR WAIT [LAST]: TERMs every member in index order, member LAST (an
# index; -1 or none: no such member) after all the others, each as cluster_stop_member.
cluster_stop() {
  local dir=$1 wait=$2 last=${3:--1} n i
  [[ -f "$dir/members" ]] || return 0
  n=$(cat "$dir/members")
  for ((i = 0; i < n; i++)); do
    [[ $i -eq $last ]] || cluster_stop_member "$dir" "$i" TERM "$wait"
  done
  [[ $last -lt 0 ]] || cluster_stop_member "$dir" "$last" TERM "$wait"
}
