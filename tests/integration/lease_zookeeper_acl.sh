#!/usr/bin/env bash
# ZooKeeper digest ACLs on idgen's nodes (issue 36), against a real standalone ZooKeeper
# started by scripts/zookeeper-cluster.sh: a holder with --zk-user and a password file
# makes its nodes with digest:idgen:BASE64(SHA1(idgen:pw)):cdrwa,world:anyone:r (the
# hash checked against openssl's); a second client without the credentials (zkCli, and
# tests/tools/zk_acl) cannot delete the worker node, delete or set the HWM node, create
# a worker node or open an ACL (ZNOAUTH each), while the holder keeps its worker ID and
# its HWM moves on; a wrong password, a run without credentials against those nodes, and
# credentials against a tree made without them are each refused at start (exit 1, one
# line naming the ensemble), and such a tree secured with zkCli's setAcl -R (as
# docs/leases.md says) takes them; bad usage exits 2; a holder paused past its session
# timeout makes a new session, which re-adds the auth: the worker node it makes again
# carries the ACL; a server killed and restarted within the session timeout keeps the
# session, and the client's replayed auth lets the HWM writes go on.
# Usage: lease_zookeeper_acl.sh /path/to/idgen [PART...]  (parts: guard refuse expiry
# restart)
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: lease_zookeeper_acl.sh /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$(dirname "$0")/parts.bash"
parts guard refuse expiry restart -- "${@:2}"
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
HOLDER=$BUILD/lease_holder PROBE=$BUILD/zk_acl
for t in "$HOLDER" "$PROBE"; do [[ -x $t ]] || { echo "FAIL: $t not built" >&2; exit 1; }; done
for tool in java openssl; do
  command -v "$tool" >/dev/null || { echo "FAIL: no $tool (scripts/deps.sh test)" >&2; exit 1; }
done
T=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  "$SRC/scripts/zookeeper-cluster.sh" stop "$T/zk" || true
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$T"/*.err; do [[ -f $f ]] && { echo "== $f" >&2; grep -v '^# hwm' "$f" | tail -5 >&2; }; done; exit 1; }
ok() { echo "ok - $*"; }
wait_line() { # file regex
  for _ in $(seq 200); do grep -qs "$2" "$1" && return 0; sleep 0.1; done
  fail "no '$2' in $1"
}

