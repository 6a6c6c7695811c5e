#!/usr/bin/env bash
# server_reload.sh: SIGHUP reloads --config (issue 29, docs/server.md "Reload"). Parts:
# load: HTTP and RESP clients (reload_load.py) run on connections opened once while 20
#   SIGHUPs alternate two formats of a segment and a snowflake generator: every reply is
#   an ID in one of the two formats, no error, no connection opened again, the worker
#   IDs unchanged, and after each reload the format just written is served.
# refused: a new generator, a layout, a DSN changed: one warn line each that names the
#   generator and the setting and says restart; nothing changes.
# broken: a file that is no YAML, a format that does not compile: everything kept, one
#   line says why.
# mixed: one allowed and one refused change: nothing applies (all or nothing); the
#   allowed one alone then applies.
# many: 200 reloads under load, every one applied, no error (the old formats are freed
#   as the threads pass quiescent points: server/grace.h); the server's RSS printed.
# tokens: the tokens: section read again with the file: a token added, a token's
#   generators widened and its rate changed alone (the burst kept) take effect at once;
#   the section removed (clients would need no token) is refused and changes nothing.
# history: issue 35 item 6 across restarts: a restart with a format whose texts can be
#   those of any format served before (not only the last) is refused, exit 1, one error
#   line naming both; a distinct prefix is accepted and `decode --generator` reads old
#   and new texts; a reload is checked against the whole history too; a corrupt or cut
#   history refuses the start; a removed one starts a new history (docs/segment.md).
# Usage: server_reload.sh /path/to/idgen [PART...]
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts load refused broken mixed many tokens history -- "${@:2}"
for tool in curl jq ss; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)" >&2; exit 1; }
done
LOAD=$SOURCE_DIR/tests/integration/reload_load.py
CONF=$WORK/idgen.yaml

# write_config ORDERS_PREFIX CHARGES_PREFIX [EXTRA YAML under generators:]
write_config() {
  cat >"$CONF.new" <<YAML
generators:
  orders:
    kind: segment
    period: day
    format: "$1-{date:%Y%m%d}-{seq:06}"
  charges:
    kind: snowflake
    format: "$2{base62}"
${3:-}
YAML
  mv "$CONF.new" "$CONF"
}
# The two formats' IDs, as the load clients check them.
ORD_A='ORD-[0-9]{8}-[0-9]{6}' ORD_B='INV-[0-9]{8}-[0-9]{6}'
CH_A='ch_[0-9A-Za-z]{11}' CH_B='chg_[0-9A-Za-z]{11}'

id_of() { curl -s "http://$HTTP/v1/id?name=$1" | jq -r .id; }
workers() { curl -s "http://$HTTP/v1/info" | jq -c '.generators | map_values(.worker_id)'; }
summaries() { grep -c ' reload [0-9]* changed, [0-9]* refused' "$SERVER_LOG" || true; }
# hup: SIGHUP, then waits for the reload's summary line (or its warn line when the file
# fails to read); prints the line. The server's log is read on from one descriptor (the
# lines before the signal skipped), with no process per look: a grep and a tail every
# 20 ms made the 200 reloads of 'many' take 46 s and 68 CPU-s beside the load (25 and 31
# this way).
hup() {
  local line="" part="" i fd
  exec {fd}<"$SERVER_LOG"
  while IFS= read -r line <&"$fd"; do :; done
  kill -HUP "$SERVER_PID"
  for ((i = 0; i < 500; i++)); do
    while true; do
      if IFS= read -r line <&"$fd"; then
        line=$part$line part=""
      else
        part+=$line # a line the server has not finished writing
        break
      fi
      if [[ $line == *" reload "* && ($line == *" changed, "* || $line == *"kept the configuration"*) ]]; then
        exec {fd}<&-
        printf '%s\n' "$line"
        return 0
      fi
    done
    sleep 0.02
  done
  exec {fd}<&-
  echo "no reload line"
}
wait_ready() { # NAME
  local i
  for i in $(seq 1 200); do
    [[ $(http_code "http://$HTTP/readyz?name=$1") == 200 ]] && return 0
    sleep 0.05
  done
  fail "generator $1 never ready"
}
start() { # NAME
  write_config ORD ch_
  start_server "$1" --config "$CONF"
  wait_ready orders
  wait_ready charges
}
# load_start / load_stop NAME: the clients, their counts checked and printed.
load_start() {
  rm -f "$WORK/stop"
  /usr/bin/python3 "$LOAD" 127.0.0.1 "$HTTP_PORT" "$RESP_PORT" "$WORK/stop" \
    "orders=$ORD_A|$ORD_B" "charges=$CH_A|$CH_B" --http 2 --resp 2 --resp-id orders \
    >"$WORK/load.json" 2>"$WORK/load.err" &
  LOAD_PID=$!
  local i
  for i in $(seq 1 200); do # until every client connected
    [[ -s $WORK/load.err ]] && break
    ss -Htn state established "( dport = :$HTTP_PORT or dport = :$RESP_PORT )" 2>/dev/null |
      grep -q . && break
    sleep 0.02
  done
}
load_stop() { # NAME
  touch "$WORK/stop"
  wait "$LOAD_PID" || fail "$1: the load clients failed: $(cat "$WORK/load.err")"
  local j
  j=$(cat "$WORK/load.json")
  say "$1: load: $j"
  check "$1: no error or drop" 0 "$(jq .errors <<<"$j")"
  check "$1: each client kept its one connection" 4 "$(jq .connections <<<"$j")"
  check_match "$1: HTTP requests made" '^[1-9][0-9]*$' "$(jq .http_requests <<<"$j")"
  check_match "$1: RESP requests made" '^[1-9][0-9]*$' "$(jq .resp_requests <<<"$j")"
}

