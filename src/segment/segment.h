/* segment.h: segment (ticket-server) generators: dense, strictly increasing integers
 * handed out from blocks leased from a backend (file, postgres, etcd, mariadb) with
 * one atomic operation each, the next block fetched in the background (Leaf's double
 * buffer), the block size adapting to demand. Internal to the idgen binary (its own
 * static library, so libidgen needs no database client); see docs/segment.md. */
#ifndef IDGEN_SEGMENT_H
#define IDGEN_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/clock.h"
#include "idgen/error.h"
#include "idgen/lease.h" /* idgen_lease_latency: the fetch latency histogram */
#include "segment/period.h"

#define IDGEN_SEGMENT_NAME_MAX 64 /* a name is 1-64 of [A-Za-z0-9_.-], not starting '.' */
#define IDGEN_SEGMENT_WHY_MAX 256
#define IDGEN_SEGMENT_DSN_MAX 1024
/* The largest number any backend hands out: PostgreSQL's bigint, and what JSON clients
 * can still read as a string. */
#define IDGEN_SEGMENT_NUMBER_MAX INT64_MAX
/* A block holds at most this many numbers (the generator's offset field). */
#define IDGEN_SEGMENT_STEP_MAX (UINT64_C(1) << 30) /* PostgreSQL keeps it in an integer */

/* ---- Backends ---------------------------------------------------------------------- */

/* A block: count numbers, max - (count - 1) * stride up to max, stride apart (1 for one
 * counter; the server count for Flickr's interleaved ticket servers). */
typedef struct idgen__segment_block {
  uint64_t max;
  uint64_t count;
  uint64_t stride;
} idgen__segment_block;

typedef struct idgen__segment_backend idgen__segment_backend;

/* A backend is a struct whose first field points at its class. Calls on one backend
 * come from one thread at a time (the generator's fetcher, or the CLI). Each returns 0
 * or a negative error and, on failure, leaves one line in backend->why. */
typedef struct idgen__segment_backend_class {
  const char *name; /* "file", "postgres", "etcd", "mariadb" */
  /* Creates what name needs (file, table and row, key; on every ticket server) so that
   * its first block starts at start_after + 1 (mariadb: the first number of the server's
   * offset above start_after; 0 for a new sequence, N for one that takes over from
   * numbers 1..N already in use). 0 when created, 1 when it existed already (left as it
   * was). step is recorded where the backend keeps one (postgres). postgres, etcd and
   * redis record what they made: one that is gone while its record is there was lost,
   * and is refused (IDGEN_EPROTO, one line), unless start_after > 0 (postgres, etcd: the
   * operator's N, at or above every number it handed out). Where the backend holds a
   * record of the highest number handed out, a start_after below it is refused
   * (IDGEN_EPROTO, one line naming the recorded number) unless force is 1 (redis, which
   * also refuses to make a key while AOF is off unless force is 1). */
  int (*init)(idgen__segment_backend *b, const char *name, uint64_t step,
              uint64_t start_after, int force);
  /* Leases the next block of step numbers of name with one atomic operation of the
   * backend, all of them above floor (the highest number this generator has leased
   * before, 0 if none: only mariadb, whose servers count apart, needs it; the others
   * are above it by construction, and the generator checks). The block is durable in
   * the backend before this returns. -ENOENT when name was never initialised,
   * IDGEN_ERANGE when the numbers would pass IDGEN_SEGMENT_NUMBER_MAX, IDGEN_EUNAVAIL
   * or IDGEN_ETIMEDOUT when the backend cannot be reached, IDGEN_EPROTO for a reply
   * that makes no sense (or a misconfigured ticket server), or for a name whose counter
   * is gone while the backend's record says it made it (postgres, etcd, redis), and on
   * redis for a policy that may evict its keys, or a counter below its record. */
  int (*fetch)(idgen__segment_backend *b, const char *name, uint64_t step, uint64_t floor,
               idgen__segment_block *out);
  void (*free)(idgen__segment_backend *b);
  /* Copies into out what the backend's server can lose ("" none), as the last connect
   * found it: redis (AOF off, appendfsync not always). Thread-safe (the server's main
   * thread reads it while the fetcher connects). NULL: the backend has none. */
  void (*warning)(idgen__segment_backend *b, char *out, size_t outlen);
  /* The backend's side of idgen__segment_key_start (below), which says what it does
   * and returns. NULL: the key made at 0 if absent (init with start_after 0). */
  int (*key_start)(idgen__segment_backend *b, const char *ns, const char *key,
                   uint64_t step);
  /* The backend's side of idgen__segment_period_check (below). NULL: any period. */
  int (*period_check)(idgen__segment_backend *b, const char *name, idgen__period_kind kind);
} idgen__segment_backend_class;

