/* bench/btree_load.c: loads N rows per ID scheme into PostgreSQL over libpq (COPY in
 * equal batches) and measures what each key does to the primary-key B-tree. Run by
 * bench/btree.sh, which starts the throwaway cluster this connects to. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/clock.h"
#include "idgen/gen.h"
#include "idgen/uuid.h"

/* How the key of a scheme is made: by the server (a column default) or by the loader. */
typedef enum key_kind {
  KEY_BIGSERIAL, /* server: sequence */
  KEY_PG_UUID4,  /* server: gen_random_uuid() */
  KEY_PG_IDGEN,  /* server: the idgen extension's idgen_next() */
  KEY_PG_UUIDV7, /* server: the idgen extension's idgen_uuidv7() */
  KEY_SNOWFLAKE, /* idgen_gen_next_batch, bigint */
  KEY_UUID4,     /* idgen_uuid4_batch */
  KEY_UUID7,     /* idgen_uuid7_next_batch */
  KEY_ULID,      /* idgen_ulid_next_batch, plain mode, stored as uuid */
  KEY_ULID_MONO, /* idgen_ulid_next_batch, monotonic mode, stored as uuid */
} key_kind;

typedef struct scheme {
  const char *name;
  const char *column; /* the id column of CREATE TABLE */
  const char *about;  /* for the table */
  key_kind kind;
} scheme;

static const scheme SCHEMES[] = {
    {"bigserial", "id bigserial PRIMARY KEY", "bigint, server sequence", KEY_BIGSERIAL},
    {"snowflake", "id bigint PRIMARY KEY", "bigint, idgen Snowflake", KEY_SNOWFLAKE},
    {"idgen_next", "id bigint PRIMARY KEY DEFAULT idgen_next()",
     "bigint, server idgen_next() (extension)", KEY_PG_IDGEN},
    {"uuid4_pg", "id uuid PRIMARY KEY DEFAULT gen_random_uuid()",
     "uuid, server gen_random_uuid()", KEY_PG_UUID4},
    {"uuid4", "id uuid PRIMARY KEY", "uuid, idgen v4", KEY_UUID4},
    {"uuid7", "id uuid PRIMARY KEY", "uuid, idgen v7", KEY_UUID7},
    {"idgen_uuidv7", "id uuid PRIMARY KEY DEFAULT idgen_uuidv7()",
     "uuid, server idgen_uuidv7() (extension)", KEY_PG_UUIDV7},
    {"ulid", "id uuid PRIMARY KEY", "uuid, idgen ULID (plain) bytes", KEY_ULID},
    {"ulid_mono", "id uuid PRIMARY KEY", "uuid, idgen ULID (monotonic) bytes",
     KEY_ULID_MONO},
};
#define NSCHEMES (sizeof SCHEMES / sizeof SCHEMES[0])

/* What one scheme's run measured. */
typedef struct result {
  const scheme *s;
  double seconds;
  double checkpoint_s; /* time in the loader's CHECKPOINTs, not in seconds */
  int64_t index_bytes, index_blocks, table_bytes, leaf_pages, internal_pages, tree_level;
  double leaf_density;
  int64_t wal_bytes, wal_fpi, idx_blks_read, idx_blks_hit;
  double *rate;    /* rows/s over each interval of `every` rows */
  double *wal_mib; /* WAL written since the start, at the end of each interval */
  double seconds_min, seconds_max; /* over the repeats */
} result;

typedef struct options {
  const char *conninfo;
  const char *out_dir;
  int64_t rows, batch, every, checkpoint_every, repeat;
  const scheme *schemes[NSCHEMES];
  size_t nschemes;
} options;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_btree_load: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void usage_error(const char *what) {
  fprintf(stderr, "bench_btree_load: %s\n", what);
  exit(2);
}

