#!/usr/bin/env bash
# etcd over TLS and with etcd's auth, against real etcd servers on loopback (issue 36):
# one with https:// and client certificates required, one with auth enabled and simple
# tokens that expire after 1 idle second. A lease over TLS issues IDs (lease_holder and
# `idgen serve`); a wrong CA, no client certificate, an expired client certificate and an
# expired server certificate are each refused at once (exit 1, one line naming the
# endpoint); a list mixing http:// and https:// is bad usage (exit 2); the segment
# backend hands out numbers over TLS; the right user works, a wrong password is refused
# in one line, and a holder keeps its lease and keeps issuing across token expiries.
# Usage: lease_etcd_tls.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
for tool in etcd etcdctl openssl faketime curl ss; do
  command -v "$tool" >/dev/null || { echo "FAIL: no $tool (scripts/deps.sh test)" >&2; exit 1; }
done
HOLDER=$BUILD_DIR/lease_holder
[[ -x $HOLDER ]] || { echo "FAIL: lease_holder not built at $HOLDER" >&2; exit 1; }
stop_etcd() { # both at once (each takes a second or two to exit), each by its PID file
  local d p=()
  for d in "$WORK/etcd-tls" "$WORK/etcd-auth"; do
    "$SOURCE_DIR/scripts/etcd-cluster.sh" stop "$d" >/dev/null 2>&1 & p+=($!)
  done
  wait "${p[@]}" || true
}
trap 'stop_etcd; cleanup' EXIT
t0=$(date +%s%3N)
C=$WORK/certs
"$SOURCE_DIR/scripts/tls-certs.sh" "$C"

# Both servers at once: one second less of the test's time.
ETCD_CLUSTER_TLS=$C "$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd-tls" 1 \
  >"$WORK/tls.eps" 2>"$WORK/tls.start" & tls_start=$!
ETCD_CLUSTER_ARGS="--auth-token simple --auth-token-ttl 1" \
  "$SOURCE_DIR/scripts/etcd-cluster.sh" start "$WORK/etcd-auth" 1 \
  >"$WORK/auth.eps" 2>"$WORK/auth.start" & auth_start=$!
