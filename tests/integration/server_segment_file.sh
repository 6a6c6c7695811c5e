#!/usr/bin/env bash
# The segment file backend never starts a sequence again at 1 by itself (issue 23): a
# second `idgen serve` of the same name from another state directory is refused, naming
# the first one's; a removed or emptied file is refused at restart, in a state directory
# and in the `path:` form; `idgen segment init` refuses over an existing sequence, and is
# the one way to make a lost one again (--start-after N at or above the highest its
# record names, or --force: issue 35). A first start in a fresh state directory still
# makes the file, and two servers of one state directory still share it.
# Usage: server_segment_file.sh /path/to/idgen
source "$(dirname "$0")/server_common.bash"
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done

printf 'generators:\n  default: {kind: uuid7}\n  orders: {kind: segment}\n' >"$WORK/g.yaml"

# serve_orders NAME CONFIG [serve options]: an `idgen serve` with state dir
# $WORK/NAME-state; sets GOT to "ready" once 'orders' hands out numbers (the server keeps
# running: SERVER_PID), or to its exit status once it has exited.
serve_orders() {
  local name=$1 config=$2 i
  shift 2
  GOT="neither ready nor refused after 10 s"
  SERVER_LOG=$WORK/$name.log
  mkdir -p "$WORK/$name-state"
  : >"$SERVER_LOG"
  "$IDGEN" serve --http 127.0.0.1:0 --resp "" --state-dir "$WORK/$name-state" \
    --config "$config" "$@" 2>"$SERVER_LOG" &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  for ((i = 0; i < 200; i++)); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      GOT=0
      wait "$SERVER_PID" || GOT=$?
      return
    fi
    HTTP=$(grep -o ' http=[^ ]*' "$SERVER_LOG" | head -1 | cut -d= -f2 || true)
    if [[ -n $HTTP &&
      $(http_code "http://$HTTP/readyz?name=orders") == 200 ]]; then
      GOT=ready
      return
    fi
    sleep 0.05
  done
}
# take N FILE: N numbers of 'orders' from the server at $HTTP, appended to FILE.
take() {
  local n=$1 out=$2
  while ((n > 0)); do
    local c=$((n < 1000 ? n : 1000))
    curl -s "http://$HTTP/v1/ids?name=orders&count=$c" | jq -r '.ids[]' >>"$out"
    n=$((n - c))
  done
}
error_line() { grep ' error ' "$SERVER_LOG" | tail -1; }
errors() { grep -c ' error ' "$SERVER_LOG" || true; }

# --- 1. A fresh state directory: the first start makes the file ---------------------------
serve_orders a "$WORK/g.yaml"
check "first start in a fresh state dir" ready "$GOT"
A_PID=$SERVER_PID
A_HTTP=$HTTP
take 3 "$WORK/first.txt"
check "its first numbers" "1 2 3" "$(tr '\n' ' ' <"$WORK/first.txt" | sed 's/ $//')"
check "the directory records that it made 'orders'" yes \
  "$([[ -s $WORK/a-state/segment-orders.created ]] && echo yes || echo no)"

# --- 2. The same name from another state directory: refused, naming the first's -----------
serve_orders b "$WORK/g.yaml"
got=$GOT
if [[ $got == ready ]]; then
  # Today's failure, measured: both count from 1.
  B_PID=$SERVER_PID
  take 10000 "$WORK/b.txt"
  HTTP=$A_HTTP take 9997 "$WORK/first.txt"
  all=$(cat "$WORK/first.txt" "$WORK/b.txt" | wc -l)
  distinct=$(cat "$WORK/first.txt" "$WORK/b.txt" | sort -un | wc -l)
  fail "a second server from another state dir started: $all numbers, only $distinct distinct"
  stop_server "$B_PID" || true
else
  check "a second server from another state dir: refused (exit 1)" 1 "$got"
  check "  with one error line" 1 "$(errors)"
  check_match "  naming the other's state dir" \
    "segment 'orders' .* is served on this host by pid $A_PID from state dir $WORK/a-state; this process's file is $WORK/b-state/segment-orders" \
    "$(error_line)"
  check "  and no file made in its own" no \
    "$([[ -e $WORK/b-state/segment-orders ]] && echo yes || echo no)"
fi
# Another namespace is another claim: two sequences of one name, on purpose.
IDGEN_NAMESPACE=$IDGEN_NAMESPACE-other serve_orders c "$WORK/g.yaml"
check "the same name in another namespace: starts" ready "$GOT"
stop_server || fail "server c did not stop cleanly"
# Two servers of one state directory share its file, as before.
serve_orders a2 "$WORK/g.yaml" --state-dir "$WORK/a-state"
check "a second server of the same state dir: starts" ready "$GOT"
take 2000 "$WORK/a2.txt"
HTTP=$A_HTTP take 2000 "$WORK/first.txt"
check "two servers of one state dir: numbers, none twice" "4003 0" \
  "$(cat "$WORK/first.txt" "$WORK/a2.txt" | wc -l) $(cat "$WORK/first.txt" "$WORK/a2.txt" | sort -n | uniq -d | wc -l)"
