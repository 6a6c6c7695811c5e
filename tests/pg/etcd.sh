#!/usr/bin/env bash
# idgen.lease = etcd against a real etcd (scripts/etcd-cluster.sh): two clusters get
# distinct worker IDs; etcd stopped, idgen_next() fails with an ERROR in class 55 once
# the lease deadline passes; etcd back, both issue again, still on distinct workers.
# Usage: tests/pg/etcd.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"
command -v etcd >/dev/null || fail "etcd not installed (scripts/deps.sh test)"

EPS=$("$SRC/scripts/etcd-cluster.sh" start "$T/etcd" 1)
EXTRA_CLEANUP="'$SRC/scripts/etcd-cluster.sh' stop '$T/etcd'"
echo "etcd at $EPS"
# TTL 3 s: keepalives every second, the deadline 2 s after the last good one.
settings=("idgen.lease=etcd" "idgen.etcd='$EPS'" "idgen.lease_ttl=3")
start_cluster a "${settings[@]}"
start_cluster b "${settings[@]}"
for c in a b; do sql "$c" "CREATE EXTENSION idgen"; done
wait_state a held
wait_state b held
wa=$(sql a "SELECT worker FROM idgen_status()")
wb=$(sql b "SELECT worker FROM idgen_status()")
[[ -n "$wa" && -n "$wb" && "$wa" != "$wb" ]] || fail "workers '$wa' and '$wb'"
ida=$(sql a "SELECT (idgen_decode(idgen_next())).worker")
idb=$(sql b "SELECT (idgen_decode(idgen_next())).worker")
[[ "$ida" == "$wa" && "$idb" == "$wb" ]] || fail "IDs from workers $ida and $idb"
provider=$(sql a "SELECT provider FROM idgen_status()")
[[ "$provider" == etcd* ]] || fail "provider: $provider"
ok "two clusters hold workers $wa and $wb ($provider)"

# etcd gone: an ERROR once the deadline passes, not a stale ID.
stopped_ms=$(date +%s%3N)
"$SRC/scripts/etcd-cluster.sh" stop "$T/etcd"
err=""
for _ in $(seq 200); do
  if err=$(sql_error a "SELECT idgen_next()"); then break; fi
  err=""
  sleep 0.1
done
[[ -n "$err" ]] || fail "idgen_next() still issues 20 s after etcd stopped"
after_ms=$(($(date +%s%3N) - stopped_ms))
grep -q '^ERROR:  55000: idgen: worker lease lost or expired: not issuing' <<<"$err" ||
  grep -q '^ERROR:  55000: idgen: no worker ID held: not issuing' <<<"$err" ||
  fail "not the lease's ERROR: $err"
grep -q 'Lease etcd: ' <<<"$err" || fail "no lease detail: $err"
ok "etcd stopped: ERROR $after_ms ms after the stop began: $(head -n 1 <<<"$err")"
state=$(sql a "SELECT state FROM idgen_status()")
[[ "$state" == lost || "$state" == acquiring ]] || fail "lease state '$state' with etcd down"
# b's last keepalive may be up to a second younger than a's (each waited past its own
# fresh HWM key), so its deadline may come that much later: wait for it the same way.
b_refused=0
for _ in $(seq 200); do
  if sql_error b "SELECT idgen_next()" >/dev/null; then b_refused=1; break; fi
  sleep 0.1
done
[[ $b_refused -eq 1 ]] || fail "cluster b still issues 20 s after etcd stopped"
ok "lease state '$state'; cluster b refuses too"

# etcd back: both issue again, on distinct workers.
"$SRC/scripts/etcd-cluster.sh" restart "$T/etcd" 0
for _ in $(seq 300); do
  sql a "SELECT idgen_next()" >/dev/null 2>&1 && sql b "SELECT idgen_next()" >/dev/null 2>&1 && break
  sleep 0.1
done
wait_state a held 5
wait_state b held 5
wa2=$(sql a "SELECT (idgen_decode(idgen_next())).worker")
wb2=$(sql b "SELECT (idgen_decode(idgen_next())).worker")
[[ "$wa2" != "$wb2" ]] || fail "after etcd came back both issue as worker $wa2"
ok "etcd back: both issue again, workers $wa2 and $wb2"
