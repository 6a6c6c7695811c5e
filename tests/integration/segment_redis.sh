#!/usr/bin/env bash
# Segment generators on Redis (one key per name, INCRBY in a script that records the
# step in the registry idgen:default:segments; scripts/redis-server.sh, AOF always): two
# processes sharing one name, kill -9 mid-block, Redis stopped and started under load,
# the step adapting, bad configuration; then the guard: a key gone while the registry
# names it is refused (fetch and init), and a replica is refused.
# Usage: segment_redis.sh /path/to/idgen
source "$(dirname "$0")/segment_common.bash"
source "$(dirname "$0")/parts.bash"
parts scenarios guard replica -- "${@:2}"
command -v redis-server >/dev/null || "$SRC/scripts/deps.sh" test

B=redis
RS=$SRC/scripts/redis-server.sh
DSN=$("$RS" start "$T/redis")
stop_servers() { "$RS" stop "$T/redis-replica" || true; "$RS" stop "$T/redis"; }
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
  # The guard: the key deleted under the registry's nose is refused, not begun again at 1.
  seg init lost >/dev/null
  seg next -n 5 lost >/dev/null
  "$RS" cli "$T/redis" DEL idgen:default:segment:lost >/dev/null
  status=0
  seg next lost >"$T/out" 2>"$T/err" || status=$?
  [[ $status -ne 0 && ! -s $T/out ]] && grep -q 'registry\|segments' "$T/err" ||
    fail "lost key: exit $status, out $(cat "$T/out"), $(cat "$T/err")"
  ok "a key gone while the registry names it is refused: $(cat "$T/err")"
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

if part replica; then
  # A replica's address is refused with one line.
  REPLICA=$("$RS" start "$T/redis-replica" --replica-of "$T/redis")
  status=0
  "$IDGEN" segment next --backend redis --dsn "$REPLICA" shared >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] && grep -q replica "$T/err" ||
    fail "replica: exit $status, $(cat "$T/err")"
  ok "a replica is refused: $(cat "$T/err")"
fi
echo "segment_redis.sh: all passed"
