#!/usr/bin/env bash
# server_load.sh: 10^6 IDs fetched by concurrent HTTP (curl) and RESP (redis-cli) clients
# with none repeated; then SIGTERM during load: every response received is whole, the
# final HWM covers every ID handed out, the exit status is 0.
source "$(dirname "$0")/server_common.bash"

start_server load
BATCHES=62 # 4 clients x 62 x 4096 = 1,015,808 IDs
for c in 1 2; do
  for i in $(seq 1 $BATCHES); do printf 'url = "http://%s/v1/ids?count=4096"\n' "$HTTP"; done >"$WORK/curl$c.cfg"
  for i in $(seq 1 $BATCHES); do printf 'IDS 4096\n'; done >"$WORK/resp$c.in"
done
start=$(date +%s%N)
curl -s -K "$WORK/curl1.cfg" >"$WORK/h1.out" &
p1=$!
curl -s -K "$WORK/curl2.cfg" >"$WORK/h2.out" &
p2=$!
redis-cli -p "$RESP_PORT" <"$WORK/resp1.in" >"$WORK/r1.out" &
p3=$!
redis-cli -p "$RESP_PORT" <"$WORK/resp2.in" >"$WORK/r2.out" &
p4=$!
wait $p1 $p2 $p3 $p4
ms=$((($(date +%s%N) - start) / 1000000))
{
  grep -o '[0-9]\{6,\}' "$WORK/h1.out" "$WORK/h2.out" -h
  cat "$WORK/r1.out" "$WORK/r2.out"
} >"$WORK/all.ids"
total=$(wc -l <"$WORK/all.ids")
dups=$(sort "$WORK/all.ids" | uniq -d | wc -l)
check "IDs fetched" $((4 * BATCHES * 4096)) "$total"
check "none repeated" 0 "$dups"
say "     $total IDs over HTTP and RESP in $ms ms (4 concurrent clients, batches of 4096)"
rss=$(rss_kib "$SERVER_PID")
say "     server RSS after load: $rss KiB"
((rss < 65536)) || fail "RSS $rss KiB after load (bound 64 MiB)"
rc=0; stop_server || rc=$?
check "exit 0" 0 "$rc"

# SIGTERM during load
start_server term --shutdown-timeout 2000
for c in 1 2; do
  for i in $(seq 1 40000); do printf 'url = "http://%s/v1/ids?count=10"\n' "$HTTP"; done >"$WORK/t$c.cfg"
done
curl -s -K "$WORK/t1.cfg" >"$WORK/t1.out" 2>/dev/null &
p1=$!
curl -s -K "$WORK/t2.cfg" >"$WORK/t2.out" 2>/dev/null &
p2=$!
( for i in $(seq 1 40000); do printf 'IDS 10\n'; done ) | redis-cli -p "$RESP_PORT" >"$WORK/t3.out" 2>/dev/null &
p3=$!
# SIGTERM once every client has had answers (a busy machine may take seconds to start
# them), at most 30 s.
for _ in $(seq 300); do
  [[ -s $WORK/t1.out && -s $WORK/t2.out && -s $WORK/t3.out ]] && break
  sleep 0.1
done
rc=0; stop_server || rc=$?
check "SIGTERM under load exits 0" 0 "$rc"
wait $p1 $p2 $p3 || true
bad=$(cat "$WORK/t1.out" "$WORK/t2.out" | grep -cv '^{"ids":\["[0-9]*"\(,"[0-9]*"\)\{9\}\]}$' || true)
got=$(cat "$WORK/t1.out" "$WORK/t2.out" | wc -l)
check "every HTTP response received is whole ($got of them)" 0 "$bad"
((got > 0)) || fail "no HTTP response before SIGTERM"
{ grep -o '[0-9]\{6,\}' -h "$WORK/t1.out" "$WORK/t2.out"; grep '^[0-9]' "$WORK/t3.out"; } >"$WORK/t.ids"
check "no ID repeated under SIGTERM" 0 "$(sort "$WORK/t.ids" | uniq -d | wc -l)"
max=$(sort -n "$WORK/t.ids" | tail -1)
hwm=$(grep -o 'final_hwm .* last_ms=[0-9]*' "$SERVER_LOG" | grep -o 'last_ms=[0-9]*' | cut -d= -f2)
epoch=1767225600000 # snowflake: 41 bits of ms since 2026-01-01, then 10 + 12 bits
max_ms=$(((max >> 22) + epoch))
if [[ -n "$hwm" ]] && ((max_ms <= hwm)); then
  say "ok   final HWM $hwm covers the newest ID ($max_ms)"
else
  fail "final HWM [$hwm] below the newest ID's time $max_ms"
fi
finish
