#!/usr/bin/env bash
# server_abuse.sh: the attacks of issue 11 at a scale this machine holds, each checked by
# its outcome (never by a timing): unfinished 400 KB heads, idle connections after big
# replies, a full RESP listener beside /healthz, token guessing, short tokens, HTTP sent
# to the RESP port, a frame sent in 10,000 writes, LF-only multibulk, the pre-auth
# timeout.
source "$(dirname "$0")/server_common.bash"
ulimit -n 4096 2>/dev/null || true
metric() { curl -s "$@" "http://$HTTP/metrics"; }
# sample SERIES [curl args]: the value of one series, e.g. 'x_total{listener="resp"}'
sample() { local series=$1; shift; metric "$@" | awk -v s="$series" '$1 == s {print $2}'; }
# sum_metric NAME [curl args]: the sum of every sample of one metric family
sum_metric() { local name=$1; shift; metric "$@" | awk -v n="$name" '$1 ~ "^"n"[{ ]" || $1 == n {s += $2} END {print s + 0}'; }

# 1. 300 connections each send a request line and 99 headers of 4,000 bytes, never the
# blank line: each is answered 431 once --max-header-bytes arrived, and the server does
# not grow by their 400 KB each.
start_server heads
rss0=$(rss_kib "$SERVER_PID")
"$POKE" heads "$HTTP_PORT" 300 99 4000 3000 -p "$SERVER_PID" >"$WORK/heads.out"
result=$(tail -1 "$WORK/heads.out")
held=${result##*rss_kib=}
check "300 unfinished 400 KB heads: each answered 431" "431=300 closed=0 open=0" "${result% rss_kib=*}"
rss1=$(rss_kib "$SERVER_PID")
say "     RSS $rss0 KiB before, $held KiB as the 300 attackers leave, $rss1 KiB after"
((held - rss0 < 32768)) || fail "RSS grew $((held - rss0)) KiB during the heads (bound 32 MiB)"
((rss1 - rss0 < 32768)) || fail "RSS grew $((rss1 - rss0)) KiB after the heads (bound 32 MiB)"
check "still serving" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/healthz")"
stop_server || true

# 2. 300 RESP connections each take IDS 4096 three times, then go idle: they keep no
# buffers.
start_server fetch
rss0=$(rss_kib "$SERVER_PID")
"$POKE" fetch "$RESP_PORT" 300 2000 "IDS 4096" "IDS 4096" "IDS 4096" >"$WORK/fetch.out" &
fpid=$!
for _ in $(seq 1 600); do [[ -s "$WORK/fetch.out" ]] && break; sleep 0.05; done
check "300 x 3 x IDS 4096 answered" "replies=900" "$(head -1 "$WORK/fetch.out")"
rss1=$(rss_kib "$SERVER_PID")
wait "$fpid"
check "none of the idle connections closed" "closed=0" "$(tail -1 "$WORK/fetch.out")"
say "     RSS $rss0 KiB before, $rss1 KiB with the 300 connections idle"
((rss1 - rss0 < 16384)) || fail "RSS grew $((rss1 - rss0)) KiB with 300 idle connections (bound 16 MiB)"
stop_server || true

# 3. A full RESP listener leaves HTTP its own connections: /healthz and /readyz answer.
start_server full --max-conns 100
"$POKE" idle "$RESP_PORT" 100 3000 >"$WORK/full.out" &
ipid=$!
for _ in $(seq 1 100); do
  [[ $(sample 'idgen_connections_open{listener="resp"}') == 100 ]] && break
  sleep 0.05
done
refused=$(redis-cli -p "$RESP_PORT" PING 2>&1 || true)
check_match "RESP full: a new client is refused" 'closed|reset|refused' "${refused,,}"
check "RESP full: /healthz answers" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/healthz")"
check "RESP full: /readyz answers" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/readyz")"
wait "$ipid"
check "the 100 held were never closed" 0 "$(tail -1 "$WORK/full.out")"
check_match "the refusal counted on its listener" '^[1-9]' "$(sample 'idgen_connections_refused_total{listener="resp"}')"
stop_server || true

# 4. Token guessing: a connection is closed after 3 wrong AUTHs, the rest of 1,000
# pipelined guesses never run; the failures are counted.
printf 'abuse-test-token-0123456789\n' >"$WORK/token"
start_server auth --auth-token-file "$WORK/token" --auth-timeout 1000 --idle-timeout 60000
B="Authorization: Bearer abuse-test-token-0123456789"
for _ in $(seq 1 1000); do printf 'AUTH wrong-guess-0123456789\r\n'; done >"$WORK/guesses"
"$POKE" send "$RESP_PORT" -e -t 3000 <"$WORK/guesses" >"$WORK/guesses.out" 2>"$WORK/guesses.err"
check "3 WRONGPASS for 1000 guesses" 3 "$(grep -c WRONGPASS "$WORK/guesses.out")"
check_match "then the server closed" 'end: (eof|reset)' "$(cat "$WORK/guesses.err")"
check "failures counted" 3 "$(sample 'idgen_auth_failures_total{listener="resp"}' -H "$B")"
# HTTP: wrong bearer tokens, pipelined on one connection: closed after 3
for i in $(seq 1 10); do printf 'GET /v1/id HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer guess-%d\r\n\r\n' "$i"; done >"$WORK/http-guesses"
"$POKE" send "$HTTP_PORT" -e -t 3000 <"$WORK/http-guesses" >"$WORK/http-guesses.out" 2>"$WORK/http-guesses.err"
check "HTTP: 3 answers to 10 wrong tokens" 3 "$(grep -c '^HTTP/1.1 401' "$WORK/http-guesses.out")"
check_match "HTTP: then the server closed" 'end: (eof|reset)' "$(cat "$WORK/http-guesses.err")"
# Pre-auth timeout: PINGs before AUTH do not keep a connection; after AUTH they do.
for _ in $(seq 1 20); do printf 'PING\r\n'; done >"$WORK/pings"
"$POKE" trickle "$RESP_PORT" 20 200000 <"$WORK/pings" >"$WORK/noauth.out"
n=$(grep -c NOAUTH "$WORK/noauth.out")
if ((n < 20)); then say "ok   unauthenticated: closed at --auth-timeout after $n of 20 PINGs"; else fail "unauthenticated connection answered all 20 PINGs"; fi
{ printf 'AUTH abuse-test-token-0123456789\r\n'; cat "$WORK/pings"; } >"$WORK/authed"
"$POKE" trickle "$RESP_PORT" 21 200000 <"$WORK/authed" >"$WORK/authed.out"
check "authenticated: all 20 PINGs answered" 20 "$(grep -c PONG "$WORK/authed.out")"
stop_server || true

# 5. A token shorter than 16 bytes is refused at start: exit 2, one line.
printf '0123456789abcde\n' >"$WORK/short"
rc=0
"$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --state-dir "$WORK/short-state" \
  --auth-token-file "$WORK/short" 2>"$WORK/short.err" || rc=$?
check "short token: exit 2" 2 "$rc"
check "short token: one line" 1 "$(wc -l <"$WORK/short.err")"
check_match "short token: it says why" '16 at least' "$(cat "$WORK/short.err")"

# 6. An HTTP request to the RESP port (what a web page can send) runs no command.
start_server cross
before=$(sum_metric idgen_resp_commands_total)
issued=$(sum_metric idgen_ids_issued_total)
printf 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 16\r\n\r\nIDS 100\r\nQUIT\r\n' |
  "$POKE" send "$RESP_PORT" -e >"$WORK/cross.out" 2>"$WORK/cross.err"
check "HTTP to RESP: no reply" "" "$(cat "$WORK/cross.out")"
check_match "HTTP to RESP: closed" 'end: (eof|reset)' "$(cat "$WORK/cross.err")"
check "HTTP to RESP: no command ran" "$before" "$(sum_metric idgen_resp_commands_total)"
check "HTTP to RESP: no ID issued" "$issued" "$(sum_metric idgen_ids_issued_total)"
check "HTTP to RESP: counted" 1 "$(sample idgen_resp_cross_protocol_total)"

# 7. LF-only multibulk: an error at once, not silence.
printf '*1\n$4\nPING\n' | "$POKE" send "$RESP_PORT" -e -t 5000 >"$WORK/lf.out" 2>"$WORK/lf.err"
check "LF-only multibulk: an error" "-ERR Protocol error: invalid multibulk length" "$(tr -d '\r' <"$WORK/lf.out")"
check_match "LF-only multibulk: closed, not left waiting" 'end: (eof|reset)' "$(cat "$WORK/lf.err")"
stop_server || true

# 8. A 16 KB multibulk of 2,300 arguments sent in 10,000 writes: the server's CPU time
# for it (utime + stime, /proc/PID/stat) stays under 50 ms.
start_server trickle --threads 1
{ printf '*2300\r\n'; for _ in $(seq 1 2300); do printf '$1\r\nx\r\n'; done; } >"$WORK/frame"
ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
"$POKE" trickle "$RESP_PORT" 10000 100 <"$WORK/frame" >"$WORK/trickle.out"
t1=$(ticks)
check_match "the frame was parsed whole" "^-ERR unknown command 'x'" "$(head -1 "$WORK/trickle.out")"
ms=$(((t1 - t0) * 1000 / hz))
say "     server CPU for the frame in 10,000 writes: $ms ms"
((ms < 50)) || fail "server CPU $ms ms for one frame in 10,000 writes (bound 50 ms)"
stop_server || true
finish
