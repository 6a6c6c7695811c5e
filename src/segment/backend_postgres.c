/* backend_postgres.c: the segment backend on PostgreSQL through libpq, in Leaf's table
 * (biz_tag, max_id, step, description, update_time): a block is one UPDATE of the
 * name's row that raises max_id by the step and returns the row, committed (and so
 * durable) before the reply. Every call has a deadline (non-blocking libpq and poll).
 * The table leaf_alloc_made (biz_tag, made_at) records each row this database made,
 * written by the statement that makes the row (init, a period's first fetch) or, for a
 * row made before the record existed, by its next block's statement: a row that is gone
 * while its record is there was lost (a DELETE, a partial restore) and is refused by
 * fetch and init, never started again at 1. The record also keeps the highest max
 * handed out (max_id, raised by each block's statement), which init --start-after
 * must not go below unless forced. leaf_alloc_newest (family, period) keeps, per name
 * and kind of period (orders:YYYYMMDD), the newest period any server entered: a
 * period's row is made only by a statement that raises it, so no period below it is
 * ever made again, whatever rows and records of old periods were deleted. Each
 * statement is one transaction; one that fails to serialize (SQLSTATE 40001, 40P01:
 * repeatable read, serializable) is run again, up to RETRIES times. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libpq-fe.h>

#include "segment/segment.h"

#define TABLE "leaf_alloc"
#define MADE "leaf_alloc_made"
#define NEWEST "leaf_alloc_newest"
#define RETRIES 10 /* runs of a statement that failed to serialize, before giving up */
#define OID_TEXT 25
#define OID_INT8 20

typedef struct pg_backend {
  idgen__segment_backend base;
  char dsn[IDGEN_SEGMENT_DSN_MAX];
  int64_t timeout_ms;
  PGconn *conn;   /* NULL until the first call, and after a broken connection */
  int made_ready; /* MADE (with max_id) and NEWEST were seen on this connection */
  char state[6];  /* the SQLSTATE of the last failed statement ("" none) */
} pg_backend;

static void drop(pg_backend *p) {
  if (p->conn)
    PQfinish(p->conn);
  p->conn = NULL;
  p->made_ready = 0;
}

/* One line of libpq's (possibly multi-line) message. */
static const char *one_line(char *msg) {
  for (char *c = msg; *c; c++)
    if (*c == '\n') {
      *c = c[1] ? ' ' : '\0';
    }
  return msg;
}

/* The library never prints: notices ("relation already exists, skipping") are dropped. */
static void ignore_notice(void *arg, const char *message) {
  (void)arg, (void)message;
}

static int connect_db(pg_backend *p) {
  if (p->conn && PQstatus(p->conn) == CONNECTION_OK)
    return 0;
  drop(p);
  /* The DSN comes last, so its own connect_timeout (if any) wins over ours. */
  char timeout_s[24];
  snprintf(timeout_s, sizeof timeout_s, "%lld", (long long)(p->timeout_ms + 999) / 1000);
  const char *const keys[] = {"connect_timeout", "application_name", "dbname", NULL};
  const char *const values[] = {timeout_s, "idgen-segment", p->dsn, NULL};
  p->conn = PQconnectdbParams(keys, values, 1);
  if (!p->conn)
    return idgen__segment_why(&p->base, IDGEN_ENOMEM, "postgres: out of memory");
  if (PQstatus(p->conn) != CONNECTION_OK) {
    char msg[IDGEN_SEGMENT_WHY_MAX];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(p->conn));
    drop(p);
    return idgen__segment_why(&p->base, IDGEN_EUNAVAIL, "postgres: %s", one_line(msg));
  }
  PQsetNoticeProcessor(p->conn, ignore_notice, NULL);
  if (PQsetnonblocking(p->conn, 1)) {
    drop(p);
    return idgen__segment_why(&p->base, IDGEN_EUNAVAIL, "postgres: cannot go non-blocking");
  }
  return 0;
}

/* A failure to serialize (repeatable read, serializable) or a deadlock: the
 * transaction was rolled back whole, and running it again is safe. */
static int serialization_failure(const char *state) {
  return !strcmp(state, "40001") || !strcmp(state, "40P01");
}

