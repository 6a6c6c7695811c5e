#!/usr/bin/env bash
# ZooKeeper provider against a real standalone ZooKeeper started by
# scripts/zookeeper-cluster.sh: three replicas claim distinct workers and issue IDs, none
# twice; the fence step by step (tests/tools/zk_fence: a worker node taken over while its
# holder's session lives; the negotiated session timeout as the TTL; a two-field layout's
# other name); kill -9 then a restart on the same worker waits past the HWM; a holder
# paused (SIGSTOP) past its session timeout issues nothing on the old worker after it
# resumes, its next HWM write is refused, and the next holder's floor is above all it
# issued; `idgen lease` lists the holders; bad addresses, an unreachable ensemble
# (exit 1, one line) and bad options (exit 2).
# Usage: lease_zookeeper.sh /path/to/idgen [PART...]  (parts: unique fence kill pause
# errors)
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: lease_zookeeper.sh /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$(dirname "$0")/parts.bash"
parts unique fence kill pause errors -- "${@:2}"
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
HOLDER=$BUILD/lease_holder FENCE=$BUILD/zk_fence
for t in "$HOLDER" "$FENCE"; do [[ -x $t ]] || { echo "$t not built" >&2; exit 1; }; done
command -v java >/dev/null || "$SRC/scripts/deps.sh" test
T=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  "$SRC/scripts/zookeeper-cluster.sh" stop "$T/zk" || true
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$T"/*.err; do echo "== $f" >&2; tail -5 "$f" >&2; done; exit 1; }
ok() { echo "ok - $*"; }
worker_of() { sed -n 's/^# acquired worker=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
floor_of() { sed -n 's/^# acquired worker=[0-9]* floor=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
wait_held() { # errfile
  for _ in $(seq 200); do grep -qs '^# state held' "$1" && return 0; sleep 0.1; done
  fail "no 'held' in $1"
}

ZK=$("$SRC/scripts/zookeeper-cluster.sh" start "$T/zk" 1)
echo "zookeeper at $ZK"
# tickTime 500 ms: sessions of 1-10 s; --lease-ttl 2 asks for 2 s.
Z=(--lease zookeeper --zookeeper "$ZK" --lease-ttl 2 --lease-margin 600)
live() { # ns worker -> yes/no from idgen lease
  "$IDGEN" lease "${Z[@]}" --namespace "$1" | awk -v w="$2" '$1 == w {print $2}'
}
wait_gone() { # ns worker: until its worker node is gone (the session expired)
  for _ in $(seq 200); do [[ "$(live "$1" "$2")" != yes ]] && return 0; sleep 0.1; done
  fail "worker $2 of $1 still live"
}

if part unique; then
# Three replicas at once, 10^6 IDs between them: distinct workers, no ID twice.
for i in 1 2 3; do
  "$HOLDER" "${Z[@]}" --namespace u --every-ms 0 --count 333334 >"$T/u$i.out" 2>"$T/u$i.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "holder $p failed"; done
pids=()
ws=$(for i in 1 2 3; do worker_of "$T/u$i.err"; done | sort -n | tr '\n' ' ')
[[ "$ws" == "0 1 2 " ]] || fail "workers were '$ws'"
total=$(cat "$T"/u[1-3].out | wc -l)
dups=$(cat "$T"/u[1-3].out | awk '{print $3}' | sort | uniq -d | wc -l)
[[ $total -ge 1000000 && $dups -eq 0 ]] || fail "$total IDs, $dups duplicates"
ok "3 replicas got workers $ws; $total IDs, none twice"
rm -f "$T"/u*.out
fi

if part fence; then
for s in takeover ttl dc; do
  "$FENCE" "$ZK" "f$s" "$s" >"$T/fence_$s.log" 2>&1 || { cat "$T/fence_$s.log"; fail "zk_fence $s"; }
  ok "zk_fence $s: $(tail -1 "$T/fence_$s.log")"
done
fi

if part kill; then
# kill -9: the worker node lives until the session expires; the next holder of the same
# worker (range 0-0) starts above everything the dead one issued.
"$HOLDER" "${Z[@]}" --namespace k --worker-id-range 0-0 >"$T/k1.out" 2>"$T/k1.err" &
pids+=($!)
wait_held "$T/k1.err"
sleep 1
kill -KILL "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
[[ "$(live k 0)" == yes ]] || fail "worker 0 not live right after kill -9"
wait_gone k 0
last=$(awk 'END {print $1}' "$T/k1.out")
"$HOLDER" "${Z[@]}" --namespace k --worker-id-range 0-0 --duration-ms 500 >"$T/k2.out" 2>"$T/k2.err" ||
  fail "restart failed"
floor=$(floor_of "$T/k2.err")
first=$(awk 'NR == 1 {print $1}' "$T/k2.out")
[[ $floor -ge $last && $first -gt $floor ]] ||
  fail "restart: floor $floor, first $first, dead holder's last $last"
dups=$(cat "$T"/k[12].out | awk '{print $3}' | sort | uniq -d | wc -l)
[[ $dups -eq 0 ]] || fail "$dups duplicates across kill -9"
ok "kill -9: worker 0 held until the session expired; restart floor $floor >= last $last"
fi

if part pause; then
# SIGSTOP past the session timeout: the next holder takes worker 0 once the node is gone;
# after SIGCONT the paused one issues nothing more on it (its deadline passed), its next
# HWM write is refused (the session expired), and no ID is issued twice.
"$HOLDER" "${Z[@]}" --namespace p --worker-id-range 0-0 --every-ms 1 >"$T/p1.out" 2>"$T/p1.err" &
a=$!; pids+=("$a")
wait_held "$T/p1.err"
sleep 0.5
kill -STOP "$a"
stopped_lines=$(wc -l <"$T/p1.out")
wait_gone p 0
"$HOLDER" "${Z[@]}" --namespace p --worker-id-range 0-0 --every-ms 1 >"$T/p2.out" 2>"$T/p2.err" &
b=$!; pids+=("$b")
wait_held "$T/p2.err"
kill -CONT "$a"
for _ in $(seq 100); do grep -qs '^# error .*zookeeper.*\(expired\|not this session\|not written\)' "$T/p1.err" && break; sleep 0.1; done
grep -qs '^# error .*zookeeper.*\(expired\|not this session\|not written\)' "$T/p1.err" ||
  fail "the paused holder logged no refusal"
sleep 1
kill -TERM "$a" "$b"
wait "$a" || true; wait "$b" || true
after=$(($(wc -l <"$T/p1.out") - stopped_lines))
floor=$(floor_of "$T/p2.err")
amax=$(awk '$2 == 0 {m = $1} END {print m + 0}' "$T/p1.out")
dups=$(cat "$T"/p[12].out | awk '{print $3}' | sort | uniq -d | wc -l)
[[ $dups -eq 0 ]] || fail "$dups duplicates after the pause"
[[ $amax -le $floor ]] || fail "paused holder issued at $amax, above the next floor $floor"
ok "pause: $after IDs by the paused holder after SIGCONT, all at or below the next floor $floor; refused: $(grep -m1 '^# error .*zookeeper.*\(expired\|not this session\|not written\)' "$T/p1.err")"
fi

if part errors; then
# Unreachable ensemble at start: exit 1, one line. Bad options: exit 2, one line.
rc=0; out=$("$IDGEN" serve --lease zookeeper --zookeeper 127.0.0.1:1 --http 127.0.0.1:0 \
  --etcd-timeout 500 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 1 && $(grep -c 'error' <<<"$out") -eq 1 && $out == *"no server answered"* ]] ||
  fail "unreachable: rc $rc, '$out'"
for bad in "--zookeeper foo" "--zookeeper :2181" "--zookeeper 127.0.0.1:99999" \
  "--zookeeper 127.0.0.1:2181/chroot" "--zookeeper ,"; do
  # shellcheck disable=SC2086
  rc=0; out=$("$IDGEN" serve --lease zookeeper $bad --http 127.0.0.1:0 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 ]] || fail "'$bad': rc $rc, '$out'"
done
rc=0; out=$("$IDGEN" serve --lease zookeeper --http 127.0.0.1:0 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 2 && $out == *"needs --zookeeper"* ]] || fail "no --zookeeper: rc $rc, '$out'"
rc=0
out=$("$IDGEN" lease --lease zookeeper --zookeeper nosuchhost.invalid:2181 --etcd-timeout 500 2>&1) || rc=$?
[[ $rc -eq 1 && $(wc -l <<<"$out") -eq 1 ]] || fail "bad host: rc $rc, '$out'"
ok "errors: unreachable and bad host exit 1, bad options exit 2, one line each"
fi