wait "$tls_start" || { cat "$WORK/tls.start" >&2; fail "TLS etcd did not start"; exit 1; }
wait "$auth_start" || { cat "$WORK/auth.start" >&2; fail "auth etcd did not start"; exit 1; }
TLS_EP=$(cat "$WORK/tls.eps") AUTH_EP=$(cat "$WORK/auth.eps")
say "etcd with TLS at $TLS_EP, with auth at $AUTH_EP"
[[ $TLS_EP == https://* ]] || fail "the TLS cluster's endpoint is $TLS_EP"

TLS=(--lease etcd --etcd "$TLS_EP" --etcd-cacert "$C/ca.pem" --etcd-cert "$C/client.pem"
  --etcd-key "$C/client.key")
QUICK=(--lease-ttl 2 --hwm-ahead 100 --hwm-interval 100)


# 1. A lease over TLS with a client certificate: a holder issues distinct IDs.
"$HOLDER" "${TLS[@]}" "${QUICK[@]}" --duration-ms 300 >"$WORK/tls1.out" 2>"$WORK/tls1.err" ||
  fail "holder over TLS: $(tail -3 "$WORK/tls1.err")"
n=$(wc -l <"$WORK/tls1.out")
u=$(awk '{print $3}' "$WORK/tls1.out" | sort -u | wc -l)
grep -q '^# state held' "$WORK/tls1.err" || fail "holder over TLS never held"
((n > 10 && n == u)) && say "ok   holder over TLS: $n distinct IDs" ||
  fail "holder over TLS: $n IDs, $u distinct"

# 1b. The segment backend on etcd over TLS (flags, then the environment).
"$IDGEN" segment init --backend etcd --dsn "$TLS_EP" --etcd-cacert "$C/ca.pem" \
  --etcd-cert "$C/client.pem" --etcd-key "$C/client.key" tls-seq >/dev/null ||
  fail "segment init over TLS"
nums=$(IDGEN_ETCD_CACERT=$C/ca.pem IDGEN_ETCD_CERT=$C/client.pem IDGEN_ETCD_KEY=$C/client.key \
  "$IDGEN" segment next --backend etcd --dsn "$TLS_EP" -n 3 tls-seq | tr '\n' ' ')
check "segment over TLS hands out numbers" "1 2 3 " "$nums"
refused "$IDGEN" segment next --backend etcd --dsn "$TLS_EP" --etcd-cacert "$C/other-ca.pem" \
  --etcd-cert "$C/client.pem" --etcd-key "$C/client.key" tls-seq
check_refusal "segment with a wrong CA" 1 "etcd $TLS_EP: .*certificate"

# 2. `idgen serve`, its options from the environment this time: the lease, and a
# segment generator on the same etcd, which takes them too.
printf 'generators:\n  tls-seq: {kind: segment, backend: etcd, dsn: "%s"}\n' "$TLS_EP" \
  >"$WORK/gens.yaml"
IDGEN_ETCD_CACERT=$C/ca.pem IDGEN_ETCD_CERT=$C/client.pem IDGEN_ETCD_KEY=$C/client.key \
  start_server tls --lease etcd --etcd "$TLS_EP" "${QUICK[@]}" --config "$WORK/gens.yaml"
id=$(curl -s "http://$HTTP/v1/id" | sed -n 's/.*"id":"\([0-9]*\)".*/\1/p')
check_match "serve over TLS issues an ID" '^[0-9]+$' "$id"
check "serve's etcd requests over TLS are timed" 1 \
  "$(curl -s "http://$HTTP/metrics" | grep -c '^idgen_lease_request_duration_seconds_count{generator="default",provider="etcd"} [1-9]')"
for _ in $(seq 50); do
  seq_id=$(curl -s "http://$HTTP/v1/id?name=tls-seq" | sed -n 's/.*"id":"\([0-9]*\)".*/\1/p')
  [[ -n $seq_id ]] && break
  sleep 0.1
done
check "serve's segment on etcd over TLS: the number after the CLI's" 4 "$seq_id"
rc=0; stop_server "$SERVER_PID" || rc=$?
check "serve over TLS exits 0 on SIGTERM" 0 "$rc"

# 3. Refusals: each names the endpoint, in one line, at once.
refused "$IDGEN" lease --lease etcd --etcd "$TLS_EP,http://127.0.0.1:1"
check_refusal "mixed http and https" 2 "mix http:// and https://"
refused "$IDGEN" lease --lease etcd --etcd "http://127.0.0.1:1" --etcd-cacert "$C/ca.pem"
check_refusal "a CA for http://" 2 "--etcd-cacert: .*https://"
refused "$IDGEN" lease "${TLS[@]}" --etcd-cacert "$C/other-ca.pem"
check_refusal "wrong CA" 1 "^idgen lease: etcd $TLS_EP: .*(unable to get local issuer|certificate)"
refused "$IDGEN" lease --lease etcd --etcd "$TLS_EP" --etcd-cacert "$C/ca.pem"
check_refusal "no client certificate" 1 "^idgen lease: etcd $TLS_EP: .*no client certificate given"
refused "$IDGEN" lease "${TLS[@]}" --etcd-cert "$C/client-expired.pem" \
  --etcd-key "$C/client-expired.key"
check_refusal "expired client certificate" 1 "^idgen lease: etcd $TLS_EP: .*(bad|expired) certificate|certificate expired"
refused "$IDGEN" lease "${TLS[@]}" --etcd-cacert "$WORK/no-such-ca.pem"
check_refusal "unreadable CA file" 1 "--etcd-cacert $WORK/no-such-ca.pem: No such file"
# serve too: exit 1 and one line saying why (not a retry at startup).
rc=$(serve_refused "$WORK/serve-ca.log" --state-dir "$WORK/s" "${TLS[@]}" \
  --etcd-cacert "$C/other-ca.pem")
check "serve with a wrong CA: exit 1" 1 "$rc"
check_match "serve with a wrong CA: says why" "etcd $TLS_EP: .*certificate" "$(cat "$WORK/serve-ca.log")"

# An expired server certificate (openssl's test server: the handshake is the check).
for _ in $(seq 50); do
  port=$((10000 + RANDOM % 22000))
  ss -Hltn "sport = :$port" | grep -q . || break
done
openssl s_server -quiet -accept "127.0.0.1:$port" -cert "$C/expired.pem" -key "$C/expired.key" \
  -www </dev/null >"$WORK/s_server.log" 2>&1 & s_pid=$!
for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
refused "$IDGEN" lease --lease etcd --etcd "https://127.0.0.1:$port" --etcd-cacert "$C/ca.pem"
check_refusal "expired server certificate" 1 \
  "^idgen lease: etcd https://127.0.0.1:$port: .*certificate has expired"
kill "$s_pid" 2>/dev/null || true
wait "$s_pid" 2>/dev/null || true

# 4. etcd's auth: a user that may use /idgen/ only; simple tokens idle out after 1 s.
"$SOURCE_DIR/scripts/etcd-cluster.sh" auth "$WORK/etcd-auth" idgen idgenpw /idgen/ ||
  { fail "auth setup"; exit 1; }
printf 'idgenpw\n' >"$WORK/pw"
printf 'wrong\n' >"$WORK/badpw"
chmod 600 "$WORK/pw" "$WORK/badpw"
AUTH=(--lease etcd --etcd "$AUTH_EP" --etcd-user idgen --etcd-password-file "$WORK/pw"
  --namespace auth)

"$HOLDER" "${AUTH[@]}" "${QUICK[@]}" --duration-ms 300 >"$WORK/auth1.out" 2>"$WORK/auth1.err" ||
  fail "holder as idgen: $(tail -3 "$WORK/auth1.err")"
n=$(wc -l <"$WORK/auth1.out")
((n > 10)) && say "ok   holder authenticated as idgen: $n IDs" || fail "holder as idgen: $n IDs"
IDGEN_ETCD_PASSWORD=idgenpw "$IDGEN" lease --lease etcd --etcd "$AUTH_EP" --etcd-user idgen \
  --namespace auth >"$WORK/auth-lease.out" 2>&1 || fail "idgen lease with IDGEN_ETCD_PASSWORD: $(cat "$WORK/auth-lease.out")"
refused "$IDGEN" lease "${AUTH[@]}" --etcd-password-file "$WORK/badpw"
check_refusal "wrong password" 1 \
  "^idgen lease: etcd $AUTH_EP: authenticating as 'idgen': .*invalid user ID or password"
refused "$IDGEN" lease --lease etcd --etcd "$AUTH_EP" --namespace auth
check_refusal "no user" 1 "user name is empty"

# A holder whose requests are 2.5 s apart (HWM writes; keepalives every 8/3 s): each
# finds its token expired, takes a new one and goes on, its lease held throughout.
# Meanwhile, etcd 3.4's refusal of an idle token, as its JSON gateway words it.
tok=$(curl -s -X POST "$AUTH_EP/v3/auth/authenticate" -d '{"name":"idgen","password":"idgenpw"}' |
  sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[[ -n $tok ]] || fail "no token for curl"
( sleep 2.5
  curl -s -w ' %{http_code}' -X POST -H "Authorization: $tok" "$AUTH_EP/v3/kv/range" \
    -d "{\"key\":\"$(printf /idgen/x | base64 -w0)\"}" ) >"$WORK/idle.reply" & idle=$!
refusals() { grep 'invalid auth token' "$WORK/etcd-auth/m0.log" | grep -vc -- "$tok" || true; }
before=$(refusals)
"$HOLDER" "${AUTH[@]}" --lease-ttl 8 --hwm-ahead 4000 --hwm-interval 2500 --every-ms 50 \
  --duration-ms 6000 >"$WORK/auth2.out" 2>"$WORK/auth2.err" ||
  fail "holder across token expiries: $(tail -3 "$WORK/auth2.err")"
after=$(refusals)
wait "$idle" || true
check_match "etcd refuses a token idle past its TTL" \
  '"etcdserver: invalid auth token".*"code":16\} 401$' "$(cat "$WORK/idle.reply")"
stopped=$(grep '^# stopped' "$WORK/auth2.err" || true)
check_match "holder across token expiries: no failure, no loss" \
  'rc=0 .*renewals=[1-9][0-9]* failures=0 lost=0 hwm_writes=[1-9]' "$stopped"
((after - before >= 1)) && say "ok   etcd refused $((after - before)) expired token(s) of the holder" ||
  fail "the holder's tokens never expired ($before, $after)"
first=$(awk 'NR == 1 {print $1}' "$WORK/auth2.out")
last=$(awk 'END {print $1}' "$WORK/auth2.out")
((last - first > 5500)) && say "ok   IDs kept coming for $((last - first)) ms ($(wc -l <"$WORK/auth2.out") IDs)" ||
  fail "IDs from $first to $last only"
grep -v '^# \(acquired\|state\|hwm\|stopped\|refused IDGEN_ENOTARMED\)' "$WORK/auth2.err" |
  grep . && fail "the holder reported errors"

say "took $(($(date +%s%3N) - t0)) ms"
finish
