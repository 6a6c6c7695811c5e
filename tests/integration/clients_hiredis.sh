#!/usr/bin/env bash
# clients_hiredis.sh: a C program on hiredis (Debian's libhiredis-dev) against idgen serve.
source "$(dirname "$0")/server_common.bash"
flags=$(pkg-config --cflags --libs hiredis) ||
  { fail "libhiredis-dev missing (scripts/deps.sh test)"; finish; }
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Werror -o "$WORK/hiredis_client" \
  "$SOURCE_DIR/tests/clients/hiredis_client.c" $flags || { fail "hiredis_client.c does not build"; finish; }
start_client_servers
"$WORK/hiredis_client" "$OPEN_RESP" "$AUTH_RESP" "$CLIENT_TOKEN" || fail "hiredis"
stop_client_servers || fail "a server did not stop cleanly"
finish
