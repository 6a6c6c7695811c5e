#!/usr/bin/env bash
# server_js.sh: runs the Node client (fetch + BigInt) against a live server.
source "$(dirname "$0")/server_common.bash"
if ! command -v node >/dev/null; then
  fail "node is not installed (scripts/deps.sh test installs nodejs)"
  exit 1
fi
start_server js
if node "$(dirname "$0")/server_js_client.mjs" "http://$HTTP"; then
  say "ok   node client"
else
  fail "node client"
fi
stop_server || true
finish