static void usage(void) {
  printf("usage: bench_btree_load --conninfo STR [options]\n"
         "Loads rows into one table per ID scheme with COPY in equal batches and prints\n"
         "a markdown table of insert time, index size, leaf density, WAL and buffers.\n"
         "  --conninfo STR   libpq connection string (required)\n"
         "  --rows N         rows per scheme (default 1000000)\n"
         "  --batch N        rows per COPY, one transaction each (default 1000)\n"
         "  --every N        sample the insert rate every N rows (default 100000,\n"
         "                   or rows/10 when that is smaller; rounded to batches)\n"
         "  --checkpoint-every N  CHECKPOINT every N rows, outside the timed inserts, so\n"
         "                   full-page images show (default: as --every; 0: never)\n"
         "  --schemes LIST   comma-separated, from: bigserial,snowflake,idgen_next,\n"
         "                   uuid4_pg,uuid4,uuid7,idgen_uuidv7,ulid,ulid_mono (default:\n"
         "                   all, in order); idgen_next and idgen_uuidv7 are column\n"
         "                   defaults of the idgen extension, which the server must\n"
         "                   preload (CREATE EXTENSION is done here)\n"
         "  --repeat N       load each scheme N times, round-robin; report the run with\n"
         "                   the median insert time, and the median rate per interval\n"
         "                   (default 3)\n"
         "  --out DIR        write btree_summary.tsv, btree_rate.tsv, btree_wal.tsv and\n"
         "                   btree_table.md there (default: no files)\n");
}

static int64_t parse_count(const char *s, const char *what) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v <= 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be a positive integer, not '%s'", what, s);
    usage_error(msg);
  }
  return (int64_t)v;
}

static void parse_schemes(options *o, const char *list) {
  o->nschemes = 0;
  const char *p = list;
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    size_t i;
    for (i = 0; i < NSCHEMES; i++) {
      if (strlen(SCHEMES[i].name) == len && strncmp(SCHEMES[i].name, p, len) == 0) {
        break;
      }
    }
    if (i == NSCHEMES || o->nschemes == NSCHEMES) {
      char msg[128];
      snprintf(msg, sizeof msg, "unknown or repeated scheme '%.*s'", (int)len, p);
      usage_error(msg);
    }
    o->schemes[o->nschemes++] = &SCHEMES[i];
    p += len;
    if (*p == ',') {
      p++;
    }
  }
  if (o->nschemes == 0) {
    usage_error("--schemes is empty");
  }
}

static void parse_options(options *o, int argc, char **argv) {
  static const struct option longopts[] = {
      {"conninfo", required_argument, NULL, 'c'},
      {"rows", required_argument, NULL, 'n'},
      {"batch", required_argument, NULL, 'b'},
      {"every", required_argument, NULL, 'e'},
      {"checkpoint-every", required_argument, NULL, 'k'},
      {"schemes", required_argument, NULL, 's'},
      {"out", required_argument, NULL, 'o'},
      {"repeat", required_argument, NULL, 'r'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->rows = 1000000;
  o->batch = 1000;
  o->every = 0;
  o->checkpoint_every = -1;
  for (size_t i = 0; i < NSCHEMES; i++) {
    o->schemes[i] = &SCHEMES[i];
  }
  o->nschemes = NSCHEMES;
  o->repeat = 3;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      o->conninfo = optarg;
      break;
    case 'n':
      o->rows = parse_count(optarg, "--rows");
      break;
    case 'b':
      o->batch = parse_count(optarg, "--batch");
      break;
    case 'e':
      o->every = parse_count(optarg, "--every");
      break;
    case 'k':
      o->checkpoint_every =
          strcmp(optarg, "0") == 0 ? 0 : parse_count(optarg, "--checkpoint-every");
      break;
    case 's':
      parse_schemes(o, optarg);
      break;
    case 'r':
      o->repeat = parse_count(optarg, "--repeat");
      break;
    case 'o':
      o->out_dir = optarg;
      break;
    case 'h':
      usage();
      exit(0);
    default:
      usage_error("unknown option or missing value (see --help)");
    }
  }
  if (optind < argc) {
    usage_error("unexpected argument (see --help)");
  }
  if (o->conninfo == NULL) {
    usage_error("--conninfo is required");
  }
  if (o->batch > o->rows) {
    o->batch = o->rows;
  }
  if (o->every == 0) {
    o->every = o->rows / 10 < 100000 ? o->rows / 10 : 100000;
  }
  /* Samples fall on batch boundaries. */
  o->every = (o->every + o->batch - 1) / o->batch * o->batch;
  if (o->checkpoint_every < 0) {
    o->checkpoint_every = o->every;
  }
  o->checkpoint_every = (o->checkpoint_every + o->batch - 1) / o->batch * o->batch;
}

