#!/usr/bin/env bash
# clients_python.sh: redis-py (Debian's python3-redis, so /usr/bin/python3) and urllib
# against idgen serve, with their default options.
source "$(dirname "$0")/server_common.bash"
/usr/bin/python3 -c 'import redis' 2>/dev/null ||
  { fail "python3-redis missing (scripts/deps.sh test)"; finish; }
start_client_servers
/usr/bin/python3 "$SOURCE_DIR/tests/clients/redis_py.py" "$OPEN_RESP" "$AUTH_RESP" \
  "$CLIENT_TOKEN" "$OPEN_HTTP" || fail "redis-py and urllib"
stop_client_servers || fail "a server did not stop cleanly"
finish
