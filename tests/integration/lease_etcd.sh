#!/usr/bin/env bash
# etcd provider against a real one-member etcd on loopback: distinct IDs for N holders,
# all IDs taken, kill -9 (the ID returns only after the TTL, the next holder waits past
# the HWM), SIGSTOP past the TTL (the paused holder never issues above the cap the next
# holder read), graceful shutdown revokes at once, an unreadable HWM at the smallest free
# ID is passed over. Usage: lease_etcd.sh /path/to/idgen
source "$(dirname "$0")/lease_common.bash"
command -v etcd >/dev/null || "$SRC/scripts/deps.sh" test
stop_servers() { "$SRC/scripts/etcd-cluster.sh" stop "$T/etcd"; }

EPS=$("$SRC/scripts/etcd-cluster.sh" start "$T/etcd" 1)
echo "etcd at $EPS"
E=(--lease etcd --etcd "$EPS" --lease-ttl 3 --lease-margin 1000)
live() { # ns worker -> yes/no from idgen lease
  "$IDGEN" lease "${E[@]}" --namespace "$1" | awk -v w="$2" '$1 == w {print $2}'
}
hwm_of() { # ns worker -> HWM ms from the etcd key
  curl -s -X POST "${EPS%%,*}/v3/kv/range" \
    -d "{\"key\":\"$(printf '/idgen/%s/hwm/%s' "$1" "$2" | base64 -w0)\"}" |
    sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d | sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p'
}

# 1. Distinct worker IDs for N concurrent holders, and no duplicate IDs.
for i in 1 2 3 4 5; do
  "$HOLDER" "${E[@]}" --namespace n1 --duration-ms 1500 >"$T/d$i.out" 2>"$T/d$i.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "holder $p failed"; done
pids=()
ws=$(for i in 1 2 3 4 5; do worker_of "$T/d$i.err"; done | sort -n | tr '\n' ' ')
[[ "$ws" == "0 1 2 3 4 " ]] || fail "workers were '$ws'"
total=$(cat "$T"/d[1-5].out | wc -l)
uniq=$(cat "$T"/d[1-5].out | awk '{print $3}' | sort -u | wc -l)
[[ $total -gt 100 && $total -eq $uniq ]] || fail "$total IDs, $uniq distinct"
ok "5 concurrent holders got workers $ws; $total distinct IDs"

# 2. All IDs of a 2-bit worker field taken: a clear error naming namespace and count.
L=(--layout "time:41,worker:2,seq:12,epoch:2026-01-01")
for i in 1 2 3 4; do
  "$HOLDER" "${E[@]}" "${L[@]}" --namespace n2 >"$T/f$i.out" 2>"$T/f$i.err" &
  pids+=($!)
done
for i in 1 2 3 4; do wait_held "$T/f$i.err"; done
st=0
"$HOLDER" "${E[@]}" "${L[@]}" --namespace n2 >"$T/f5.out" 2>"$T/f5.err" || st=$?
[[ $st -eq 1 ]] || fail "5th holder exited $st"
grep -q "all 4 worker IDs of namespace 'n2' are taken" "$T/f5.err" || fail "5th: $(cat "$T/f5.err")"
ok "5th holder refused: $(cat "$T/f5.err")"
for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" || fail "graceful stop failed"; done
pids=()

# 3. kill -9: the ID stays taken until the TTL ends; the next holder waits past the HWM.
"$HOLDER" "${E[@]}" --namespace n3 --hwm-ahead 6000 >"$T/k1.out" 2>"$T/k1.err" & a=$!
pids+=($a)
wait_held "$T/k1.err"
sleep 1.2
kill -KILL "$a"; wait "$a" 2>/dev/null || true
t_kill=$(now_ms)
pids=()
[[ $(live n3 0) == yes ]] || fail "worker 0 free right after kill -9"
t_free=0
for _ in $(seq 100); do
  if [[ $(live n3 0) != yes ]]; then t_free=$(now_ms); break; fi
  sleep 0.1
done
[[ $t_free -gt 0 ]] || fail "worker 0 never freed"
hwm=$(hwm_of n3 0)
"$HOLDER" "${E[@]}" --namespace n3 --duration-ms 300 >"$T/k2.out" 2>"$T/k2.err"
[[ $(worker_of "$T/k2.err") == 0 ]] || fail "next holder got $(worker_of "$T/k2.err")"
[[ $(floor_of "$T/k2.err") == "$hwm" ]] || fail "floor $(floor_of "$T/k2.err") != HWM $hwm"
grep -q '^# state waiting-hwm' "$T/k2.err" || fail "next holder did not wait"
amax=$(awk '{print $1}' "$T/k1.out" | sort -n | tail -1)
bmin=$(awk '{print $1}' "$T/k2.out" | sort -n | sed -n 1p)
[[ -n $bmin && $bmin -gt $hwm && $hwm -ge $amax ]] || fail "a max $amax, HWM $hwm, b min $bmin"
ok "kill -9: worker 0 freed $((t_free - t_kill)) ms after the kill (TTL 3 s); next holder waited past HWM $hwm"