/* ---- libpq helpers ---------------------------------------------------------------- */

static void exec_ok(PGconn *db, const char *sql) {
  PGresult *r = PQexec(db, sql);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    die("%s: %s", sql, PQerrorMessage(db));
  }
  PQclear(r);
}

/* Runs a query that returns one row and copies its columns (as text) into out. */
static void query_row(PGconn *db, const char *sql, char out[][64], int ncols) {
  PGresult *r = PQexec(db, sql);
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 || PQnfields(r) != ncols) {
    die("%s: %s", sql, PQerrorMessage(db));
  }
  for (int i = 0; i < ncols; i++) {
    snprintf(out[i], 64, "%s", PQgetvalue(r, 0, i));
  }
  PQclear(r);
}

static int64_t to_i64(const char *s) {
  return (int64_t)strtoll(s, NULL, 10);
}

/* An LSN "X/Y" as a byte position. */
static uint64_t parse_lsn(const char *s) {
  unsigned int hi = 0, lo = 0;
  if (sscanf(s, "%X/%X", &hi, &lo) != 2) {
    die("bad LSN '%s'", s);
  }
  return ((uint64_t)hi << 32) | lo;
}

static uint64_t current_lsn(PGconn *db) {
  char v[1][64];
  query_row(db, "SELECT pg_current_wal_lsn()", v, 1);
  return parse_lsn(v[0]);
}

static int64_t wal_fpi(PGconn *db) {
  char v[1][64];
  query_row(db, "SELECT wal_fpi FROM pg_stat_wal", v, 1);
  return to_i64(v[0]);
}

/* Makes this backend publish its pending statistics (WAL, buffers) when it next goes
 * idle, which it does as soon as this statement ends (PostgreSQL 15). */
static void flush_stats(PGconn *db) {
  exec_ok(db, "SELECT pg_stat_force_next_flush()");
}

/* ---- key makers ------------------------------------------------------------------- */

typedef struct keygen {
  idgen_clock_mono clock;
  idgen_gen *snowflake;
  uint64_t *u64;
  idgen_random *random;
  idgen_uuid7_gen *uuid7;
  idgen_ulid_gen *ulid, *ulid_mono;
  idgen_uuid *uuids;
  idgen_ulid *ulids;
} keygen;

static void keygen_init(keygen *k, size_t batch) {
  memset(k, 0, sizeof *k);
  idgen_clock_mono_init(&k->clock);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &k->clock.base);
  int rc = idgen_gen_new(&k->snowflake, &gc);
  if (rc < 0) {
    die("idgen_gen_new: %s", idgen_strerror(rc));
  }
  k->u64 = calloc(batch, sizeof *k->u64);
  if (k->u64 == NULL) {
    die("out of memory");
  }
  rc = idgen_random_system_new(&k->random);
  if (rc < 0) {
    die("idgen_random_system_new: %s", idgen_strerror(rc));
  }
  idgen_uuid7_config uc = {.clock = &k->clock.base, .random = k->random};
  rc = idgen_uuid7_new(&k->uuid7, &uc);
  if (rc < 0) {
    die("idgen_uuid7_new: %s", idgen_strerror(rc));
  }
  idgen_ulid_config lc = {.clock = &k->clock.base, .random = k->random, .monotonic = 0};
  rc = idgen_ulid_new(&k->ulid, &lc);
  if (rc < 0) {
    die("idgen_ulid_new: %s", idgen_strerror(rc));
  }
  lc.monotonic = 1;
  rc = idgen_ulid_new(&k->ulid_mono, &lc);
  if (rc < 0) {
    die("idgen_ulid_new: %s", idgen_strerror(rc));
  }
  k->uuids = calloc(batch, sizeof *k->uuids);
  k->ulids = calloc(batch, sizeof *k->ulids);
  if (k->uuids == NULL || k->ulids == NULL) {
    die("out of memory");
  }
}

