#!/usr/bin/env bash
# Redis over TLS and with ACL users, against real redis-servers on loopback (issue 36):
# one with tls-port only, client certificates required and a user idgen, one serving an
# expired certificate, one a certificate for another host name. A lease over TLS (rediss://idgen@HOST, its password from a file)
# is held and renewed (lease_holder); the segment backend over TLS hands out numbers to
# `idgen segment next` and to `idgen serve` (its generator's redis_* keys inherited from
# the flags) at once, none twice; a wrong CA, no CA (the system's store), an expired
# server certificate, a certificate of another host, no client certificate, plain text
# to the TLS port and a wrong password are each refused at once (exit 1, one line naming the server and the reason);
# TLS files with redis://, a certificate without its key and two passwords are bad usage
# (exit 2, one line). A server that never answers the handshake: refused once
# --etcd-timeout (the per-request timeout) has passed.
# Usage: lease_redis_tls.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
for tool in redis-server redis-cli openssl faketime curl ss jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: no $tool (scripts/deps.sh test)" >&2; exit 1; }
done
HOLDER=$BUILD_DIR/lease_holder
[[ -x $HOLDER ]] || { echo "FAIL: lease_holder not built at $HOLDER" >&2; exit 1; }
RS=$SOURCE_DIR/scripts/redis-server.sh
stop_redises() { # all at once, each by its PID file
  local d p=()
  for d in "$WORK/r-tls" "$WORK/r-expired" "$WORK/r-host"; do
    [[ -f $d/m0.pid ]] && { "$RS" stop "$d" >/dev/null 2>&1 & p+=($!); }
  done
  ((${#p[@]} == 0)) || wait "${p[@]}" || true
}
trap 'stop_redises; cleanup' EXIT
t0=$(date +%s%3N)
C=$WORK/certs
"$SOURCE_DIR/scripts/tls-certs.sh" "$C"

# The servers at once.
"$RS" start "$WORK/r-tls" --aof everysec --tls "$C" --tls-auth-clients yes \
  --user idgen:idgenpw >"$WORK/tls.url" 2>"$WORK/tls.start" & p1=$!
"$RS" start "$WORK/r-expired" --aof everysec --tls "$C" --tls-pair expired \
  >"$WORK/expired.url" 2>"$WORK/expired.start" & p2=$!
"$RS" start "$WORK/r-host" --aof everysec --tls "$C" --tls-pair wrong-host \
  >"$WORK/host.url" 2>"$WORK/host.start" & p3=$!
wait "$p1" || { cat "$WORK/tls.start" >&2; fail "TLS redis did not start"; exit 1; }
wait "$p2" || { cat "$WORK/expired.start" >&2; fail "expired redis did not start"; exit 1; }
wait "$p3" || { cat "$WORK/host.start" >&2; fail "wrong-host redis did not start"; exit 1; }
URL=$(cat "$WORK/tls.url") EXPIRED_URL=$(cat "$WORK/expired.url") HOST_URL=$(cat "$WORK/host.url")
[[ $URL == rediss://127.0.0.1:* ]] || fail "the TLS server's URL is $URL"
HOSTPORT=${URL#rediss://}
say "redis with TLS at $URL, with an expired certificate at $EXPIRED_URL"
printf 'idgenpw\n' >"$WORK/pw"
printf 'wrong\n' >"$WORK/badpw"
chmod 600 "$WORK/pw" "$WORK/badpw"

USER_URL=rediss://idgen@$HOSTPORT
CERTS=(--redis-cacert "$C/ca.pem" --redis-cert "$C/client.pem" --redis-key "$C/client.key")
TLS=(--lease redis --redis "$USER_URL" "${CERTS[@]}" --redis-password-file "$WORK/pw")
QUICK=(--lease-ttl 2 --hwm-ahead 100 --hwm-interval 100)


# 1. A lease over TLS, as an ACL user: held, renewed, distinct IDs. The holder starts
# while the segment part below runs: its claim waits TTL + ahead (no HWM history).
"$HOLDER" "${TLS[@]}" "${QUICK[@]}" --namespace tls-lease --duration-ms 2500 \
  >"$WORK/holder.out" 2>"$WORK/holder.err" & holder=$!

# 2. The segment backend over TLS: `idgen segment next` in a loop (its options from the
# environment) and `idgen serve`'s generator (its redis_* keys from the flags) draw
# from one sequence at once.
"$IDGEN" segment init --backend redis --dsn "$USER_URL" "${CERTS[@]}" \
  --redis-password-file "$WORK/pw" orders >/dev/null || fail "segment init over TLS"
SEG_ENV=(IDGEN_REDIS_CACERT="$C/ca.pem" IDGEN_REDIS_CERT="$C/client.pem"
  IDGEN_REDIS_KEY="$C/client.key" IDGEN_REDIS_PASSWORD=idgenpw)
nums=$(env "${SEG_ENV[@]}" "$IDGEN" segment next --backend redis --dsn "$USER_URL" -n 3 orders |
  tr '\n' ' ')
check "segment over TLS hands out numbers" "1 2 3 " "$nums"
cat >"$WORK/gens.yaml" <<EOF
generators:
  default: {kind: uuid7}
  orders: {kind: segment, backend: redis, dsn: "$USER_URL", step: 20, retry_ms: 200}
EOF
launch_server seg --config "$WORK/gens.yaml" "${CERTS[@]}" --redis-password-file "$WORK/pw" ||
  fail "serve with a segment generator over TLS did not start"
for _ in $(seq 100); do
  [[ $(http_code "http://$HTTP/readyz?name=orders") == 200 ]] && break
  sleep 0.05
done
check "serve's segment generator over TLS is ready" 200 "$(http_code "http://$HTTP/readyz?name=orders")"
: >"$WORK/cli.nums"
( for _ in $(seq 15); do
    env "${SEG_ENV[@]}" "$IDGEN" segment next --backend redis --dsn "$USER_URL" -n 7 orders \
      >>"$WORK/cli.nums" || echo "segment next failed" >>"$WORK/cli.err"
  done ) & cli_loop=$!
: >"$WORK/serve.nums"
for _ in $(seq 6); do draw_ids "http://$HTTP" 20 "$WORK/serve.nums"; done
wait "$cli_loop"
[[ -s $WORK/cli.err ]] && fail "the CLI loop: $(sort -u "$WORK/cli.err")"
n_cli=$(wc -l <"$WORK/cli.nums") n_serve=$(wc -l <"$WORK/serve.nums")
check "the CLI loop drew 105 numbers" 105 "$n_cli"
check "serve drew 240 numbers" 240 "$n_serve"
check "segment over TLS, two processes: no number twice" 0 \
  "$(sort -n "$WORK/cli.nums" "$WORK/serve.nums" <(printf '1\n2\n3\n') | uniq -d | wc -l)"
rc=0; stop_server "$SERVER_PID" || rc=$?
check "serve over TLS exits 0 on SIGTERM" 0 "$rc"

wait "$holder" || fail "holder over TLS: $(tail -3 "$WORK/holder.err")"
n=$(wc -l <"$WORK/holder.out")
u=$(awk '{print $3}' "$WORK/holder.out" | sort -u | wc -l)
grep -q '^# state held' "$WORK/holder.err" || fail "holder over TLS never held"
((n > 10 && n == u)) && say "ok   holder over TLS: $n distinct IDs" ||
  fail "holder over TLS: $n IDs, $u distinct"
check_match "holder over TLS: renewed, no failure, no loss" \
  'rc=0 .*renewals=[1-9][0-9]* failures=0 lost=0 hwm_writes=[1-9]' \
  "$(grep '^# stopped' "$WORK/holder.err" || true)"

# 3. Refusals at run time: each names the server, in one line, at once.
W="rediss 127.0.0.1:${HOSTPORT#*:}/0"
refused "$IDGEN" lease "${TLS[@]}" --redis-cacert "$C/other-ca.pem"
check_refusal "wrong CA" 1 "^idgen lease: $W: TLS handshake: certificate verify failed: "
refused "$IDGEN" lease --lease redis --redis "$USER_URL" --redis-password-file "$WORK/pw" \
  --redis-cert "$C/client.pem" --redis-key "$C/client.key"
check_refusal "no CA: the system's store, which lacks the test CA" 1 \
  "^idgen lease: $W: TLS handshake: certificate verify failed: "
EW="rediss 127.0.0.1:${EXPIRED_URL##*:}/0"
refused "$IDGEN" lease --lease redis --redis "$EXPIRED_URL" --redis-cacert "$C/ca.pem"
check_refusal "expired server certificate" 1 \
  "^idgen lease: $EW: TLS handshake: certificate verify failed: certificate has expired"
HW="rediss 127.0.0.1:${HOST_URL##*:}/0"
refused "$IDGEN" lease --lease redis --redis "$HOST_URL" --redis-cacert "$C/ca.pem"
check_refusal "a certificate of another host name" 1 \
  "^idgen lease: $HW: TLS handshake: certificate verify failed: (IP address|hostname) mismatch"
refused "$IDGEN" lease --lease redis --redis "$USER_URL" --redis-cacert "$C/ca.pem" \
  --redis-password-file "$WORK/pw"
check_refusal "no client certificate" 1 \
  "^idgen lease: $W: .*; no client certificate given \(--redis-cert\)"
refused "$IDGEN" lease --lease redis --redis "redis://idgen@$HOSTPORT" \
  --redis-password-file "$WORK/pw"
check_refusal "plain text to the TLS port" 1 \
  "^idgen lease: redis $HOSTPORT/0: .*before any reply \(a TLS port\? then rediss://\)"
refused "$IDGEN" lease "${TLS[@]}" --redis-password-file "$WORK/badpw"
check_refusal "wrong password" 1 "^idgen lease: $W: AUTH refused: WRONGPASS"
refused "$IDGEN" segment next --backend redis --dsn "$USER_URL" "${CERTS[@]}" \
  --redis-cacert "$C/other-ca.pem" --redis-password-file "$WORK/pw" orders
check_refusal "segment with a wrong CA" 1 \
  "^idgen segment next: $W: TLS handshake: certificate verify failed: "
rc=$(serve_refused "$WORK/serve-ca.log" --state-dir "$WORK/s" "${TLS[@]}" \
  --redis-cacert "$C/other-ca.pem")
check "serve with a wrong CA: exit 1" 1 "$rc"
check_match "serve with a wrong CA: says why" "$W: TLS handshake: certificate verify failed" \
  "$(cat "$WORK/serve-ca.log")"

# A port that takes the connection and never answers (a listener that never accepts):
# the handshake gives up at the per-request timeout. `timeout` only keeps a broken
# deadline from hanging the test; the time is printed, not asserted.
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$WORK/mute.port" & mute=$!
for _ in $(seq 100); do [[ -s $WORK/mute.port ]] && break; sleep 0.05; done
MUTE=$(cat "$WORK/mute.port")
refused timeout 20 "$IDGEN" lease --lease redis --redis "rediss://127.0.0.1:$MUTE" \
  --redis-cacert "$C/ca.pem" --etcd-timeout 300
check_refusal "a server that never answers the handshake" 1 \
  "^idgen lease: rediss 127.0.0.1:$MUTE/0: TLS handshake: timed out"
kill "$mute" 2>/dev/null || true
wait "$mute" 2>/dev/null || true

# 4. Bad usage: exit 2, one line.
refused "$IDGEN" lease --lease redis --redis "redis://$HOSTPORT" --redis-cacert "$C/ca.pem"
check_refusal "a CA for redis://" 2 "--redis-cacert: the Redis URL is redis:// \(TLS needs rediss://\)"
refused "$IDGEN" lease --lease redis --redis "$URL" --redis-cert "$C/client.pem"
check_refusal "a certificate without its key" 2 "--redis-cert: needs --redis-key too"
refused "$IDGEN" lease --lease redis --redis "rediss://idgen:pw@$HOSTPORT" \
  --redis-password-file "$WORK/pw"
check_refusal "a password in the URL and a file" 2 \
  "--redis-password-file: the URL has a password too"
refused "$IDGEN" segment next --backend redis --dsn "redis://$HOSTPORT" \
  --redis-cert "$C/client.pem" --redis-key "$C/client.key" orders
check_refusal "segment: TLS files with redis://" 2 "--redis-cert: the Redis URL is redis://"
refused "$IDGEN" segment next --backend file --dsn "$WORK" --redis-cacert "$C/ca.pem" orders
check_refusal "segment: --redis-cacert for the file backend" 2 \
  "--redis-cacert is for --backend redis"

say "took $(($(date +%s%3N) - t0)) ms"
finish
