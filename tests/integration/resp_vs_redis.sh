#!/usr/bin/env bash
# resp_vs_redis.sh: idgen serve answers the connection commands Redis clients send (HELLO
# 2/3, ECHO, CLIENT, SELECT, COMMAND, INFO, PING, RESET, QUIT, AUTH, and the errors of
# unknown commands and wrong arity) as Debian's redis-server 7 does: both run here, on
# free loopback ports, and resp_compare.py sends each the same bytes.
source "$(dirname "$0")/server_common.bash"
command -v redis-server >/dev/null || { fail "redis-server missing (scripts/deps.sh test)"; finish; }
redis-server --version

printf 'resp-compare-token-0123\n' >"$WORK/token"
for mode in open token; do
  if [[ $mode == token ]]; then
    start_redis --requirepass resp-compare-token-0123
    start_server "compare-$mode" --auth-token-file "$WORK/token"
    /usr/bin/python3 "$SOURCE_DIR/tests/integration/resp_compare.py" "$REDIS_PORT" \
      "$RESP_PORT" resp-compare-token-0123 || fail "replies differ ($mode)"
  else
    start_redis
    start_server "compare-$mode"
    /usr/bin/python3 "$SOURCE_DIR/tests/integration/resp_compare.py" "$REDIS_PORT" \
      "$RESP_PORT" || fail "replies differ ($mode)"
  fi
  stop_server || fail "idgen serve did not stop cleanly ($mode)"
  stop_redis
done
finish
