#!/usr/bin/env bash
# server_tls.sh: `idgen serve --tls-cert/--tls-key [--tls-ca --tls-client-cert]`: HTTPS and
# RESP over TLS on a throwaway PKI (scripts/tls-certs.sh): the options' usage errors; IDs
# over both; plain text on a TLS port answered with nothing; a client that does not trust
# the CA, an expired certificate, TLS 1.1 all refused; TLS 1.3 preferred, 1.2 taken,
# sessions resumed; client certificates required, optional, from an untrusted CA; the pair
# rotated by SIGHUP under load (no request fails, open connections keep going), a bad new
# pair refused with one line; 500 half-open handshakes held while health still answers,
# with RSS bounded, then cut by the header timeout.
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts usage serve expired clientcert rotate halfopen -- "${@:2}"
for tool in curl redis-cli openssl faketime python3; do
  command -v "$tool" >/dev/null || { fail "no $tool (scripts/deps.sh test)"; finish; }
done
PKI=$WORK/pki
"$SOURCE_DIR/scripts/tls-certs.sh" "$PKI" || { fail "tls-certs.sh"; finish; }
CA=$PKI/ca.pem

if part usage; then
# ---- usage: exit 2, one line ----
usage() { # name want-text serve-args...
  local name=$1 want=$2 rc=0 out; shift 2
  out=$(timeout 20 "$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --lease static --worker-id 1 "$@" 2>&1 >/dev/null) || rc=$?
  check "usage: $name: exit 2" 2 "$rc"
  check "usage: $name: one line" 1 "$(wc -l <<<"$out")"
  check_match "usage: $name: says why" "$want" "$out"
}
usage "cert without key" "--tls-cert and --tls-key go together: --tls-key is missing" --tls-cert "$PKI/server.pem"
usage "key without cert" "--tls-cert is missing" --tls-key "$PKI/server.key"
usage "ca without client-cert" "--tls-ca is for client certificates" --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-ca "$CA"
usage "client-cert without ca" "--tls-client-cert require needs --tls-ca" --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-client-cert require
usage "client-cert mode" "--tls-client-cert 'always': expected none, optional or require" --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-ca "$CA" --tls-client-cert always
usage "missing cert file" "--tls-cert $WORK/none.pem: cannot read a PEM certificate chain" --tls-cert "$WORK/none.pem" --tls-key "$PKI/server.key"
usage "a key of another certificate" "--tls-key $PKI/server2.key: not the key of --tls-cert's certificate" --tls-cert "$PKI/server.pem" --tls-key "$PKI/server2.key"
printf 'not a key\n' >"$WORK/bad.key"
usage "a key that is not PEM" "--tls-key $WORK/bad.key: cannot read a PEM private key" --tls-cert "$PKI/server.pem" --tls-key "$WORK/bad.key"
usage "CA file unreadable" "--tls-ca $WORK/none.pem: cannot read PEM CA certificates" --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-ca "$WORK/none.pem" --tls-client-cert optional
fi

# tls.py MODE ARGS...: the Python side of the checks (ssl module, OpenSSL underneath)
cat >"$WORK/tls.py" <<'PY'
import hashlib, json, socket, ssl, sys, threading, time, warnings
warnings.simplefilter("ignore")  # TLS 1.1 is deprecated: that is the point
mode, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def ctx(cert=None, maxv=None, minv=None):
    c = ssl.create_default_context(cafile=ca)
    if cert: c.load_cert_chain(cert + ".pem", cert + ".key")
    if maxv: c.maximum_version = maxv
    if minv: c.minimum_version = minv
    return c
def conn(c, session=None):
    s = c.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                      server_hostname="localhost", session=session)
    return s
def get(s, path="/v1/id"):
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(4096)
        if not d: raise OSError("closed")
        data += d
    head, body = data.split(b"\r\n\r\n", 1)
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(body) < n: body += s.recv(4096)
    return head.split(b" ")[1].decode()
if mode == "version":           # the protocol version the server picks, at most MAX
    maxv = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}[sys.argv[4]]
    s = conn(ctx(maxv=maxv)); print(s.version(), get(s))