static void keygen_free(keygen *k) {
  idgen_gen_free(k->snowflake);
  free(k->u64);
  idgen_uuid7_free(k->uuid7);
  idgen_ulid_free(k->ulid);
  idgen_ulid_free(k->ulid_mono);
  idgen_random_system_free(k->random);
  free(k->uuids);
  free(k->ulids);
}

/* Makes n keys of the scheme (none for a server-side key). */
static void keygen_make(keygen *k, key_kind kind, size_t n) {
  int64_t got = (int64_t)n;
  switch (kind) {
  case KEY_BIGSERIAL:
  case KEY_PG_UUID4:
  case KEY_PG_IDGEN:
  case KEY_PG_UUIDV7:
    return;
  case KEY_SNOWFLAKE:
    got = idgen_gen_next_batch(k->snowflake, k->u64, n);
    break;
  case KEY_UUID4:
    got = idgen_uuid4_batch(k->random, k->uuids, n);
    break;
  case KEY_UUID7:
    got = idgen_uuid7_next_batch(k->uuid7, k->uuids, n);
    break;
  case KEY_ULID:
    got = idgen_ulid_next_batch(k->ulid, k->ulids, n);
    break;
  case KEY_ULID_MONO:
    got = idgen_ulid_next_batch(k->ulid_mono, k->ulids, n);
    break;
  }
  if (got != (int64_t)n) {
    die("key generation: %s", got < 0 ? idgen_strerror((int)got) : "short batch");
  }
}

/* Appends row i of the batch (key, tab, row number, newline) to buf; returns its length. */
static size_t format_row(const keygen *k, key_kind kind, size_t i, int64_t n, char *buf,
                         size_t cap) {
  size_t len = 0;
  switch (kind) {
  case KEY_BIGSERIAL:
  case KEY_PG_UUID4:
  case KEY_PG_IDGEN:
  case KEY_PG_UUIDV7:
    break;
  case KEY_SNOWFLAKE:
    len = (size_t)snprintf(buf, cap, "%" PRIu64 "\t", k->u64[i]);
    break;
  case KEY_UUID4:
  case KEY_UUID7:
  case KEY_ULID:
  case KEY_ULID_MONO: {
    idgen_uuid u;
    if (kind == KEY_ULID || kind == KEY_ULID_MONO) {
      memcpy(u.b, k->ulids[i].b, 16);
    } else {
      u = k->uuids[i];
    }
    (void)idgen_uuid_format(u, buf, cap);
    buf[IDGEN_UUID_TEXT_LEN] = '\t';
    len = IDGEN_UUID_TEXT_LEN + 1;
    break;
  }
  }
  len += (size_t)snprintf(buf + len, cap - len, "%" PRId64 "\n", n);
  return len;
}

/* ---- one scheme ------------------------------------------------------------------- */

static double now_s(void) {
  return (double)idgen_monotonic_ns() / 1e9;
}

