#!/usr/bin/env bash
# The etcd fence on a real one-member etcd, each line that keeps two holders of one worker
# ID apart: the claim's compare (a taken worker key is never claimed), its HWM read (the
# floor of a new holder; an unreadable HWM is passed over, never read as 0), and the HWM
# write's compares (only while the worker key carries the holder's lease, and only on the
# HWM key's revision the holder last saw). Part 3 takes the worker key over while the
# holder's lease lives: the holder must refuse and stop issuing on it. Parts 4 and 5
# apply a HWM write late, after a later one: refused; and under a live holder's lease:
# the holder writes its HWM again and goes on. Part 6: a release that keeps the HWM
# leaves it as it is. Part 7: a worker with no HWM key (new, or its key or the whole
# prefix deleted) makes its new holder wait, as a new worker file does. Part 8: a
# keepalive answered without a TTL (a revoked lease) stops the holder at once.
# Usage: lease_etcd_fence.sh /path/to/idgen [PART...]   (tests/integration/parts.bash:
# compares is 1 and 4, which need no holder; claim, takeover and late are 2, 3 and 5;
# release, fresh and revoked are 6, 7 and 8. A mutant's run names only the part that
# sees it: the whole script is a minute under load)
source "$(dirname "$0")/lease_common.bash"
source "$(dirname "$0")/parts.bash"
parts compares claim takeover late release fresh revoked -- "${@:2}"
TXN_BODY=$BUILD/etcd_txn_body
[[ -x $TXN_BODY ]] || { echo "$TXN_BODY not built" >&2; exit 1; }
command -v etcd >/dev/null || "$SRC/scripts/deps.sh" test
stop_servers() { "$SRC/scripts/etcd-cluster.sh" stop "$T/etcd"; }

EPS=$("$SRC/scripts/etcd-cluster.sh" start "$T/etcd" 1)
echo "etcd at $EPS"
E=(--lease etcd --etcd "$EPS" --lease-ttl 3 --lease-margin 1000)
etcd_post() { curl -s -X POST "${EPS%%,*}$1" -d "$2"; } # path body
b64() { printf %s "$1" | base64 -w0; }
grant() { etcd_post /v3/lease/grant '{"TTL":60}' | sed -n 's/.*"ID":"\([0-9]*\)".*/\1/p'; }
put() { # key value [lease]: as an operator (or a bug) would
  etcd_post /v3/kv/put "{\"key\":\"$(b64 "$1")\",\"value\":\"$(b64 "$2")\"${3:+,\"lease\":\"$3\"}}" |
    grep -q '"header"' || fail "put $1"
}
hwm_of() { # ns worker -> HWM ms from the etcd key
  etcd_post /v3/kv/range "{\"key\":\"$(b64 "/idgen/$1/hwm/$2")\"}" |
    sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d | sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p'
}
txn_succeeds() { etcd_post /v3/kv/txn "$1" | grep '"succeeded":true' >/dev/null; } # body
kv_field() { # key field: that field of the key ("" when the key or the field is absent)
  etcd_post /v3/kv/range "{\"key\":\"$(b64 "$1")\"}" | sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p"
}
rev_of() { local r; r=$(kv_field "$1" mod_revision); echo "${r:-0}"; } # key: 0 when absent
txn_outcome() { # body lease revision: what idgen reads of the reply, "written|not-ours|moved REV"
  etcd_post /v3/kv/txn "$1" | "$TXN_BODY" outcome "$2" "$3"
}
hwm_history() { # key: every hwm_ms the key has held, oldest first (a watch from revision 1)
  local v
  { curl -s -N --max-time 2 -X POST "${EPS%%,*}/v3/watch" \
      -d "{\"create_request\":{\"key\":\"$(b64 "$1")\",\"start_revision\":\"1\"}}" || true; } |
    grep -o '"value":"[^"]*"' | cut -d'"' -f4 | while read -r v; do
      { printf %s "$v" | base64 -d; echo; } | sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p'
    done
}

