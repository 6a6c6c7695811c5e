#!/usr/bin/env bash
# libidgen-client over TLS (idgen_client_new_tls) against real `idgen serve --tls-cert
# --tls-key` processes, on a throwaway PKI (scripts/tls-certs.sh; tests/tools/client_tool.c
# takes $TLS_CA, $TLS_CERT, $TLS_KEY, $TLS_SERVER_NAME):
#   files     a CA, certificate or key that cannot be read or used: exit 2 at create, one
#             line naming the field and the file
#   refused   a CA that did not sign the server's certificate, an expired certificate, a
#             name the certificate does not carry, plain text to a TLS port, TLS to a
#             plain port, no client certificate where one is required: IDGEN_EUNAVAIL
#             within max_wait_ms, the server's reason readable (idgen_client_server_error);
#             server_name and a client certificate make the same servers answer
#   unique    4 threads over 2 TLS servers requiring client certificates, with AUTH: no
#             ID twice (idgen check)
#   failover  one of 2 TLS servers killed with -9 under load: no ID twice, failed over,
#             the reason readable
#   rotate    the server's pair rotated by SIGHUP 4 times under load: the kept connection
#             never fails a refill, new clients (new handshakes) all served, none failed
#             over
# Timings are printed, never asserted.
# Usage: client_tls.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts files refused unique failover rotate -- "${@:2}"
TOOL=$BUILD_DIR/client_tool
[[ -x $TOOL ]] || { fail "no $TOOL (build the target client_tool)"; finish; }
for tool in openssl faketime; do
  command -v "$tool" >/dev/null || { fail "no $tool (scripts/deps.sh test)"; finish; }