static void run_scheme(PGconn *db, const options *o, keygen *k, result *res) {
  const scheme *s = res->s;
  char sql[512], v[8][64];
  int server_key = s->kind == KEY_BIGSERIAL || s->kind == KEY_PG_UUID4 ||
                   s->kind == KEY_PG_IDGEN || s->kind == KEY_PG_UUIDV7;

  snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS t_%s", s->name);
  exec_ok(db, sql);
  snprintf(sql, sizeof sql, "CREATE TABLE t_%s (%s, n bigint NOT NULL)", s->name,
           s->column);
  exec_ok(db, sql);
  /* Every scheme starts after a checkpoint: the first change to each page after it
   * writes a full-page image, for all schemes alike. */
  exec_ok(db, "CHECKPOINT");
  flush_stats(db);
  uint64_t lsn0 = current_lsn(db);
  int64_t fpi0 = wal_fpi(db);

  char copy_sql[256];
  snprintf(copy_sql, sizeof copy_sql, "COPY t_%s (%s) FROM STDIN", s->name,
           server_key ? "n" : "id, n");
  size_t cap = (size_t)o->batch * 64;
  char *buf = malloc(cap);
  if (buf == NULL) {
    die("out of memory");
  }

  size_t nsamples = (size_t)((o->rows + o->every - 1) / o->every);
  res->rate = calloc(nsamples, sizeof *res->rate);
  res->wal_mib = calloc(nsamples, sizeof *res->wal_mib);
  if (res->rate == NULL || res->wal_mib == NULL) {
    die("out of memory");
  }
  size_t sample = 0;
  int64_t done = 0, sample_rows = 0, since_checkpoint = 0;
  double t0 = now_s(), tsample = t0;
  while (done < o->rows) {
    int64_t b = o->rows - done < o->batch ? o->rows - done : o->batch;
    keygen_make(k, s->kind, (size_t)b);
    size_t len = 0;
    for (int64_t i = 0; i < b; i++) {
      len += format_row(k, s->kind, (size_t)i, done + i + 1, buf + len, cap - len);
    }
    PGresult *r = PQexec(db, copy_sql);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
      die("%s: %s", copy_sql, PQerrorMessage(db));
    }
    PQclear(r);
    if (PQputCopyData(db, buf, (int)len) != 1 || PQputCopyEnd(db, NULL) != 1) {
      die("COPY data: %s", PQerrorMessage(db));
    }
    r = PQgetResult(db);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      die("COPY t_%s: %s", s->name, PQerrorMessage(db));
    }
    PQclear(r);
    while ((r = PQgetResult(db)) != NULL) {
      PQclear(r);
    }
    done += b;
    sample_rows += b;
    since_checkpoint += b;
    if (sample_rows >= o->every || done == o->rows) {
      double t = now_s();
      res->rate[sample] = (double)sample_rows / (t - tsample);
      res->wal_mib[sample] = (double)(current_lsn(db) - lsn0) / 1048576.0;
      fprintf(stderr, "  %-10s %9" PRId64 " rows  %8.0f rows/s  WAL %7.1f MiB\n", s->name,
              done, res->rate[sample], res->wal_mib[sample]);
      sample++;
      sample_rows = 0;
      tsample = now_s(); /* the LSN query is not part of the next interval */
    }
    if (o->checkpoint_every > 0 && since_checkpoint >= o->checkpoint_every &&
        done < o->rows) {
      double tc = now_s();
      exec_ok(db, "CHECKPOINT");
      res->checkpoint_s += now_s() - tc;
      since_checkpoint = 0;
      tsample += now_s() - tc;
    }
  }
  res->seconds = now_s() - t0 - res->checkpoint_s;
  free(buf);

  flush_stats(db);
  res->wal_bytes = (int64_t)(current_lsn(db) - lsn0);
  res->wal_fpi = wal_fpi(db) - fpi0;
  snprintf(sql, sizeof sql,
           "SELECT coalesce(idx_blks_read, 0), coalesce(idx_blks_hit, 0) "
           "FROM pg_statio_user_indexes WHERE indexrelname = 't_%s_pkey'",
           s->name);
  query_row(db, sql, v, 2);
  res->idx_blks_read = to_i64(v[0]);
  res->idx_blks_hit = to_i64(v[1]);
  snprintf(sql, sizeof sql,
           "SELECT pg_relation_size('t_%s_pkey'), pg_relation_size('t_%s'), leaf_pages, "
           "internal_pages, tree_level, avg_leaf_density, pg_relation_size('t_%s_pkey') / "
           "current_setting('block_size')::bigint FROM pgstatindex('t_%s_pkey')",
           s->name, s->name, s->name, s->name);
  query_row(db, sql, v, 7);
  res->index_bytes = to_i64(v[0]);
  res->table_bytes = to_i64(v[1]);
  res->leaf_pages = to_i64(v[2]);
  res->internal_pages = to_i64(v[3]);
  res->tree_level = to_i64(v[4]);
  res->leaf_density = strtod(v[5], NULL);
  res->index_blocks = to_i64(v[6]);

  snprintf(sql, sizeof sql, "SELECT count(*) FROM t_%s", s->name);
  query_row(db, sql, v, 1);
  if (to_i64(v[0]) != o->rows) {
    die("t_%s holds %s rows, expected %" PRId64, s->name, v[0], o->rows);
  }
  /* Drop it so its pages leave shared_buffers and the next scheme starts alike. */
  snprintf(sql, sizeof sql, "DROP TABLE t_%s", s->name);
  exec_ok(db, sql);
}

