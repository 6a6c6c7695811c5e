#!/usr/bin/env bash
# server_mtls.sh: client certificates standing for teams (tokens.NAME.cert_subject and
# cert_san) and the plain --health-listen port, against `idgen serve` over TLS on a
# throwaway PKI (scripts/tls-certs.sh): the configuration errors; team-a's certificate
# (by subject) and team-b's (by SAN) each issue from their generators only, over HTTPS
# and RESP, with the token's 403 / -NOPERM texts, quota and per-token metrics; a
# certificate of no team and none at all refused as a missing token is; a token sent
# beside a certificate wins; SIGHUP moving a subject to another team, for new
# connections and a RESP connection kept open; the health port answering /healthz and
# /readyz in plain text, 404 for the rest, while the TLS ports refuse plain text.
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts usage teams reload health -- "${@:2}"
for tool in curl redis-cli openssl faketime python3; do
  command -v "$tool" >/dev/null || { fail "no $tool (scripts/deps.sh test)"; finish; }
done
PKI=$WORK/pki
"$SOURCE_DIR/scripts/tls-certs.sh" "$PKI" || { fail "tls-certs.sh"; finish; }
CA=$PKI/ca.pem
TLS=(--tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key")
MTLS=("${TLS[@]}" --tls-ca "$CA" --tls-client-cert optional)
B=tok-team-b-0123456789
printf '%s\n' "$B" >"$WORK/b.token"

# team-a: its certificate's subject, orders only, a quota; team-b: a SAN of its
# certificate or its token, invoices only; client-c.pem's CN=team-c is nobody's.
teams() { # team-a's cert_subject
  cat <<YAML
generators:
  orders: {kind: uuid7}
  invoices: {kind: ulid}
tokens:
  team-a: {cert_subject: "$1", generators: [orders], rate: 1, burst: 3}
  team-b: {cert_san: "DNS:team-b.example", file: $WORK/b.token, generators: [invoices]}
YAML
}
teams "CN=team-a" >"$WORK/idgen.yaml"

# https CERT PATH [curl args]: the status code, the body in $WORK/body ("-": no cert)
https() {
  local cert=$1 path=$2
  shift 2
  [[ $cert == - ]] || set -- --cert "$PKI/$cert.pem" --key "$PKI/$cert.key" "$@"
  curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$CA" "$@" "https://$HTTP$path"
}
# resp CERT COMMAND...: the reply's first line (an ID is "id")
resp() {
  local cert=$1 out
  shift
  out=$(redis-cli --tls --cacert "$CA" --cert "$PKI/$cert.pem" --key "$PKI/$cert.key" \
    -p "$RESP_PORT" "$@" 2>&1 | head -1)
  if [[ $out =~ ^[0-9A-Za-z-]{20,}$ ]]; then echo id; else echo "$out"; fi
}

if part usage; then
  usage() { # NAME REGEX YAML-TOKENS-LINE serve-args...
    local name=$1 want=$2 rc=0
    printf 'generators:\n  orders: {kind: uuid7}\ntokens:\n%s\n' "$3" >"$WORK/$name.yaml"
    shift 3
    timeout 20 "$IDGEN" serve --http 127.0.0.1:0 --resp= --state-dir "$WORK/s-$name" \
      --config "$WORK/$name.yaml" "$@" 2>"$WORK/$name.log" || rc=$?
    check "usage $name: exit 2" 2 "$rc"
    check "usage $name: one line" 1 "$(wc -l <"$WORK/$name.log")"
    check_match "usage $name: says why" "$want" "$(cat "$WORK/$name.log")"
  }
  usage no-ca "tokens\\.t\\.cert_subject: needs --tls-ca and --tls-client-cert optional or require" \
    '  t: {cert_subject: "CN=team-a"}' "${TLS[@]}"
  usage no-tls "tokens\\.t\\.cert_san: needs --tls-ca" '  t: {cert_san: "DNS:a.example"}'
  usage san-kind "tokens\\.t\\.cert_san: 'IP:127\\.0\\.0\\.1' is not DNS:NAME, URI:URI or email:ADDRESS" \
    '  t: {cert_san: "IP:127.0.0.1"}' "${MTLS[@]}"
  usage subject-form "tokens\\.t\\.cert_subject: 'team-a' is not a subject in RFC 2253 form" \
    '  t: {cert_subject: "team-a"}' "${MTLS[@]}"
  usage same-subject "tokens 't' and 'u' name the same certificate \\(CN=team-a\\)" \
    '  t: {cert_subject: "CN=team-a"}
  u: {cert_subject: "CN=team-a", generators: [orders]}' "${MTLS[@]}"
  usage nothing "tokens\\.t: no file .*, cert_subject or cert_san" '  t: {generators: [orders]}' "${MTLS[@]}"
  usage health-beyond-loopback "--health-listen '0\\.0\\.0\\.0:9': a plain-text port must be on loopback" \
    '  t: {cert_subject: "CN=team-a"}' "${MTLS[@]}" --health-listen 0.0.0.0:9
fi

if part teams; then
  start_server teams --config "$WORK/idgen.yaml" "${MTLS[@]}" || finish
  check "team-a's certificate: orders over HTTPS" 200 "$(https client '/v1/id?name=orders')"
  check "team-a's certificate: invoices refused" 403 "$(https client '/v1/id?name=invoices')"
  check "... with the token's text" '{"error":{"code":"forbidden","message":"token '"'team-a'"' may not use generator '"'invoices'"'"}}' "$(cat "$WORK/body")"
  check "team-b's certificate (its SAN): invoices" 200 "$(https client-b '/v1/id?name=invoices')"
  check "team-b's certificate: orders refused" 403 "$(https client-b '/v1/id?name=orders')"
  check_match "... as team-b" "token 'team-b' may not use generator 'orders'" "$(cat "$WORK/body")"
  check "a certificate of no team: 401" 401 "$(https client-c '/v1/id?name=orders')"
  check "no certificate, no token: 401" 401 "$(https - '/v1/id?name=orders')"
  check "no certificate, team-b's token: invoices" 200 "$(https - '/v1/id?name=invoices' -H "Authorization: Bearer $B")"
  check "team-a's certificate and team-b's token: the token wins" 200 \
    "$(https client '/v1/id?name=invoices' -H "Authorization: Bearer $B")"
  check "team-a's certificate and a wrong token: 401" 401 \
    "$(https client '/v1/id?name=orders' -H "Authorization: Bearer tok-wrong-0123456789")"
  check "RESP, team-a's certificate: ID orders, no AUTH" id "$(resp client ID orders)"
  check "RESP, team-a's certificate: ID invoices refused as a token is" \
    "NOPERM token 'team-a' may not use generator 'invoices'" "$(resp client ID invoices)"
  check "RESP, team-b's certificate: ID invoices" id "$(resp client-b ID invoices)"
  check "RESP, a certificate of no team: NOAUTH" "NOAUTH Authentication required." "$(resp client-c ID orders)"
  # team-a's quota: 1 ID/s, 3 at once; four asks of 3 in a row cannot all pass
  for _ in 1 2 3 4; do https client '/v1/ids?name=orders&count=3' >>"$WORK/quota"; echo >>"$WORK/quota"; done
  check_match "team-a's quota refuses (429)" 429 "$(cat "$WORK/quota")"
  metrics=$(curl -s --cacert "$CA" --cert "$PKI/client.pem" --key "$PKI/client.key" "https://$HTTP/metrics")
  check_match "per-token metrics: team-a's quota hits" 'idgen_token_quota_total\{token="team-a"\} [1-9]' "$metrics"
  check_match "per-token metrics: team-a's refusals (HTTP and RESP)" 'idgen_token_refused_total\{token="team-a"\} 2' "$metrics"
  check_match "per-token metrics: team-b's IDs" 'idgen_token_ids_total\{token="team-b"\} [3-9]' "$metrics"
  stop_server || fail "teams server exit"
fi

# kept.py CERT: one RESP connection over TLS with CERT; sends each line of stdin as an
# inline command and prints the reply's first line.
cat >"$WORK/kept.py" <<'PY'
import socket, ssl, sys
ca, cert, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = ssl.create_default_context(cafile=ca); c.load_cert_chain(cert + ".pem", cert + ".key")
s = c.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
f = s.makefile("rb")
for line in sys.stdin:
    s.sendall(line.strip().encode() + b"\r\n")
    reply = f.readline().decode().strip()
    if reply.startswith("$"): reply = "id" if f.readline() else "closed"
    print(reply, flush=True)
PY

if part reload; then
  cp "$WORK/idgen.yaml" "$WORK/reload.yaml"
  start_server reload --config "$WORK/reload.yaml" "${MTLS[@]}" || finish
  coproc KEPT { python3 "$WORK/kept.py" "$CA" "$PKI/client" "$RESP_PORT"; }
  echo "ID orders" >&"${KEPT[1]}"; read -r -t 10 line <&"${KEPT[0]}" || line=none
  check "reload: a kept RESP connection of team-a issues" id "$line"
  teams "CN=team-c" >"$WORK/reload.yaml"
  kill -HUP "$SERVER_PID"
  for _ in $(seq 1 100); do grep -q 'tokens_reload' "$SERVER_LOG" && break; sleep 0.05; done
  check_match "reload: applied" 'info tokens_reload 2 token\(s\) loaded' "$(grep tokens_reload "$SERVER_LOG")"
  check "reload: CN=team-c is team-a now" 200 "$(https client-c '/v1/id?name=orders')"
  check "reload: CN=team-a is nobody's now" 401 "$(https client '/v1/id?name=orders')"
  check "reload: team-b's SAN unchanged" 200 "$(https client-b '/v1/id?name=invoices')"
  echo "ID orders" >&"${KEPT[1]}"; read -r -t 10 line <&"${KEPT[0]}" || line=none
  check_match "reload: the kept connection lost its team" '^-NOAUTH .*reload' "$line"
  check "reload: over RESP, CN=team-c issues from orders" id "$(resp client-c ID orders)"
  eval "exec ${KEPT[1]}>&-"
  wait "$KEPT_PID" 2>/dev/null || true
  stop_server || fail "reload server exit"
fi

if part health; then
  start_server health --config "$WORK/idgen.yaml" "${MTLS[@]}" --health-listen 127.0.0.1:0 || finish
  HEALTH=$(grep -o ' health=[^ ]*' "$SERVER_LOG" | head -1 | cut -d= -f2)
  check_match "health: on the start line" '^127\.0\.0\.1:[0-9]+$' "$HEALTH"
  plain() { curl -s -o "$WORK/body" -w '%{http_code}' "http://$HEALTH$1"; }
  check "health: plain /healthz" 200 "$(plain /healthz)"
  check "health: ... its body" '{"status":"ok"}' "$(cat "$WORK/body")"
  check "health: plain /readyz" 200 "$(plain /readyz)"
  for path in /v1/id /metrics / '/v1/id?name=orders'; do
    check "health: $path is 404" 404 "$(plain "$path")"
  done
  check_match "health: ... with a JSON error" '^\{"error":\{"code":"not_found"' "$(cat "$WORK/body")"
  rc=0; curl -s -m 5 "http://$HTTP/healthz" >/dev/null || rc=$?
  check "health: the main port still refuses plain text (curl 52)" 52 "$rc"
  check "health: and answers over TLS" 200 "$(https - /healthz)"
  check_match "health: its connections counted" 'idgen_connections_accepted_total\{listener="health"\} [1-9]' \
    "$(curl -s --cacert "$CA" --cert "$PKI/client.pem" --key "$PKI/client.key" "https://$HTTP/metrics")"
  stop_server || fail "health server exit"
fi

finish