if part load; then
  start load
  w0=$(workers)
  check_match "load: worker IDs held" '"default":[0-9]+.*"charges":[0-9]+' "$w0"
  load_start
  for i in $(seq 1 20); do
    if ((i % 2)); then write_config INV chg_; o=$ORD_B c=$CH_B; else write_config ORD ch_; o=$ORD_A c=$CH_A; fi
    line=$(hup)
    [[ $line =~ \ reload\ 2\ changed,\ 0\ refused:\ applied$ ]] || fail "load: reload $i: $line"
    got_o=$(id_of orders) got_c=$(id_of charges)
    [[ $got_o =~ ^$o$ && $got_c =~ ^$c$ ]] ||
      fail "load: after reload $i: orders $got_o (want /$o/), charges $got_c (want /$c/)"
  done
  check "load: 20 reloads applied" 20 "$(grep -c ' reload 2 changed, 0 refused: applied' "$SERVER_LOG")"
  check_match "load: after the last, orders serves the new format" "^$ORD_A$" "$(id_of orders)"
  check_match "load: ... and charges" "^$CH_A$" "$(id_of charges)"
  load_stop load
  check "load: worker IDs unchanged" "$w0" "$(workers)"
  check "load: one lease won per snowflake generator" 2 "$(grep -c ' lease state=held' "$SERVER_LOG")"
  stop_server
fi

# refuse NAME LABEL SETTING-REGEX: the reload of the file written is refused, the
# setting's line says restart, and nothing changed.
refuse() {
  local line
  line=$(hup)
  check_match "refused: $1: the summary" ' warn reload 0 changed, 1 refused: nothing applied' "$line"
  check_match "refused: $1: the line names it and says restart" \
    "warn reload generator '$2': $3 .*needs a restart" "$(grep "generator '$2'" "$SERVER_LOG" | tail -1)"
  check_match "refused: $1: orders keeps its format" "^$ORD_A$" "$(id_of orders)"
  check_match "refused: $1: charges keeps its format" "^$CH_A$" "$(id_of charges)"
  check "refused: $1: worker IDs unchanged" "$w0" "$(workers)"
  check "refused: $1: the generators unchanged" '["charges","default","orders"]' \
    "$(curl -s "http://$HTTP/v1/info" | jq -c '.generators | keys')"
}

if part refused; then
  start refused
  w0=$(workers)
  write_config ORD ch_ "  invoices: {kind: ulid}"
  refuse "a new generator" invoices "the generator added"
  check "refused: a new generator: not served" 404 \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/v1/id?name=invoices")"
  write_config ORD ch_
  sed -i 's/kind: snowflake/kind: snowflake\n    layout: sonyflake/' "$CONF"
  refuse "a layout" charges layout
  check "refused: a layout: charges keeps snowflake" snowflake \
    "$(curl -s "http://$HTTP/v1/info" | jq -r .generators.charges.layout.name)"
  write_config ORD ch_
  mkdir -p "$WORK/elsewhere"
  sed -i "s|kind: segment|kind: segment\n    dsn: $WORK/elsewhere/|" "$CONF"
  refuse "a DSN" orders dsn
  write_config ORD ch_
  sed -i 's/period: day/period: month/' "$CONF"
  refuse "a period" orders period
  stop_server
