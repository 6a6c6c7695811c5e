#!/usr/bin/env bash
# The status page (GET /) in a real browser: headless Chromium (Debian's chromium) driven
# by status_page.py over the DevTools protocol, against a server with a token and named
# generators (a segment one, a uuid7 one). The page itself answers 200 without the token
# and fetches nothing from elsewhere; the rest is status_page.py's. The screenshot goes
# to BUILD/status_page/status.png.
source "$(dirname "$0")/server_common.bash"
chromium=$(command -v chromium || true)
[[ -n $chromium ]] || { echo "FAIL: chromium not found (scripts/deps.sh test)" >&2; exit 1; }

token=status-page-token-0123456789
printf '%s\n' "$token" >"$WORK/token"
printf 'generators:\n  orders: {kind: segment}\n  tokens: {kind: uuid7}\n' >"$WORK/generators.yaml"
start_server status --auth-token-file "$WORK/token" --config "$WORK/generators.yaml"
headers=$(curl -s -D - -o "$WORK/page.html" "http://$HTTP/")
check_match "GET / without a token" '^HTTP/1.1 200' "$headers"
check_match "GET / is HTML" 'content-type: text/html; charset=utf-8' "$headers"
check "GET /v1/info without a token" 401 "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/info")"
check "no external asset in the page" "" \
  "$(grep -oiE '(src|href)=["'\'']?(https?:)?//[^"'\'' >]+' "$WORK/page.html" || true)"
if /usr/bin/python3 "$SOURCE_DIR/tests/integration/status_page.py" "$chromium" "http://$HTTP" \
  "$token" "$BUILD_DIR/status_page/status.png" >"$WORK/browser" 2>&1; then
  cat "$WORK/browser"
else
  cat "$WORK/browser"
  fail "status_page.py"
fi
finish