stop_server || fail "server a2 did not stop cleanly"
HTTP=$A_HTTP take $((31000 - $(wc -l <"$WORK/first.txt") - $(wc -l <"$WORK/a2.txt"))) "$WORK/first.txt"
stop_server "$A_PID" || fail "server a did not stop cleanly"
last=$(cat "$WORK/first.txt" "$WORK/a2.txt" | sort -n | tail -1)

# --- 3. The file removed, or emptied, before a restart: refused, never 1 ------------------
restart_after() { # LABEL: restarts server a on its state dir; never hands out a number at or below $last
  local label=$1 got
  serve_orders a "$WORK/g.yaml"
  got=$GOT
  if [[ $got == ready ]]; then
    : >"$WORK/again.txt"
    take 1 "$WORK/again.txt"
    fail "$label: restarted and handed out $(cat "$WORK/again.txt"), where the last was $last"
    stop_server || true
    return
  fi
  check "$label: the restart is refused (exit 1)" 1 "$got"
  check "  with one error line" 1 "$(errors)"
  check_match "  which says why" "$2" "$(error_line)"
}
cp "$WORK/a-state/segment-orders" "$WORK/saved"
rm "$WORK/a-state/segment-orders"
restart_after "segment-orders removed" "file $WORK/a-state/segment-orders is gone, but this directory made it"
check "  and it is not made again" no "$([[ -e $WORK/a-state/segment-orders ]] && echo yes || echo no)"
: >"$WORK/a-state/segment-orders"
restart_after "segment-orders emptied" "file $WORK/a-state/segment-orders is empty: its max is lost"
# Put back as it was: it continues above the last number.
cp "$WORK/saved" "$WORK/a-state/segment-orders"
serve_orders a "$WORK/g.yaml"
check "the file put back: starts" ready "$GOT"
: >"$WORK/again.txt"
take 1 "$WORK/again.txt"
check "  above the last number ($last)" yes "$([[ $(cat "$WORK/again.txt") -gt $last ]] && echo yes || echo no)"
stop_server || fail "server a did not stop cleanly"

# --- 4. idgen segment init: refuses over a sequence and below its record, --force --------
seg_init() { IDGEN_STATE_DIR=$WORK/a-state "$IDGEN" segment init "$@"; }
before=$(cat "$WORK/a-state/segment-orders")
rc=0
seg_init orders >"$WORK/init.out" 2>"$WORK/init.err" || rc=$?
check "init over an existing sequence: exit 1, one line" "1 1" "$rc $(wc -l <"$WORK/init.err")"
check_match "  which says so" "'orders' already exists" "$(cat "$WORK/init.err")"
check "  and leaves the file as it was" "$before" "$(cat "$WORK/a-state/segment-orders")"
rm "$WORK/a-state/segment-orders"
rc=0
seg_init orders >"$WORK/init.out" 2>&1 || rc=$?
check "init after the file was lost: below the record's highest: refused" 1 "$rc"
check_match "  naming it" "says $((10#${before%% *})) was handed out: --start-after 0 is below it" \
  "$(cat "$WORK/init.out")"
rc=0
seg_init --start-after 1 --force orders >"$WORK/init.out" 2>&1 || rc=$?
check "init --force: makes it again (the operator's choice)" 0 "$rc"
check "  at its N" "00000000000000000001 orders" "$(cat "$WORK/a-state/segment-orders")"

# --- 5. A file the generator names is never made at start: a dsn directory, a path: -------
mkdir -p "$WORK/named-dir"
printf 'generators:\n  default: {kind: uuid7}\n  orders: {kind: segment, dsn: "%s/"}\n' \
  "$WORK/named-dir" >"$WORK/d.yaml"
serve_orders d "$WORK/d.yaml"
check "dsn: a directory without the file: refused (exit 1)" 1 "$GOT"
check "  and the file not made" no \
  "$([[ -e $WORK/named-dir/segment-orders ]] && echo yes || echo no)"
printf 'generators:\n  default: {kind: uuid7}\n  orders: {kind: segment, path: "%s"}\n' \
  "$WORK/p.seq" >"$WORK/p.yaml"
serve_orders p "$WORK/p.yaml"
got=$GOT
check "path: a missing file at the first start: refused (exit 1)" 1 "$got"
check_match "  naming it" "file $WORK/p.seq does not exist: run 'idgen segment init' first" \
  "$(error_line)"
check "  and not made" no "$([[ -e $WORK/p.seq ]] && echo yes || echo no)"
"$IDGEN" segment init --dsn "$WORK/p.seq" orders >/dev/null || fail "init of the path: file"
serve_orders p "$WORK/p.yaml"
check "path: after init: starts" ready "$GOT"
: >"$WORK/p.txt"
take 500 "$WORK/p.txt"
stop_server || fail "server p did not stop cleanly"
rm "$WORK/p.seq"
serve_orders p "$WORK/p.yaml"
got=$GOT
if [[ $got == ready ]]; then
  : >"$WORK/again.txt"
  take 1 "$WORK/again.txt"
  fail "path: removed, restarted and handed out $(cat "$WORK/again.txt") (the last was 500)"
  stop_server || true
else
  check "path: the file removed: the restart is refused (exit 1)" 1 "$got"
  check "  and the file not made again" no "$([[ -e $WORK/p.seq ]] && echo yes || echo no)"
fi
finish