/* The error class of a failed statement: the backend's code for it. */
static int sql_error(pg_backend *p, PGresult *r, const char *what) {
  const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  snprintf(p->state, sizeof p->state, "%s", state ? state : "");
  char msg[200];
  snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
  one_line(msg);
  int rc = IDGEN_EPROTO;
  if (!state || !strncmp(state, "08", 2) || !strncmp(state, "57", 2) ||
      !strncmp(state, "53", 2) || !strncmp(state, "40", 2) || !strcmp(state, "25006"))
    rc = IDGEN_EUNAVAIL; /* connection, shutdown, resources, conflicts, read-only */
  else if (!strcmp(state, "22003"))
    rc = IDGEN_ERANGE;
  else if ((!strcmp(state, "42P01") || !strcmp(state, "42703")) &&
           (strstr(msg, "\"" MADE "\"") || strstr(msg, "\"" NEWEST "\"") ||
            strstr(msg, "max_id\" of relation \"" MADE))) {
    p->made_ready = 0; /* dropped under this connection: looked for again */
    return idgen__segment_why(&p->base, -ENOENT, "postgres: a record table changed: %s",
                              msg);
  } else if (!strcmp(state, "42P01"))
    return idgen__segment_why(&p->base, -ENOENT,
                              "postgres: table " TABLE " does not exist: run 'idgen "
                              "segment init --backend postgres' first");
  /* the connection is sound after a failure to serialize: kept for the next run */
  if ((rc == IDGEN_EUNAVAIL && !serialization_failure(p->state)) ||
      PQstatus(p->conn) != CONNECTION_OK)
    drop(p);
  return idgen__segment_why(&p->base, rc, "postgres %s: %s", what, msg);
}

/* Runs one statement with text parameters within the deadline, on the connection as it
 * is. *out gets the result (PGRES_COMMAND_OK or PGRES_TUPLES_OK; the caller clears it). */
static int run_once(pg_backend *p, const char *what, const char *sql, int n,
                    const Oid *types, const char *const *params, PGresult **out) {
  int rc = connect_db(p);
  if (rc)
    return rc;
  int64_t deadline = idgen_monotonic_ns() + p->timeout_ms * 1000000;
  if (!PQsendQueryParams(p->conn, sql, n, types, params, NULL, NULL, 0))
    goto broken;
  for (;;) {
    int flushed = PQflush(p->conn);
    if (flushed < 0)
      goto broken;
    if (!flushed && !PQisBusy(p->conn))
      break;
    int64_t left_ms = (deadline - idgen_monotonic_ns()) / 1000000;
    if (left_ms <= 0) {
      drop(p); /* a late reply must never be read as the next call's */
      return idgen__segment_why(&p->base, IDGEN_ETIMEDOUT,
                                "postgres %s: no reply in %lld ms", what,
                                (long long)p->timeout_ms);
    }
    struct pollfd pfd = {.fd = PQsocket(p->conn),
                         .events = (short)(POLLIN | (flushed ? POLLOUT : 0))};
    if (poll(&pfd, 1, (int)left_ms) < 0 && errno != EINTR)
      goto broken;
    if (!PQconsumeInput(p->conn))
      goto broken;
  }
  PGresult *result = NULL, *r;
  while ((r = PQgetResult(p->conn))) { /* the last result is NULL; keep the first */
    if (!result)
      result = r;
    else
      PQclear(r);
  }
  if (!result)
    goto broken;
  ExecStatusType st = PQresultStatus(result);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    rc = sql_error(p, result, what);
    PQclear(result);
    return rc;
  }
  *out = result;
  return 0;
broken:;
  char msg[200];
  snprintf(msg, sizeof msg, "%s", PQerrorMessage(p->conn));
  drop(p);
  return idgen__segment_why(&p->base, IDGEN_EUNAVAIL, "postgres %s: %s", what,
                            one_line(msg));
}

/* run_once, and once more on a new connection if a kept one turned out to be broken
 * (the server restarted since the last call). Running an UPDATE twice whose first
 * reply was lost can only lose a block, never hand one out twice. A statement that
 * failed to serialize was rolled back: it runs again, after 1, 2, .. ms, up to RETRIES
 * times (each of our statements is its own transaction, so a retry sees the rows as
 * the winner left them). */
static int run(pg_backend *p, const char *what, const char *sql, int n, const Oid *types,
               const char *const *params, PGresult **out) {
  int kept = p->conn != NULL;
  for (int tries = 1;; tries++) {
    p->state[0] = '\0';
    int rc = run_once(p, what, sql, n, types, params, out);
    if (rc == IDGEN_EUNAVAIL && kept && !p->conn) {
      kept = 0;
      rc = run_once(p, what, sql, n, types, params, out);
    }
    if (!rc || !serialization_failure(p->state) || tries >= RETRIES)
      return rc;
    struct timespec pause = {0, (long)tries * 1000000};
    nanosleep(&pause, NULL);
  }
}