/* ---- repeats -------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Scheme i's result: the run with the median insert time (all its figures), the
 * spread of the times, and the median rate of each interval over the runs. */
static void pick_median(const options *o, const result *runs, size_t i, result *out) {
  size_t n = (size_t)o->repeat, nsamples = (size_t)((o->rows + o->every - 1) / o->every);
  double *v = calloc(n, sizeof *v);
  size_t *order = calloc(n, sizeof *order);
  if (v == NULL || order == NULL) {
    die("out of memory");
  }
  /* Order the runs by time (insertion sort: n is small); take the middle one. */
  for (size_t r = 0; r < n; r++) {
    size_t j = r;
    while (j > 0 && runs[order[j - 1] * o->nschemes + i].seconds >
                        runs[r * o->nschemes + i].seconds) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = r;
  }
  *out = runs[order[(n - 1) / 2] * o->nschemes + i];
  out->seconds_min = runs[order[0] * o->nschemes + i].seconds;
  out->seconds_max = runs[order[n - 1] * o->nschemes + i].seconds;
  out->rate = calloc(nsamples, sizeof *out->rate);
  if (out->rate == NULL) {
    die("out of memory");
  }
  for (size_t j = 0; j < nsamples; j++) {
    for (size_t r = 0; r < n; r++) {
      v[r] = runs[r * o->nschemes + i].rate[j];
    }
    out->rate[j] = median(v, n);
  }
  free(v);
  free(order);
}

/* ---- output ----------------------------------------------------------------------- */

static double mib(int64_t bytes) {
  return (double)bytes / 1048576.0;
}

/* Index blocks read from outside shared_buffers. PostgreSQL counts each block the index
 * grows by as a read too (an extension is not a hit), so those are taken off. */
static int64_t index_misses(const result *r) {
  return r->idx_blks_read - r->index_blocks;
}

static void print_table(FILE *f, const options *o, const result *res) {
  size_t last = (size_t)((o->rows + o->every - 1) / o->every) - 1;
  fprintf(f,
          "| Scheme | Key | Insert s (min–max) | Rows/s | Rows/s, last %" PRId64
          " | Checkpoint s | Index MiB | "
          "Leaf pages | Leaf density %% | WAL MiB | Full-page images | "
          "Index misses | Index hits |\n",
          o->every);
  fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (size_t i = 0; i < o->nschemes; i++) {
    const result *r = &res[i];
    fprintf(f,
            "| %s | %s | %.2f (%.2f–%.2f) | %.0f | %.0f | %.2f | %.1f | %" PRId64
            " | %.1f | %.1f | %" PRId64 " | %" PRId64 " | %" PRId64 " |\n",
            r->s->name, r->s->about, r->seconds, r->seconds_min, r->seconds_max,
            (double)o->rows / r->seconds, r->rate[last], r->checkpoint_s,
            mib(r->index_bytes), r->leaf_pages, r->leaf_density, mib(r->wal_bytes),
            r->wal_fpi, index_misses(r), r->idx_blks_hit);
  }
}

static FILE *open_out(const options *o, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", o->out_dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    die("%s: %s", path, strerror(errno));
  }
  return f;
}

static void close_out(FILE *f, const char *name) {
  if (ferror(f) || fclose(f) != 0) {
    die("writing %s failed", name);
  }
}

