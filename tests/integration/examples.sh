#!/usr/bin/env bash
# examples.sh: every program under examples/ runs against a server started here (the C
# ones built as their first lines say, on this build's libraries), and the README's C
# example compiles as printed there and prints an ID.
source "$(dirname "$0")/server_common.bash"
ex=$SOURCE_DIR/examples
for tool in cc pkg-config curl redis-cli node; do
  command -v $tool >/dev/null || { fail "$tool missing (scripts/deps.sh test)"; finish; }
done
# run NAME COMMAND...: runs it, shows its output, fails the check on a non-zero exit.
run() {
  local name=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  printf '%s\n' "$out" | sed 's/^/     | /'
  check "$name runs" 0 "$rc"
  LAST=$out
}

# The README's C example, extracted from between its ```c fences, as a user pastes it.
awk '/^## The library/ {lib = 1} lib && /^```c$/ {on = 1; next} on && /^```$/ {exit} on' \
  "$SOURCE_DIR/README.md" >"$WORK/app.c"
check_match "README has a C example" 'int main' "$(cat "$WORK/app.c")"
cc -std=c11 -Wall -Wextra -Werror -I"$SOURCE_DIR/include" "$WORK/app.c" -o "$WORK/app" \
  "$BUILD_DIR/libidgen.a" -lpthread -lm || fail "the README's C example does not build"
run "README C example" "$WORK/app"
check_match "README C example prints an ID" '^[0-9]+$' "$LAST"

cc -std=c11 -Wall -Wextra -Werror -I"$SOURCE_DIR/include" "$ex/c-embedded/main.c" \
  -o "$WORK/embedded" "$BUILD_DIR/libidgen.a" -lpthread -lm || fail "c-embedded does not build"
run "c-embedded" env IDGEN_STATE_DIR="$WORK/embedded-state" "$WORK/embedded"
check_match "c-embedded: 1000 IDs, one decoded" '^1000 IDs, worker [0-9]+; the last: [0-9]+ \(base62 [0-9A-Za-z]{11}\) made at [0-9T:.-]+Z' "$LAST"

start_server examples
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$ex/c-hiredis/main.c" -o "$WORK/hiredis" \
  $(pkg-config --cflags --libs hiredis) || fail "c-hiredis does not build"
run "c-hiredis" "$WORK/hiredis" 127.0.0.1 "$RESP_PORT"
check_match "c-hiredis: ID, IDS, DECODE" 'DECODE  \{"id":"[0-9]+"' "$LAST"

cc -std=c11 -Wall -Wextra -Werror -I"$SOURCE_DIR/include" "$ex/c-client/main.c" -o "$WORK/c-client" \
  -L"$BUILD_DIR" -lidgen-client -Wl,-rpath,"$BUILD_DIR" || fail "c-client does not build"
run "c-client" "$WORK/c-client" "127.0.0.1:$RESP_PORT"
check_match "c-client: 5 IDs" '^[0-9]+(
[0-9]+){4}$' "$LAST"
run "python/client_ids.py" env IDGEN_CLIENT_LIB="$BUILD_DIR/libidgen-client.so" \
  PYTHONPATH="$SOURCE_DIR/bindings/python" /usr/bin/python3 "$ex/python/client_ids.py" "127.0.0.1:$RESP_PORT"
check_match "client_ids.py: 5 IDs" '^[0-9]+(
[0-9]+){4}$' "$LAST"

export IDGEN_HTTP=$HTTP IDGEN_RESP=127.0.0.1:$RESP_PORT IDGEN=$IDGEN
run "python/redis_ids.py" /usr/bin/python3 "$ex/python/redis_ids.py"
check_match "redis_ids.py decodes" 'DECODE  time [0-9T:.-]+Z, worker 0' "$LAST"
run "python/http_ids.py" /usr/bin/python3 "$ex/python/http_ids.py"
check_match "http_ids.py decodes" 'DECODE  time [0-9T:.-]+Z, worker 0' "$LAST"

# Node resolves `import 'ioredis'` from the file's folder: run copies beside the
# installed clients (tests/clients' lockfile pins the same ioredis).
dir=$(node_clients) || { fail "npm ci in tests/clients failed"; finish; }
cp "$ex"/node/*.mjs "$dir/"
run "node/ioredis_ids.mjs" node "$dir/ioredis_ids.mjs"
check_match "ioredis_ids.mjs decodes" 'DECODE  time [0-9T:.-]+Z, worker 0' "$LAST"
run "node/fetch_ids.mjs" node "$dir/fetch_ids.mjs"
check_match "fetch_ids.mjs decodes" 'DECODE  time [0-9T:.-]+Z, worker 0' "$LAST"

run "shell/ids.sh" bash "$ex/shell/ids.sh"
check_match "ids.sh: the CLI and the server print the same JSON" \
  'decode: +(\{[^}]*\}\}).*DECODE: +\1' "$(tr '\n' ' ' <<<"$LAST")"
stop_server || fail "the server did not stop cleanly"
finish
