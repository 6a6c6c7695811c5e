#!/usr/bin/env bash
# idgen adopt / idgen_adopt() (docs/adopt.md) on a real server: a BIGSERIAL table with
# rows switched to idgen_next() while four clients insert, one of them holding a row it
# inserted with a sequence number before the switch and committing after it: no unique
# violation, every insert lands, the first new ID is above the old maximum, the old
# sequence is kept and going back works. An identity column GENERATED ALWAYS under the
# same load, with its sequence made again under its name. Refusals that leave the table
# as it was: not bigint, no sequence, a sequence value above max(column) not yet used, a
# row above the generator (also one committed while adopt waits), the lock not had in
# time. Then `segment init --from-sequence` and
# `--start-after`: the segment's first number is above the numbers in use.
# Usage: tests/pg/adopt.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"

start_cluster a "idgen.lease=static" "idgen.worker_id=5"
sql a "CREATE EXTENSION idgen"
wait_state a held
DSN="host=127.0.0.1 port=$(port_of a) user=postgres dbname=postgres"

# default_of TABLE COLUMN: the column's default expression.
default_of() {
  sql a "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a
         ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE d.adrelid = '$1'::regclass AND a.attname = '$2'"
}

# wait_sleeping: until a session sits in pg_sleep (a transaction is open and holding its
# locks), so that what follows starts while it is open.
wait_sleeping() {
  for _ in $(seq 300); do
    [[ $(sql a "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'") -gt 0 ]] && return 0
    sleep 0.05
  done
  fail "no session in pg_sleep"
}