# The parts are left unindented in their ifs, to keep their lines' history.
# Part compares: 1 and 4 (the bodies against etcd, no holder).
if part compares; then
# 1. The compares, with the bodies idgen sends: a claim of a worker key that exists fails,
#    of a free one succeeds; a HWM write fenced by a lease the worker key does not carry
#    fails and writes nothing, by the lease it carries succeeds.
ours=$(grant) theirs=$(grant)
[[ -n $ours && -n $theirs ]] || fail "lease grant"
wk=/idgen/c/workers/0 hk=/idgen/c/hwm/0
put "$wk" operator "$theirs"
if txn_succeeds "$("$TXN_BODY" claim "$wk" us "$ours" "$hk")"; then fail "claimed a taken worker key"; fi
txn_succeeds "$("$TXN_BODY" claim /idgen/c/workers/1 us "$ours" /idgen/c/hwm/1)" ||
  fail "claim of a free worker key refused"
if txn_succeeds "$("$TXN_BODY" fenced "$wk" "$ours" "$hk" 0 '{"hwm_ms":"5"}')"; then
  fail "HWM written under a lease the worker key does not carry"
fi
[[ -z $(hwm_of c 0) ]] || fail "HWM $(hwm_of c 0) written by a failed fence"
txn_succeeds "$("$TXN_BODY" fenced "$wk" "$theirs" "$hk" 0 '{"hwm_ms":"7"}')" &&
  [[ $(hwm_of c 0) == 7 ]] || fail "HWM write under the worker key's own lease refused"
ok "compares: a taken worker key and a foreign lease refused; a free key and its own lease pass"

# 4. A HWM write applied late: two writes made at the HWM key's revision R (a write its
#    holder gave up on, then the next one), the later one applied first. The late one is
#    refused, etcd's failure read says the key moved while the worker key carries that
#    lease, and the HWM does not drop; a write at the key's revision now passes.
rev=$(rev_of "$hk")
stale=$("$TXN_BODY" fenced "$wk" "$theirs" "$hk" "$rev" '{"hwm_ms":"8"}')
newer=$("$TXN_BODY" fenced "$wk" "$theirs" "$hk" "$rev" '{"hwm_ms":"9"}')
read -r what rev9 < <(txn_outcome "$newer" "$theirs" "$rev")
[[ $what == written && $rev9 -gt $rev && $(hwm_of c 0) == 9 ]] ||
  fail "the later HWM write: '$what $rev9', HWM $(hwm_of c 0)"
read -r what now < <(txn_outcome "$stale" "$theirs" "$rev")
[[ $what == moved && $now == "$rev9" && $(hwm_of c 0) == 9 ]] ||
  fail "a HWM write applied after a later one: '$what $now', HWM $(hwm_of c 0) (9 expected)"
read -r what _ < <(txn_outcome "$("$TXN_BODY" fenced "$wk" "$ours" "$hk" "$rev9" '{"hwm_ms":"1"}')" "$ours" "$rev9")
[[ $what == not-ours && $(hwm_of c 0) == 9 ]] || fail "a foreign lease at the right revision: '$what'"
read -r what _ < <(txn_outcome "$("$TXN_BODY" fenced "$wk" "$theirs" "$hk" "$rev9" '{"hwm_ms":"10"}')" "$theirs" "$rev9")
[[ $what == written && $(hwm_of c 0) == 10 ]] || fail "a write at the revision now: '$what', HWM $(hwm_of c 0)"
ok "late HWM write (revision $rev) after a later one ($rev9): refused as moved, HWM stays 9; at $rev9 it passes"

fi # part compares