elif mode == "tls11":           # a client that offers TLS 1.1 at most
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); c.load_verify_locations(ca)
    c.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED; c.maximum_version = ssl.TLSVersion.TLSv1_1
    c.set_ciphers("ALL:@SECLEVEL=0")
    try: s = conn(c); print("accepted", s.version())
    except (ssl.SSLError, OSError) as e: print("refused")
elif mode == "resume":          # a second connection resumes the first one's session
    c = ctx(); s = conn(c); get(s); sess = s.session; s.close()
    s2 = conn(c, sess); get(s2); print("resumed" if s2.session_reused else "full handshake")
elif mode == "cert":            # one request with a client certificate (or none): status
    try: s = conn(ctx(cert=sys.argv[4] if sys.argv[4] != "-" else None)); print(get(s))
    except (ssl.SSLError, OSError) as e: print("refused")
elif mode == "serial":          # the SHA-256 of the certificate a new handshake presents
    s = conn(ctx()); print(hashlib.sha256(s.getpeercert(True)).hexdigest())
elif mode == "keepalive":       # one connection, a request a second until STOP exists; prints
    stop = sys.argv[4]          # statuses' counts and the certificate it was opened with
    import os
    s = conn(ctx()); pem = hashlib.sha256(s.getpeercert(True)).hexdigest()
    open(stop + ".open", "w").write(pem)  # the test rotates only once this is here
    ok = bad = 0
    deadline = time.time() + 120  # a test that died never makes STOP
    while not os.path.exists(stop) and time.time() < deadline:
        try: ok += get(s) == "200"
        except Exception: bad += 1; break
        time.sleep(0.05)
    print(json.dumps({"ok": ok, "bad": bad, "cert": pem}))
elif mode == "load":            # new connections, one request each, until STOP exists
    import os
    stop, ok, bad = sys.argv[4], 0, 0
    deadline = time.time() + 120
    while not os.path.exists(stop) and time.time() < deadline:
        try:
            s = conn(ctx()); ok += get(s) == "200"; s.close()
        except Exception as e: bad += 1; print("error:", e, file=sys.stderr)
    print(json.dumps({"ok": ok, "bad": bad}))
elif mode == "halfopen":        # N connections each sending half a ClientHello's header,
    n, hold = int(sys.argv[4]), float(sys.argv[5])   # held HOLD s; prints how many the
    socks = []                                        # server closed meanwhile
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"\x16\x03\x01\x02"); socks.append(s)
    print("open", flush=True)
    time.sleep(hold)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try: closed += s.recv(1) == b""
        except BlockingIOError: pass
        except OSError: closed += 1
    print("closed", closed)
PY
tls() { python3 "$WORK/tls.py" "$@"; }

if part serve; then
# ---- HTTPS and RESP over TLS ----
start_server tls --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --header-timeout 2000 || finish
check_match "start line says tls=tls" ' tls=tls ' "$(grep ' info start ' "$SERVER_LOG")"
check_match "HTTPS /v1/id" '^\{"id":"[0-9]+"\}$' "$(curl -s --cacert "$CA" "https://$HTTP/v1/id")"
check_match "HTTPS by name (localhost)" '^\{"ids":\["[0-9]+","[0-9]+","[0-9]+"\]\}$' \
  "$(curl -s --cacert "$CA" "https://localhost:$HTTP_PORT/v1/ids?count=3")"
check_match "RESP over TLS: ID" '^[0-9]+$' "$(redis-cli --tls --cacert "$CA" -p "$RESP_PORT" ID)"
check "RESP over TLS: 2000 pipelined IDs, all distinct" 2000 \
  "$(for i in $(seq 2000); do echo ID; done | redis-cli --tls --cacert "$CA" -p "$RESP_PORT" | grep -E '^[0-9]+$' | sort -u | wc -l)"