ZK=$("$SRC/scripts/zookeeper-cluster.sh" start "$T/zk" 1)
echo "zookeeper at $ZK"
echo idgen-s3cret >"$T/pw"
echo not-it >"$T/badpw"
DIGEST=idgen:$(printf '%s' idgen:idgen-s3cret | openssl dgst -binary -sha1 | openssl base64)
WANT_ACL="digest:$DIGEST:cdrwa,world:anyone:r"
AUTH=(--zk-user idgen --zk-password-file "$T/pw")
# tickTime 500 ms: sessions of 1-10 s; --lease-ttl 2 asks for 2 s; a short HWM wait.
Z=(--lease zookeeper --zookeeper "$ZK" --lease-ttl 2 --lease-margin 600 --hwm-ahead 300 --hwm-interval 100)
probe() { "$PROBE" "$ZK" "$@" 2>&1 || true; } # a client without credentials
probe_as_idgen() { ZK_AUTH=idgen:idgen-s3cret "$PROBE" "$ZK" "$@" 2>&1 || true; }
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" | head -1; } # from probe get's line
hwm_of() { probe get "$1" | sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p'; }
# refused CMD...: RC, OUT (stderr), LINES of a command that must fail
refused() {
  RC=0
  "$@" >/dev/null 2>"$T/refused.out" || RC=$?
  OUT=$(grep -v '^.* warn ' "$T/refused.out" || true)
  LINES=$(grep -c . <<<"$OUT" || true)
}
check_refused() { # name rc regex
  [[ $RC -eq $2 && $LINES -eq 1 && $OUT =~ $3 ]] || fail "$1: rc $RC (want $2), $LINES lines: $OUT"
  ok "$1: exit $RC: $OUT"
}
S=(serve --http 127.0.0.1:0 --resp "")

if part guard; then
# A holder with the credentials; the nodes carry the ACL; a client without them is
# refused every change, and the holder goes on.
"$HOLDER" "${Z[@]}" "${AUTH[@]}" --namespace g --every-ms 2 >"$T/g.out" 2>"$T/g.err" &
g=$!; pids+=("$g")
wait_line "$T/g.err" '^# state held'
for node in /idgen/g /idgen/g/workers /idgen/g/hwm /idgen/g/workers/0 /idgen/g/hwm/0; do
  acl=$(probe_as_idgen acl "$node" | sed -n 2p)
  [[ $acl == "$WANT_ACL" ]] || fail "$node's ACL is '$acl', not '$WANT_ACL'"
done
acl=$(probe_as_idgen acl /idgen | sed -n 2p)
[[ $acl == "digest:$DIGEST:cdrwa,world:anyone:cr" ]] || fail "/idgen's ACL is '$acl'"
ok "ACLs: $WANT_ACL (the digest is openssl's), /idgen world:anyone:cr"
owner=$(probe get /idgen/g/workers/0 | field owner)
hwm0=$(hwm_of /idgen/g/hwm/0)
[[ -n $owner && $owner != 0x0 && -n $hwm0 ]] || fail "worker node owner '$owner', HWM '$hwm0'"
zkcli=$("$SRC/scripts/zookeeper-cluster.sh" cli "$T/zk" delete /idgen/g/workers/0)
[[ $zkcli == *"Insufficient permission"* ]] || fail "zkCli delete of the worker node: '$zkcli'"
ok "zkCli without credentials: delete /idgen/g/workers/0: $zkcli"
for op in "delete /idgen/g/workers/0" "delete /idgen/g/hwm/0" "set /idgen/g/hwm/0 {}" \
  "set /idgen/g/workers/0 {}" "create /idgen/g/workers/1" "open /idgen/g/hwm/0" \
  "open /idgen/g/workers" "delete /idgen/g/workers"; do
  # shellcheck disable=SC2086
  out=$(probe $op | head -1)
  [[ $out == "error ZNOAUTH"* ]] || fail "'$op' without credentials: '$out'"
done
ok "zk_acl without credentials: delete, set, create, setACL on the worker and HWM nodes: ZNOAUTH each"
# reading stays open: `idgen lease` lists the holder without credentials
"$IDGEN" lease "${Z[@]}" --namespace g >"$T/g.list" 2>&1 || fail "idgen lease without credentials: $(cat "$T/g.list")"
grep -q '^0 *yes' "$T/g.list" || fail "idgen lease does not list worker 0: $(cat "$T/g.list")"
# The holder is unharmed: same session's node, its HWM moved on, nothing lost.
for _ in $(seq 100); do
  [[ $(hwm_of /idgen/g/hwm/0) -gt $hwm0 ]] && break; sleep 0.1
done
hwm1=$(hwm_of /idgen/g/hwm/0)
[[ $(probe get /idgen/g/workers/0 | field owner) == "$owner" && $hwm1 -gt $hwm0 ]] ||
  fail "after the refused changes: owner $(probe get /idgen/g/workers/0 | field owner) (was $owner), HWM $hwm1 (was $hwm0)"
kill -0 "$g" || fail "the holder exited"
grep -q '^# state \(lost\|acquiring\)' "$T/g.err" && fail "the holder lost its lease"
kill -TERM "$g"; wait "$g" || fail "holder exit status $?"
pids=()
dups=$(awk '{print $3}' "$T/g.out" | sort | uniq -d | wc -l)
[[ $dups -eq 0 && $(wc -l <"$T/g.out") -gt 0 ]] || fail "$dups duplicates"
ok "the holder kept worker 0 (session $owner), HWM $hwm0 -> $hwm1, $(wc -l <"$T/g.out") IDs, none twice"
fi

if part refuse; then
# Made with credentials: a wrong password, no credentials, another user: refused at
# start. Made without: credentials refuse to take it over. Bad usage: exit 2.
"$HOLDER" "${Z[@]}" "${AUTH[@]}" --namespace r --duration-ms 200 >/dev/null 2>"$T/r.err" ||
  fail "holder with credentials on namespace r"
refused "$IDGEN" "${S[@]}" "${Z[@]}" --namespace r --zk-user idgen --zk-password-file "$T/badpw"
check_refused "serve, wrong password" 1 "zookeeper $ZK: /idgen/r belongs to user 'idgen' with another password"
RC=0; OUT=$(IDGEN_ZK_PASSWORD=not-it "$IDGEN" lease "${Z[@]}" --namespace r --zk-user idgen 2>&1 >/dev/null) || RC=$?
LINES=$(grep -c . <<<"$OUT" || true)
check_refused "lease, wrong IDGEN_ZK_PASSWORD" 1 "zookeeper $ZK: .*another password"
refused "$IDGEN" "${S[@]}" "${Z[@]}" --namespace r
check_refused "serve, no credentials" 1 "zookeeper $ZK: /idgen/r is closed to clients without credentials"
refused env IDGEN_ZK_USER=other IDGEN_ZK_PASSWORD=x "$IDGEN" "${S[@]}" "${Z[@]}" --namespace r
check_refused "serve, another user" 1 "zookeeper $ZK: /idgen/r does not let user 'other'"
"$HOLDER" "${Z[@]}" --namespace open --duration-ms 200 >/dev/null 2>"$T/open.err" ||
  fail "holder without credentials on namespace open"
refused "$IDGEN" "${S[@]}" "${Z[@]}" "${AUTH[@]}" --namespace open
check_refused "serve with credentials, tree made without" 1 "zookeeper $ZK: /idgen/open lets anyone change it"
[[ $(probe acl /idgen/open | sed -n 2p) == world:anyone:cdrwa ]] || fail "/idgen/open's ACL changed"
# docs/leases.md's way to secure such a tree: zkCli setAcl -R, then the credentials work.
"$SRC/scripts/zookeeper-cluster.sh" cli "$T/zk" setAcl -R /idgen/open "$WANT_ACL" >"$T/setacl.out"
"$HOLDER" "${Z[@]}" "${AUTH[@]}" --namespace open \
  --duration-ms 200 >/dev/null 2>"$T/open2.err" ||
  fail "holder with credentials after setAcl -R: $(cat "$T/setacl.out")"
[[ $(probe_as_idgen acl /idgen/open/hwm/0 | sed -n 2p) == "$WANT_ACL" ]] || fail "setAcl -R left /idgen/open/hwm/0 open"
ok "zkCli setAcl -R /idgen/open $WANT_ACL: a holder with the credentials claims there"
refused "$IDGEN" "${S[@]}" "${Z[@]}" --zk-user idgen
check_refused "no password" 2 "--zk-user: no password"
refused env IDGEN_ZK_PASSWORD=x "$IDGEN" "${S[@]}" "${Z[@]}"
check_refused "password without user" 2 "IDGEN_ZK_PASSWORD: no --zk-user"
refused "$IDGEN" "${S[@]}" "${Z[@]}" --zk-user a:b --zk-password-file "$T/pw"
check_refused "user with a colon" 2 "holds a ':'"
refused "$IDGEN" "${S[@]}" "${Z[@]}" --zk-user idgen --zk-password-file "$T/nosuch"
check_refused "password file missing" 1 "--zk-password-file $T/nosuch: No such file"
fi

if part expiry; then
# SIGSTOP past the session timeout: the session expires and its worker node goes; after
# SIGCONT the holder makes a new session (a new client handle, the auth added again)
# and claims worker 0 again: the node it makes carries the ACL, and stays ours.
"$HOLDER" "${Z[@]}" "${AUTH[@]}" --namespace e --worker-id-range 0-0 --every-ms 2 \
  >"$T/e.out" 2>"$T/e.err" &
e=$!; pids+=("$e")
wait_line "$T/e.err" '^# state held'
owner1=$(probe get /idgen/e/workers/0 | field owner)
kill -STOP "$e"
for _ in $(seq 200); do [[ $(probe get /idgen/e/workers/0 | head -1) == "error ZNONODE"* ]] && break; sleep 0.1; done
[[ $(probe get /idgen/e/workers/0 | head -1) == "error ZNONODE"* ]] || fail "worker node still there"
kill -CONT "$e"
held_before=$(grep -c '^# state held' "$T/e.err")
for _ in $(seq 200); do
  [[ $(grep -c '^# state held' "$T/e.err") -gt $held_before ]] && break; sleep 0.1
done
[[ $(grep -c '^# state held' "$T/e.err") -gt $held_before ]] || fail "no new 'held' after the expiry"
owner2=$(probe get /idgen/e/workers/0 | field owner)
acl=$(probe_as_idgen acl /idgen/e/workers/0 | sed -n 2p)
[[ $owner2 != "$owner1" && $acl == "$WANT_ACL" ]] ||
  fail "after the expiry: owner $owner2 (was $owner1), ACL '$acl'"
out=$(probe delete /idgen/e/workers/0 | head -1)
[[ $out == "error ZNOAUTH"* ]] || fail "delete of the new worker node: '$out'"
kill -TERM "$e"; wait "$e" || true
pids=()
ok "expiry: new session $owner2 (was $owner1) made worker 0's node again with $acl; a delete without credentials: $out"
fi

if part restart; then
# The server killed and restarted within the session timeout (10 s asked; 20 ticks
# allowed): the session lives on, the client connects again and sends its auth first
# (the C client's own replay), so the holder's next HWM writes pass the ACL.
"$HOLDER" "${Z[@]}" --lease-ttl 10 --lease-margin 2000 "${AUTH[@]}" --namespace s \
  --every-ms 2 >"$T/s.out" 2>"$T/s.err" &
s=$!; pids+=("$s")
wait_line "$T/s.err" '^# state held'
owner1=$(probe get /idgen/s/workers/0 | field owner)
"$SRC/scripts/zookeeper-cluster.sh" kill "$T/zk" 0
"$SRC/scripts/zookeeper-cluster.sh" restart "$T/zk" 0
"$SRC/scripts/zookeeper-cluster.sh" wait "$T/zk"
v1=$(probe get /idgen/s/hwm/0 | field version) # every write from now on is a new connection's
for _ in $(seq 100); do
  v2=$(probe get /idgen/s/hwm/0 | field version)
  [[ -n $v2 && $v2 -gt $v1 ]] && break; sleep 0.1
done
owner2=$(probe get /idgen/s/workers/0 | field owner)
[[ $owner2 == "$owner1" && -n $v2 && $v2 -gt $v1 ]] ||
  fail "after the restart: owner $owner2 (was $owner1), HWM version $v2 (was $v1 when the server was back)"
grep -q 'not allowed by the ACL' "$T/s.err" && fail "a write was refused by the ACL after the restart"
grep -q '^# state \(lost\|acquiring\)' "$T/s.err" && fail "the holder lost its lease across the restart"
kill -TERM "$s"; wait "$s" || true
pids=()
ok "restart: session $owner1 kept; HWM node version $v1 when the server was back, then $v2; nothing refused"
fi
