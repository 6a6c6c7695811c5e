# server_common.bash: sourced by tests/integration/server_*.sh. Starts `idgen serve` on
# free loopback ports (port 0, read back from its start line), stops only what it started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/http.bash"
IDGEN=${1:?usage: $0 /path/to/idgen}
IDGEN=$(cd "$(dirname "$IDGEN")" && pwd)/$(basename "$IDGEN")
BUILD_DIR=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
SOURCE_DIR=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
POKE=$BUILD_DIR/server_poke
WORK=$(mktemp -d "${TMPDIR:-/tmp}/idgen-server-test.XXXXXX")
# Worker IDs are claimed host-wide per namespace: one of this run's own keeps other
# processes on the host (other tests, other checkouts) out of its numbering.
export IDGEN_NAMESPACE=${IDGEN_NAMESPACE:-server-test-$$}
SERVER_PIDS=()
FAILS=0

cleanup() {
  for pid in "${SERVER_PIDS[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  # What the test started in the background and did not wait for (load clients, draw
  # loops): a run stopped at its first failure (IDGEN_TEST_FIRST_FAIL) or by a timeout
  # left them running, a load client for good.
  local job
  for job in $(jobs -p); do kill_tree "$job"; done
  rm -rf "$WORK"
}
# kill_tree PID: PID, then every process below it. A function run in the background is a
# subshell whose commands are its children: killing the subshell alone left them running
# (a mutant's run of server_tls.sh stopped at its first failure left its TLS load client
# making handshakes for its whole 120 s: 109 CPU-s, past the end of the suite).
kill_tree() {
  local kids child
  kids=$(pgrep -P "$1" || true)
  kill "$1" 2>/dev/null || true
  for child in $kids; do kill_tree "$child"; done
}
trap cleanup EXIT

say() { printf '%s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  FAILS=$((FAILS + 1))
  # A mutant's run (scripts/mutants.sh) needs only its first failure: under a broken
  # build the checks after it mostly wait out their bounds. Only the test's own shell
  # stops (a subshell's exit would only change what it prints).
  if [[ ${IDGEN_TEST_FIRST_FAIL:-0} == 1 && $BASHPID == "$$" ]]; then exit 1; fi
}
# check NAME WANT GOT
check() {
  if [[ "$2" == "$3" ]]; then
    say "ok   $1"
  else
    fail "$1: want [$2] got [$3]"
  fi
}
# check_match NAME REGEX GOT
check_match() {
  if [[ "$3" =~ $2 ]]; then
    say "ok   $1"
  else
    fail "$1: [$3] does not match /$2/"
  fi
}
# refused CMD...: runs a command that must fail (a refusal at start, say); sets RC, OUT (its stderr),
# LINES (its line count) and MS (how long it took).
refused() {
  local start; start=$(date +%s%3N)
  RC=0
  "$@" >/dev/null 2>"$WORK/refused.err" || RC=$?
  MS=$(($(date +%s%3N) - start))
  OUT=$(cat "$WORK/refused.err")
  LINES=$(wc -l <"$WORK/refused.err")
}
# check_refusal NAME RC REGEX: the last refused's exit status, one line matching REGEX,
# and its time (printed, not asserted: tests never assert a timing).
check_refusal() {
  check "$1: exit $2" "$2" "$RC"
  check "$1: one line" 1 "$LINES"
  check_match "$1: says why" "$3" "$OUT"
  say "     ($MS ms) $OUT"
}
finish() {
  if ((FAILS > 0)); then
    say "$FAILS check(s) failed"
    exit 1
  fi
  say "all checks passed"
}

