/* fn_uuid.c: the 128-bit schemes in SQL: idgen_uuidv7() (RFC 9562 Method 3, strictly
 * increasing per backend, as PostgreSQL 18's uuidv7()), idgen_uuidv4(), idgen_ulid()
 * (monotonic per backend) and idgen_uuid_time(uuid). */
#include "idgen_pg.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(sql_idgen_uuidv7);
PG_FUNCTION_INFO_V1(sql_idgen_uuidv4);
PG_FUNCTION_INFO_V1(sql_idgen_ulid);
PG_FUNCTION_INFO_V1(sql_idgen_uuid_time);

/* This backend's own generators, made at first use, after the fork: each keeps its
 * last value, so values of one backend increase; those of two backends differ by
 * their random bits. The random source refills from getrandom 4 KiB at a time. */
static idgen_random *random_source;
static idgen_uuid7_gen *uuid7;
static idgen_ulid_gen *ulid;

static void check(int rc, const char *what) {
  if (rc < 0)
    ereport(ERROR, (errcode(rc == IDGEN_ENOMEM ? ERRCODE_OUT_OF_MEMORY
                                               : ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("idgen: %s: %s", what, idgen_strerror(rc))));
}

static idgen_random *source(void) {
  if (!random_source)
    check(idgen_random_system_new(&random_source), "random source");
  return random_source;
}

static Datum uuid_datum(idgen_uuid u) {
  pg_uuid_t *out = palloc(sizeof *out);
  memcpy(out->data, u.b, UUID_LEN);
  return UUIDPGetDatum(out);
}

Datum sql_idgen_uuidv7(PG_FUNCTION_ARGS) {
  (void)fcinfo;
  if (!uuid7) {
    idgen_uuid7_config config = {.clock = idgen_pg_clock(), .random = source()};
    check(idgen_uuid7_new(&uuid7, &config), "UUIDv7 generator");
  }
  idgen_uuid u;
  check(idgen_uuid7_next(uuid7, &u), "UUIDv7");
  return uuid_datum(u);
}

Datum sql_idgen_uuidv4(PG_FUNCTION_ARGS) {
  (void)fcinfo;
  idgen_uuid u;
  check(idgen_uuid4(source(), &u), "UUIDv4");
  return uuid_datum(u);
}

Datum sql_idgen_ulid(PG_FUNCTION_ARGS) {
  (void)fcinfo;
  if (!ulid) {
    idgen_ulid_config config = {
        .clock = idgen_pg_clock(), .random = source(), .monotonic = 1};
    check(idgen_ulid_new(&ulid, &config), "ULID generator");
  }
  idgen_ulid u;
  check(idgen_ulid_next(ulid, &u), "ULID");
  char out[IDGEN_ULID_TEXT_LEN + 1];
  idgen_ulid_format(u, out, sizeof out);
  PG_RETURN_TEXT_P(cstring_to_text(out));
}

/* The time of a version-7 UUID (its 48 bits of Unix ms); NULL for a UUID of another
 * version, as PostgreSQL 18's uuid_extract_timestamp does for versions without time. */
Datum sql_idgen_uuid_time(PG_FUNCTION_ARGS) {
  pg_uuid_t *arg = PG_GETARG_UUID_P(0);
  idgen_uuid u;
  memcpy(u.b, arg->data, UUID_LEN);
  int64_t unix_ms;
  if (idgen_uuid7_time_ms(u, &unix_ms) < 0)
    PG_RETURN_NULL();
  PG_RETURN_TIMESTAMPTZ(idgen_pg_timestamp(unix_ms));
}
