#!/usr/bin/env bash
# Segment generators on Redis (one key per name, INCRBY in a script that writes the new
# max into the made record idgen:default:segment-made:NAME; scripts/redis-server.sh, AOF
# always): two processes sharing one name, kill -9 mid-block, Redis stopped and started
# under load, the step adapting, bad configuration; then the guard: a key gone while its
# record is there is refused (fetch and init); records: init --start-after below the
# recorded max refused unless --force, the record deleted alone, the counter set lower,
# FLUSHALL; eviction: allkeys-* refused, volatile-* accepted, an expiry on a key refused;
# volatile: AOF off, a key is made only with --force, and after a restart nothing is made
# again; a replica refused, and a replica promoted goes on above the primary's numbers.
# Usage: segment_redis.sh /path/to/idgen
source "$(dirname "$0")/segment_common.bash"
source "$(dirname "$0")/parts.bash"
parts scenarios guard records eviction volatile replica -- "${@:2}"
command -v redis-server >/dev/null || "$SRC/scripts/deps.sh" test

B=redis
RS=$SRC/scripts/redis-server.sh
DSN=$("$RS" start "$T/redis")
stop_servers() {
  "$RS" stop "$T/redis-replica" || true
  "$RS" stop "$T/redis-volatile" || true
  "$RS" stop "$T/redis"
}
echo "redis at $DSN"
backend_stop() { "$RS" stop "$T/redis"; }
backend_start() { "$RS" restart "$T/redis" >/dev/null; }

if part scenarios; then
  scenario_two_processes
  scenario_kill9
  scenario_outage
  scenario_step
  scenario_bad_config "http://127.0.0.1:6379"
  value=$("$RS" cli "$T/redis" GET idgen:default:segment:adapt)
  [[ $value =~ ^[0-9]+$ && $value -ge $(stat_of s1 last) ]] || fail "key holds '$value'"
  ok "key idgen:default:segment:adapt holds $value, at or past the last block s1 leased"
fi

if part guard; then
  # The guard: the key deleted under its record is refused, not begun again at 1.
  seg init lost >/dev/null
  seg next -n 5 lost >/dev/null
  "$RS" cli "$T/redis" DEL idgen:default:segment:lost >/dev/null
  status=0
  seg next lost >"$T/out" 2>"$T/err" || status=$?
  [[ $status -ne 0 && ! -s $T/out ]] && grep -q 'segment-made:lost records it made, up to 5' "$T/err" ||
    fail "lost key: exit $status, out $(cat "$T/out"), $(cat "$T/err")"
  ok "a key gone while its made record is there is refused: $(cat "$T/err")"
  status=0
  seg init lost >"$T/out" 2>"$T/err" || status=$?
  [[ $status -ne 0 ]] || fail "init of a lost key started it again"
  ok "init refuses to make a lost key again"
  status=0
  seg init --start-after 0 lost >"$T/out" 2>"$T/err" || status=$?
  [[ $status -ne 0 ]] || fail "init --start-after 0 of a lost key started it again"
  ok "init --start-after 0 is refused like a bare init"
  # The operator's override: above every number handed out (5 here), as on PostgreSQL
  # and etcd.
  seg init --start-after 1000 lost >/dev/null || fail "init --start-after 1000 of a lost key refused"
  first=$(seg next lost)
  [[ $first -eq 1001 ]] || fail "after init --start-after 1000: first number $first, want 1001"
  ok "init --start-after 1000 makes a lost key again: the next number is $first"
fi

# refused CMD... : the command exits 1 with one line on stderr and nothing on stdout,
# which it leaves in $T/err.
refused() {
  local status=0
  "$@" >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] ||
    fail "$*: exit $status, out '$(head -3 "$T/out" | tr '\n' ' ')', err $(cat "$T/err")"
}
rcli() { "$RS" cli "$T/redis" "$@" >/dev/null; }

if part records; then
  # Issue 35 item 7: 1..30 handed out, the key deleted; --start-after 5 is refused, naming
  # 30, unless --force.
  seg init rec >/dev/null
  seg next -n 30 rec >/dev/null
  rcli DEL idgen:default:segment:rec
  refused seg next rec
  grep -q 'up to 30' "$T/err" || fail "the lost key's refusal names no 30: $(cat "$T/err")"
  refused seg init rec
  grep -q 'rec is gone.*up to 30' "$T/err" || fail "bare init: $(cat "$T/err")"
  refused seg init --force rec
  grep -q 'rec is gone.*up to 30' "$T/err" || fail "bare init --force: $(cat "$T/err")"
  ok "a deleted key: fetch and bare init (with --force too) refused, naming 30: $(cat "$T/err")"
  refused seg init --start-after 5 rec
  grep -q 'start-after 5 is below 30' "$T/err" || fail "the refusal names no 30: $(cat "$T/err")"
  ok "init --start-after 5 below the recorded 30 is refused: $(cat "$T/err")"
  seg init --start-after 30 --force rec >/dev/null || fail "init --start-after 30 --force refused"
  rcli DEL idgen:default:segment:rec
  seg init --start-after 5 --force rec >/dev/null || fail "init --start-after 5 --force refused"
  first=$(seg next rec)
  [[ $first -eq 6 ]] || fail "after --force at 5: $first, want 6"
  ok "--force accepts the operator's 5 (the next number is $first)"
  # The record deleted alone (a foreign client): the next block writes it again.
  rcli DEL idgen:default:segment-made:rec
  seg next -n 4 rec >/dev/null
  value=$("$RS" cli "$T/redis" GET idgen:default:segment-made:rec)
  [[ $value -eq 10 ]] || fail "the record after a block: '$value', want 10"
  ok "the record deleted alone comes back with the next block ($value)"
  # The counter set lower by a foreign client: refused, naming the record.
  rcli SET idgen:default:segment:rec 3
  refused seg next rec
  grep -q 'below 10' "$T/err" || fail "counter set lower: $(cat "$T/err")"
  ok "a counter set below its record is refused: $(cat "$T/err")"
  rcli SET idgen:default:segment:rec 10
  # A registry from an older idgen, no record: still a guard (no number to name).
  rcli HSET idgen:default:segments old 1000
  refused seg init old
  grep -q 'segments records it made' "$T/err" || fail "registry: $(cat "$T/err")"
  ok "an older registry entry still refuses a bare init"
  # FLUSHALL takes every record: what is left is the warning in docs/segment.md; a
  # name known to nobody any more answers 'run init'.
  rcli FLUSHALL
  refused seg next rec
  grep -q 'run .idgen segment init' "$T/err" || fail "after FLUSHALL: $(cat "$T/err")"
  ok "after FLUSHALL a fetch is refused ('run init'); init is the operator's word (docs)"