/* Makes sure the tables are there: leaf_alloc (init only: a fetch without it fails on
 * it), the made records with their max_id, and the newest periods (a database from
 * before them gets them at its first fetch). Two makers racing on CREATE TABLE IF NOT
 * EXISTS can fail on the catalogue's unique index: the loser looks again. */
static int make_tables(pg_backend *p, int with_alloc) {
  static const char *const sql[] = {
      "CREATE TABLE IF NOT EXISTS " TABLE " ("
      "biz_tag varchar(128) PRIMARY KEY, "
      "max_id bigint NOT NULL DEFAULT 0, "
      "step integer NOT NULL, "
      "description varchar(256) DEFAULT NULL, "
      "update_time timestamp NOT NULL DEFAULT now())",
      "CREATE TABLE IF NOT EXISTS " MADE " ("
      "biz_tag varchar(128) PRIMARY KEY, "
      "made_at timestamptz NOT NULL DEFAULT now(), "
      "max_id bigint)",
      /* a record table from before max_id: its rows get it with their next block */
      "ALTER TABLE " MADE " ADD COLUMN IF NOT EXISTS max_id bigint",
      "CREATE TABLE IF NOT EXISTS " NEWEST " ("
      "family varchar(140) PRIMARY KEY, "
      "period bigint NOT NULL, "
      "update_time timestamptz NOT NULL DEFAULT now())",
  };
  for (size_t i = with_alloc ? 0 : 1; i < sizeof sql / sizeof sql[0]; i++) {
    PGresult *r;
    int rc = run(p, "create table", sql[i], 0, NULL, NULL, &r);
    if (rc && (!strcmp(p->state, "23505") || !strcmp(p->state, "42P07")))
      rc = run(p, "create table", sql[i], 0, NULL, NULL, &r);
    if (rc)
      return rc;
    PQclear(r);
  }
  p->made_ready = 1;
  return 0;
}

/* MADE (with max_id) and NEWEST, before a fetch on this connection: looked up (a fetch
 * needs no right to create tables when they are there), made if leaf_alloc is there and
 * they are not. */
static int find_made(pg_backend *p) {
  PGresult *r;
  int rc = run(p, "lookup",
               "SELECT to_regclass('" TABLE "') IS NOT NULL, to_regclass('" NEWEST
               "') IS NOT NULL AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = "
               "to_regclass('" MADE "') AND attname = 'max_id' AND NOT attisdropped)",
               0, NULL, NULL, &r);
  if (rc)
    return rc;
  int alloc = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");
  int made = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 1), "t");
  PQclear(r);
  if (!alloc)
    return idgen__segment_why(&p->base, -ENOENT,
                              "postgres: table " TABLE " does not exist: run 'idgen "
                              "segment init --backend postgres' first");
  if (made) {
    p->made_ready = 1;
    return 0;
  }
  return make_tables(p, 0);
}

/* The refusal of a row that is gone while MADE names it. */
static int gone(pg_backend *p, const char *name) {
  if (strchr(name, ':')) /* a period's row: init takes no period key */
    return idgen__segment_why(&p->base, IDGEN_EPROTO,
                              "postgres: row '%s' is gone, but this database made it (" MADE
                              "): refused, its numbers would repeat; restore the row with "
                              "max_id at or above every number handed out",
                              name);
  return idgen__segment_why(&p->base, IDGEN_EPROTO,
                            "postgres: row '%s' is gone, but this database made it (" MADE
                            "): restore it above every number handed out, or 'idgen "
                            "segment init --start-after N %s'",
                            name, name);
}

/* The refusal of an init --start-after N below the highest number the record says was
 * handed out. */
static int below(pg_backend *p, const char *name, uint64_t start_after,
                 const char *highest) {
  return idgen__segment_why(&p->base, IDGEN_EPROTO,
                            "postgres: row '%s' is gone, and " MADE " says %s was handed "
                            "out: --start-after %" PRIu64 " is below it, refused (its "
                            "numbers would repeat); --start-after %s, or --force",
                            name, highest, start_after, highest);
}