done
PKI=$WORK/pki
"$SOURCE_DIR/scripts/tls-certs.sh" "$PKI" || { fail "tls-certs.sh"; finish; }
CA=$PKI/ca.pem
TLS_PAIR=(--tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key")
# Long enough for a handshake on a loaded machine.
export TIMEOUT_MS=1000 MAX_WAIT_MS=1000

# A server waits ~4 s for its HWM before it serves: the servers of a part start together.
# launch NAME [serve options...]: one snowflake server, the next worker ID; sets PORT[NAME]
# and LOG[NAME], adds its PID to PIDS. held: waits until each launched one serves.
declare -A PORT LOG
PIDS=() WORKER=0
launch() {
  local name=$1
  shift
  WORKER=$((WORKER + 1))
  launch_server "$name-$RANDOM" --lease static --worker-id "$WORKER" --threads 1 "$@" || return 1
  PORT[$name]=$RESP_PORT LOG[$name]=$SERVER_LOG
  PIDS+=("$SERVER_PID")
}
held() {
  local name i
  for name in "${!LOG[@]}"; do
    for ((i = 0; i < 400; i++)); do
      grep -q ' lease state=held' "${LOG[$name]}" && continue 2
      sleep 0.05
    done
    fail "server $name never became ready"
    return 1
  done
}
# tls_servers N [serve options...]: N servers s1..sN; sets ADDRS (127.0.0.1:port,...).
tls_servers() {
  local n=$1 i
  shift
  ADDRS="" PIDS=() PORT=() LOG=()
  for ((i = 1; i <= n; i++)); do
    launch "s$i" "$@" || return 1
    ADDRS+="${ADDRS:+,}127.0.0.1:${PORT[s$i]}"
  done
  held
}
stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do stop_server "$pid" || true; done
}
# probe NAME WANT-REGEX [VAR=value...]: client_tool probe on ADDRS with those variables;
# its output (the result, then each server's reason) must match WANT-REGEX.
probe() {
  local name=$1 want=$2 out
  shift 2
  out=$(env "$@" "$TOOL" probe "$ADDRS" default 2>&1) || true
  check_match "$name" "$want" "$(tr '\n' ' ' <<<"$out")"
}
# load_into DIR THREADS COUNT [VAR=value...]: client_tool load on ADDRS in the background
# until $DIR.stop exists; sets TOOL_PID.
load_into() {
  local dir=$1 threads=$2 count=$3
  shift 3
  mkdir -p "$dir"
  env STOP_FILE="$dir.stop" MAX_WAIT_MS=50 TIMEOUT_MS=500 "$@" \
    "$TOOL" load "$ADDRS" default "$threads" "$count" "$dir" >"$dir.out" 2>"$dir.err" &
  TOOL_PID=$!
}
wait_for_ids() { # DIR: until a thread's file has an ID (20 s at most)
  local i
  for ((i = 0; i < 400; i++)); do
    grep -qE ' [0-9]+$' "$1"/t* 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

if part files; then
  ADDRS=127.0.0.1:1
  file_refused() { # name want [VAR=value...]
    local name=$1 want=$2 rc=0 out
    shift 2
    out=$(env "$@" "$TOOL" probe "$ADDRS" default 2>&1) || rc=$?
    check "files: $name: exit 2" 2 "$rc"
    check "files: $name: one line" 1 "$(wc -l <<<"$out")"
    check_match "files: $name: says why" "$want" "$out"
  }
  file_refused "CA missing" "^client_tool: tls.ca_file $WORK/none.pem: No such file or directory$" \
    TLS_CA="$WORK/none.pem"
  file_refused "CA not PEM" "^client_tool: tls.ca_file $PKI/server.key: " TLS_CA="$PKI/server.key"
  file_refused "cert missing" "^client_tool: tls.cert_file $WORK/none.pem: No such file" \
    TLS_CA="$CA" TLS_CERT="$WORK/none.pem" TLS_KEY="$PKI/client.key"
  file_refused "key of another certificate" "^client_tool: tls.key_file $PKI/server.key: " \
    TLS_CA="$CA" TLS_CERT="$PKI/client.pem" TLS_KEY="$PKI/server.key"
  file_refused "cert without key" "^client_tool: tls: cert_file and key_file go together$" \
    TLS_CA="$CA" TLS_CERT="$PKI/client.pem"
fi

if part refused; then
  PIDS=() PORT=() LOG=()
  launch tls "${TLS_PAIR[@]}" || exit 1
  launch plain || exit 1
  launch expired --tls-cert "$PKI/expired.pem" --tls-key "$PKI/expired.key" || exit 1
  launch wronghost --tls-cert "$PKI/wrong-host.pem" --tls-key "$PKI/wrong-host.key" || exit 1
  launch mtls "${TLS_PAIR[@]}" --tls-ca "$CA" --tls-client-cert require || exit 1
  held || exit 1
  # A refused probe waits out max_wait_ms; its one attempt ends within timeout_ms (1 s),
  # the reason set. A probe that is served returns at once: its bounds are long.
  export MAX_WAIT_MS=1200
  ADDRS=127.0.0.1:${PORT[tls]}
  port=${PORT[tls]}
  probe "refused: the right CA: served" "^ok longest_call_ms=" \
    TLS_CA="$CA" MAX_WAIT_MS=5000 TIMEOUT_MS=4000
  probe "refused: another CA: unavailable, the reason named" \
    "^IDGEN_EUNAVAIL server 0: 127\.0\.0\.1:$port: TLS handshake: certificate verify failed" \
    TLS_CA="$PKI/other-ca.pem"
  probe "refused: the system's store (the test CA is not in it)" \
    "^IDGEN_EUNAVAIL server 0: 127\.0\.0\.1:$port: TLS handshake: certificate verify failed" \
    TLS_CA=system
  probe "refused: plain text to the TLS port" \
    "^IDGEN_EUNAVAIL server 0: 127\.0\.0\.1:$port: .*before any reply \(a TLS port\? then idgen_client_new_tls\)"
  ADDRS=127.0.0.1:${PORT[plain]}
  probe "refused: TLS to a plain port" \
    "^IDGEN_EUNAVAIL server 0: 127\.0\.0\.1:[0-9]+: TLS handshake: .*\(not a TLS port\?\)" TLS_CA="$CA"
  ADDRS=127.0.0.1:${PORT[expired]}
  probe "refused: an expired certificate" \
    "^IDGEN_EUNAVAIL server 0: .*certificate verify failed: certificate has expired" TLS_CA="$CA"
  ADDRS=127.0.0.1:${PORT[wronghost]}
  probe "refused: a certificate for another name" \
    "^IDGEN_EUNAVAIL server 0: .*certificate verify failed: IP address mismatch" TLS_CA="$CA"
  probe "refused: server_name set to the certificate's name: served" "^ok longest_call_ms=" \
    TLS_CA="$CA" TLS_SERVER_NAME=elsewhere.invalid MAX_WAIT_MS=5000 TIMEOUT_MS=4000
  ADDRS=127.0.0.1:${PORT[mtls]}
  probe "refused: no client certificate where one is required" \
    "^IDGEN_EUNAVAIL server 0: .*no client certificate given \(tls\.cert_file\)" TLS_CA="$CA"
  probe "refused: a client certificate of another CA" \
    "^IDGEN_EUNAVAIL server 0: .*(TLS|the server closed the connection)" \
    TLS_CA="$CA" TLS_CERT="$PKI/other.pem" TLS_KEY="$PKI/other.key"
  probe "refused: the client certificate: served" "^ok longest_call_ms=" \
    MAX_WAIT_MS=5000 TIMEOUT_MS=4000 \
    TLS_CA="$CA" TLS_CERT="$PKI/client.pem" TLS_KEY="$PKI/client.key"
  stop_all
fi

if part unique; then
  printf 'idgen-client-tls-token\n' >"$WORK/token"
  tls_servers 2 "${TLS_PAIR[@]}" --tls-ca "$CA" --tls-client-cert require \
    --auth-token-file "$WORK/token" || exit 1
  mkdir -p "$WORK/unique"
  start=$(date +%s%N)
  out=$(TLS_CA="$CA" TLS_CERT="$PKI/client.pem" TLS_KEY="$PKI/client.key" \
    TOKEN=idgen-client-tls-token MAX_WAIT_MS=200 \
    timeout 30 "$TOOL" load "$ADDRS" default 4 250000 "$WORK/unique") || fail "unique: client_tool"
  say "     4 x 250000 over 2 TLS servers in $((($(date +%s%N) - start) / 1000000)) ms: $out"
  check "unique: 10^6 IDs over TLS, none twice" "verdict: PASS" \
    "$("$IDGEN" check "$WORK"/unique/t* | tail -1)"
  check "unique: 10^6 IDs in all" 1000000 "$(cat "$WORK"/unique/t* | grep -vc ERR)"
  stop_all
fi

if part failover; then
  tls_servers 2 "${TLS_PAIR[@]}" || exit 1
  load_into "$WORK/failover" 4 200000 TLS_CA="$CA"
  wait_for_ids "$WORK/failover" || fail "failover: no ID at first"
  sleep 0.5
  kill -KILL "${PIDS[1]}"
  sleep 1
  touch "$WORK/failover.stop"
  wait "$TOOL_PID" || fail "failover: client_tool"
  say "     failover: $(head -1 "$WORK/failover.out")"
  check "failover: no ID twice" "verdict: PASS" "$("$IDGEN" check "$WORK"/failover/t* | tail -1)"
  check_match "failover: the killed server was failed over" 'failovers=[1-9]' \
    "$(cat "$WORK/failover.out")"
  check_match "failover: its reason is readable" "server 1: 127\.0\.0\.1:[0-9]+: " \
    "$(cat "$WORK/failover.out")"
  PIDS=("${PIDS[0]}")
  stop_all
fi

if part rotate; then
  cp "$PKI/server.pem" "$WORK/cert.pem"
  cp "$PKI/server.key" "$WORK/key.pem"
  tls_servers 1 --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" || exit 1
  # One client keeps its connection across the reloads; new clients (new handshakes), one
  # after another, meet every pair in turn.
  load_into "$WORK/rotate" 2 100000 TLS_CA="$CA" MAX_WAIT_MS=1000
  wait_for_ids "$WORK/rotate" || fail "rotate: no ID at first"
  # Their time-outs are long (a loaded machine is slow, never refused): any failover of
  # one is a connection or handshake that failed.
  (
    ok=0 bad=0
    while [[ ! -e $WORK/rotate.stop ]]; do
      if TLS_CA="$CA" MAX_WAIT_MS=10000 TIMEOUT_MS=5000 \
        "$TOOL" probe "$ADDRS" default >>"$WORK/probes.out" 2>&1; then
        ok=$((ok + 1))
      else
        bad=$((bad + 1))
      fi
    done
    echo "ok=$ok bad=$bad" >"$WORK/probes.count"
  ) &
  probes=$!
  reloads() { grep -c ' tls_reload ' "$SERVER_LOG" || true; }
  for i in 1 2 3 4; do
    if ((i % 2)); then pair=server2; else pair=server; fi
    cp "$PKI/$pair.pem" "$WORK/cert.pem.new"
    cp "$PKI/$pair.key" "$WORK/key.pem.new"
    mv "$WORK/key.pem.new" "$WORK/key.pem"
    mv "$WORK/cert.pem.new" "$WORK/cert.pem"
    before=$(reloads)
    kill -HUP "${PIDS[0]}"
    for _ in $(seq 100); do (($(reloads) > before)) && break; sleep 0.05; done
    (($(reloads) > before)) || fail "rotate: no tls_reload line after SIGHUP $i"
    sleep 0.3
  done
  touch "$WORK/rotate.stop"
  wait "$TOOL_PID" || fail "rotate: client_tool"
  wait "$probes" || true
  say "     rotate: $(head -1 "$WORK/rotate.out"); new clients: $(cat "$WORK/probes.count")"
  # A call that waited past max_wait_ms on a loaded machine is timing, not the rotation:
  # counted, not asserted. A refill that failed or a failover would be the rotation's.
  say "     rotate: calls past max_wait_ms: $(cat "$WORK"/rotate/t* | grep -c ERR || true)"
  check_match "rotate: the kept connection: no refill failed, never failed over" \
    'refill_errors=0 .* failovers=0' "$(head -1 "$WORK/rotate.out")"
  check_match "rotate: new clients all served" '^ok=[1-9][0-9]* bad=0$' \
    "$(cat "$WORK/probes.count")"
  check "rotate: no new client failed over (no handshake refused)" 0 \
    "$(grep -c 'failovers=[1-9]' "$WORK/probes.out" || true)"
  grep -E '^(IDGEN|server)' "$WORK/probes.out" | head -3 || true
  check "rotate: no ID twice" "verdict: PASS" "$("$IDGEN" check "$WORK"/rotate/t* | tail -1)"
  stop_all
fi
finish