fi

if part broken; then
  start broken
  printf 'generators:\n  orders: [\n' >"$CONF"
  line=$(hup)
  check_match "broken: no YAML: kept, says why" \
    "warn reload kept the configuration in force: $CONF:[0-9]+:[0-9]+: YAML" "$line"
  check_match "broken: ... orders serves as before" "^$ORD_A$" "$(id_of orders)"
  write_config "ORD-{nosuch}" chg_
  line=$(hup)
  check_match "broken: a bad format: kept, says why" \
    "warn reload kept the configuration in force: $CONF:[0-9]+: generators\\.orders\\.format" "$line"
  check_match "broken: ... charges keeps its format (no half reload)" "^$CH_A$" "$(id_of charges)"
  check "broken: no summary line for a file that did not read" 0 "$(summaries)"
  # Issue 35 item 6: ORD-2026337-... (%Y%j then a literal 0) and ORD-20261203-...
  # (%Y%m%d) are the same length with '-' at the same place: one text, two numbers.
  write_config ORD ch_
  sed -i 's/format: "ORD-{date:%Y%m%d}-{seq:06}"/format: "ORD-{date:%Y%j}0-{seq:06}"/' "$CONF"
  line=$(hup)
  check_match "broken: a format whose texts can be the old one's: nothing applied" \
    ' warn reload .*nothing applied' "$line"
  check_match "broken: ... the line names both formats" \
    "warn reload generator 'orders': format 'ORD-\\{date:%Y%j\\}0-\\{seq:06\\}' refused: its texts can be those of 'ORD-\\{date:%Y%m%d\\}-\\{seq:06\\}'" \
    "$(grep "generator 'orders'" "$SERVER_LOG" | tail -1)"
  check_match "broken: ... orders keeps its format" "^$ORD_A$" "$(id_of orders)"
  rm "$CONF"
  line=$(hup)
  check_match "broken: a missing file: kept" "kept the configuration in force: .*No such file" "$line"
  check_match "broken: ... orders serves as before" "^$ORD_A$" "$(id_of orders)"
  stop_server
fi

if part mixed; then
  start mixed
  w0=$(workers)
  write_config INV chg_
  sed -i 's/kind: snowflake/kind: snowflake\n    layout: sonyflake/' "$CONF"
  line=$(hup)
  check_match "mixed: the summary: nothing applied" ' warn reload 2 changed, 1 refused: nothing applied' "$line"
  check_match "mixed: the refused line" "warn reload generator 'charges': layout changed: needs a restart" \
    "$(grep "generator 'charges'" "$SERVER_LOG" | tail -1)"
  check_match "mixed: orders keeps its format (all or nothing)" "^$ORD_A$" "$(id_of orders)"
  check_match "mixed: charges keeps its format" "^$CH_A$" "$(id_of charges)"
  write_config INV chg_
  line=$(hup)
  check_match "mixed: without the refused one: applied" ' info reload 2 changed, 0 refused: applied' "$line"
  check_match "mixed: ... orders serves the new format" "^$ORD_B$" "$(id_of orders)"
  check_match "mixed: ... charges too" "^$CH_B$" "$(id_of charges)"
  check "mixed: worker IDs unchanged" "$w0" "$(workers)"
  stop_server
fi

if part many; then
  start many
  w0=$(workers)
  rss0=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status")
  load_start
  for i in $(seq 1 200); do
    if ((i % 2)); then write_config INV chg_; else write_config ORD ch_; fi
    line=$(hup)
    [[ $line =~ \ 2\ changed,\ 0\ refused:\ applied$ ]] || fail "many: reload $i: $line"
  done
  load_stop many
  rss1=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status")
  say "many: RSS ${rss0} kB before 200 reloads, ${rss1} kB after"
  check "many: 200 reloads applied" 200 "$(grep -c ' reload 2 changed, 0 refused: applied' "$SERVER_LOG")"
  check "many: worker IDs unchanged" "$w0" "$(workers)"
  stop_server
fi

