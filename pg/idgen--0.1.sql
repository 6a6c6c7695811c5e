-- idgen--0.1.sql: the SQL face of the idgen extension (see docs/postgres.md).
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- A Snowflake ID from the generator shared by every backend (shared memory, one CAS).
CREATE FUNCTION idgen_next() RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_next' LANGUAGE C VOLATILE PARALLEL SAFE;

-- n IDs, increasing.
CREATE FUNCTION idgen_next_batch(n integer) RETURNS SETOF bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_next_batch' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- RFC 9562 UUIDv7 (Method 3: 12-bit sub-millisecond fraction), increasing per backend.
CREATE FUNCTION idgen_uuidv7() RETURNS uuid
  AS 'MODULE_PATHNAME', 'sql_idgen_uuidv7' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION idgen_uuidv4() RETURNS uuid
  AS 'MODULE_PATHNAME', 'sql_idgen_uuidv4' LANGUAGE C VOLATILE PARALLEL SAFE;

-- A ULID (26 chars, Crockford base32), monotonic per backend.
CREATE FUNCTION idgen_ulid() RETURNS text
  AS 'MODULE_PATHNAME', 'sql_idgen_ulid' LANGUAGE C VOLATILE PARALLEL SAFE;

-- The time an ID was made. IMMUTABLE for indexes, partition bounds and BRIN: it holds
-- while idgen.layout stays the layout the IDs were made under (docs/postgres.md).
CREATE FUNCTION idgen_time(bigint) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'sql_idgen_time' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- IDs from a time: the smallest and the largest ID whose time is ts, under idgen.layout
-- or the layout given (a preset or a spec). IMMUTABLE for plans, partition bounds and
-- indexes: given the layout argument it always holds; without it, while idgen.layout
-- stays the layout the IDs were made under, as idgen_time (docs/postgres.md).
CREATE FUNCTION idgen_first_id(timestamptz, layout_spec text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_first_id' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION idgen_last_id(timestamptz, layout_spec text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_last_id' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The time of a UUIDv7; NULL for other versions.
CREATE FUNCTION idgen_uuid_time(uuid) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'sql_idgen_uuid_time' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The parts of an ID, as `idgen decode --json` gives them; under idgen.layout, or the
-- layout given (a preset or a spec).
CREATE FUNCTION idgen_decode(bigint, layout_spec text DEFAULT NULL,
                             OUT id bigint, OUT layout text, OUT "time" timestamptz,
                             OUT time_ms bigint, OUT worker bigint, OUT sequence bigint,
                             OUT fields jsonb)
  RETURNS record
  AS 'MODULE_PATHNAME', 'sql_idgen_decode' LANGUAGE C STABLE PARALLEL SAFE;

-- Text forms: decimal, base62, base32, hex, friendly (docs/codecs.md).
CREATE FUNCTION idgen_format(bigint, format text) RETURNS text
  AS 'MODULE_PATHNAME', 'sql_idgen_format' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- Any form, told by its shape; or only the format given.
CREATE FUNCTION idgen_parse(text, format text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_parse' LANGUAGE C STABLE PARALLEL SAFE;

-- The active layout as a spec.
CREATE FUNCTION idgen_layout() RETURNS text
  AS 'MODULE_PATHNAME', 'sql_idgen_layout' LANGUAGE C STABLE PARALLEL SAFE;

-- The lease worker's state and the generator's counters.
CREATE FUNCTION idgen_status(OUT state text, OUT lease text, OUT provider text,
                             OUT worker bigint, OUT hwm timestamptz, OUT floor timestamptz,
                             OUT cap timestamptz, OUT issued bigint, OUT refusal text,
                             OUT refused bigint, OUT clock_back bigint, OUT seq_waits bigint,
                             OUT cap_waits bigint, OUT renewals bigint,
                             OUT renewal_failures bigint, OUT lease_lost bigint,
                             OUT hwm_writes bigint, OUT acquisitions bigint,
                             OUT last_error text, OUT pid integer)
  RETURNS record
  AS 'MODULE_PATHNAME', 'sql_idgen_status' LANGUAGE C VOLATILE PARALLEL SAFE;

-- Opaque IDs (docs/opaque.md): a keyed permutation under idgen.opaque_key_file, tweak
-- "default", the same values as `idgen opaque encode` and idgen serve. Whoever may call
-- idgen_unopaque can read time and worker back: grant it as the key deserves.
CREATE FUNCTION idgen_opaque(bigint) RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_opaque' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION idgen_unopaque(bigint) RETURNS bigint
  AS 'MODULE_PATHNAME', 'sql_idgen_unopaque' LANGUAGE C STABLE STRICT PARALLEL SAFE;
