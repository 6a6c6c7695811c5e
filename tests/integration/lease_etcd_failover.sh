#!/usr/bin/env bash
# etcd provider against a real three-member etcd: killing the leader does not lose the
# lease; with quorum lost, issuing stops within TTL - margin and resumes when quorum
# returns. Usage: lease_etcd_failover.sh /path/to/idgen
source "$(dirname "$0")/lease_common.bash"
CL=$SRC/scripts/etcd-cluster.sh
command -v etcd >/dev/null || "$SRC/scripts/deps.sh" test
stop_servers() { "$CL" stop "$T/etcd"; }
fail() { echo "FAIL: $*" >&2; tail -20 "$T/h.err" >&2 || true; exit 1; }
wait_healthy() { # url
  for _ in $(seq 100); do
    curl -s -m 1 -X POST "$1/v3/maintenance/status" -d '{}' | grep '"leader"' >/dev/null && return 0
    sleep 0.1
  done
  return 1
}
lines_after() { awk -v t="$1" '$1 > t' "$T/h.out" | wc -l; }

EPS=$("$CL" start "$T/etcd" 3)
echo "etcd at $EPS"
TTL=10 MARGIN=2000
"$HOLDER" --lease etcd --etcd "$EPS" --lease-ttl $TTL --lease-margin $MARGIN \
  --etcd-timeout 4000 --namespace fo >"$T/h.out" 2>"$T/h.err" & h=$!
pids+=($h)
for _ in $(seq 100); do grep -qs '^# state held' "$T/h.err" && break; sleep 0.1; done
grep -qs '^# state held' "$T/h.err" || fail "holder never held"

# 1. Kill the leader: the lease (and the worker ID) survive.
lead=$("$CL" leader "$T/etcd")
"$CL" kill "$T/etcd" "$lead" KILL
t_kill=$(now_ms)
sleep 5
t_after=$(now_ms)
grep -q '^# state \(lost\|acquiring\)' "$T/h.err" && fail "lease lost after the leader was killed"
[[ $(lines_after $((t_after - 1000))) -gt 50 ]] || fail "not issuing 5 s after the leader died"
ok "leader m$lead killed: still held, issuing ($(lines_after "$t_kill") IDs since)"

# 2. Lose quorum: issuing stops within TTL - margin of the last good keepalive.
others=()
for i in 0 1 2; do [[ $i -eq $lead ]] || others+=("$i"); done
"$CL" kill "$T/etcd" "${others[0]}" KILL
t_q=$(now_ms)
sleep $((TTL + 2))
limit=$((t_q + TTL * 1000 - MARGIN))
late=$(lines_after "$limit")
[[ $late -eq 0 ]] || fail "$late IDs issued more than TTL - margin after quorum was lost"
last=$(awk '{print $1}' "$T/h.out" | sort -n | tail -1)
grep -q '^# refused IDGEN_E\(LEASE\|CAP\|NOTARMED\)' "$T/h.err" || fail "no refusal"
ok "quorum lost: last ID at +$((last - t_q)) ms, limit TTL - margin = +$((TTL * 1000 - MARGIN)) ms"

# 3. Quorum returns: issuing resumes.
"$CL" restart "$T/etcd" "$lead"
"$CL" restart "$T/etcd" "${others[0]}"
wait_healthy "$(cat "$T/etcd/m$lead.url")" || fail "etcd did not come back"
t_back=$(now_ms)
resumed=0
for _ in $(seq 200); do
  if [[ $(lines_after "$t_back") -gt 0 ]]; then resumed=$(now_ms); break; fi
  sleep 0.1
done
[[ $resumed -gt 0 ]] || fail "did not resume within 20 s of quorum returning"
ok "quorum back: issuing again after $((resumed - t_back)) ms ($(grep '^# state' "$T/h.err" | tail -1))"

kill -TERM "$h"; wait "$h" || fail "graceful stop failed"
pids=()
dups=$(awk '{print $3}' "$T/h.out" | sort | uniq -d | wc -l)
[[ $dups -eq 0 ]] || fail "$dups duplicate IDs"
grep '^# stopped' "$T/h.err"
echo "lease_etcd_failover: all passed"