/* One statement: the row is made at start_after, with its record (max_id start_after),
 * unless it exists, or its record says it was made and lost (then only an explicit
 * start_after, N > 0, at or above the record's max_id, or forced, makes it again). It
 * returns (made now, made before, the row was there, the record's max_id). */
static int pg_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                        uint64_t step);

static int pg_init(idgen__segment_backend *b, const char *name, uint64_t step,
                   uint64_t start_after, int force) {
  pg_backend *p = (pg_backend *)b;
  int rc = make_tables(p, 1);
  if (rc)
    return rc;
  /* a period's key by its number alone: under the newest-period record, as a fetch's */
  if (strchr(name, ':') && !start_after)
    return pg_key_start(b, NULL, name, step);
  char step_text[24], start_text[24];
  snprintf(step_text, sizeof step_text, "%" PRIu64, step);
  snprintf(start_text, sizeof start_text, "%" PRIu64, start_after);
  const char *params[] = {name, step_text, start_text, force ? "t" : "f"};
  const Oid types[] = {OID_TEXT, OID_INT8, OID_INT8, 16 /* bool */};
  PGresult *r;
  rc = run(p, "insert",
           "WITH m AS (SELECT EXISTS (SELECT 1 FROM " MADE " WHERE biz_tag = $1) AS made, "
           "(SELECT max_id FROM " MADE " WHERE biz_tag = $1) AS highest), "
           "i AS (INSERT INTO " TABLE " (biz_tag, max_id, step, description) "
           "SELECT $1, $3, $2::integer, 'idgen segment ' || $1 FROM m "
           "WHERE NOT m.made OR ($3 > 0 AND ($4 OR m.highest IS NULL OR $3 >= m.highest)) "
           "ON CONFLICT (biz_tag) DO NOTHING RETURNING biz_tag), "
           "r AS (INSERT INTO " MADE " (biz_tag, max_id) SELECT biz_tag, $3 FROM i "
           "ON CONFLICT (biz_tag) DO UPDATE SET made_at = now(), max_id = EXCLUDED.max_id) "
           "SELECT (SELECT count(*) FROM i), m.made, "
           "EXISTS (SELECT 1 FROM " TABLE " WHERE biz_tag = $1), m.highest FROM m",
           4, types, params, &r);
  if (rc)
    return rc;
  int ok = PQntuples(r) == 1 && PQnfields(r) == 4;
  int created = ok && !strcmp(PQgetvalue(r, 0, 0), "1");
  int made = ok && !strcmp(PQgetvalue(r, 0, 1), "t");
  int there = ok && !strcmp(PQgetvalue(r, 0, 2), "t");
  char highest[24] = "";
  if (ok && !PQgetisnull(r, 0, 3))
    snprintf(highest, sizeof highest, "%s", PQgetvalue(r, 0, 3));
  PQclear(r);
  if (!ok)
    return idgen__segment_why(b, IDGEN_EPROTO, "postgres: unexpected reply to init");
  if (created)
    return 0;
  if (!there && made && !start_after)
    return gone(p, name);
  if (!there && made && highest[0])
    return below(p, name, start_after, highest);
  return 1; /* there, or made meanwhile by another process */
}

#define FETCH_SQL                                                                          \
  "WITH u AS (UPDATE " TABLE " SET max_id = max_id + $2, step = $2::integer, "             \
  "update_time = now() WHERE biz_tag = $1 RETURNING max_id, step), "                       \
  "m AS (SELECT EXISTS (SELECT 1 FROM " MADE " WHERE biz_tag = $1) AS made), "             \
  "a AS (INSERT INTO " MADE " (biz_tag, max_id) SELECT $1, u.max_id FROM u "               \
  "ON CONFLICT (biz_tag) DO UPDATE SET max_id = GREATEST(" MADE ".max_id, "                \
  "EXCLUDED.max_id)) "                                                                     \
  "SELECT u.max_id, u.step, m.made FROM m LEFT JOIN u ON true"