# 4. SIGSTOP past the TTL: the paused holder never issues above the cap the next one read.
"$HOLDER" "${E[@]}" --namespace n4 >"$T/p1.out" 2>"$T/p1.err" & a=$!
pids+=($a)
wait_held "$T/p1.err"
sleep 1
kill -STOP "$a"
for _ in $(seq 100); do [[ $(live n4 0) == yes ]] || break; sleep 0.1; done
"$HOLDER" "${E[@]}" --namespace n4 >"$T/p2.out" 2>"$T/p2.err" & b=$!
pids+=($b)
wait_held "$T/p2.err"
[[ $(worker_of "$T/p2.err") == 0 ]] || fail "second holder got $(worker_of "$T/p2.err")"
floor=$(floor_of "$T/p2.err")
kill -CONT "$a"
sleep 2.5
kill -TERM "$a" "$b" 2>/dev/null || true # the resumed holder may have quit already
wait "$a" || true; wait "$b" || true
pids=()
amax0=$(awk '$2 == 0 {print $1}' "$T/p1.out" | sort -n | tail -1)
bmin=$(awk '$2 == 0 {print $1}' "$T/p2.out" | sort -n | sed -n 1p)
[[ $amax0 -le $floor && $bmin -gt $floor ]] ||
  fail "paused holder's last ms on worker 0: $amax0, cap read by the next: $floor, next min $bmin"
dups=$(cat "$T/p1.out" "$T/p2.out" | awk '{print $3}' | sort | uniq -d | wc -l)
[[ $dups -eq 0 ]] || fail "$dups duplicate IDs"
grep -q 'IDGEN_ELEASE\|IDGEN_ENOTARMED' "$T/p1.err" || fail "resumed holder did not refuse"
ok "resumed holder stayed at or below the cap: last ms $amax0 <= $floor < $bmin; then $(grep -c . "$T/p1.out") lines, 0 duplicates"

# 5. Graceful shutdown: final HWM = last ms issued, lease revoked at once.
"$HOLDER" "${E[@]}" --namespace n5 >"$T/g1.out" 2>"$T/g1.err" & a=$!
pids+=($a)
wait_held "$T/g1.err"
sleep 0.5
kill -TERM "$a"; wait "$a" || fail "graceful stop failed"
pids=()
[[ $(live n5 0) != yes ]] || fail "worker 0 still held after a graceful stop"
last=$(sed -n 's/^# stopped rc=0 last_ms=\([0-9]*\).*/\1/p' "$T/g1.err")
[[ -n $last && $(hwm_of n5 0) == "$last" ]] || fail "final HWM $(hwm_of n5 0) != last ms $last"
"$HOLDER" "${E[@]}" --namespace n5 --duration-ms 200 >"$T/g2.out" 2>"$T/g2.err"
[[ $(worker_of "$T/g2.err") == 0 && $(floor_of "$T/g2.err") == "$last" ]] ||
  fail "next holder: worker $(worker_of "$T/g2.err") floor $(floor_of "$T/g2.err")"
ok "graceful stop revoked at once; final HWM = last ms issued ($last)"

"$IDGEN" lease "${E[@]}" --namespace n5

# 6. An unreadable HWM record at worker 0 (everyone takes the smallest free ID): each
# holder passes it over, says so, and does not keep its claim on it.
curl -s -X POST "${EPS%%,*}/v3/kv/put" -d "{\"key\":\"$(printf /idgen/n6/hwm/0 | base64 -w0)\",\"value\":\"$(printf garbage | base64 -w0)\"}" >/dev/null
for i in 1 2; do # one after the other: each must meet worker 0 free and unreadable
  "$HOLDER" "${E[@]}" --namespace n6 --duration-ms 1500 >"$T/c$i.out" 2>"$T/c$i.err" &
  pids+=($!)
  wait_held "$T/c$i.err"
done
[[ $(live n6 0) != yes ]] || fail "worker 0's claim kept by a holder that skipped it"
for p in "${pids[@]}"; do wait "$p" || fail "holder $p failed"; done
pids=()
ws=$(for i in 1 2; do worker_of "$T/c$i.err"; done | sort -n | tr '\n' ' ')
[[ "$ws" == "1 2 " ]] || fail "with worker 0's HWM unreadable the holders got '$ws'"
for i in 1 2; do
  grep -q '^# skipped 1 .*unreadable HWM' "$T/c$i.err" || fail "holder c$i did not say it skipped worker 0"
done
ok "unreadable HWM at worker 0 passed over: workers $ws; $(sed -n 's/^# skipped //p' "$T/c1.err" | cut -c1-90)"
echo "lease_etcd: all passed"
