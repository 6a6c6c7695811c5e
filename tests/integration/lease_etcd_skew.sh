#!/usr/bin/env bash
# The etcd provider's start-time clock check (src/lease/etcd.c, check_skew) on a real
# one-member etcd: with two live holders on the real clock, a holder whose wall clock is
# 20 s behind them, or 20 s ahead, is refused at start (--max-clock-skew, 10 s by
# default) with one line, and claims nothing; so is `idgen serve` (exit 1); holders 5 s
# off either way start. A departed holder's clock, left on the HWM key of a worker ID just
# claimed again, is not counted. The
# clocks are moved by libfaketime, per process (etcd's own clock stays real).
# Usage: lease_etcd_skew.sh /path/to/idgen
source "$(dirname "$0")/lease_common.bash"
command -v etcd >/dev/null || "$SRC/scripts/deps.sh" test
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FT ]] || { echo "libfaketime not installed at $FT (scripts/deps.sh test installs faketime)" >&2; exit 1; }
stop_servers() { "$SRC/scripts/etcd-cluster.sh" stop "$T/etcd"; }

EPS=$("$SRC/scripts/etcd-cluster.sh" start "$T/etcd" 1)
echo "etcd at $EPS"
E=(--lease etcd --etcd "$EPS" --lease-ttl 3 --lease-margin 1000 --namespace skew)
live() { "$IDGEN" lease "${E[@]}" | awk '$2 == "yes"' | wc -l; } # live worker IDs

# skewed NAME OFFSET ARGS...: the holder under libfaketime, its wall clock OFFSET seconds
# off ("-20", "+5"); the monotonic clock stays real, as PITFALLS.md advises. Its exit
# status.
skewed() {
  local name=$1 off=$2; shift 2
  echo "$off" >"$T/$name.ft"
  local st=0
  env LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE="$T/$name.ft" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    FAKETIME_CACHE_DURATION=1 "$HOLDER" "${E[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err" || st=$?
  return "$st"
}

# The peers: two holders on the real clock, each past its first HWM write (a record of
# its clock written by the holder itself, the only kind the check counts).
for i in 1 2; do
  "$HOLDER" "${E[@]}" >"$T/peer$i.out" 2>"$T/peer$i.err" &
  pids+=($!)
done
for i in 1 2; do wait_held "$T/peer$i.err"; done
[[ $(live) -eq 2 ]] || fail "$(live) live worker IDs with two peers"

# 1-2. 20 s behind, 20 s ahead: refused at start, with one line, and nothing claimed.
for off in -20 +20; do
  name=off${off#[+-]}${off:0:1}
  st=0
  skewed "$name" "$off" --duration-ms 500 || st=$?
  [[ $st -eq 1 ]] ||
    fail "a holder $off s off its peers exited $st, not 1 (refused): it issued $(wc -l <"$T/$name.out") IDs"
  [[ $(wc -l <"$T/$name.err") -eq 1 && ! -s $T/$name.out ]] ||
    fail "a holder $off s off: $(wc -l <"$T/$name.err") lines on stderr, $(wc -l <"$T/$name.out") IDs"
  grep -qE "^lease_holder: local clock is [${off:0:1}](1[5-9]|2[0-4])[0-9]{3} ms off the median of 2 live peers in namespace 'skew' \(limit 10000 ms, --max-clock-skew\)$" "$T/$name.err" ||
    fail "a holder $off s off: '$(cat "$T/$name.err")'"
  [[ $(live) -eq 2 ]] || fail "$(live) live worker IDs after a holder $off s off was refused"
  ok "$off s off the peers: refused: $(cut -d' ' -f2- "$T/$name.err")"
  # The same through `idgen serve`: it exits 1 at start, naming the clock.
  st=0
  env LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE="$T/$name.ft" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    FAKETIME_CACHE_DURATION=1 timeout 30 "$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 \
    --state-dir "$T/state" "${E[@]}" >/dev/null 2>"$T/serve$name.err" || st=$?
  [[ $st -eq 1 ]] || fail "idgen serve $off s off its peers exited $st, not 1"
  grep -qE " error start generator default: lease etcd: local clock is [${off:0:1}](1[5-9]|2[0-4])[0-9]{3} ms off the median of 2 live peers" "$T/serve$name.err" ||
    fail "idgen serve $off s off: '$(cat "$T/serve$name.err")'"
  [[ $(live) -eq 2 ]] || fail "$(live) live worker IDs after idgen serve $off s off was refused"
  ok "$off s off the peers: idgen serve refused, exit 1"
done

# 3. Within the limit (5 s behind, 5 s ahead): they start and issue.
for off in -5 +5; do
  name=off${off#[+-]}${off:0:1}
  skewed "$name" "$off" --duration-ms 300 || fail "a holder $off s off its peers exited $?"
  grep -q '^# state held' "$T/$name.err" || fail "a holder $off s off never held its ID"
  [[ -s $T/$name.out ]] || fail "a holder $off s off issued nothing"
  ok "$off s off the peers: started, $(wc -l <"$T/$name.out") IDs"
done

for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" || fail "a peer's graceful stop failed"; done
pids=()

# 4. Only a record its current holder wrote counts: a departed holder's, 60 s behind,
# still on the HWM key of a worker ID just claimed (its new holder waits past that HWM,
# 20 s ahead, and has written nothing yet) is not a peer's clock, and a holder on the
# right clock starts beside it.
now=$(date +%s%3N)
rec=$(printf '{"hwm_ms":"%s","host":"gone","pid":"1","start_ms":"%s","wall_ms":"%s"}' \
  $((now + 20000)) $((now - 60000)) $((now - 60000)))
curl -s -X POST "${EPS%%,*}/v3/kv/put" \
  -d "{\"key\":\"$(printf /idgen/skew2/hwm/0 | base64 -w0)\",\"value\":\"$(printf '%s' "$rec" | base64 -w0)\"}" >/dev/null
E2=(--lease etcd --etcd "$EPS" --lease-ttl 3 --lease-margin 1000 --namespace skew2)
"$HOLDER" "${E2[@]}" >"$T/new.out" 2>"$T/new.err" &
pids+=($!)
for _ in $(seq 100); do grep -qs '^# acquired worker=0 ' "$T/new.err" && break; sleep 0.1; done
grep -q '^# acquired worker=0 ' "$T/new.err" || fail "the new holder did not claim worker 0"
st=0
"$HOLDER" "${E2[@]}" --duration-ms 300 >"$T/beside.out" 2>"$T/beside.err" || st=$?
if ! grep -q '^# state waiting-hwm' "$T/new.err" || grep -q '^# state held' "$T/new.err"; then
  fail "worker 0's new holder was not still waiting past the departed holder's HWM"
fi
[[ $st -eq 0 && -s $T/beside.out ]] ||
  fail "a holder on the right clock beside a departed holder's record exited $st: $(head -1 "$T/beside.err")"
ok "a departed holder's clock (60 s behind) did not count: a holder on the right clock started beside its worker ID's new holder"
for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" || fail "the new holder's graceful stop failed"; done
pids=()
echo "lease_etcd_skew: all passed"