static int pg_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                    uint64_t floor, idgen__segment_block *out) {
  pg_backend *p = (pg_backend *)b;
  (void)floor; /* one row: each block lies above the last */
  char step_text[24];
  snprintf(step_text, sizeof step_text, "%" PRIu64, step);
  const char *params[] = {name, step_text};
  const Oid types[] = {OID_TEXT, OID_INT8};
  PGresult *r;
  /* The step column records the step of the last block, so the row alone says which
   * block was leased: [max_id - step + 1, max_id]. The same statement raises the
   * record's max_id to it, writes the row's record if it has none (a row made before
   * the records: adopted), and says whether it had one (m.made: a row gone, made here,
   * is lost). */
  int rc = 0;
  for (int pass = 0; pass < 2; pass++) {
    int ready = p->made_ready;
    rc = ready ? 0 : find_made(p);
    if (!rc)
      rc = run(p, "update", FETCH_SQL, 2, types, params, &r);
    if (!(rc == -ENOENT && ready && !p->made_ready))
      break; /* else MADE was dropped under this connection: looked for again */
  }
  if (rc)
    return rc;
  if (PQntuples(r) != 1 || PQnfields(r) != 3) {
    PQclear(r);
    return idgen__segment_why(b, IDGEN_EPROTO, "postgres: unexpected reply to update");
  }
  if (PQgetisnull(r, 0, 0)) {
    int recorded = !strcmp(PQgetvalue(r, 0, 2), "t");
    PQclear(r);
    if (recorded)
      return gone(p, name);
    return idgen__segment_why(b, -ENOENT,
                              "postgres: no row '%s' in " TABLE ": run 'idgen segment init "
                              "--backend postgres' first",
                              name);
  }
  char *end1, *end2;
  errno = 0;
  long long max = strtoll(PQgetvalue(r, 0, 0), &end1, 10);
  long long got = strtoll(PQgetvalue(r, 0, 1), &end2, 10);
  int bad = errno || *end1 || *end2 || max < 1 || got < 1 || (uint64_t)got != step;
  PQclear(r);
  if (bad)
    return idgen__segment_why(b, IDGEN_EPROTO, "postgres: unexpected row for '%s'", name);
  *out = (idgen__segment_block){(uint64_t)max, step, 1};
  return 0;
}

/* A period's row, in one statement: the newest-period record of its family raised to
 * the key's period (ON CONFLICT DO UPDATE locks the record's row and judges its newest
 * version at any isolation level: a racing raise waits, or fails to serialize and runs
 * again), and only if it was raised (not behind) the row made at 0 with its record,
 * unless a record names it. Returns (made now, made before, the row was there, raised). */
static int pg_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                        uint64_t step) {
  pg_backend *p = (pg_backend *)b;
  (void)ns;
  char family[IDGEN_SEGMENT_NAME_MAX + 8], number_text[24], step_text[24];
  uint64_t number;
  if (!idgen__segment_period_key(key, family, sizeof family, &number))
    return pg_init(b, key, step, 0, 0);
  snprintf(number_text, sizeof number_text, "%" PRIu64, number);
  snprintf(step_text, sizeof step_text, "%" PRIu64, step);
  const char *params[] = {key, step_text, family, number_text};
  const Oid types[] = {OID_TEXT, OID_INT8, OID_TEXT, OID_INT8};
  PGresult *r;
  int rc = 0;
  for (int pass = 0; pass < 2; pass++) {
    int ready = p->made_ready;
    rc = ready ? 0 : find_made(p);
    if (!rc)
      rc = run(p, "insert",
               "WITH n AS (INSERT INTO " NEWEST " (family, period) VALUES ($3, $4) "
               "ON CONFLICT (family) DO UPDATE SET period = EXCLUDED.period, "
               "update_time = now() WHERE " NEWEST ".period <= EXCLUDED.period "
               "RETURNING period), "
               "m AS (SELECT EXISTS (SELECT 1 FROM " MADE " WHERE biz_tag = $1) AS made), "
               "i AS (INSERT INTO " TABLE " (biz_tag, max_id, step, description) "
               "SELECT $1, 0, $2::integer, 'idgen segment ' || $1 FROM m, n "
               "WHERE NOT m.made ON CONFLICT (biz_tag) DO NOTHING RETURNING biz_tag), "
               "r AS (INSERT INTO " MADE " (biz_tag, max_id) SELECT biz_tag, 0 FROM i "
               "ON CONFLICT (biz_tag) DO UPDATE SET made_at = now(), max_id = 0) "
               "SELECT (SELECT count(*) FROM i), m.made, "
               "EXISTS (SELECT 1 FROM " TABLE " WHERE biz_tag = $1), "
               "(SELECT count(*) FROM n) FROM m",
               4, types, params, &r);
    if (!(rc == -ENOENT && ready && !p->made_ready))
      break; /* else a record table was dropped under this connection: looked for again */
  }
  if (rc)
    return rc;
  int ok = PQntuples(r) == 1 && PQnfields(r) == 4;
  int created = ok && !strcmp(PQgetvalue(r, 0, 0), "1");
  int made = ok && !strcmp(PQgetvalue(r, 0, 1), "t");
  int there = ok && !strcmp(PQgetvalue(r, 0, 2), "t");
  int raised = ok && !strcmp(PQgetvalue(r, 0, 3), "1");
  PQclear(r);
  if (!ok)
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "postgres: unexpected reply to a period start");
  if (created)
    return 0;
  if (there)
    return 1; /* a row of a period behind the newest is used, never made */
  if (made)
    return gone(p, key);
  if (raised)
    return 1; /* made meanwhile by another process, or deleted at once: its fetch says */
  /* behind: the record, as it is now, names the newer period */
  const char *fparams[] = {family};
  rc = run(p, "select", "SELECT period FROM " NEWEST " WHERE family = $1", 1, types + 2,
           fparams, &r);
  if (rc)
    return rc;
  uint64_t newest = PQntuples(r) == 1 ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return idgen__segment_behind(b, key, newest, NEWEST);
}

