#!/usr/bin/env bash
# client_python.sh: the ctypes binding of libidgen-client (bindings/python) under Debian's
# /usr/bin/python3, and the C and Python examples of the client, against real servers:
# IDs of a snowflake and a segment name, none twice; the binding's errors (a bad address,
# an unknown name, every server down: Unavailable); over TLS with a client certificate
# (tls_ca, tls_cert, tls_key): IDs, a wrong CA and a missing client certificate refused
# with the reason (server_error), an unreadable CA file at create. Prints the binding's
# calls/s beside redis-py's IDS (not asserted).
# Usage: client_python.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
PY=/usr/bin/python3
LIB=$BUILD_DIR/libidgen-client.so
[[ -f $LIB ]] || { fail "no $LIB (build the target idgen_client_shared)"; finish; }
$PY -c 'import redis' 2>/dev/null || "$SOURCE_DIR/scripts/deps.sh" test
export IDGEN_CLIENT_LIB=$LIB PYTHONPATH=$SOURCE_DIR/bindings/python
printf 'generators:\n  orders: {kind: segment}\n' >"$WORK/g.yaml"
start_server py --lease static --worker-id 21 --config "$WORK/g.yaml" || exit 1
ADDR=127.0.0.1:$RESP_PORT

out=$($PY "$SOURCE_DIR/examples/python/client_ids.py" "$ADDR")
check_match "python example: 5 snowflake IDs" '^[0-9]{15,20}(
[0-9]{15,20}){4}$' "$out"
check "python example: none twice" 5 "$(sort -u <<<"$out" | wc -l)"
out=$($PY "$SOURCE_DIR/examples/python/client_ids.py" "$ADDR" orders)
check "python example: 5 segment numbers, rising" "$(sort -n <<<"$out" | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$out")"
check "python example: 5 segment numbers, none twice" 5 "$(sort -u <<<"$out" | wc -l)"

cc -std=c11 -Wall -Wextra -Werror -I"$SOURCE_DIR/include" -o "$WORK/c-client" \
  "$SOURCE_DIR/examples/c-client/main.c" -L"$BUILD_DIR" -lidgen-client -Wl,-rpath,"$BUILD_DIR" ||
  fail "examples/c-client does not build"
out=$("$WORK/c-client" "$ADDR" orders)
check "C example: 5 segment numbers" 5 "$(grep -cE '^[0-9]+$' <<<"$out")"

out=$($PY - "$ADDR" <<'PY'
import sys
from idgen_client import Client, IdgenError, Unavailable
addr = sys.argv[1]
try:
    Client("nohost")
except IdgenError as e:
    print("bad address:", e.name, e)
try:
    Client(addr, max_wait_ms=-5)
except IdgenError as e:
    print("bad option:", e.name, e)
try:
    Client(addr, nope=1)
except TypeError as e:
    print("unknown option:", e)
with Client(addr, max_wait_ms=300) as c:
    try:
        c.next("nope")
    except IdgenError as e:
        print("unknown name:", e.name, e)
    ids = c.next_n("default", 1000)
    print("next_n:", len(ids), len(set(ids)), ids == sorted(ids))
with Client("127.0.0.1:1", max_wait_ms=50) as c:
    try:
        c.next("default")
    except Unavailable as e:
        print("down:", e.name)
PY
)
check_match "binding: a bad address" "bad address: IDGEN_EINVAL IDGEN_EINVAL: bad server address 'nohost'" "$out"
check_match "binding: a bad option" "bad option: IDGEN_EINVAL .*max_wait_ms" "$out"
check_match "binding: an unknown option" "unknown option: unknown option 'nope'" "$out"
check_match "binding: an unknown name is the server's error" "unknown name: IDGEN_EINVAL .*ERR unknown generator 'nope'" "$out"
check_match "binding: next_n, 1000 distinct" "next_n: 1000 1000 True" "$out"
check_match "binding: every server down is Unavailable" "down: IDGEN_EUNAVAIL" "$out"

rate=$($PY - "$ADDR" "$RESP_PORT" <<'PY'
import sys, time, redis
from idgen_client import Client
addr, port = sys.argv[1], int(sys.argv[2])
with Client(addr) as c:
    c.next("default")
    t = time.perf_counter(); n = 0
    while time.perf_counter() - t < 1:
        for _ in range(1000):
            c.next("default")
        n += 1000
    a = n / (time.perf_counter() - t)
r = redis.Redis(port=port)
t = time.perf_counter(); n = 0
while time.perf_counter() - t < 1:
    n += len(r.execute_command("IDS", "default", 4096))
b = n / (time.perf_counter() - t)
print("binding next() %.0f/s, redis-py IDS 4096 %.0f IDs/s, ratio %.2f" % (a, b, a / b))
PY
)
say "     $rate"
stop_server || fail "server did not exit 0"

# ---- TLS: the same options as idgen_client_tls ----
PKI=$WORK/pki
"$SOURCE_DIR/scripts/tls-certs.sh" "$PKI" || { fail "tls-certs.sh"; finish; }
start_server pytls --lease static --worker-id 22 --tls-cert "$PKI/server.pem" \
  --tls-key "$PKI/server.key" --tls-ca "$PKI/ca.pem" --tls-client-cert require || exit 1
out=$($PY - "127.0.0.1:$RESP_PORT" "$PKI" <<'PY'
import sys
from idgen_client import Client, IdgenError, Unavailable
addr, pki = sys.argv[1], sys.argv[2]
with Client(addr, max_wait_ms=2000, tls_ca=pki + "/ca.pem", tls_cert=pki + "/client.pem",
            tls_key=pki + "/client.key") as c:
    ids = c.next_n("default", 1000)
    print("tls next_n:", len(ids), len(set(ids)))
with Client(addr, max_wait_ms=500, tls_ca=pki + "/other-ca.pem", tls_cert=pki + "/client.pem",
            tls_key=pki + "/client.key") as c:
    try:
        c.next("default")
    except Unavailable as e:
        print("wrong CA:", e.name, c.server_error(0))
with Client(addr, max_wait_ms=500, tls_ca=pki + "/ca.pem") as c:
    try:
        c.next("default")
    except Unavailable as e:
        print("no client cert:", e.name, c.server_error(0))
try:
    Client(addr, tls_ca=pki + "/none.pem")
except IdgenError as e:
    print("CA file:", e.name, e)
PY
)
check_match "binding over TLS: 1000 distinct" "tls next_n: 1000 1000" "$out"
check_match "binding over TLS: a wrong CA refused, the reason readable" \
  "wrong CA: IDGEN_EUNAVAIL 127\.0\.0\.1:$RESP_PORT: TLS handshake: certificate verify failed" "$out"
check_match "binding over TLS: no client certificate refused" \
  "no client cert: IDGEN_EUNAVAIL .*no client certificate given \(tls\.cert_file\)" "$out"
check_match "binding over TLS: an unreadable CA file at create" \
  "CA file: IDGEN_EINVAL IDGEN_EINVAL: tls\.ca_file $PKI/none\.pem: No such file or directory" "$out"
stop_server || fail "TLS server did not exit 0"
finish