fi

if part eviction; then
  # Issue 35 item 3: a policy that can evict idgen's keys is refused by every script.
  seg init ev >/dev/null
  seg next -n 30 ev >/dev/null
  for policy in allkeys-lru allkeys-lfu allkeys-random; do
    rcli CONFIG SET maxmemory-policy "$policy"
    refused seg next ev
    grep -q "maxmemory-policy $policy" "$T/err" || fail "$policy: $(cat "$T/err")"
    refused seg init ev2
  done
  ok "allkeys-* refused by fetch and init, one line: $(cat "$T/err")"
  # Real eviction under allkeys-lru (the policy changed behind idgen's back, memory
  # filled): the counter goes, its record (a key of its own) may go too; no script then
  # hands out a number.
  rcli CONFIG SET maxmemory 2mb
  for i in $(seq 40); do rcli SET "junk:$i" "$(head -c 100000 /dev/zero | tr '\0' x)"; done
  refused seg next ev
  refused seg init ev
  rcli FLUSHDB
  rcli CONFIG SET maxmemory 0
  for policy in volatile-lru volatile-lfu volatile-random volatile-ttl; do
    rcli CONFIG SET maxmemory-policy "$policy"
    seg init "ev-$policy" >/dev/null || fail "$policy: init refused"
    seg next "ev-$policy" >/dev/null || fail "$policy: next refused"
  done
  ok "volatile-* accepted while idgen's keys have no expiry"
  rcli EXPIRE idgen:default:segment-made:ev-volatile-ttl 600
  refused seg next ev-volatile-ttl
  grep -q 'has an expiry' "$T/err" || fail "expiry: $(cat "$T/err")"
  ok "an expiry on a record is refused: $(cat "$T/err")"
  rcli PERSIST idgen:default:segment-made:ev-volatile-ttl
  rcli EXPIRE idgen:default:segment:ev-volatile-ttl 600
  refused seg next ev-volatile-ttl
  rcli CONFIG SET maxmemory-policy noeviction
fi

if part volatile; then
  # Issue 35 item 2 (a name's key): AOF off, so a restart starts empty. A key is made
  # only on the operator's --force; after the restart, nothing makes it again.
  VDSN=$("$RS" start "$T/redis-volatile" --aof off)
  refused "$IDGEN" segment init --backend redis --dsn "$VDSN" vol
  grep -q 'AOF off' "$T/err" || fail "AOF off: $(cat "$T/err")"
  ok "init on a Redis with AOF off refused: $(cat "$T/err")"
  "$IDGEN" segment init --backend redis --dsn "$VDSN" --force vol >/dev/null ||
    fail "init --force refused"
  "$IDGEN" segment next --backend redis --dsn "$VDSN" -n 25 vol >"$T/before"
  "$RS" kill "$T/redis-volatile"
  "$RS" restart "$T/redis-volatile" >/dev/null
  refused "$IDGEN" segment next --backend redis --dsn "$VDSN" vol
  refused "$IDGEN" segment init --backend redis --dsn "$VDSN" vol
  ok "after a restart without AOF: fetch and a bare init refused, nothing repeats"
fi

if part replica; then
  # A replica's address is refused with one line.
  REPLICA=$("$RS" start "$T/redis-replica" --replica-of "$T/redis")
  status=0
  "$IDGEN" segment next --backend redis --dsn "$REPLICA" shared >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] && grep -q replica "$T/err" ||
    fail "replica: exit $status, $(cat "$T/err")"
  ok "a replica is refused: $(cat "$T/err")"
  # The replica promoted (after it synced): counter and record came with it.
  seg init promo >/dev/null
  seg next -n 20 promo >/dev/null
  for _ in $(seq 100); do # until the replica has the block (replication is async)
    [[ $("$RS" cli "$T/redis-replica" GET idgen:default:segment-made:promo) == 20 ]] && break
    sleep 0.1
  done
  "$RS" cli "$T/redis-replica" REPLICAOF NO ONE >/dev/null
  first=$("$IDGEN" segment next --backend redis --dsn "$REPLICA" promo)
  [[ $first -eq 21 ]] || fail "promoted replica: $first, want 21"
  ok "a promoted replica goes on above the primary's numbers ($first)"
fi
echo "segment_redis.sh: all passed"
