#!/usr/bin/env bash
# A segment generator on Redis served by `idgen serve --config` (scripts/redis-server.sh,
# AOF always): two servers sharing the name, kill -9 and a restart, Redis stopped and
# started under load (buffer, then backend_unavailable, then numbers again), a bad DSN;
# then a Redis with AOF off: init refuses without --force; the server logs, once, what
# can repeat.
# Usage: server_segment_redis.sh /path/to/idgen
source "$(dirname "$0")/server_segment_common.bash"
RS=$SOURCE_DIR/scripts/redis-server.sh
DSN=$("$RS" start "$WORK/redis")
stop_backend() { "$RS" stop "$WORK/redis"; "$RS" stop "$WORK/redis-volatile" 2>/dev/null || true; }
backend_stop() { "$RS" stop "$WORK/redis"; }
backend_start() { "$RS" restart "$WORK/redis" >/dev/null; }
say "redis at $DSN"
B=redis
"$IDGEN" segment init --backend "$B" --dsn "$DSN" orders >/dev/null || fail "segment init"

scenario_two_servers
scenario_kill9
scenario_outage
scenario_bad_config "http://127.0.0.1:6379"

DSN=$("$RS" start "$WORK/redis-volatile" --aof off)
# A key is made on a Redis with AOF off only on the operator's --force (issue 35).
"$IDGEN" segment init --backend "$B" --dsn "$DSN" orders >/dev/null 2>&1 &&
  fail "segment init on AOF off: made without --force"
"$IDGEN" segment init --backend "$B" --dsn "$DSN" --force orders >/dev/null ||
  fail "segment init --force (volatile)"
write_config "$WORK/volatile.yaml" 100 1000
start_segment_server v "$WORK/volatile.yaml"
for _ in $(seq 50); do grep -q 'warn segment.*AOF off' "$SERVER_LOG" && break; sleep 0.1; done
check_match "AOF off is warned, saying what repeats" 'AOF off.*repeat' "$(grep 'warn segment' "$SERVER_LOG")"
stop_server "$SERVER_PID" || true
finish