# switch_under_load TABLE: TABLE (id, who) holds 1,000 rows; three clients insert rows
# before, during and after `idgen adopt` switches it (each goes on until the switch is
# done, then inserts AFTER more), and a fourth holds a row it inserted with a sequence
# number before the switch and commits after it. No insert fails, none is lost, some
# rows have idgen IDs, every idgen ID lies above every sequence number, and the late row
# has a sequence number. Sets old_max, new_min, nnew.
switch_under_load() {
  local t=$1 w p pids=() late
  sql a "INSERT INTO $t (who) SELECT 0 FROM generate_series(1, 1000)"
  rm -f "$T/switched" "$T"/n?
  for w in 1 2 3; do
    ({
      local n=0 after=0
      while [[ ! -f $T/switched ]] || ((after < AFTER)); do
        echo "INSERT INTO $t (who) VALUES ($w);"
        n=$((n + 1))
        [[ ! -f $T/switched ]] || after=$((after + 1))
        ((n < 200000)) || break # a switch that never comes: the checks below fail
      done
      echo "$n" >"$T/n$w"
    } | psql_to a -v ON_ERROR_STOP=1 >"$T/ins$w.log" 2>&1) &
    pids+=($!)
  done
  psql_to a -v ON_ERROR_STOP=1 >"$T/late.log" 2>&1 \
    -c "BEGIN; INSERT INTO $t (who) VALUES (9); SELECT pg_sleep(2); COMMIT;" &
  late=$!
  wait_sleeping
  "$IDGEN" adopt --dsn "$DSN" --lock-timeout 20000 "$t" id >"$T/adopt.out" ||
    { touch "$T/switched"; fail "adopt $t: $(cat "$T/adopt.out")"; }
  touch "$T/switched"
  for p in "${pids[@]}" "$late"; do wait "$p" || fail "an insert failed: $(cat "$T"/ins*.log "$T/late.log")"; done
  local inserted=$(($(cat "$T/n1") + $(cat "$T/n2") + $(cat "$T/n3")))
  grep -q "to go back: ALTER TABLE $t ALTER COLUMN id SET DEFAULT nextval" "$T/adopt.out" ||
    fail "no way back printed: $(cat "$T/adopt.out")"
  [[ $(default_of "$t" id) == *"idgen_next()"* ]] || fail "default: $(default_of "$t" id)"
  [[ $(sql a "SELECT count(*) FROM $t") -eq $((1000 + inserted + 1)) ]] || fail "$t: rows lost"
  read -r old_max new_min nnew < <(sql a "SELECT max(id) FILTER (WHERE id < 1e12),
    min(id) FILTER (WHERE id >= 1e12), count(*) FILTER (WHERE id >= 1e12) FROM $t" | tr '|' ' ')
  [[ $nnew -ge $((3 * AFTER)) && $old_max -le $((1000 + inserted + 1)) && $new_min -gt $old_max ]] ||
    fail "$t: old max $old_max, $nnew idgen IDs, new min $new_min"
  [[ $(sql a "SELECT id < 1e12 FROM $t WHERE who = 9") == t ]] || fail "$t: late row"
  [[ $(sql a "SELECT count(*) FROM pg_class WHERE relname = '${t}_id_seq'") -eq 1 ]] || fail "sequence dropped"
}
AFTER=50

# --- BIGSERIAL, with rows and concurrent inserts --------------------------------------
sql a "CREATE TABLE orders (id bigserial PRIMARY KEY, who int NOT NULL)"
switch_under_load orders
sql a "INSERT INTO orders (who) VALUES (10)"
ok "bigserial: switched under 3 inserters and a late commit ($nnew idgen IDs, the first $new_min > old max $old_max), sequence kept"

# Going back: the printed statement works, and its numbers go on from the sequence.
back=$(sed 's/.*to go back: //' "$T/adopt.out")
sql a "$back" "INSERT INTO orders (who) VALUES (11)"
[[ $(sql a "SELECT id FROM orders WHERE who = 11") -gt $old_max ]] || fail "back: number reused"
ok "back: '$back'"

# --- GENERATED ALWAYS AS IDENTITY, with concurrent inserts --------------------------------
sql a "CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, who int NOT NULL)"
switch_under_load events
[[ $(sql a "SELECT attidentity FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'id'") == "" ]] ||
  fail "still an identity"
# Its sequence, dropped by DROP IDENTITY, made again under its name at its next value.
[[ $(sql a "SELECT nextval('events_id_seq')") -eq $((old_max + 1)) ]] || fail "identity sequence not kept at its next value"
ok "identity ALWAYS: switched under load ($nnew idgen IDs above $old_max), events_id_seq kept at $((old_max + 1))"

# --- Refusals, each leaving the table as it was ---------------------------------------
# refused TABLE COLUMN PATTERN: adopt exits 1 with one line matching PATTERN, and the
# column's default is what it was.
refused() {
  local before out rc=0
  before=$(default_of "$1" "$2")
  out=$("$IDGEN" adopt --dsn "$DSN" --lock-timeout 300 "$1" "$2" 2>&1) || rc=$?
  [[ $rc -eq 1 && $(wc -l <<<"$out") -eq 1 && $out == *$3* ]] || fail "$1.$2: exit $rc: $out"
  [[ $(default_of "$1" "$2") == "$before" ]] || fail "$1.$2 changed"
  ok "refused $1.$2: $out"
}
sql a "CREATE TABLE small (id serial PRIMARY KEY)" "CREATE TABLE plain (id bigint)" \
  "CREATE TABLE ahead (id bigserial PRIMARY KEY)" "INSERT INTO ahead DEFAULT VALUES" \
  "CREATE TABLE high (id bigserial PRIMARY KEY)"
refused small id "is integer, not bigint"
refused plain id "neither a serial nor an identity"
# A number taken from the sequence, not inserted yet (or cached by a session), above
# anything idgen issues now: the sequence's last value counts, not only max(id).
sql a "SELECT setval('ahead_id_seq', 9000000000000000000)" >/dev/null
refused ahead id "sequence ahead_id_seq at 9000000000000000000"
sql a "INSERT INTO high VALUES (9100000000000000000)"
refused high id "max 9100000000000000000"
# A row above the generator inserted before adopt starts, committed while it runs: the
# lock waits for it, and max() sees it.
sql a "CREATE TABLE late (id bigserial PRIMARY KEY)"
(psql_to a -c "BEGIN; INSERT INTO late VALUES (9200000000000000000); SELECT pg_sleep(2); COMMIT;" \
  >/dev/null 2>&1) &
writer=$!
wait_sleeping
before=$(default_of late id) rc=0
out=$("$IDGEN" adopt --dsn "$DSN" --lock-timeout 20000 late id 2>&1) || rc=$?
wait "$writer" || fail "the late writer failed"
[[ $rc -eq 1 && $out == *"max 9200000000000000000"* && $(default_of late id) == "$before" ]] ||
  fail "a row committed during adopt: exit $rc: $out"
ok "refused late.id, its high row committed while adopt waited: $out"
# The lock: a reader's open transaction holds ACCESS SHARE; adopt gives up in time.
sql a "CREATE TABLE busy (id bigserial PRIMARY KEY)"
(psql_to a -c "BEGIN; SELECT count(*) FROM busy; SELECT pg_sleep(3); COMMIT;" >/dev/null 2>&1) &
reader=$!
wait_sleeping
refused busy id "lock timeout"
wait "$reader" || true
rc=0
"$IDGEN" adopt orders id 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || fail "no --dsn: exit $rc, not 2"
rc=0
"$IDGEN" adopt --dsn "host=127.0.0.1 port=1 connect_timeout=2" orders id 2>/dev/null || rc=$?
[[ $rc -eq 1 ]] || fail "unreachable: exit $rc, not 1"
ok "bad usage exits 2, an unreachable server 1"

# --- Segment sequences above the numbers in use ----------------------------------------
sql a "CREATE TABLE tickets (id bigserial PRIMARY KEY)" \
  "INSERT INTO tickets SELECT FROM generate_series(1, 70)" "SELECT nextval('tickets_id_seq')" >/dev/null
"$IDGEN" segment init --backend postgres --dsn "$DSN" --from-sequence tickets_id_seq tickets >"$T/seg.out" ||
  fail "segment init: $(cat "$T/seg.out")"
first=$("$IDGEN" segment next --backend postgres --dsn "$DSN" -n 3 tickets | head -1)
[[ $first -eq 72 ]] || fail "segment from sequence at 71: first $first"
ok "segment init --from-sequence: $(cat "$T/seg.out"); first number $first"
rc=0
"$IDGEN" segment init --backend postgres --dsn "$DSN" --start-after 5 tickets 2>/dev/null || rc=$?
[[ $rc -eq 1 ]] || fail "init over an existing sequence: exit $rc"
rc=0
"$IDGEN" segment init --backend file --dsn "$T" --from-sequence tickets_id_seq x 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || fail "--from-sequence on file: exit $rc, not 2"
IDGEN_NAMESPACE=$NS "$IDGEN" segment init --backend file --dsn "$T" --start-after 41 f >/dev/null
[[ $(IDGEN_NAMESPACE=$NS "$IDGEN" segment next --backend file --dsn "$T" f) -eq 42 ]] || fail "file --start-after 41"
ok "segment init --start-after 41 (file): first number 42; an existing sequence left alone"
