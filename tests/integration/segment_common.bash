# shellcheck shell=bash disable=SC2154 # backend_stop/backend_start come from the caller
# segment_common.bash: sourced by tests/integration/segment_*.sh. The scenarios every
# segment backend must pass against its real server, run by segment_load processes (a
# generator with its own fetcher thread, as the service runs it) whose histories
# `idgen check --integers` judges. The caller sets B (backend), DSN, and defines
# backend_stop and backend_start (the backend's server going away and coming back).
set -Eeuo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
source "$(dirname "${BASH_SOURCE[0]}")/history_common.bash"
IDGEN=${1:?usage: $0 /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
LOAD=$BUILD/segment_load
[[ -x $LOAD ]] || { echo "segment_load not built at $LOAD" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/idgen-segment-test.XXXXXX")
# The file backend claims each name host-wide per namespace: one of this run's own keeps
# other runs on the host (other tests, other checkouts) out of its names.
export IDGEN_NAMESPACE=${IDGEN_NAMESPACE:-segment-test-$$}
chmod 755 "$T" # PostgreSQL runs as its own user
load_pids=()
stop_servers() { :; } # the caller's: stops what it started

cleanup() {
  local p
  for p in "${load_pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  stop_servers || true
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.err; do [[ -f $f ]] && { echo "== $f" >&2; tail -5 "$f" >&2; }; done
  exit 1
}
ok() { echo "ok - $*"; }
now_ms() { date +%s%3N; }

seg() { "$IDGEN" segment "$1" --backend "$B" --dsn "$DSN" "${@:2}"; }

# load PROCESS NAME [segment_load options]: starts a load process in the background
# (history $T/PROCESS.log, stderr $T/PROCESS.err); sets LOAD_PID.
load() {
  local process=$1 name=$2
  shift 2
  "$LOAD" --backend "$B" --dsn "$DSN" --name "$name" --process "$process" \
    --out "$T/$process.log" "$@" 2>"$T/$process.err" &
  LOAD_PID=$!
  load_pids+=("$LOAD_PID")
}
stat_of() { sed -n "s/^SEGMENTLOAD.* $2=\([0-9]*\).*/\1/p" "$T/$1.err"; }
check_histories() { # files...: idgen check --integers passes
  "$IDGEN" check --integers "$@" >"$T/check.out" || fail "idgen check: $(cat "$T/check.out")"
}

# 1. Two processes sharing one name get disjoint numbers; so do two CLI runs.
scenario_two_processes() {
  seg init shared >/dev/null
  load p1 shared --count 40000 --step 300 --max-step 3000
  local a=$LOAD_PID
  load p2 shared --count 40000 --step 300 --max-step 3000 --batch 7
  local b=$LOAD_PID
  wait "$a" || fail "p1 failed"
  wait "$b" || fail "p2 failed"
  seg next -n 3000 --step 100 shared >"$T/cli1.txt" &
  local c=$!
  seg next -n 3000 --step 100 shared >"$T/cli2.txt" || fail "segment next failed"
  wait "$c" || fail "segment next failed"
  check_histories "$T/p1.log" "$T/p2.log"
  local all dup
  all=$( (numbers_of "$T/p1.log" "$T/p2.log"; cat "$T/cli1.txt" "$T/cli2.txt") | wc -l)
  dup=$( (numbers_of "$T/p1.log" "$T/p2.log"; cat "$T/cli1.txt" "$T/cli2.txt") | sort -n | uniq -d | wc -l)
  [[ $all -eq 86000 && $dup -eq 0 ]] || fail "two processes: $all numbers, $dup repeated"
  ok "two processes and two CLI runs sharing one name: 86000 numbers, none twice"
}

# 2. kill -9 in the middle of a block, then a restart: no number comes back. With one
# counter (all but mariadb), the restarted process starts above everything before it.
scenario_kill9() {
  local above=${1:-yes}
  seg init crash >/dev/null
  load k1 crash --step 100000 --pace-us 20
  wait_lines "$T/k1.log" 3000
  kill -KILL "$LOAD_PID"
  wait "$LOAD_PID" 2>/dev/null || true
  load k2 crash --count 5000 --step 1000
  wait "$LOAD_PID" || fail "k2 failed"
  check_histories "$T/k1.log" "$T/k2.log"
  local last first
  last=$(max_of "$T/k1.log")
  first=$(min_of "$T/k2.log")
  if [[ $above == yes ]]; then
    [[ $first -gt $last ]] || fail "after kill -9: k2 starts at $first, k1 reached $last"
  fi
  ok "kill -9 mid-block (k1 reached $last), restart: k2 from $first, no number twice"
}

# 3. The backend goes away under load: the buffered numbers are served, then a clear
# refusal (IDGEN_EBACKEND), and numbers again once it is back, by itself.
scenario_outage() {
  seg init outage >/dev/null
  # Blocks of 20000 at most 5000 a second: the buffer outlasts the stop by seconds.
  load o1 outage --step 20000 --pace-us 200 --retry-ms 200
  local pid=$LOAD_PID
  wait_lines "$T/o1.log" 25000 # the second block is in use, the third buffered
  backend_stop
  local stopped
  stopped=$(now_ms)
  wait_lines "$T/o1.log" 1 ' ERR '
  local served
  served=$(awk -v t="$stopped" '$3 == "ERR" { exit } $1 > t { n++ } END { print n + 0 }' "$T/o1.log")
  [[ $served -gt 0 ]] || fail "nothing served from the buffer after the backend stopped"
  awk '$3 == "ERR" && $4 != "IDGEN_EBACKEND" { bad = 1 } END { exit !bad }' "$T/o1.log" &&
    fail "refusals other than IDGEN_EBACKEND"
  backend_start
  local errs
  errs=$(grep -c ' ERR ' "$T/o1.log")
  for _ in $(seq 600); do
    awk '$3 == "ERR" { e = NR } END { exit !(e && NR > e) }' "$T/o1.log" && break
    sleep 0.1
  done
  awk '$3 == "ERR" { e = NR } END { exit !(e && NR > e) }' "$T/o1.log" ||
    fail "no number after the backend came back"
  kill -TERM "$pid"
  wait "$pid" || fail "o1 failed"
  check_histories "$T/o1.log"
  [[ $(stat_of o1 backend_errors) -gt 0 && $(stat_of o1 refused) -gt 0 ]] ||
    fail "counters: $(tail -1 "$T/o1.err")"
  ok "backend down: $served numbers served from the buffer, then $errs+ refusals (IDGEN_EBACKEND), then numbers again"
}

# A server restart between two fetches costs no refusal (PostgreSQL, MariaDB): the kept
# connection is found broken at the next fetch, which tries again at once on a new one.
# Blocks of 50000: the restart happens between the fetches of blocks 3 (at number 60000)
# and 4 (at 110000). The load is stopped (SIGSTOP) once block 3 is leased (block_leased,
# when the script defines it) and goes on after the restart: on a busy machine a restart
# may take longer than the numbers between two fetches.
scenario_restart_between_fetches() { # NAME, then the command that restarts the server
  local name=$1 i
  shift
  seg init "$name" >/dev/null
  load r1 "$name" --step 50000 --pace-us 100
  local pid=$LOAD_PID
  wait_lines "$T/r1.log" 65000
  if declare -F block_leased >/dev/null; then
    for ((i = 0; i < 300; i++)); do block_leased "$name" 150000 && break; sleep 0.1; done
    block_leased "$name" 150000 || fail "block 3 of '$name' never leased"
  fi
  kill -STOP "$pid"
  "$@" || fail "the restart failed: $*"
  kill -CONT "$pid"
  wait_lines "$T/r1.log" 115000
  kill -TERM "$pid"
  wait "$pid" || fail "r1 failed"
  check_histories "$T/r1.log"
  [[ $(stat_of r1 backend_errors) -eq 0 && $(stat_of r1 refused) -eq 0 ]] ||
    fail "a restart between fetches: $(tail -1 "$T/r1.err")"
}

# 4. The step adapts: blocks used up in far less than the period double it, to max_step.
scenario_step() {
  seg init adapt >/dev/null
  load s1 adapt --count 30000 --step 100 --max-step 6400
  wait "$LOAD_PID" || fail "s1 failed"
  check_histories "$T/s1.log"
  local step blocks
  step=$(stat_of s1 step) blocks=$(stat_of s1 blocks)
  [[ $step -eq 6400 && $blocks -lt 20 ]] || fail "step $step after $blocks blocks, want 6400"
  ok "step doubled from 100 to $step: $blocks blocks for 30000 numbers"
}

# 5. Bad configuration: one line and exit 2; an uninitialised name: one line and exit 1.
scenario_bad_config() {
  local bad_dsn=$1 status
  status=0
  "$IDGEN" segment next --backend "$B" --dsn "$bad_dsn" x >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 2 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] ||
    fail "bad DSN: exit $status, $(cat "$T/err")"
  status=0
  seg next never-made >"$T/out" 2>"$T/err" || status=$?
  [[ $status -eq 1 && ! -s $T/out && $(wc -l <"$T/err") -eq 1 ]] && grep -q 'init' "$T/err" ||
    fail "uninitialised name: exit $status, $(cat "$T/err")"
  status=0
  seg next -n 0 x 2>"$T/err" || status=$?
  [[ $status -eq 2 && $(wc -l <"$T/err") -eq 1 ]] || fail "-n 0: exit $status"
  status=0
  seg init 'bad/name' 2>"$T/err" || status=$?
  [[ $status -eq 2 && $(wc -l <"$T/err") -eq 1 ]] || fail "bad name: exit $status"
  status=0
  "$LOAD" --backend "$B" --dsn "$DSN" --name x --process p --out "$T/x.log" --step 10 \
    --max-step 5 2>"$T/err" || status=$?
  [[ $status -eq 2 ]] && grep -q 'max_step 5 is outside step (10)' "$T/err" ||
    fail "max_step below step: exit $status, $(cat "$T/err")"
  local first
  first=$(seg init again)
  status=0
  seg init again >"$T/out" 2>"$T/err" || status=$?
  [[ $first == "created 'again' in $B" && $status -eq 1 && ! -s $T/out &&
    $(wc -l <"$T/err") -eq 1 ]] && grep -q "'again' already exists in $B: left as it was" "$T/err" ||
    fail "init twice: '$first', then exit $status: $(cat "$T/err")"
  ok "bad DSN, uninitialised name, bad count, bad name, bad step: one line each; a second init is refused"
}

# segment init --start-after N: a sequence that takes over from numbers 1..N in use
# starts above them (on MariaDB: the first of the server's offset above N), in init's
# own step, so that no crash leaves it at 1 (docs/adopt.md). N lies above the MariaDB
# table's counter, which all its names share.
scenario_start_after() {
  local out first n=1000000000
  out=$(seg init --start-after $n taken)
  [[ $out == "created 'taken' in $B, its numbers above $n" ]] || fail "init --start-after: $out"
  first=$(seg next -n 3 taken | head -1)
  [[ $first -gt $n && $first -le $((n + 2)) ]] || fail "--start-after $n: first number $first"
  ok "init --start-after $n: first number $first"
}
