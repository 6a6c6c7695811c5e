#!/usr/bin/env bash
# server_resp.sh: the Redis-protocol listener with redis-cli and raw bytes: every command,
# Redis-worded errors, pipelining in order, inline commands, AUTH.
source "$(dirname "$0")/server_common.bash"

start_server resp
rc() { redis-cli -h 127.0.0.1 -p "$RESP_PORT" "$@"; }

check "PING" PONG "$(rc PING)"
check "PING msg" hello "$(rc PING hello)"
check_match "ID is decimal" '^[0-9]+$' "$(rc ID)"
out=$(rc IDS 5)
check "IDS 5 gives five" 5 "$(sort -u <<<"$out" | grep -c '^[0-9]\+$')"
check "IDS 4096" 4096 "$(rc IDS 4096 | sort -u | wc -l)"
check "IDS 0" "ERR count must be from 1 to 4096" "$(rc IDS 0)"
check "IDS -1" "ERR value is not an integer or out of range" "$(rc IDS -1)"
check "IDS abc" "ERR value is not an integer or out of range" "$(rc IDS abc)"
check "IDS 10^12" "ERR count must be from 1 to 4096" "$(rc IDS 1000000000000)"
check "IDS arity" "ERR wrong number of arguments for 'ids' command" "$(rc IDS)"
check "ID arity" "ERR wrong number of arguments for 'id' command" "$(rc ID base62 hex)"
check_match "ID in a form" '^[0-9A-Za-z]{11}$' "$(rc ID base62)"
check "IDS in a form" 3 "$(rc IDS 3 hex | grep -cE '^[0-7][0-9a-f]{15}$')"
check_match "ID unknown form" '^ERR unknown format, want one of decimal, ' "$(rc ID 1)"
check "IDS arity" "ERR wrong number of arguments for 'ids' command" "$(rc IDS 1 hex x)"
check "opaque without a key" "ERR opaque formats need a key: this server runs without --opaque-key-file" "$(rc ID opaque-base62)"
check "unknown command" "ERR unknown command 'FOO', with args beginning with: 'a' 'b' " "$(rc FOO a b)"
check "lower-case command" PONG "$(rc ping)"
id=$(rc ID)
check_match "DECODE gives the JSON" "^\\{\"id\":\"$id\",\"layout\":\"snowflake\"" "$(rc DECODE "$id")"
check_match "DECODE bad" '^ERR invalid ID' "$(rc DECODE nope)"
check "DECODE arity" "ERR wrong number of arguments for 'decode' command" "$(rc DECODE)"
info=$(rc INFO)
check_match "INFO text" 'worker_id:0' "$info"
check_match "INFO layout" 'layout:snowflake' "$info"
for c in UUID7 UUID4 ULID; do
  out=$(rc $c)
  if [[ $out == ERR\ unknown* ]]; then
    say "ok   $c not in this build"
  else
    check_match "$c" '^[0-9A-Za-z-]{26,36}$' "$out"
    check "$c 3" 3 "$(rc $c 3 | wc -l)"
  fi
done
check "AUTH without a token" "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?" "$(rc AUTH x)"
check "QUIT" OK "$(rc QUIT)"

# the connection stays usable after errors; replies come in order (redis-cli pipelines
# what it reads from stdin)
out=$(printf 'PING\nFOO\nIDS\nPING again\nIDS 2\nPING last\n' | rc | grep -v '^$')
want_re=$'^PONG\nERR unknown command .*\nERR wrong number of arguments for .ids. command\nagain\n[0-9]+\n[0-9]+\nlast$'
check_match "errors keep the connection, order kept" "$want_re" "$out"

# raw pipelining: 1000 commands in one write, 1000 answers in order
{
  for i in $(seq 1 1000); do printf '*2\r\n$4\r\nPING\r\n$%d\r\n%d\r\n' "${#i}" "$i"; done
} >"$WORK/pipe.in"
"$POKE" send "$RESP_PORT" -h <"$WORK/pipe.in" | tr -d '\r' | grep -v '^\$' >"$WORK/pipe.out"
check "1000 pipelined answers in order" "$(seq 1 1000)" "$(cat "$WORK/pipe.out")"
# big pipelined replies (more than the output high-water mark) still come whole
{ for i in $(seq 1 100); do printf 'IDS 4096\r\n'; done; } >"$WORK/big.in"
n=$("$POKE" send "$RESP_PORT" -h -t 5000 <"$WORK/big.in" | tr -d '\r' | grep -c '^[0-9]')
check "100 x IDS 4096 pipelined" 409600 "$n"

# inline commands (what telnet sends)
out=$(printf 'PING\r\nIDS 2\r\nECHO x\r\nFOO\r\n' | "$POKE" send "$RESP_PORT" -h | tr -d '\r')
check_match "inline commands" $'^\\+PONG\n\\*2\n\\$[0-9]+\n[0-9]+\n\\$[0-9]+\n[0-9]+\n\\$1\nx\n-ERR unknown command .FOO.' "$out"

# protocol errors: answered, then closed
out=$(printf '*x\r\n' | "$POKE" send "$RESP_PORT" | tr -d '\r')
check "bad multibulk" "-ERR Protocol error: invalid multibulk length" "$out"
out=$(printf '*1\r\n$99999999\r\n' | "$POKE" send "$RESP_PORT" | tr -d '\r')
check "bad bulk length" "-ERR Protocol error: invalid bulk length" "$out"
out=$(printf '*1\r\n+PING\r\n' | "$POKE" send "$RESP_PORT" | tr -d '\r')
check "not a bulk" "-ERR Protocol error: expected '\$'" "$out"
check "still serving" PONG "$(rc PING)"
stop_server || true

# AUTH when a token is set
printf 'tok-123-abcdefghijkl\n' >"$WORK/token"
start_server resp-auth --auth-token-file "$WORK/token"
check "NOAUTH before AUTH" "NOAUTH Authentication required." "$(rc ID)"
check "wrong password" "WRONGPASS invalid username-password pair or user is disabled." "$(rc AUTH nope)"
out=$(printf 'AUTH tok-123-abcdefghijkl\nPING\n' | rc)
check "AUTH then PING" $'OK\nPONG' "$out"
out=$(printf 'AUTH default tok-123-abcdefghijkl\nPING\n' | rc)
check "AUTH default token" $'OK\nPONG' "$out"
check_match "redis-cli -a" '^[0-9]+$' "$(redis-cli -p "$RESP_PORT" --no-auth-warning -a tok-123-abcdefghijkl ID)"
rc=0; stop_server || rc=$?
check "SIGTERM exits 0" 0 "$rc"
finish