struct idgen__segment_backend {
  const idgen__segment_backend_class *vtable;
  char why[IDGEN_SEGMENT_WHY_MAX]; /* the last failure, one line */
};

/* Opens a backend by kind and DSN without contacting it (so a service can start while
 * its backend is down); the DSN's syntax is checked here:
 *   file      PATH: the file itself, or a directory that holds DIR/segment-NAME
 *   postgres  a libpq connection string ("host=127.0.0.1 port=5432 dbname=ids") or URI
 *   etcd      URL[,URL...] (http://127.0.0.1:2379, or all https://)
 *   mariadb   servers=HOST:PORT[,HOST:PORT...] [database=test] [user=root]
 *             [password=...] [table=tickets64]
 *   redis     redis://[user:pass@]HOST:PORT[/db] (the primary), or rediss://
 * timeout_ms bounds each request (0: 5000). IDGEN_EINVAL with one line in err for an
 * unknown kind or a bad DSN. */
int idgen__segment_backend_open(idgen__segment_backend **out, const char *kind,
                                const char *dsn, int64_t timeout_ms, char *err,
                                size_t errlen);
/* The same, the etcd backend taking etcd's TLS files and user from access (its
 * etcd_cacert, etcd_cert, etcd_key, etcd_user, etcd_password_file, etcd_password;
 * NULL: none) and the redis backend Redis's (redis_cacert, ..., redis_password),
 * checked as the lease's are; the other backends ignore it. */
int idgen__segment_backend_open_with(idgen__segment_backend **out, const char *kind,
                                     const char *dsn, int64_t timeout_ms,
                                     const idgen_lease_config *access, char *err,
                                     size_t errlen);
/* The fields of src that idgen__segment_backend_open_with's access reads (the etcd and
 * Redis TLS files, users and passwords) into dst; the rest of dst stays as it is. */
void idgen__segment_access_copy(idgen_lease_config *dst, const idgen_lease_config *src);
static inline void idgen__segment_backend_free(idgen__segment_backend *b) {
  if (b)
    b->vtable->free(b);
}
/* "file, postgres, etcd, mariadb, redis": for usage lines. */
const char *idgen__segment_backend_kinds(void);

/* 0 if name is a valid generator name, else IDGEN_EINVAL. */
int idgen__segment_name_check(const char *name);

/* Sets b->why, printf style; returns err. */
int idgen__segment_why(idgen__segment_backend *b, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A period key NAME:NUMBER (orders:20261201): 1 with its family, the key of the
 * backend's newest-period record (NAME:YYYYMMDD, NAME:YYYYMM, NAME:YYYY: one record per
 * name and kind of period), and its number; 0 for any other key. */
int idgen__segment_period_key(const char *key, char *family, size_t familylen,
                              uint64_t *number);
/* The refusal of a period key below the newest period a server entered (IDGEN_EPROTO):
 * one line naming both periods and where the record is. */
int idgen__segment_behind(idgen__segment_backend *b, const char *key, uint64_t newest,
                          const char *record);

/* The backends' constructors (backend.c dispatches by kind). */
int idgen__segment_file_new(idgen__segment_backend **out, const char *dsn,
                            int64_t timeout_ms, char *err, size_t errlen);
int idgen__segment_postgres_new(idgen__segment_backend **out, const char *dsn,
                                int64_t timeout_ms, char *err, size_t errlen);
/* A libpq connection string or URI as libpq will take it: its syntax and keywords
 * (PQconninfoParse), and the values of the keywords with a fixed set of them (sslmode,
 * ...), which libpq itself checks only when it connects. 0, or IDGEN_EINVAL with one
 * line in err (no prefix). The backend's constructor and `idgen adopt` use it. */
int idgen__segment_postgres_dsn_check(const char *dsn, char *err, size_t errlen);
int idgen__segment_etcd_new(idgen__segment_backend **out, const char *dsn,
                            int64_t timeout_ms, const idgen_lease_config *access, char *err,
                            size_t errlen);
/* The file backend's host-wide claim of name in namespace ns: one file per name on a
 * host, used by any number of processes (an abstract socket per process and name; see
 * src/host/claim.c). 0 when held (until the backend is freed); IDGEN_ECONFLICT, with
 * one line naming the other process and its directory, when another process serves
 * name from another file. Other backends: 0, nothing done. */