# plain text on a TLS port: nothing back, closed
rc=0; out=$(curl -s -m 5 "http://$HTTP/v1/id") || rc=$?
check "plain HTTP on the TLS port: empty reply (curl 52)" "52 " "$rc $out"
out=$(printf 'PING\r\n' | timeout 5 "$POKE" send "$RESP_PORT" -t 3000 2>/dev/null | tr -d '\r\n' || true)
check "plain RESP on the TLS port: nothing back" "" "$out"
check_match "handshakes failed counted, by listener" 'idgen_tls_handshakes_failed_total\{listener="http"\} [1-9].*idgen_tls_handshakes_failed_total\{listener="resp"\} [1-9]' \
  "$(curl -s --cacert "$CA" "https://$HTTP/metrics" | grep '^idgen_tls_handshakes_failed_total' | tr '\n' ' ')"
rc=0; curl -s -o /dev/null --cacert "$PKI/other-ca.pem" "https://$HTTP/v1/id" || rc=$?
check "a client that does not trust the CA refuses (curl 60)" 60 "$rc"
check_match "TLS 1.3 preferred" '^TLSv1.3 200$' "$(tls version "$HTTP_PORT" "$CA" 1.3)"
check_match "TLS 1.2 taken" '^TLSv1.2 200$' "$(tls version "$HTTP_PORT" "$CA" 1.2)"
check "TLS 1.1 refused" refused "$(tls tls11 "$HTTP_PORT" "$CA")"
check "a session resumed" resumed "$(tls resume "$HTTP_PORT" "$CA")"
stop_server || fail "tls server exit"
fi

if part expired; then
# an expired certificate: clients refuse it
start_server expired --tls-cert "$PKI/expired.pem" --tls-key "$PKI/expired.key" || finish
rc=0; err=$(curl -sS -o /dev/null --cacert "$CA" "https://$HTTP/v1/id" 2>&1) || rc=$?
check "an expired certificate is refused by the client (curl 60)" 60 "$rc"
check_match "... as expired" 'expired' "$err"
stop_server || fail "expired server exit"
fi

if part clientcert; then
# ---- client certificates ----
start_server mtls --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-ca "$CA" --tls-client-cert require || finish
check_match "start line says tls=mtls" ' tls=mtls ' "$(grep ' info start ' "$SERVER_LOG")"
check "require: a trusted client certificate" 200 "$(tls cert "$HTTP_PORT" "$CA" "$PKI/client")"
check "require: no client certificate refused" refused "$(tls cert "$HTTP_PORT" "$CA" -)"
check "require: a certificate of another CA refused" refused "$(tls cert "$HTTP_PORT" "$CA" "$PKI/other")"
check_match "require: RESP with the certificate" '^[0-9]+$' \
  "$(redis-cli --tls --cacert "$CA" --cert "$PKI/client.pem" --key "$PKI/client.key" -p "$RESP_PORT" ID)"
out=$(redis-cli --tls --cacert "$CA" -p "$RESP_PORT" ID 2>&1 || true)
check_match "require: RESP without one refused" '^$|rror|closed|reset' "$out"
stop_server || fail "mtls server exit"
start_server mtls-opt --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --tls-ca "$CA" --tls-client-cert optional || finish
check "optional: no client certificate" 200 "$(tls cert "$HTTP_PORT" "$CA" -)"
check "optional: a trusted one" 200 "$(tls cert "$HTTP_PORT" "$CA" "$PKI/client")"
check "optional: one of another CA refused" refused "$(tls cert "$HTTP_PORT" "$CA" "$PKI/other")"
stop_server || fail "mtls-opt server exit"
fi