if part tokens; then
  A=tok-team-a-0123456789ab B=tok-team-b-0123456789ab
  printf '%s\n' "$A" >"$WORK/a.token"
  printf '%s\n' "$B" >"$WORK/b.token"
  chmod 600 "$WORK/a.token" "$WORK/b.token"
  tokens_v1="tokens:
  team-a: {file: $WORK/a.token, generators: [orders], rate: 1, burst: 5}"
  tokens_v2="tokens:
  team-a: {file: $WORK/a.token, generators: [orders, charges], rate: 100000, burst: 5}
  team-b: {file: $WORK/b.token, generators: [charges]}"
  as() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "http://$HTTP$2"; }
  # oks TOKEN N: how many of N requests for one ID of orders got 200
  oks() { local i n=0; for i in $(seq 1 "$2"); do [[ $(as "$1" /v1/id?name=orders) == 200 ]] && n=$((n + 1)); done; echo "$n"; }
  tokens_loaded() { grep -c 'tokens_reload .* loaded from the new configuration' "$SERVER_LOG" || true; }
  write_config ORD ch_ "$tokens_v1"
  start_server tokens --config "$CONF"
  wait_ready orders
  check "tokens: team-a takes its burst" 200 "$(as "$A" '/v1/ids?name=orders&count=5')"
  check "tokens: ... then is over its rate of 1/s" 429 "$(as "$A" /v1/id?name=orders)"
  check "tokens: team-a may not use charges" 403 "$(as "$A" /v1/id?name=charges)"
  check "tokens: team-b is unknown" 401 "$(as "$B" /v1/id?name=charges)"
  write_config ORD ch_ "$tokens_v2"
  loaded=$(tokens_loaded)
  check_match "tokens: the reload applies" ' info reload 0 changed, 0 refused: applied' "$(hup)"
  for i in $(seq 1 100); do (($(tokens_loaded) > loaded)) && break; sleep 0.05; done
  check_match "tokens: the tokens come from the file" \
    'info tokens_reload 2 token\(s\) loaded from the new configuration' "$(grep tokens_reload "$SERVER_LOG" | tail -1)"
  # At 1/s, 20 requests in a row would get one or two through; at 100,000/s with the
  # same burst, every one (a curl takes far longer than 10 us).
  n=$(oks "$A" 20)
  say "tokens: team-a after its rate went from 1/s to 100,000/s: $n of 20 requests issued"
  ((n >= 15)) || fail "tokens: team-a's new rate is not in force: $n of 20 issued"
  check "tokens: team-a's new generator" 200 "$(as "$A" /v1/id?name=charges)"
  check "tokens: team-b, added" 200 "$(as "$B" /v1/id?name=charges)"
  check "tokens: team-b keeps to its generators" 403 "$(as "$B" /v1/id?name=orders)"
  write_config ORD ch_
  loaded=$(tokens_loaded)
  check_match "tokens: the section removed: refused" ' warn reload 0 changed, 1 refused: nothing applied' "$(hup)"
  check_match "tokens: ... the line says restart" 'warn reload tokens: removed .*needs a restart' \
    "$(grep 'reload tokens:' "$SERVER_LOG" | tail -1)"
  sleep 0.3
  check "tokens: ... the tokens were not taken from it" "$loaded" "$(tokens_loaded)"
  check "tokens: ... a request without a token still refused" 401 "$(as '' /v1/id?name=orders)"
  check "tokens: ... team-b still in force" 200 "$(as "$B" /v1/id?name=charges)"
  stop_server