if part claim; then
# 2. The claim reads the HWM in its transaction: one 1.5 s ahead of the clock becomes the
#    holder's floor and its first ID is past it; an unreadable one is never read as 0: the
#    holder passes that worker ID over (says so) and issues on the next one.
ahead=$(($(now_ms) + 1500))
put /idgen/h/hwm/0 "{\"hwm_ms\":\"$ahead\"}"
"$HOLDER" "${E[@]}" --namespace h --duration-ms 200 >"$T/h.out" 2>"$T/h.err" ||
  fail "holder on a HWM ahead failed"
first=$(awk '{print $1}' "$T/h.out" | sort -n | sed -n 1p)
[[ $(worker_of "$T/h.err") == 0 && $(floor_of "$T/h.err") == "$ahead" && $first -gt $ahead ]] ||
  fail "worker $(worker_of "$T/h.err"), floor $(floor_of "$T/h.err"), first ms $first; HWM $ahead"
put /idgen/u/hwm/0 'not a record'
"$HOLDER" "${E[@]}" --namespace u --duration-ms 200 >"$T/u.out" 2>"$T/u.err" ||
  fail "holder beside an unreadable HWM failed"
on0=$(awk '$2 == 0' "$T/u.out" | wc -l)
[[ $(worker_of "$T/u.err") == 1 && $on0 -eq 0 && -s $T/u.out ]] &&
  grep -q '^# skipped 1 .*unreadable HWM record' "$T/u.err" ||
  fail "unreadable HWM at worker 0: worker $(worker_of "$T/u.err"), $on0 IDs on worker 0"
ok "claim read the HWM: floor $ahead, first ID at $first; an unreadable one passed over: $(sed -n 's/^# skipped //p' "$T/u.err" | cut -c1-90)"

fi # part claim

if part takeover; then
# 3. The worker key re-put under another lease while the holder's lease lives: its next
#    HWM write fails the fence; it logs that, stops issuing on that worker (never above
#    the last HWM it wrote) and carries on with another worker ID.
"$HOLDER" "${E[@]}" --namespace t >"$T/t.out" 2>"$T/t.err" & a=$!
pids+=("$a")
wait_held "$T/t.err"
sleep 0.5
put /idgen/t/workers/0 operator "$(grant)"
hwm=$(hwm_of t 0) # from here on no write of the holder's can pass the fence
refused=0
for _ in $(seq 50); do
  grep -q '^# error .*no longer carries our lease' "$T/t.err" && { refused=1; break; }
  sleep 0.1
done
[[ $refused -eq 1 ]] || fail "the holder did not log the fence refusal within 5 s"
t_seen=$(now_ms)
for _ in $(seq 100); do # worker 1 is new: its holder waits past now + ahead + interval
  [[ $(awk '$2 == 1' "$T/t.out" | wc -l) -gt 0 ]] && break
  sleep 0.1
done
kill -TERM "$a"; wait "$a" || fail "graceful stop failed"
pids=()
amax=$(awk '$2 == 0 {print $1}' "$T/t.out" | sort -n | tail -1)
late=$(awk -v t="$t_seen" '$2 == 0 && $1 > t' "$T/t.out" | wc -l)
moved=$(awk '$2 == 1' "$T/t.out" | wc -l)
[[ -n $amax && $amax -le $hwm && $late -eq 0 && $moved -gt 0 ]] ||
  fail "worker 0: last ms $amax (HWM $hwm), $late IDs after the refusal; $moved IDs on worker 1"
ok "worker key taken over: fence refused; worker 0's last ms $amax <= HWM $hwm, none after; $moved IDs on worker 1"

fi # part takeover

