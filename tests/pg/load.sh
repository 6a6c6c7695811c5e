#!/usr/bin/env bash
# 16 sessions at once (pgbench -c 16) insert 10^6 rows whose primary key defaults to
# idgen_next(), under the file lease (state dir in the data directory): no unique
# violation, every row there. Then idgen_decode equals `idgen decode --json` on a sample
# of those IDs, under the active layout and under another.
# Usage: tests/pg/load.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"
ROWS=1000000
PER_STATEMENT=100
CLIENTS=16

# synchronous_commit off: the commits' fsyncs say nothing about the IDs, and cost time.
start_cluster load "synchronous_commit=off" "max_connections=40"
sql load "CREATE EXTENSION idgen" \
  "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idgen_next(), n int NOT NULL)"
wait_state load held
[[ $(sql load "SELECT lease FROM idgen_status()") == file ]] || fail "not the file lease"

echo "INSERT INTO t (n) SELECT g FROM generate_series(1, $PER_STATEMENT) g;" >"$T/insert.sql"
per_client=$((ROWS / PER_STATEMENT / CLIENTS))
start_s=$(date +%s)
if ! "$PG_BIN/pgbench" -h 127.0.0.1 -p "$(port_of load)" -U postgres -n -c "$CLIENTS" -j 2 \
  -t "$per_client" -f "$T/insert.sql" postgres >"$T/pgbench.log" 2>&1; then
  cat "$T/pgbench.log" >&2
  fail "pgbench failed (a unique violation aborts its client)"
fi
grep -E '^number of (transactions actually processed|failed transactions)' "$T/pgbench.log"
grep -qE '^number of failed transactions: 0 ' "$T/pgbench.log" || fail "$(cat "$T/pgbench.log")"
got=$(sql load "SELECT count(*) || ' ' || count(DISTINCT id) FROM t")
[[ "$got" == "$ROWS $ROWS" ]] || fail "rows and distinct IDs: $got, want $ROWS"
ok "pgbench -c $CLIENTS: $ROWS rows, $ROWS distinct IDs, no unique violation ($(($(date +%s) - start_s)) s)"
issued=$(sql load "SELECT issued FROM idgen_status()")
[[ $issued -ge $ROWS ]] || fail "the generator counted $issued IDs"
ok "idgen_status() counted $issued IDs issued"

# idgen_decode against the CLI, on 2,000 of the IDs (and the extremes).
sql load "SELECT id FROM t TABLESAMPLE SYSTEM (1) LIMIT 2000" >"$T/sample"
sql load "SELECT min(id) FROM t" "SELECT max(id) FROM t" >>"$T/sample"
n=$(wc -l <"$T/sample")
[[ $n -ge 100 ]] || fail "sample of $n IDs"
as_json="jsonb_build_object('id', d.id::text, 'layout', d.layout,
  'time', to_char(d.time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
  'time_ms', d.time_ms, 'fields', d.fields)"
for layout in snowflake twitter; do
  xargs "$IDGEN" decode --json --layout "$layout" <"$T/sample" >"$T/cli-$layout.json"
  sql load "CREATE TABLE cli_$layout (j jsonb)"
  psql -h 127.0.0.1 -p "$(port_of load)" -U postgres -d postgres -Xq -v ON_ERROR_STOP=1 \
    -c "\\copy cli_$layout (j) FROM '$T/cli-$layout.json' WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')"
  diff=$(sql load "SELECT count(*) FROM cli_$layout c,
      LATERAL idgen_decode((c.j->>'id')::bigint, '$layout') d WHERE $as_json <> c.j")
  same=$(sql load "SELECT count(*) FROM cli_$layout c,
      LATERAL idgen_decode((c.j->>'id')::bigint, '$layout') d WHERE $as_json = c.j")
  [[ $diff -eq 0 && $same -eq $n ]] || fail "$layout: $diff of $n decodings differ from the CLI's: $(sql load \
    "SELECT c.j::text || ' vs ' || $as_json::text FROM cli_$layout c,
     LATERAL idgen_decode((c.j->>'id')::bigint, '$layout') d WHERE $as_json <> c.j LIMIT 1")"
  ok "idgen_decode(id, '$layout') equals idgen decode --json on $n IDs"
done
# Under the active layout, without naming it: the same objects as the CLI's default.
diff=$(sql load "SELECT count(*) FROM cli_snowflake c,
    LATERAL idgen_decode((c.j->>'id')::bigint) d WHERE $as_json <> c.j")
[[ $diff -eq 0 ]] || fail "idgen_decode(id) differs from the CLI on $diff IDs"
ok "idgen_decode(id) under idgen.layout equals the CLI's default"
