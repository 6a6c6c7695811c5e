#!/usr/bin/env bash
# server_hostile.sh: hostile input: random bytes, a 1 MiB header, a request line without
# end, slowloris, many idle connections, half-closed sockets, the connection limit. Each
# is answered with a 4xx or closed while the server keeps serving others and its RSS
# stays bounded. (The attacks of issue 11, at their scale: server_abuse.sh.)
source "$(dirname "$0")/server_common.bash"

start_server hostile --header-timeout 1000 --idle-timeout 1500 --max-conns 10500
U=http://$HTTP
alive() { check "$1: still serving HTTP" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$U/healthz")"
          check "$1: still serving RESP" PONG "$(redis-cli -p "$RESP_PORT" PING)"; }
rss0=$(rss_kib "$SERVER_PID")
# poke ARGS... : runs server_poke, its output in $WORK/poke.out; prints its first line
poke() { "$POKE" "$@" >"$WORK/poke.out" 2>>"$WORK/poke.err" || true; head -c 300 "$WORK/poke.out" | tr -d '\0\r' | head -1 || true; }

# random bytes on both ports
for seed in 1 2 3 4 5; do
  out=$(poke random "$HTTP_PORT" 65536 "$seed")
  if [[ -z "$out" || "$out" == HTTP/1.1\ 4* ]]; then say "ok   random bytes $seed on HTTP: ${out:-closed}"; else fail "random bytes $seed on HTTP: $out"; fi
  out=$(poke random "$RESP_PORT" 65536 "$seed")
  if [[ -z "$out" || "$out" == -ERR* || "$out" == *"-ERR Protocol error"* ]]; then say "ok   random bytes $seed on RESP"; else say "     RESP answered: ${out:0:80}"; fi
done
alive "after random bytes"

# a 1 MiB header: 431 once 8 KiB of it arrived
{ printf 'GET /v1/id HTTP/1.1\r\nHost: x\r\nX-Big: '; head -c 1048576 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >"$WORK/big.req"
out=$(poke send "$HTTP_PORT" <"$WORK/big.req")
check "1 MiB header" "HTTP/1.1 431 Request Header Fields Too Large" "$out"
# 9 KiB header: our own 431
{ printf 'GET /v1/id HTTP/1.1\r\nHost: x\r\nX-Big: '; head -c 9000 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >"$WORK/9k.req"
out=$(poke send "$HTTP_PORT" <"$WORK/9k.req")
check "9 KiB header" "HTTP/1.1 431 Request Header Fields Too Large" "$out"
alive "after big headers"

# a request line without end: 414 once 2 KiB of it arrived; a slow request: cut off by
# the header timeout
out=$(poke endless "$HTTP_PORT" 3000)
check "endless request line" "HTTP/1.1 414 URI Too Long" "$out"
start=$(date +%s%N)
printf 'GET /v1/id HTTP/1.1\r\nHost: x\r\n' | poke send "$HTTP_PORT" -t 5000 >/dev/null
ms=$((($(date +%s%N) - start) / 1000000))
if ((ms < 4000)); then say "ok   slowloris cut after $ms ms"; else fail "slowloris held $ms ms"; fi
# RESP: an inline line without end, a bulk never finished
head -c 70000 /dev/zero | tr '\0' a >"$WORK/70k"
out=$(poke send "$RESP_PORT" <"$WORK/70k")
check "RESP inline without end" "-ERR Protocol error: too big inline request" "$out"
alive "after endless lines"

# half-closed sockets: the request is still answered
out=$(printf 'GET /v1/id HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | poke send "$HTTP_PORT" -h)
check "HTTP half-closed after the request" "HTTP/1.1 200 OK" "$out"
out=$(printf 'PING\r\nID\r\n' | poke send "$RESP_PORT" -h)
check "RESP half-closed after the commands" "+PONG" "$out"
pids=()
for i in $(seq 1 50); do
  { printf 'GET /v1/id HTTP/1.1\r\n' | "$POKE" send "$HTTP_PORT" -h -t 300 >/dev/null || true; } &
  pids+=($!)
done
wait "${pids[@]}"
alive "after 50 half-closed sockets"

# many idle connections: as many as ulimit and time allow (10,000 when possible), while
# others are served; the idle timeouts close them. The server keeps --max-conns per
# listener within its open-file limit, so each listener gets half of it.
want=10000
ulimit -n $((2 * want + 500)) 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
limit=$(ulimit -n)
if ((want > (limit - 128) / 2 - 100)); then want=$(((limit - 128) / 2 - 100)); fi
"$POKE" idle "$RESP_PORT" "$want" 2500 >"$WORK/idle.out" &
ipid=$!
sleep 0.5
alive "with $want idle RESP connections"
wait $ipid
opened=$(head -1 "$WORK/idle.out"); closed=$(tail -1 "$WORK/idle.out")
check "idle connections opened" "$want" "$opened"
check "idle timeout closed them all" "$want" "$closed"
rss1=$(rss_kib "$SERVER_PID")
say "     RSS $rss0 KiB at start, $rss1 KiB after the hostile input"
((rss1 < 65536)) || fail "RSS $rss1 KiB (bound 64 MiB)"
stop_server || true

# the connection limit: beyond --max-conns, connections are closed at once
start_server limit --max-conns 50 --idle-timeout 60000
"$POKE" idle "$RESP_PORT" 200 1500 >"$WORK/limit.out" &
ipid=$!
sleep 0.5
refused=$(redis-cli -p "$RESP_PORT" PING 2>&1 || true)
wait $ipid
closed=$(tail -1 "$WORK/limit.out")
check "150 of 200 refused at --max-conns 50" 150 "$closed"
check_match "a new client is refused while full" 'closed|reset|refused' "${refused,,}"
check "serving again once they left" PONG "$(redis-cli -p "$RESP_PORT" PING)"
m=$(curl -s "http://$HTTP/metrics" | grep '^idgen_connections_refused_total{listener="resp"}')
check_match "refusals counted" 'idgen_connections_refused_total\{listener="resp"\} (15[0-9]|1[6-9][0-9])' "$m"
stop_server || true
finish
