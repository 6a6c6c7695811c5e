#!/usr/bin/env bash
# IDs from a time in SQL (issue 28): idgen_first_id / idgen_last_id against `idgen at` and
# Twitter's known answer, IMMUTABLE, out-of-range errors; then the three uses of
# docs/postgres.md on 120,000 rows over 60 days: a day's range on the primary key
# (EXPLAIN: an index scan whose condition is two constants, no created_at column), monthly
# partitions bounded by idgen_first_id (EXPLAIN: one partition scanned), a BRIN index.
# Usage: tests/pg/bounds.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"
start_cluster bounds "idgen.lease=static" "idgen.worker_id=7" "timezone='UTC'"
sql bounds "CREATE EXTENSION idgen"

# Against the CLI and the known answer.
got=$(sql bounds "SELECT idgen_first_id('2026-12-01T00:00:00Z')")
[[ $got == "$("$IDGEN" at 2026-12-01)" ]] || fail "first id of 2026-12-01: $got"
got=$(sql bounds "SELECT idgen_last_id('2026-12-01T23:59:59.999Z')")
[[ $got == "$("$IDGEN" at --last 2026-12-01T23:59:59.999Z)" ]] || fail "last id: $got"
got=$(sql bounds "SELECT idgen_first_id('2022-06-28 16:07:40.105+00', 'twitter')")
[[ $got == 1541815603604488192 ]] || fail "twitter's first id of Wikipedia's tweet's ms: $got"
got=$(sql bounds "SELECT idgen_first_id('2022-06-28 18:07:40.105999+02', 'twitter')")
[[ $got == 1541815603604488192 ]] || fail "an offset and µs past the ms: $got"
got=$(sql bounds "SELECT idgen_time(idgen_first_id('2026-12-01 12:34:56.789+00'))")
[[ $got == "2026-12-01 12:34:56.789+00" ]] || fail "round trip through idgen_time: $got"
ok "idgen_first_id / idgen_last_id agree with idgen at and Twitter's known answer"
got=$(sql bounds "SELECT string_agg(DISTINCT provolatile::text, ',') FROM pg_proc
  WHERE proname IN ('idgen_first_id', 'idgen_last_id')")
[[ $got == i ]] || fail "volatility: $got, not IMMUTABLE"
ok "both IMMUTABLE"
err=$(sql_error bounds "SELECT idgen_first_id('2025-06-01')") || fail "before the epoch accepted"
[[ $err == *22008* && $err == *"before layout snowflake's range"* && $err == *"2026-01-01"* ]] ||
  fail "before the epoch: $err"
err=$(sql_error bounds "SELECT idgen_last_id('infinity')") || fail "infinity accepted"
err=$(sql_error bounds "SELECT idgen_first_id(now(), 'nope')") || fail "a bad layout accepted"
[[ $err == *"invalid layout"* ]] || fail "bad layout: $err"
ok "out of range, infinity and a bad layout are errors"

# 1. A time range on the primary key. 2,000 IDs a day for 60 days from 2026-11-01, each
# the first ID of its minute-ish instant plus a worker and a sequence.
sql bounds "CREATE TABLE orders (id bigint PRIMARY KEY, amount int)" \
  "INSERT INTO orders SELECT idgen_first_id(timestamptz '2026-11-01 00:00+00'
     + (g * interval '43.2 seconds')) + (g % 1024) * 4096 + g % 4096, g % 100
   FROM generate_series(0, 119999) g" "ANALYZE orders"
day="id BETWEEN idgen_first_id('2026-12-01 00:00+00') AND idgen_last_id('2026-12-01 23:59:59.999+00')"
got=$(sql bounds "SELECT count(*) FROM orders WHERE $day")
[[ $got == 2000 ]] || fail "rows of 1 December: $got, not 2000"
plan=$(sql bounds "EXPLAIN SELECT count(*) FROM orders WHERE $day")
echo "$plan" | sed 's/^/    /'
grep -qE 'Index (Only )?Scan using orders_pkey' <<<"$plan" || fail "no index scan on orders_pkey"
grep -q 'Seq Scan' <<<"$plan" && fail "a sequential scan"
grep -qE "Index Cond: \(\(id >= '?[0-9]+'?(::bigint)?\) AND \(id <= '?[0-9]+'?(::bigint)?\)\)" <<<"$plan" ||
  fail "the index condition is not two constants (the functions folded at plan time)"
ok "a day on the primary key: an index range scan, 2000 rows, no created_at column"

# 2. Partitions by month, bounded by idgen_first_id.
sql bounds "CREATE TABLE events (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id)" \
  "CREATE TABLE events_2026_11 PARTITION OF events
     FOR VALUES FROM (idgen_first_id('2026-11-01 00:00+00')) TO (idgen_first_id('2026-12-01 00:00+00'))" \
  "CREATE TABLE events_2026_12 PARTITION OF events
     FOR VALUES FROM (idgen_first_id('2026-12-01 00:00+00')) TO (idgen_first_id('2027-01-01 00:00+00'))" \
  "INSERT INTO events SELECT id, 'x' FROM orders" "ANALYZE events"
got=$(sql bounds "SELECT count(*) FROM events_2026_12")
want=$(sql bounds "SELECT count(*) FROM orders WHERE idgen_time(id) >= '2026-12-01 00:00+00'")
[[ $got == "$want" ]] || fail "December's partition holds $got rows, not $want"
plan=$(sql bounds "EXPLAIN SELECT count(*) FROM events WHERE $day")
grep -q events_2026_12 <<<"$plan" && ! grep -q events_2026_11 <<<"$plan" ||
  fail "partition pruning: $plan"
ok "monthly partitions from idgen_first_id: $got rows in December, one partition scanned"

# 3. A BRIN index on the ID: IDs rise with time, so the blocks' ranges barely overlap.
sql bounds "CREATE TABLE log (id bigint NOT NULL, line text)" \
  "INSERT INTO log SELECT id, 'x' FROM orders ORDER BY id" \
  "CREATE INDEX log_id_brin ON log USING brin (id)" "ANALYZE log"
plan=$(sql bounds "SET enable_seqscan = off" "EXPLAIN SELECT count(*) FROM log WHERE $day")
grep -q 'Bitmap Index Scan on log_id_brin' <<<"$plan" || fail "no BRIN scan: $plan"
got=$(sql bounds "SELECT count(*) FROM log WHERE $day")
[[ $got == 2000 ]] || fail "BRIN: $got rows"
ok "a BRIN index on the ID answers the day: 2000 rows"