fi
if part history; then
  HC=$WORK/history.yaml HS=$WORK/history-state
  seg_config() { # FORMAT [DIGITS]
    printf 'generators:\n  orders:\n    kind: segment\n    period: day\n    format: "%s"\n' "$1" >"$HC"
    [[ -z ${2:-} ]] || printf '    digits: %s\n' "$2" >>"$HC"
  }
  hstart() { seg_config "$@"; start_server history --config "$HC"; wait_ready orders; }
  # hrefused NAME FORMAT [DIGITS]: the start is refused; prints its status and error lines.
  hrefused() {
    seg_config "${@:2}"
    local rc
    rc=$(serve_refused "$WORK/$1.log" --config "$HC" --state-dir "$HS")
    echo "$rc $(grep -c ' error ' "$WORK/$1.log") $(grep ' error ' "$WORK/$1.log" | head -1)"
  }
  A='X{date:%Y%j}{seq:07}' B='X{date:%Y%m%d}{seq:06}' C='Y{date:%Y%m%d}{seq:06}'
  hstart "$A"
  a1=$(id_of orders)
  check_match "history: A serves" '^X[0-9]{14}$' "$a1"
  stop_server
  # (a) the report's change, by a restart.
  r=$(hrefused history-a "$B")
  check_match "history: a restart with B (coinciding with A) is refused, exit 1, one line" \
    "^1 1 .* error start generator 'orders': format 'X\\{date:%Y%m%d\\}\\{seq:06\\}' refused: its texts can be those of 'X\\{date:%Y%j\\}\\{seq:07\\}'" "$r"
  # A digits change under A's template: the same text for another number.
  r=$(hrefused history-digits "$A" 5)
  check_match "history: A with other digits is refused" "^1 1 .*format 'X\\{date:%Y%j\\}\\{seq:07\\}' refused" "$r"
  # (b) a distinct prefix: accepted, and decode reads both.
  hstart "$C"
  c1=$(id_of orders)
  check_match "history: C serves" '^Y[0-9]{14}$' "$c1"
  stop_server
  dec() { IDGEN_STATE_DIR=$HS "$IDGEN" decode --generator orders --config "$HC" --json "$1" | jq -r .number; }
  check "history: decode reads A's text with A" "$((10#${a1:8}))" "$(dec "$a1")"
  check "history: decode reads C's text with C" "$((10#${c1:9}))" "$(dec "$c1")"
  check "history: the file holds A then C" "day 6 $A|day 6 $C" "$(tail -n +2 "$HS/formats-orders" | paste -sd'|')"
  # (c) A' coincides with A only (C has Y at byte 0): refused at a restart ...
  A2='X{date:%Y%m%d}0{seq:05}'
  r=$(hrefused history-c "$A2" 5)
  check_match "history: A' (coinciding with A only) is refused at a restart" \
    "^1 1 .*format 'X\\{date:%Y%m%d\\}0\\{seq:05\\}' refused: its texts can be those of 'X\\{date:%Y%j\\}\\{seq:07\\}'" "$r"
  # ... and at a reload while C is in force.
  hstart "$C"
  seg_config "X{date:%Y%m%d}{seq:06}"
  line=$(hup)
  check_match "history: a reload to B while C serves (B coincides with A only): nothing applied" \
    ' warn reload .*nothing applied' "$line"
  check_match "history: ... the line names A" "format 'X\\{date:%Y%m%d\\}\\{seq:06\\}' refused: its texts can be those of 'X\\{date:%Y%j\\}\\{seq:07\\}'" \
    "$(grep "generator 'orders'" "$SERVER_LOG" | tail -1)"
  check_match "history: ... C still serves" '^Y[0-9]{14}$' "$(id_of orders)"
  stop_server
  # (d) a corrupt history, a cut one: the start refused; a removed one: a new history.
  cp "$HS/formats-orders" "$WORK/formats.kept"
  printf 'garbage\n' >"$HS/formats-orders"
  r=$(hrefused history-corrupt "$C")
  check_match "history: a corrupt file refuses the start, one line" "^1 1 .*format history $HS/formats-orders: line 1: not" "$r"
  head -c 40 "$WORK/formats.kept" >"$HS/formats-orders"
  r=$(hrefused history-cut "$C")
  check_match "history: a cut file refuses the start" "^1 1 .*formats-orders: line 2: no end of line" "$r"
  # A history edited to hold two coinciding formats: decode refuses, never guesses.
  printf '%sday 6 %s\nday 6 %s\n' "$(head -1 "$WORK/formats.kept")
" "$A" "$B" >"$HS/formats-orders"
  rc=0 out=$(IDGEN_STATE_DIR=$HS "$IDGEN" decode --generator orders --config "$HC" X20260210000001 2>&1) || rc=$?
  check_match "history: decode of a text two formats read as two numbers: exit 1, ambiguous" \
    "^1 idgen decode: 'X20260210000001' is ambiguous: formats 'X\\{date:%Y%j\\}\\{seq:07\\}' and 'X\\{date:%Y%m%d\\}\\{seq:06\\}'" "$rc $out"
  rm "$HS/formats-orders"
  hstart "$B"
  check_match "history: a removed file: a new history, B recorded" \
    "info segment_format generator=orders recorded format 'X\\{date:%Y%m%d\\}\\{seq:06\\}'" "$(grep segment_format "$SERVER_LOG")"
  stop_server
  check "history: ... the new file holds B alone" "day 6 $B" "$(tail -n +2 "$HS/formats-orders")"
fi

finish
