-- functions.sql: the issuing functions on a server started with idgen preloaded,
-- idgen.lease = static and idgen.worker_id = 7 (tests/pg/regress.sh).
CREATE EXTENSION idgen;
SET timezone = 'UTC';

-- The lease worker holds worker 7 and shows in pg_stat_activity.
SELECT state, lease, worker, refusal, last_error FROM idgen_status();
SELECT backend_type, query FROM pg_stat_activity WHERE backend_type = 'idgen lease';

-- idgen_next(): positive, increasing, worker 7, made now.
CREATE TEMP TABLE drawn AS SELECT n, idgen_next() AS id FROM generate_series(1, 20000) n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids, bool_and(id > 0) AS positive
  FROM drawn;
SELECT bool_and(id < next_id) AS increasing
  FROM (SELECT id, lead(id) OVER (ORDER BY n) AS next_id FROM drawn) d
 WHERE next_id IS NOT NULL;
SELECT count(*) FILTER (WHERE (idgen_decode(id)).worker <> 7) AS other_workers FROM drawn;
SELECT abs(extract(epoch FROM idgen_time(idgen_next()) - clock_timestamp())) < 5 AS made_now;

-- idgen_next_batch(n): n increasing IDs above those before.
SELECT count(*) AS ids, count(DISTINCT b) AS distinct_ids,
       min(b) > (SELECT max(id) FROM drawn) AS above_earlier
  FROM idgen_next_batch(5000) b;
SELECT bool_and(b < next_b) AS increasing
  FROM (SELECT b, lead(b) OVER (ORDER BY ord) AS next_b
          FROM idgen_next_batch(10000) WITH ORDINALITY AS t(b, ord)) d
 WHERE next_b IS NOT NULL;
SELECT count(*) AS none FROM idgen_next_batch(0);
SELECT count(*) AS null_n FROM idgen_next_batch(NULL);
SELECT idgen_next_batch(-1);

-- As a column default, under a primary key.
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen_next(), item text NOT NULL);
INSERT INTO orders (item) SELECT 'item ' || g FROM generate_series(1, 10000) g;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids FROM orders;

-- idgen_uuidv7(): version 7, RFC variant, strictly increasing in one backend, its time.
CREATE TEMP TABLE v7 AS SELECT n, idgen_uuidv7() AS u FROM generate_series(1, 20000) n;
SELECT count(DISTINCT u) AS distinct_uuids,
       bool_and(substr(u::text, 15, 1) = '7') AS version_7,
       bool_and(substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) AS rfc_variant
  FROM v7;
SELECT bool_and(u < next_u) AS increasing
  FROM (SELECT u, lead(u) OVER (ORDER BY n) AS next_u FROM v7) d
 WHERE next_u IS NOT NULL;
SELECT abs(extract(epoch FROM idgen_uuid_time(idgen_uuidv7()) - clock_timestamp())) < 5
       AS made_now;
-- RFC 9562 A.6's example UUIDv7; a v4 and the nil UUID have no time.
SELECT idgen_uuid_time('017f22e2-79b0-7cc3-98c4-dc0c0c07398f');
SELECT idgen_uuid_time(idgen_uuidv4()) IS NULL AS v4_no_time,
       idgen_uuid_time('00000000-0000-0000-0000-000000000000') IS NULL AS nil_no_time;

-- idgen_uuidv4(): version 4, RFC variant, all different.
SELECT count(DISTINCT u) AS distinct_uuids,
       bool_and(substr(u::text, 15, 1) = '4') AS version_4,
       bool_and(substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) AS rfc_variant
  FROM (SELECT idgen_uuidv4() AS u FROM generate_series(1, 20000)) d;

-- idgen_ulid(): 26 Crockford characters, increasing in one backend.
CREATE TEMP TABLE ulids AS SELECT n, idgen_ulid() AS u FROM generate_series(1, 20000) n;
SELECT count(DISTINCT u) AS distinct_ulids,
       bool_and(u ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$') AS crockford
  FROM ulids;
SELECT bool_and(u COLLATE "C" < next_u COLLATE "C") AS increasing
  FROM (SELECT u, lead(u) OVER (ORDER BY n) AS next_u FROM ulids) d
 WHERE next_u IS NOT NULL;

-- The active layout, as a spec.
SELECT idgen_layout();

-- idgen_time is IMMUTABLE: it may key an index, a BRIN range and a partition bound.
CREATE TABLE events (id bigint NOT NULL DEFAULT idgen_next(), body text)
  PARTITION BY RANGE (idgen_time(id));
CREATE TABLE events_2026 PARTITION OF events
  FOR VALUES FROM ('2026-01-01 00:00+00') TO ('2027-01-01 00:00+00');
CREATE TABLE events_later PARTITION OF events
  FOR VALUES FROM ('2027-01-01 00:00+00') TO (MAXVALUE);
CREATE INDEX events_time_brin ON events USING brin (idgen_time(id));
INSERT INTO events (body) SELECT 'e' || g FROM generate_series(1, 1000) g;
SELECT count(*) AS rows FROM events WHERE idgen_time(id) >= '2026-01-01 00:00+00';
CREATE INDEX orders_time ON orders (idgen_time(id));
CREATE INDEX v7_time ON v7 (idgen_uuid_time(u));

-- The generator's counters moved.
SELECT issued >= 46000 AS counted, refused = 0 AS none_refused FROM idgen_status();
