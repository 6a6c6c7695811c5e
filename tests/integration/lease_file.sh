#!/usr/bin/env bash
# File provider on one host: distinct IDs for concurrent processes, kill -9 frees an ID,
# the HWM survives a restart with the clock set back (libfaketime), a worker file or the
# whole state dir removed under running holders, two state dirs and two users on one
# host, bad config fails at start with one clear line. Usage: lease_file.sh /path/to/idgen
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: lease_file.sh /path/to/idgen}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
HOLDER=$BUILD/lease_holder
[[ -x $HOLDER ]] || { echo "lease_holder not built at $HOLDER" >&2; exit 1; }
T=$(mktemp -d)
chmod 755 "$T" # another user's holder (section 6) needs to reach its state dir
# Worker IDs are claimed host-wide per namespace: one of this run's own keeps other
# processes on the host (other tests, other checkouts) out of its numbering.
export IDGEN_NAMESPACE=lease-file-$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
worker_of() { sed -n 's/^# acquired worker=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
floor_of() { sed -n 's/^# acquired worker=[0-9]* floor=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
wait_held() { # errfile
  for _ in $(seq 100); do grep -qs '^# state held' "$1" && return 0; sleep 0.1; done
  fail "no 'held' in $1: $(cat "$1")"
}

# 1. N processes, distinct worker IDs, no duplicate IDs.
S=$T/s1
for i in 1 2 3 4; do
  "$HOLDER" --lease file --state-dir "$S" --duration-ms 1500 >"$T/o$i" 2>"$T/e$i" &
  pids+=($!)
done
wait "${pids[@]}"
pids=()
ws=$(for i in 1 2 3 4; do worker_of "$T/e$i"; done | sort -n | tr '\n' ' ')
[[ "$ws" == "0 1 2 3 " ]] || fail "workers were '$ws', want '0 1 2 3 '"
total=$(cat "$T"/o[1-4] | wc -l)
uniq=$(cat "$T"/o[1-4] | awk '{print $3}' | sort -u | wc -l)
[[ $total -gt 100 && $total -eq $uniq ]] || fail "$total IDs, $uniq distinct"
ok "4 processes got workers $ws and $total distinct IDs"

# 2. kill -9 frees the ID; the next holder reads the dead one's HWM.
S=$T/s2
"$HOLDER" --lease file --state-dir "$S" >"$T/a.out" 2>"$T/a.err" & a=$!; pids+=($a)
wait_held "$T/a.err"
"$HOLDER" --lease file --state-dir "$S" >"$T/b.out" 2>"$T/b.err" & b=$!; pids+=($b)
wait_held "$T/b.err"
[[ $(worker_of "$T/a.err") == 0 && $(worker_of "$T/b.err") == 1 ]] || fail "workers a/b"
sleep 0.3
kill -KILL "$a"; wait "$a" 2>/dev/null || true
hwm=$(sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p' "$S/worker-0")
"$HOLDER" --lease file --state-dir "$S" --duration-ms 300 >"$T/c.out" 2>"$T/c.err"
[[ $(worker_of "$T/c.err") == 0 ]] || fail "after kill -9, c got worker $(worker_of "$T/c.err")"
[[ $(floor_of "$T/c.err") == "$hwm" ]] || fail "c's floor $(floor_of "$T/c.err") != HWM $hwm"
amax=$(awk '{print $1}' "$T/a.out" | sort -n | tail -1)
cmin=$(awk '{print $1}' "$T/c.out" | sort -n | sed -n 1p)
[[ -n $cmin && $cmin -gt $hwm && $hwm -ge $amax ]] ||
  fail "order: a max $amax, HWM $hwm, c min $cmin"
kill -TERM "$b"; wait "$b" || fail "b did not stop cleanly"
pids=()
ok "kill -9 freed worker 0; the next holder started past HWM $hwm (a's last ms $amax)"

# 3. HWM survives a restart with the clock set back 3 s (libfaketime).
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FT ]] || fail "libfaketime not installed at $FT (scripts/deps.sh test installs faketime)"
{
  S=$T/s3
  "$HOLDER" --lease file --state-dir "$S" --hwm-ahead 1000 --hwm-interval 500 \
    >"$T/f1.out" 2>"$T/f1.err" & a=$!; pids+=($a)
  wait_held "$T/f1.err"
  sleep 0.7
  kill -KILL "$a"; wait "$a" 2>/dev/null || true
  pids=()
  hwm=$(sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p' "$S/worker-0")
  echo "-3" >"$T/faketime"
  LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE=$T/faketime FAKETIME_DONT_FAKE_MONOTONIC=1 \
    FAKETIME_CACHE_DURATION=1 \
    "$HOLDER" --lease file --state-dir "$S" --hwm-ahead 1000 --hwm-interval 500 \
    --duration-ms 500 >"$T/f2.out" 2>"$T/f2.err"
  grep -q '^# state waiting-hwm' "$T/f2.err" || fail "restart did not wait for the HWM"
  amax=$(awk '{print $1}' "$T/f1.out" | sort -n | tail -1)
  bmin=$(awk '{print $1}' "$T/f2.out" | sort -n | sed -n 1p)
  [[ -n $bmin && $bmin -gt $hwm && $bmin -gt $amax ]] ||
    fail "after the clock stepped back: first ms $bmin, HWM $hwm, before $amax"
  dups=$(cat "$T/f1.out" "$T/f2.out" | awk '{print $3}' | sort | uniq -d | wc -l)
  [[ $dups -eq 0 ]] || fail "$dups duplicate IDs across the restart"
  ok "restart 3 s in the past waited past HWM $hwm: first ms $bmin > last $amax"
}

# 4. Bad configuration: one clear line on stderr, nothing on stdout, at start.
check_bad() { # want-status pattern cmd...
  local want=$1 pat=$2; shift 2
  local st=0
  "$@" >"$T/bad.out" 2>"$T/bad.err" || st=$?
  [[ $st -eq $want ]] || fail "$* exited $st, want $want"
  [[ ! -s $T/bad.out ]] || fail "$* printed on stdout"
  [[ $(wc -l <"$T/bad.err") -eq 1 ]] || fail "$* printed $(wc -l <"$T/bad.err") lines"
  grep -q -- "$pat" "$T/bad.err" || fail "$*: '$(cat "$T/bad.err")' lacks '$pat'"
  ok "rejected: $(cat "$T/bad.err")"
}
touch "$T/plainfile"
check_bad 1 "state dir" "$IDGEN" lease --lease file --state-dir "$T/plainfile/sub"
check_bad 1 "state dir" "$HOLDER" --lease file --state-dir "$T/plainfile/sub"
check_bad 2 "minimum of 2 s" "$IDGEN" lease --lease etcd --etcd http://127.0.0.1:1 --lease-ttl 1
check_bad 2 "minimum of 2 s" "$HOLDER" --lease etcd --etcd http://127.0.0.1:1 --lease-ttl 1
check_bad 2 "out of range" "$IDGEN" lease --lease k8s --pod-index 3 --worker-id-offset 1023 \
  --state-dir "$T/k"
check_bad 1 "out of range" "$HOLDER" --lease k8s --pod-index 3 --worker-id-offset 1023 \
  --state-dir "$T/k"
check_bad 2 "out of range" "$IDGEN" lease --lease static --worker-id 1024
check_bad 1 "127.0.0.1:1" "$IDGEN" lease --lease etcd --etcd http://127.0.0.1:1
check_bad 1 "127.0.0.1:1" "$HOLDER" --lease etcd --etcd http://127.0.0.1:1
check_bad 2 "unknown provider" "$IDGEN" lease --lease consul
IDGEN_LEASE=static check_bad 2 "needs --worker-id" "$IDGEN" lease

dups_of() { cat "$@" | awk '{print $3}' | sort | uniq -d | wc -l; }
stop_all() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" || true; done; pids=(); }

# 5. A live holder's worker file removed, then the whole state dir: the holder gives its
# ID up at its next HWM write, nobody takes the ID meanwhile (host-wide claim), and a new
# worker file makes its holder wait past now + ahead + one interval. No duplicate.
S=$T/s5
"$HOLDER" --lease file --state-dir "$S" >"$T/r1.out" 2>"$T/r1.err" & pids+=($!)
wait_held "$T/r1.err"
sleep 0.3
rm -f "$S/worker-0"
"$HOLDER" --lease file --state-dir "$S" >"$T/r2.out" 2>"$T/r2.err" & pids+=($!)
wait_held "$T/r2.err"
sleep 1.5
grep -q 'removed or replaced' "$T/r1.err" || fail "the first holder did not notice: $(cat "$T/r1.err")"
rm -rf "$S"
"$HOLDER" --lease file --state-dir "$S" >"$T/r3.out" 2>"$T/r3.err" & pids+=($!)
wait_held "$T/r3.err"
sleep 1.5
stop_all
n=$(cat "$T"/r[1-3].out | wc -l)
d=$(dups_of "$T"/r[1-3].out)
ws=$(for i in 1 2 3; do worker_of "$T/r$i.err"; done | tr '\n' ' ')
[[ $d -eq 0 && $n -gt 100 ]] || fail "worker file removed: $d duplicates in $n IDs (workers $ws)"
ok "worker file, then the state dir, removed under live holders: $n IDs, 0 duplicates (workers $ws)"

# 6. Two state dirs, and two users, on one host: distinct worker IDs.
mkdir -m 777 "$T/s6b"
other=()
if [[ $(id -u) -eq 0 ]]; then other=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
"$HOLDER" --lease file --state-dir "$T/s6a" --duration-ms 1500 >"$T/u1.out" 2>"$T/u1.err" & pids+=($!)
"${other[@]}" "$HOLDER" --lease file --state-dir "$T/s6b" --duration-ms 1500 \
  >"$T/u2.out" 2>"$T/u2.err" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail "a holder of section 6 failed: $(cat "$T"/u[12].err)"; done
pids=()
w1=$(worker_of "$T/u1.err") w2=$(worker_of "$T/u2.err")
n=$(cat "$T"/u[12].out | wc -l)
d=$(dups_of "$T"/u[12].out)
[[ -n $w1 && -n $w2 && $w1 != "$w2" && $d -eq 0 && $n -gt 100 ]] ||
  fail "two state dirs: workers '$w1' and '$w2', $d duplicates in $n IDs"
ok "two state dirs${other:+ and two users}: workers $w1 and $w2, $n IDs, 0 duplicates"
echo "lease_file: all passed"