static void pg_free(idgen__segment_backend *b) {
  drop((pg_backend *)b);
  free(b);
}

static const idgen__segment_backend_class pg_class = {
    "postgres", pg_init, pg_fetch, pg_free, NULL, pg_key_start, NULL};

/* libpq's keywords with a fixed set of values, and the values libpq 15 takes (its
 * connectOptions2 compares them with strcmp; the protocol versions without case).
 * Checked when the DSN is given, a typo ("sslmode=verify_full") is bad usage then, not
 * a refusal at every fetch. */
static const struct {
  const char *keyword;
  int any_case;
  const char *values[7]; /* NULL-terminated */
} pg_choices[] = {
    {"sslmode", 0, {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}},
    {"gssencmode", 0, {"disable", "prefer", "require"}},
    {"channel_binding", 0, {"disable", "prefer", "require"}},
    {"ssl_min_protocol_version", 1, {"", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}},
    {"ssl_max_protocol_version", 1, {"", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}},
    {"target_session_attrs",
     0,
     {"any", "read-write", "read-only", "primary", "standby", "prefer-standby"}},
};

static int choice_ok(size_t i, const char *value) {
  for (const char *const *v = pg_choices[i].values; *v; v++)
    if (pg_choices[i].any_case ? !strcasecmp(value, *v) : !strcmp(value, *v))
      return 1;
  return 0;
}

int idgen__segment_postgres_dsn_check(const char *dsn, char *err, size_t errlen) {
  char *msg = NULL;
  PQconninfoOption *opts = PQconninfoParse(dsn, &msg);
  if (!opts) {
    char line[200];
    snprintf(line, sizeof line, "%s", msg ? msg : "out of memory");
    snprintf(err, errlen, "%s", one_line(line));
    PQfreemem(msg);
    return IDGEN_EINVAL;
  }
  int rc = 0;
  for (PQconninfoOption *o = opts; o->keyword && !rc; o++)
    for (size_t i = 0; i < sizeof pg_choices / sizeof pg_choices[0] && !rc; i++) {
      if (!o->val || strcmp(o->keyword, pg_choices[i].keyword) || choice_ok(i, o->val))
        continue;
      char list[160] = "";
      for (const char *const *v = pg_choices[i].values; *v; v++)
        if (**v) /* the empty value (no bound) goes unsaid */
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                   list[0] ? ", " : "", *v);
      snprintf(err, errlen, "%s '%.40s' is not one of %s", o->keyword, o->val, list);
      rc = IDGEN_EINVAL;
    }
  PQconninfoFree(opts);
  return rc;
}

int idgen__segment_postgres_new(idgen__segment_backend **out, const char *dsn,
                                int64_t timeout_ms, char *err, size_t errlen) {
  char why[IDGEN_SEGMENT_WHY_MAX];
  if (idgen__segment_postgres_dsn_check(dsn, why, sizeof why)) {
    snprintf(err, errlen, "segment postgres DSN: %s", why);
    return IDGEN_EINVAL;
  }
  pg_backend *p = calloc(1, sizeof *p);
  if (!p)
    return IDGEN_ENOMEM;
  p->base.vtable = &pg_class;
  snprintf(p->dsn, sizeof p->dsn, "%s", dsn);
  p->timeout_ms = timeout_ms;
  *out = &p->base;
  return 0;
}