int idgen__segment_file_claim(idgen__segment_backend *b, const char *ns, const char *name);
/* What every user of a file backend runs before its first fetch: the claim, then a
 * check that name's file holds a record. With may_make, the directory form makes the
 * file at 0 if this directory never made it (idgen serve's default file); a file it
 * made and lost (removed, emptied) is refused, as is a missing file without may_make:
 * only idgen segment init (the backend's init) makes those. 0 when made, 1 when it
 * was there, or an error with one line in b->why. Other backends: 1, nothing done. */
int idgen__segment_file_start(idgen__segment_backend *b, const char *ns, const char *name,
                              int may_make);
/* 1 for a file backend of the directory form (a file per name), else 0. */
int idgen__segment_file_is_dir(const idgen__segment_backend *b);
int idgen__segment_mariadb_new(idgen__segment_backend **out, const char *dsn,
                               int64_t timeout_ms, char *err, size_t errlen);
int idgen__segment_redis_new(idgen__segment_backend **out, const char *dsn,
                             int64_t timeout_ms, const idgen_lease_config *access,
                             char *err, size_t errlen);

/* ---- The generator ----------------------------------------------------------------- */

typedef struct idgen__segment idgen__segment;

typedef struct idgen__segment_config {
  const char *name;                /* copied by idgen__segment_new */
  idgen__segment_backend *backend; /* required; not owned: free it after the generator */
  idgen_clock *clock;              /* required; measures block lifetimes and retries */
  uint64_t step;                   /* the first and the smallest block; default 1000 */
  uint64_t max_step;               /* the largest block; default 100000 (at least step) */
  int prefetch_pct;  /* fetch the next block once this much of the current one is
                        used, 0-100; default 20 */
  int64_t period_ns; /* target block lifetime: the step doubles when a block lasts
                        less, halves when it lasts more than twice this; default
                        15 min */
  int64_t retry_ns;  /* after a failed fetch, try again this much later; default 1 s */
  int manual;        /* 0: a fetcher thread of its own (the service). 1: no thread;
                        fetches run in idgen__segment_run_fetcher, or inline in a
                        call that finds nothing to hand out (tests, tools) */
  /* A time-scoped sequence (issue 28): with a period, each period of the clock's time
   * in tz is its own sequence under the key NAME:NUMBER (orders:20261201), from 1 to
   * 10^period_digits - 1, and a number is handed out as NUMBER * 10^period_digits + n
   * (20261201000123) only while the clock is inside that period. */
  idgen__period_kind period;
  const idgen__tz *tz;    /* required with a period; not owned */
  unsigned period_digits; /* 1-10; default 6 */
  const char *ns;         /* the file backend's claim namespace (period keys) */
} idgen__segment_config;

/* The largest name a period generator may have: room for ":YYYYMMDD" in a key. */
#define IDGEN_SEGMENT_PERIOD_NAME_MAX (IDGEN_SEGMENT_NAME_MAX - 9)

/* Whether the backend, as its DSN names it, can keep periods of kind for name, without
 * contacting it (config time): file: the directory form only; mariadb: the period
 * tables' names (TABLE_YYYYMMDD, TABLE_periods) within MariaDB's 64 characters. 0, or
 * IDGEN_EINVAL with one line in b->why. */
int idgen__segment_period_check(idgen__segment_backend *b, const char *name,
                                idgen__period_kind kind);

/* Starts a period's key before its first fetch, under every rule the backend keeps for
 * a name: file (directory form only): the host-wide claim (held by the generator's
 * name), and the key's file made at 0 only if the directory never made it
 * (segment-KEY.created), a lost one refused; postgres, etcd: the row or key made at 0
 * if absent (atomically: a racing maker leaves it as it is), with its made record, and a
 * lost one (absent while its record is there) refused; mariadb: the period's ticket
 * table TABLE_NUMBER is started on each server at the first fetch from it there (made
 * if its record in TABLE_periods allows, a lost one refused), and the period's first
 * fetch goes to the first server; redis: the key made at 0 with its made record, only
 * if no record names it, AOF is on and the period lies above the name's newest period
 * (its record raised in the same script). 0 or 1 (it was there), or an error with one
 * line in b->why. */
int idgen__segment_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                             uint64_t step);

/* The defaults above, for name, backend and clock. */
void idgen__segment_config_init(idgen__segment_config *c, const char *name,
                                idgen__segment_backend *backend, idgen_clock *clock);

