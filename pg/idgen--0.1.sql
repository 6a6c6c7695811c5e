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

-- Switches a bigint column from its sequence (BIGSERIAL's DEFAULT nextval, or an
-- identity column) to DEFAULT idgen_next(), in the caller's transaction, and returns
-- how to go back (docs/adopt.md). It refuses a column that is not bigint, one without
-- a sequence, and a table whose numbers (max(column), and the sequence's last value,
-- which covers numbers taken but not yet inserted) reach the first ID the generator
-- issues now. The old sequence is kept: a serial's as it was, an identity's made again
-- under its name at its next value (DROP IDENTITY drops it).
CREATE FUNCTION idgen_adopt(tbl regclass, col name) RETURNS text
LANGUAGE plpgsql VOLATILE AS $adopt$
DECLARE
  att record;
  seq regclass;
  seq_name text;
  seq_inc bigint;
  seq_start bigint;
  seq_last bigint;
  col_max bigint;
  first_id bigint;
  ext_schema name;
  back text;
BEGIN
  -- The lock ALTER TABLE takes anyway, taken first: it waits for every transaction that
  -- inserted into tbl (one that took a number before the switch and commits after it),
  -- so max() sees their rows, and no insert runs until the caller commits.
  EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
  SELECT a.atttypid, a.attidentity, pg_get_expr(d.adbin, d.adrelid) AS def INTO att
    FROM pg_attribute a
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'idgen_adopt: % has no column %', tbl, col;
  END IF;
  IF att.atttypid <> 'bigint'::regtype THEN
    RAISE EXCEPTION 'idgen_adopt: %.% is %, not bigint: Snowflake IDs need 64 bits',
      tbl, col, format_type(att.atttypid, NULL);
  END IF;
  IF att.def LIKE '%idgen_next()%' THEN
    RAISE EXCEPTION 'idgen_adopt: %.% already defaults to idgen_next()', tbl, col;
  END IF;
  seq := pg_get_serial_sequence(tbl::text, col);
  IF seq IS NULL OR (att.attidentity = '' AND att.def IS DISTINCT FROM
                     format('nextval(%L::regclass)', seq::text)) THEN
    RAISE EXCEPTION 'idgen_adopt: %.% is neither a serial nor an identity column '
      '(default %)', tbl, col, coalesce(att.def, 'none');
  END IF;
  SELECT s.seqincrement, s.seqstart INTO seq_inc, seq_start
    FROM pg_sequence s WHERE s.seqrelid = seq;
  IF seq_inc < 0 THEN
    RAISE EXCEPTION 'idgen_adopt: sequence % counts down', seq;
  END IF;
  seq_last := pg_sequence_last_value(seq); -- NULL: never called
  EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO col_max;
  first_id := idgen_next(); -- every later idgen_next() of this server is above it
  IF greatest(col_max, seq_last) >= first_id THEN
    RAISE EXCEPTION 'idgen_adopt: %.% holds numbers up to % (max %, sequence % at %), '
      'not below %, the first ID idgen issues now: new IDs could collide; left as it was',
      tbl, col, greatest(col_max, seq_last), coalesce(col_max::text, 'none'), seq,
      coalesce(seq_last::text, 'unused'), first_id;
  END IF;
  SELECT n.nspname INTO ext_schema FROM pg_extension e
    JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'idgen';
  seq_name := seq::text;
  IF att.attidentity <> '' THEN
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    EXECUTE format('CREATE SEQUENCE %s AS bigint INCREMENT %s START %s OWNED BY %s.%I',
                   seq_name, seq_inc,
                   CASE WHEN seq_last IS NULL THEN seq_start ELSE seq_last + seq_inc END,
                   tbl, col);
  END IF;
  EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %I.idgen_next()',
                 tbl, col, ext_schema);
  back := format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT nextval(%L::regclass)',
                 tbl, col, seq_name);
  IF att.attidentity <> '' THEN
    back := back || format(' (it was GENERATED %s AS IDENTITY: to make it one again, '
      'DROP DEFAULT, then ADD GENERATED %s AS IDENTITY (START WITH a number above '
      'max(%I)))', CASE att.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END,
      CASE att.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END, col);
  END IF;
  RETURN format('%s.%I now defaults to idgen_next() (first ID above %s; old max %s, '
                'sequence %s kept at %s); to go back: %s', tbl, col, first_id,
                coalesce(col_max::text, 'none'), seq_name,
                coalesce(seq_last::text, 'unused'), back);
END
$adopt$;
