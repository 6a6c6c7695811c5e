#!/usr/bin/env bash
# clients_node.sh: node-redis and ioredis (npm, pinned in tests/clients/package-lock.json,
# installed by npm ci) and Node's fetch against idgen serve, with their default options:
# both Redis clients open with HELLO 3, so IDs are checked as RESP3 replies.
source "$(dirname "$0")/server_common.bash"
command -v node >/dev/null || { fail "node missing (scripts/deps.sh test)"; finish; }
command -v npm >/dev/null || { fail "npm missing (scripts/deps.sh test)"; finish; }
dir=$(node_clients) || { fail "npm ci in tests/clients failed"; finish; }
say "node $(node --version), redis $(node -p "require('$dir/node_modules/redis/package.json').version"), ioredis $(node -p "require('$dir/node_modules/ioredis/package.json').version")"
start_client_servers
node "$dir/node_redis.mjs" "$OPEN_RESP" "$AUTH_RESP" "$CLIENT_TOKEN" || fail "node-redis"
node "$dir/ioredis.mjs" "$OPEN_RESP" "$AUTH_RESP" "$CLIENT_TOKEN" || fail "ioredis"
node "$dir/node_fetch.mjs" "$OPEN_HTTP" || fail "fetch"
stop_client_servers || fail "a server did not stop cleanly"
finish