/* Checks the config (name, steps, percentages) and creates the generator. Nothing is
 * fetched yet in manual mode; otherwise the thread starts fetching the first block at
 * once (see idgen__segment_wait_ready). IDGEN_EINVAL with one line in err. */
int idgen__segment_new(idgen__segment **out, const idgen__segment_config *config, char *err,
                       size_t errlen);
/* Stops the fetcher (waiting for a fetch in flight to end) and frees; NULL is fine. No
 * other call may be running on it. Numbers leased and not handed out are lost (gaps). */
void idgen__segment_free(idgen__segment *seg);

/* Hands out the next number. Thread-safe; lock-free (one CAS) while the current block
 * lasts. Each thread's numbers rise strictly, and no number is handed out twice, here
 * or by any other generator of the same name on the same backend. When the current
 * block is used up it moves to the buffered one; when none is buffered it waits for
 * the fetch in flight, or fails at once with IDGEN_EBACKEND if the backend's last
 * answer was a failure (idgen__segment_last_error says why); it hands out numbers
 * again, by itself, once a fetch succeeds. With a period: IDGEN_ECLOCKBACK while the
 * clock is behind the current period, IDGEN_EPERIOD when the clock's period cannot be
 * entered (its bounds do not hold the clock) or the period changed more than 3 times
 * during the call; nothing is fetched for such a period. */
int idgen__segment_next(idgen__segment *seg, uint64_t *out);
/* Hands out n numbers into out[0..n), increasing (runs of consecutive numbers within a
 * block). Returns n, or a negative error if none was handed out, or the count handed
 * out before an error. Thread-safe. */
int64_t idgen__segment_next_batch(idgen__segment *seg, uint64_t *out, size_t n);
/* Hands out a range of up to n numbers with one reservation: *first, *first + *stride,
 * ... (*count of them, 1 <= *count <= n), the last *first + (*count - 1) * *stride. A
 * range never crosses a block, so it is shorter than n when the current block has fewer
 * left (ask again for the rest). 0, or the error of idgen__segment_next (nothing handed
 * out). Thread-safe. */
int idgen__segment_next_range(idgen__segment *seg, uint64_t n, uint64_t *first,
                              uint64_t *count, uint64_t *stride);

/* Waits (relative sleeps) up to timeout_ms for a first block: 0 once one was fetched,
 * the fetch's error if it failed (after the first attempt), IDGEN_ETIMEDOUT. */
int idgen__segment_wait_ready(idgen__segment *seg, int64_t timeout_ms);

/* Manual mode: runs the fetcher once in the calling thread: fetches a block if one is
 * due (the buffered slot is empty, the current block is prefetch_pct used, and no
 * retry pause is running on the clock). 1 if it fetched, 0 if nothing was due, or the
 * fetch's error. */
int idgen__segment_run_fetcher(idgen__segment *seg);

/* The last fetch error, one line ("" if the last fetch succeeded). Thread-safe. */
void idgen__segment_last_error(idgen__segment *seg, char *out, size_t outlen);

typedef struct idgen__segment_stats {
  uint64_t issued;         /* numbers handed out */
  uint64_t blocks_fetched; /* blocks leased from the backend */
  uint64_t backend_errors; /* failed fetches */
  uint64_t refused;        /* calls refused with IDGEN_EBACKEND */
  uint64_t waits;          /* calls that found no block and waited for a fetch */
  uint64_t step;           /* the step of the last block (config step before any) */
  uint64_t current_left;   /* numbers left in the current block */
  uint64_t next_left;      /* numbers in the buffered block (0: none) */
  uint64_t last_max;       /* the highest number leased so far (0: none) */
  uint64_t period;         /* the current period's number (0: none yet, or no period) */
  uint64_t period_dropped; /* numbers dropped at period changes (leased, never handed) */
  uint64_t period_burnt;   /* numbers reserved, then found outside their period (burnt) */
  int backend_ok;          /* 1 if the last fetch succeeded (0 before the first) */
  int ready;               /* readiness: a number can be handed out now, or the
                              backend answered its last call (a call waits at most
                              for one fetch) */
  idgen_lease_latency fetch_latency; /* every fetch, in the lease histogram's buckets */
} idgen__segment_stats;

/* A snapshot of the counters. Thread-safe. */
void idgen__segment_stats_get(idgen__segment *seg, idgen__segment_stats *out);
const char *idgen__segment_name(const idgen__segment *seg);

#endif