# launch_server NAME [serve options...]: starts `idgen serve` and reads its listeners back;
# sets HTTP (addr:port), HTTP_PORT, RESP_PORT, SERVER_PID, SERVER_LOG. Does not wait for
# readiness (start_server does).
launch_server() {
  local name=$1
  shift
  SERVER_LOG=$WORK/$name.log
  mkdir -p "$WORK/$name-state"
  # Emptied here, not by the child's redirection, which may come after the reads below:
  # a name used twice would read the last server's start line and port.
  : >"$SERVER_LOG"
  "$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --threads 2 \
    --state-dir "$WORK/$name-state" "$@" 2>"$SERVER_LOG" &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  local i
  for i in $(seq 1 100); do
    if grep -q ' info start ' "$SERVER_LOG" 2>/dev/null; then
      break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$SERVER_LOG" >&2
      fail "server $name did not start"
      return 1
    fi
    sleep 0.05
  done
  HTTP=$(grep -o ' http=[^ ]*' "$SERVER_LOG" | head -1 | cut -d= -f2)
  HTTP_PORT=${HTTP##*:}
  local resp
  resp=$(grep -o ' resp=[^ ]*' "$SERVER_LOG" | head -1 | cut -d= -f2)
  RESP_PORT=${resp##*:}
}

# start_server NAME [serve options...]: launch_server, then waits until the default
# (snowflake) generator's lease keeper holds a worker ID and the clock is past its HWM.
start_server() {
  launch_server "$@" || return 1
  local i
  for i in $(seq 1 200); do
    grep -q ' lease state=held' "$SERVER_LOG" && return 0
    sleep 0.05
  done
  fail "server $1 never became ready"
  cat "$SERVER_LOG" >&2
}

# serve_refused LOG [serve options...]: an `idgen serve` that must refuse to start; prints
# its exit status, or "started" once it holds a worker ID (it is stopped then: a server
# wrongly started fails the check at once, not after a time out), or "still running
# after 20 s" for one that neither starts nor exits.
serve_refused() {
  local log=$1 pid i rc=0
  shift
  : >"$log"
  "$IDGEN" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 "$@" 2>"$log" &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    grep -q ' lease state=held' "$log" && break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    if grep -q ' lease state=held' "$log"; then echo started; else echo "still running after 20 s"; fi
    kill -TERM "$pid"
    wait "$pid" || true
    return 0
  fi
  wait "$pid" || rc=$?
  echo "$rc"
}

# stop_server: SIGTERM, wait, and return the exit status.
stop_server() {
  local pid=${1:-$SERVER_PID} rc=0
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  return $rc
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# tried_reason MSG: 0 if MSG, a readiness error, says what the server met when it tried
# its backend: not empty, and not a segment's "no block from X yet" before its first
# fetch came back (under load that one can last seconds: it failed a clean run).
tried_reason() { [[ -n $1 && $1 != "segment: no block from "*" yet" ]]; }

# draw_ids URL N OUT: N requests /v1/ids?name=orders&count=2, one after another on one
# connection (one curl and one jq for all of them), the numbers served appended to OUT,
# one a line.
draw_ids() {
  local urls=() i
  for ((i = 0; i < $2; i++)); do urls+=("$1/v1/ids?name=orders&count=2"); done
  curl -s "${urls[@]}" | jq -r '.ids[]?' >>"$3"
}

# start_redis [redis-server options...]: Debian's redis-server on a free loopback port,
# no persistence, in WORK. Sets REDIS_PORT, REDIS_PID. A port found free can be taken
# before redis binds it: then it exits, and another port is tried.
start_redis() {
  local attempt i
  for attempt in 1 2 3 4 5; do
    REDIS_PORT=$((10000 + RANDOM % 22000)) # below the ephemeral range
    mkdir -p "$WORK/redis"
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
      --dir "$WORK/redis" --daemonize no --logfile "$WORK/redis/log" "$@" &
    REDIS_PID=$!
    SERVER_PIDS+=("$REDIS_PID")
    for i in $(seq 1 100); do
      kill -0 "$REDIS_PID" 2>/dev/null || break
      redis-cli -p "$REDIS_PORT" --no-auth-warning PING 2>/dev/null | grep -qE 'PONG|NOAUTH' &&
        return 0
      sleep 0.05
    done
    kill -KILL "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  done
  fail "redis-server did not start"
  return 1
}

# stop_redis: SIGTERM to the redis-server start_redis started, and wait for it.
stop_redis() {
  kill -TERM "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
}

# start_client_servers: for the client interop tests (tests/integration/clients_*.sh): one
# server with no token (OPEN_HTTP addr:port, OPEN_RESP port) and one with CLIENT_TOKEN
# (AUTH_HTTP, AUTH_RESP).
CLIENT_TOKEN=client-interop-token-0123
start_client_servers() {
  start_server open || return 1
  OPEN_HTTP=$HTTP OPEN_RESP=$RESP_PORT
  printf '%s\n' "$CLIENT_TOKEN" >"$WORK/client-token"
  OPEN_PID=$SERVER_PID
  start_server auth --auth-token-file "$WORK/client-token" || return 1
  AUTH_HTTP=$HTTP AUTH_RESP=$RESP_PORT AUTH_PID=$SERVER_PID
}
# stop_client_servers: both, by SIGTERM; fails if either does not exit 0.
stop_client_servers() {
  local rc=0
  stop_server "$OPEN_PID" || rc=1
  stop_server "$AUTH_PID" || rc=1
  return $rc
}

# node_clients: the npm packages of tests/clients/package-lock.json (node-redis, ioredis),
# installed with `npm ci` into BUILD_DIR/node-clients, with the test programs beside them
# (Node resolves imports from the importing file). Prints that directory; a second run
# with the same lockfile installs nothing.
node_clients() {
  local dir=$BUILD_DIR/node-clients src=$SOURCE_DIR/tests/clients
  mkdir -p "$dir"
  if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [[ ! -d $dir/node_modules ]]; then
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) || return 1
  fi
  cp "$src"/*.mjs "$dir/"
  printf '%s\n' "$dir"
}