if part rotate; then
# ---- rotation by SIGHUP, under load ----
cp "$PKI/server.pem" "$WORK/cert.pem"; cp "$PKI/server.key" "$WORK/key.pem"
start_server rotate --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" || finish
first=$(tls serial "$HTTP_PORT" "$CA")
tls keepalive "$HTTP_PORT" "$CA" "$WORK/stop" >"$WORK/keepalive.out" &
keepalive=$!
tls load "$HTTP_PORT" "$CA" "$WORK/stop" >"$WORK/load.out" 2>"$WORK/load.err" &
load=$!
for _ in $(seq 200); do [[ -s $WORK/stop.open ]] && break; sleep 0.05; done
check "the kept-open connection has the first certificate" "$first" "$(cat "$WORK/stop.open" 2>/dev/null)"
reloads() { grep -c ' tls_reload ' "$SERVER_LOG" || true; }
hup_and_wait() { # one SIGHUP; waits for its tls_reload line
  local before; before=$(reloads)
  kill -HUP "$SERVER_PID"
  for _ in $(seq 100); do (($(reloads) > before)) && return 0; sleep 0.05; done
  fail "no tls_reload line after SIGHUP"
}
for i in 1 2 3 4 5 6; do
  if ((i % 2)); then pair=server2; else pair=server; fi
  cp "$PKI/$pair.pem" "$WORK/cert.pem.new"; cp "$PKI/$pair.key" "$WORK/key.pem.new"
  mv "$WORK/key.pem.new" "$WORK/key.pem"; mv "$WORK/cert.pem.new" "$WORK/cert.pem"
  hup_and_wait
  sleep 0.3
done
fingerprint() { openssl x509 -in "$1" -outform der | sha256sum | cut -d' ' -f1; }
check "rotated: new handshakes present the new certificate" "$(fingerprint "$PKI/server.pem")" "$(tls serial "$HTTP_PORT" "$CA")"
cp "$PKI/server2.pem" "$WORK/cert.pem"; cp "$PKI/server2.key" "$WORK/key.pem"
hup_and_wait
second=$(tls serial "$HTTP_PORT" "$CA")
check "rotated: server2's certificate" "$(fingerprint "$PKI/server2.pem")" "$second"
[[ $first != "$second" ]] || fail "rotation: the same certificate before and after"
# a bad new pair: refused with one line, the pair in force kept
cp "$PKI/server.pem" "$WORK/cert.pem" # server2's key stays: not this certificate's
hup_and_wait
check_match "a bad new pair: one warn line" "warn tls_reload kept the certificate in force: --tls-key $WORK/key.pem: not the key of --tls-cert's certificate" \
  "$(grep ' tls_reload ' "$SERVER_LOG" | tail -1)"
check "a bad new pair: the one in force stays" "$second" "$(tls serial "$HTTP_PORT" "$CA")"
touch "$WORK/stop"
wait "$keepalive" "$load" || true
check_match "under load: no request failed across 8 reloads" '"bad": 0' "$(cat "$WORK/load.out")"
check_match "under load: requests went on" '"ok": [1-9][0-9]+' "$(cat "$WORK/load.out")"
check_match "an open connection kept its certificate and its requests" "\"bad\": 0, \"cert\": \"$first\"" "$(cat "$WORK/keepalive.out")"
stop_server || fail "rotate server exit"
fi

if part halfopen; then
# ---- half-open handshakes: bounded ----
start_server halfopen --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" --header-timeout 3000 --max-conns 2000 || finish
rss0=$(rss_kib "$SERVER_PID")
coproc HALF { tls halfopen "$HTTP_PORT" "$CA" 500 6; }
read -r line <&"${HALF[0]}" # "open": all 500 sent their 4 bytes
check "500 half-open handshakes opened" open "$line"
check "... health still answers over TLS" 200 "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" "https://$HTTP/healthz")"
rss1=$(rss_kib "$SERVER_PID")
say "     RSS ${rss0} kB before, ${rss1} kB with 500 half-open handshakes"
((rss1 - rss0 < 40000)) || fail "500 half-open handshakes took $((rss1 - rss0)) kB"
read -r line <&"${HALF[0]}"
check "... all 500 cut by the header timeout (3 s)" "closed 500" "$line"
check_match "... and health answers after" '^200$' "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" "https://$HTTP/healthz")"
rss2=$(rss_kib "$SERVER_PID")
say "     RSS $rss2 kB once they were cut"
((rss2 - rss0 < 8000)) || fail "the cut handshakes' memory was not given back: $rss0 kB before, $rss2 kB after"
stop_server || fail "halfopen server exit"
fi

finish