if part late; then
# 5. One of a live holder's own writes lands late: a write under its lease, at the HWM
#    key's revision, lowers its HWM to 1 between two of its writes. Its next write finds
#    the key moved (the worker key still carries its lease), takes the new revision and
#    writes its HWM again. Every HWM the holder holds written is in the key's history
#    (none counted that etcd does not have), the key is back above the injection, and the
#    holder stays on worker 0, issuing, with no fence refusal. Then a write under its
#    lease sets a HWM an hour ahead: the retry writes no lower than what it found. Then
#    a low one again just before a graceful stop: the final HWM is written all the same.
"$HOLDER" "${E[@]}" --namespace m >"$T/m.out" 2>"$T/m.err" & a=$!
pids+=("$a")
wait_held "$T/m.err"
wk=/idgen/m/workers/0 hk=/idgen/m/hwm/0
lease=$(kv_field "$wk" lease)
[[ -n $lease ]] || fail "no lease on $wk"
inject() { # hwm_ms: written under the holder's lease at the key's revision; the new one
  local what rev injected
  for _ in $(seq 10); do # a write of the holder's may come in between: then try again
    rev=$(rev_of "$hk")
    read -r what injected < <(txn_outcome "$("$TXN_BODY" fenced "$wk" "$lease" "$hk" "$rev" \
      "{\"hwm_ms\":\"$1\"}")" "$lease" "$rev")
    [[ $what == written ]] && { echo "$injected"; return 0; }
  done
  fail "no write under the holder's lease $lease"
}
injected=$(inject 1)
t_inj=$(now_ms) states=$(grep -c '^# state' "$T/m.err")
restored=""
for _ in $(seq 50); do
  h=$(hwm_of m 0)
  [[ -n $h && $h -gt $t_inj ]] && { restored=$h; break; }
  sleep 0.1
done
[[ -n $restored ]] || fail "the holder did not write its HWM again within 5 s (HWM $(hwm_of m 0))"
sleep 1.5 # one more write of the holder's, and issuing under it
held=$(sed -n 's/^# hwm \([1-9][0-9]*\)$/\1/p' "$T/m.err" | tr '\n' ' ') # before the next
ahead=$(($(now_ms) + 3600000))
inject "$ahead" >/dev/null
next=""
for _ in $(seq 5); do # the value the key held next: the holder's retry (a watch: 2 s)
  next=$(hwm_history "$hk" | awk -v v="$ahead" 'seen == 1 {print; seen = 2} $1 == v {seen++}')
  [[ -n $next ]] && break
  sleep 0.1
done
[[ $next == "$ahead" ]] ||
  fail "after HWM $ahead was written under the holder's lease, its retry wrote '$next': lower"
inject 2 >/dev/null
kill -TERM "$a"; wait "$a" || fail "graceful stop failed"
pids=()
final=$(sed -n 's/^# stopped rc=0 last_ms=[0-9]* hwm=\([0-9]*\) .*/\1/p' "$T/m.err")
last=$(awk '$2 == 0 {print $1}' "$T/m.out" | sort -n | tail -1)
[[ -n $final && $(hwm_of m 0) == "$final" && $final -ge $last ]] ||
  fail "final HWM after a late write: stop says '$final', etcd has $(hwm_of m 0), last issued $last"
grep -q '^# error .*no longer carries our lease' "$T/m.err" && fail "a moved HWM key taken for a lost lease"
[[ $(grep -c '^# state' "$T/m.err") == "$states" ]] || fail "the holder left 'held': $(grep '^# state' "$T/m.err" | tail -1)"
after=$(awk -v t="$((t_inj + 1000))" '$2 == 0 && $1 > t' "$T/m.out" | wc -l)
[[ $after -gt 0 ]] || fail "no ID on worker 0 a second after the injection"
history=$(hwm_history "$hk" | tr '\n' ' ')
[[ $(wc -w <<<"$held") -ge 3 ]] || fail "the holder reported HWMs '$held': lease_holder prints '# hwm N'"
for v in $held; do
  [[ " $history" == *" $v "* ]] || fail "the holder holds HWM $v written, and etcd never had it (history: $history)"
done
ok "a late write of the holder's own set HWM 1 (revision $injected): the holder wrote $restored again, $after IDs after; its $(wc -w <<<"$held") HWMs all in etcd's history; one an hour ahead kept by the retry; final HWM $final after another"
fi # part late

# 6. A release that keeps the HWM as it is (release(0)): a holder that wins worker 0 and
#    finds its HWM a minute ahead, beyond --hwm-wait-max, gives the ID back without a
#    write. The HWM stays, and the next such holder is refused the same way (HWM 0 left
#    behind would let it issue at once, a minute below the HWM).
if part release; then
  far=$(($(now_ms) + 60000))
  put /idgen/r/hwm/0 "{\"hwm_ms\":\"$far\"}"
  for i in 1 2; do
    st=0
    "$HOLDER" "${E[@]}" --namespace r --hwm-wait-max 10000 >"$T/r$i.out" 2>"$T/r$i.err" || st=$?
    [[ $st -eq 1 ]] && grep -q "HWM is [0-9]* ms ahead of this clock" "$T/r$i.err" ||
      fail "holder $i beside a HWM a minute ahead: exit $st, $(tail -1 "$T/r$i.err")"
    [[ $(hwm_of r 0) == "$far" ]] ||
      fail "holder $i gave worker 0 back and left its HWM at '$(hwm_of r 0)', not $far"
  done
  [[ ! -s $T/r1.out && ! -s $T/r2.out ]] || fail "IDs issued beside a HWM a minute ahead"
  ok "a HWM a minute ahead refused twice (--hwm-wait-max 10000); each gave worker 0 back with the HWM kept at $far"
fi

# 7. A worker with no HWM key (its first use here, or its history deleted) is never read
#    as HWM 0: its new holder waits past now + ahead + one HWM interval (4 s here). The
#    first holder in a new namespace waits so; a HWM key deleted under it is put back at
#    its next write. It stops, the namespace's whole prefix is deleted, and a holder whose
#    clock is 3 s behind (libfaketime) waits past the last holder's IDs instead of
#    issuing their timestamps again.
if part fresh; then
  FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
  [[ -f $FT ]] || fail "libfaketime not installed at $FT (scripts/deps.sh test installs faketime)"
  t0=$(now_ms)
  "$HOLDER" "${E[@]}" --namespace w --every-ms 1 >"$T/w1.out" 2>"$T/w1.err" & a=$!
  pids+=("$a")
  wait_held "$T/w1.err"
  fresh=$(floor_of "$T/w1.err")
  [[ $(worker_of "$T/w1.err") == 0 && $fresh -ge $((t0 + 4000)) ]] &&
    grep -q '^# state waiting-hwm' "$T/w1.err" ||
    fail "first holder of worker 0 in a new namespace: floor $fresh, started at $t0 (+ 4000 expected)"
  etcd_post /v3/kv/deleterange "{\"key\":\"$(b64 /idgen/w/hwm/0)\"}" | grep '"deleted":"1"' >/dev/null ||
    fail "delete /idgen/w/hwm/0"
  back=""
  for _ in $(seq 50); do
    back=$(hwm_of w 0)
    [[ -n $back ]] && break
    sleep 0.1
  done
  [[ -n $back ]] || fail "a HWM key deleted under its live holder was not written again within 5 s"
  sleep 2.5 # 3 s of IDs in all, for the holder behind to meet
  kill -TERM "$a"; wait "$a" || fail "graceful stop failed"
  pids=()
  grep -q '^# error .*no longer carries our lease' "$T/w1.err" && fail "a deleted HWM key taken for a lost lease"
  etcd_post /v3/kv/deleterange "{\"key\":\"$(b64 /idgen/w/)\",\"range_end\":\"$(b64 /idgen/w0)\"}" |
    grep -q '"deleted"' || fail "delete the prefix /idgen/w/"
  [[ -z $(hwm_of w 0) ]] || fail "/idgen/w/hwm/0 still there after the prefix was deleted"
  echo "-3" >"$T/faketime"
  LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE=$T/faketime FAKETIME_DONT_FAKE_MONOTONIC=1 \
    FAKETIME_CACHE_DURATION=1 \
    "$HOLDER" "${E[@]}" --namespace w --every-ms 1 --duration-ms 1000 >"$T/w2.out" 2>"$T/w2.err" ||
    fail "holder after the prefix was deleted failed"
  amax=$(awk '{print $1}' "$T/w1.out" | sort -n | tail -1)
  bmin=$(awk '{print $1}' "$T/w2.out" | sort -n | sed -n 1p)
  floor=$(floor_of "$T/w2.err")
  dups=$(cat "$T/w1.out" "$T/w2.out" | awk '{print $3}' | sort | uniq -d | wc -l)
  [[ $(worker_of "$T/w2.err") == 0 && -n $bmin && $floor -gt $amax && $bmin -gt $amax && $dups -eq 0 ]] &&
    grep -q '^# state waiting-hwm' "$T/w2.err" ||
    fail "prefix deleted, clock 3 s behind: worker $(worker_of "$T/w2.err"), floor $floor, first ms $bmin, the last holder's last $amax; $dups IDs issued twice"
  ok "no HWM key: a new namespace's holder waited (floor $((fresh - t0)) ms past its start); a deleted key was written again ($back); after the prefix went, a holder 3 s behind waited to floor $floor: first ms $bmin > $amax, 0 of $(cat "$T/w1.out" "$T/w2.out" | wc -l) IDs twice"
fi

# 8. A keepalive answered without a TTL (etcd's reply for a revoked or expired lease) is a
#    lost lease, not a renewal. A holder that writes its HWM only every 20 s has its lease
#    revoked: its next keepalive (every TTL/3 = 1 s) finds the lease gone, it says so and
#    issues nothing after. Counted as renewed, the keepalive would move its deadline on,
#    and it would issue until its next HWM write, up to 20 s on. (A HWM key in the past
#    spares the 45 s wait a new key would cost with --hwm-ahead 25000; --hwm-wait-max
#    60000 admits that configuration.)
if part revoked; then
  put /idgen/k/hwm/0 '{"hwm_ms":"1"}'
  K=(--hwm-interval 20000 --hwm-ahead 25000 --hwm-wait-max 60000)
  "$HOLDER" "${E[@]}" --namespace k "${K[@]}" >"$T/k.out" 2>"$T/k.err" & a=$!
  pids+=("$a")
  wait_held "$T/k.err"
  lease=$(kv_field /idgen/k/workers/0 lease)
  [[ -n $lease ]] || fail "no lease on /idgen/k/workers/0"
  sleep 0.3
  etcd_post /v3/lease/revoke "{\"ID\":\"$lease\"}" | grep '"header"' >/dev/null || fail "revoke lease $lease"
  t_rev=$(now_ms)
  lost=0
  for _ in $(seq 100); do # 10 s: half the HWM interval
    grep -q '^# error .*keepalive: no TTL' "$T/k.err" && { lost=1; break; }
    sleep 0.1
  done
  n_lost=$(wc -l <"$T/k.out")
  after=$(awk -v t="$t_rev" '$1 > t' "$T/k.out" | wc -l)
  [[ $lost -eq 1 ]] ||
    fail "lease $lease revoked: the holder still issued 10 s later ($after IDs after the revoke, $(grep -c '^# error' "$T/k.err") errors)"
  sleep 1
  n_later=$(wc -l <"$T/k.out")
  last=$(awk '{print $1}' "$T/k.out" | sort -n | tail -1)
  kill -TERM "$a"; wait "$a" || true
  pids=()
  [[ $n_later -eq $n_lost ]] || fail "$((n_later - n_lost)) IDs after the keepalive found lease $lease gone"
  ok "revoked lease: the keepalive found it gone ($(sed -n 's/^# error //p' "$T/k.err" | grep 'no TTL' | head -1)); last ID $((last - t_rev)) ms after the revoke, none after"
fi
echo "lease_etcd_fence: all passed"