static void write_files(const options *o, const result *res) {
  FILE *f = open_out(o, "btree_summary.tsv");
  fprintf(f,
          "scheme\trows\tbatch\tseconds\trows_per_s\tindex_bytes\ttable_bytes\tleaf_pages\t"
          "internal_pages\ttree_level\tavg_leaf_density\twal_bytes\twal_fpi\t"
          "idx_blks_read\tidx_blks_hit\tcheckpoint_s\tindex_misses\tseconds_min\t"
          "seconds_max\n");
  for (size_t i = 0; i < o->nschemes; i++) {
    const result *r = &res[i];
    fprintf(f,
            "%s\t%" PRId64 "\t%" PRId64 "\t%.3f\t%.0f\t%" PRId64 "\t%" PRId64 "\t%" PRId64
            "\t%" PRId64 "\t%" PRId64 "\t%.2f\t%" PRId64 "\t%" PRId64 "\t%" PRId64
            "\t%" PRId64 "\t%.3f\t%" PRId64 "\t%.3f\t%.3f\n",
            r->s->name, o->rows, o->batch, r->seconds, (double)o->rows / r->seconds,
            r->index_bytes, r->table_bytes, r->leaf_pages, r->internal_pages, r->tree_level,
            r->leaf_density, r->wal_bytes, r->wal_fpi, r->idx_blks_read, r->idx_blks_hit,
            r->checkpoint_s, index_misses(r), r->seconds_min, r->seconds_max);
  }
  close_out(f, "btree_summary.tsv");

  /* Wide tables for gnuplot: one row per sample, one column per scheme. */
  const char *names[2] = {"btree_rate.tsv", "btree_wal.tsv"};
  size_t nsamples = (size_t)((o->rows + o->every - 1) / o->every);
  for (int which = 0; which < 2; which++) {
    f = open_out(o, names[which]);
    fprintf(f, "rows");
    for (size_t i = 0; i < o->nschemes; i++) {
      fprintf(f, "\t%s", res[i].s->name);
    }
    fputc('\n', f);
    for (size_t j = 0; j < nsamples; j++) {
      int64_t rows = (int64_t)(j + 1) * o->every;
      fprintf(f, "%" PRId64, rows < o->rows ? rows : o->rows);
      for (size_t i = 0; i < o->nschemes; i++) {
        fprintf(f, which == 0 ? "\t%.0f" : "\t%.2f",
                which == 0 ? res[i].rate[j] : res[i].wal_mib[j]);
      }
      fputc('\n', f);
    }
    close_out(f, names[which]);
  }
  f = open_out(o, "btree_table.md");
  print_table(f, o, res);
  close_out(f, "btree_table.md");
}

int main(int argc, char **argv) {
  options o;
  parse_options(&o, argc, argv);

  PGconn *db = PQconnectdb(o.conninfo);
  if (PQstatus(db) != CONNECTION_OK) {
    die("connect: %s", PQerrorMessage(db));
  }
  exec_ok(db, "SET client_min_messages = warning");
  exec_ok(db, "CREATE EXTENSION IF NOT EXISTS pgstattuple");
  for (size_t i = 0; i < o.nschemes; i++) {
    if (o.schemes[i]->kind == KEY_PG_IDGEN || o.schemes[i]->kind == KEY_PG_UUIDV7) {
      /* The first idgen_next() waits for the extension's lease (idgen.start_wait). */
      exec_ok(db, "CREATE EXTENSION IF NOT EXISTS idgen");
      exec_ok(db, "SELECT idgen_next()");
      break;
    }
  }

  keygen k;
  keygen_init(&k, (size_t)o.batch);
  size_t nruns = (size_t)o.repeat * o.nschemes;
  result *runs = calloc(nruns, sizeof *runs); /* runs[r * nschemes + i] */
  result res[NSCHEMES];
  if (runs == NULL) {
    die("out of memory");
  }
  fprintf(stderr,
          "bench_btree_load: %" PRId64 " rows per scheme, COPY batches of %" PRId64
          ", %" PRId64 " round(s)\n",
          o.rows, o.batch, o.repeat);
  /* Round-robin, so that a noisy neighbour slows every scheme rather than one. */
  for (size_t r = 0; r < (size_t)o.repeat; r++) {
    for (size_t i = 0; i < o.nschemes; i++) {
      runs[r * o.nschemes + i].s = o.schemes[i];
      run_scheme(db, &o, &k, &runs[r * o.nschemes + i]);
    }
  }
  PQfinish(db);
  keygen_free(&k);
  for (size_t i = 0; i < o.nschemes; i++) {
    pick_median(&o, runs, i, &res[i]);
  }

  print_table(stdout, &o, res);
  if (o.out_dir != NULL) {
    write_files(&o, res);
  }
  for (size_t i = 0; i < o.nschemes; i++) {
    free(res[i].rate);
  }
  for (size_t i = 0; i < nruns; i++) {
    free(runs[i].rate);
    free(runs[i].wal_mib);
  }
  free(runs);
  return 0;
}
