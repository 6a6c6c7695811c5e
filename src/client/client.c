/* client.c: libidgen-client's buffers and hot path: per name a ring of slots (a range or
 * an array of IDs each) behind one packed (generation, offset) word, per thread a chunk
 * of a range; the refill threads (one per server, client_server.c) fill the slots; the
 * fork handler drops them. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client_internal.h"
#include "client/client_reply.h"
#include "redis/conn.h"

/* ---- fork: every client of the process, locked around fork() ----------------------- */

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static idgen_client *registry;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Bumped in every forked child: a chunk or client of another epoch belongs to the
 * parent. Read on the hot path with a relaxed load. */
_Atomic uint64_t idgen__client_fork_epoch;
static _Atomic uint64_t next_uid = 1;

static void lock_client(idgen_client *c) {
  pthread_mutex_lock(&c->mu);
  for (stream *s = c->streams; s; s = s->next)
    pthread_mutex_lock(&s->mu);
}
static void unlock_client(idgen_client *c) {
  for (stream *s = c->streams; s; s = s->next)
    pthread_mutex_unlock(&s->mu);
  pthread_mutex_unlock(&c->mu);
}
static void before_fork(void) {
  pthread_mutex_lock(&registry_mu);
  for (idgen_client *c = registry; c; c = c->next_client)
    lock_client(c);
}
static void after_fork_parent(void) {
  for (idgen_client *c = registry; c; c = c->next_client)
    unlock_client(c);
  pthread_mutex_unlock(&registry_mu);
}
/* The child has no refill thread; every buffer of the parent is dropped at its first
 * call (drop_forked): here only the locks are released and the epoch moved. */
static void after_fork_child(void) {
  atomic_fetch_add(&idgen__client_fork_epoch, 1);
  /* The parent's threads waited on these condvars: a child has none of those waiters,
   * so the condvars (and the locks, held by this thread) start afresh. */
  for (idgen_client *c = registry; c; c = c->next_client) {
    for (stream *s = c->streams; s; s = s->next) {
      pthread_mutex_init(&s->mu, NULL);
      idgen__client_cond_init(&s->cv);
    }
    pthread_mutex_init(&c->mu, NULL);
    idgen__client_cond_init(&c->refill_cv);
  }
  pthread_mutex_init(&registry_mu, NULL);
}
static void install_atfork(void) {
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* ---- time ---------------------------------------------------------------------------- */

int64_t idgen__client_real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t age_now_ns(idgen_client *c) {
  return c->opt.clock ? idgen_clock_now_ns(c->opt.clock) : idgen__client_real_ns();
}
int64_t idgen__client_age_now_ns(idgen_client *c) {
  return age_now_ns(c);
}

/* Waits on cv until abs_ns of CLOCK_MONOTONIC (the condvars are made with it). */
void idgen__client_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t abs_ns) {
  struct timespec ts = {(time_t)(abs_ns / 1000000000), (long)(abs_ns % 1000000000)};
  pthread_cond_timedwait(cv, mu, &ts);
}

int idgen__client_cond_init(pthread_cond_t *cv) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(cv, &a);
  pthread_condattr_destroy(&a);
  return rc;
}

/* ---- options and opening ------------------------------------------------------------- */

void idgen_client_options_init(idgen_client_options *o) {
  memset(o, 0, sizeof *o);
  o->max_wait_ms = 50;
  o->max_age_ms = 1000;
  o->refill_period_ms = 1000;
  o->timeout_ms = 200;
  o->backoff_ms = 100;
  o->min_batch = 256;
  o->max_batch = UINT64_C(1) << 20;
  o->max_array = 4096;
  o->low_water_pct = 80;
}

static int bad(char *err, size_t errlen, const char *fmt, const char *what)
    __attribute__((format(printf, 3, 0)));
static int bad(char *err, size_t errlen, const char *fmt, const char *what) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  if (err && errlen)
    snprintf(err, errlen, fmt, what);
#pragma GCC diagnostic pop
  return IDGEN_EINVAL;
}

static int check_options(const idgen_client_options *o, char *err, size_t errlen) {
  if (o->max_wait_ms < 0 || o->max_wait_ms > 3600000)
    return bad(err, errlen, "%s must be from 0 to 3600000", "max_wait_ms");
  if (o->max_age_ms < 0)
    return bad(err, errlen, "%s must not be negative", "max_age_ms");
  if (o->refill_period_ms < 1)
    return bad(err, errlen, "%s must be at least 1", "refill_period_ms");
  if (o->timeout_ms < 1 || o->timeout_ms > 600000)
    return bad(err, errlen, "%s must be from 1 to 600000", "timeout_ms");
  if (o->backoff_ms < 1)
    return bad(err, errlen, "%s must be at least 1", "backoff_ms");
  if (o->min_batch < 1 || o->min_batch > o->max_batch || o->max_batch > (UINT64_C(1) << 30))
    return bad(err, errlen, "%s: want 1 <= min_batch <= max_batch <= 2^30", "batch sizes");
  if (o->max_array < 1 || o->max_array > IDGEN__CLIENT_MAX_ARRAY)
    return bad(err, errlen, "%s must be from 1 to 65536", "max_array");
  _Static_assert(IDGEN__CLIENT_MAX_ARRAY == 65536, "the message above names the bound");
  if (o->low_water_pct < 1 || o->low_water_pct > 100)
    return bad(err, errlen, "%s must be from 1 to 100", "low_water_pct");
  if (o->auth_token && strlen(o->auth_token) >= IDGEN__CLIENT_TOKEN_MAX)
    return bad(err, errlen, "%s is too long", "auth_token");
  return 0;
}

/* "host:port[,host:port...]": each host non-empty, each port 1..65535. */
static int parse_servers(idgen_client *c, const char *list, char *err, size_t errlen) {
  if (!list || !*list)
    return bad(err, errlen, "%s: no server given (want host:port[,host:port...])",
               "servers");
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    const char *colon = memchr(p, ':', len);
    if (c->nservers == IDGEN__CLIENT_MAX_SERVERS)
      return bad(err, errlen, "%s: more than 16 servers", "servers");
    if (!colon || colon == p || (size_t)(colon - p) >= sizeof c->servers[0].host ||
        memchr(colon + 1, ':', len - (size_t)(colon - p) - 1)) {
      if (err && errlen)
        snprintf(err, errlen, "bad server address '%.*s' (want host:port)", (int)len, p);
      return IDGEN_EINVAL;
    }
    unsigned long port = 0;
    size_t digits = len - (size_t)(colon - p) - 1;
    int good = digits > 0 && digits <= 5;
    for (size_t i = 0; good && i < digits; i++) {
      char d = colon[1 + i];
      good = d >= '0' && d <= '9';
      port = port * 10 + (unsigned long)(d - '0');
    }
    if (!good || port < 1 || port > 65535) {
      if (err && errlen)
        snprintf(err, errlen, "bad port in '%.*s' (want 1 to 65535)", (int)len, p);
      return IDGEN_EINVAL;
    }
    idgen__client_server *sv = &c->servers[c->nservers++];
    memcpy(sv->host, p, (size_t)(colon - p));
    sv->host[colon - p] = 0;
    sv->port = (int)port;
    sv->client = c;
    sv->conn = NULL;
    if (!comma)
      break;
    p = comma + 1;
    if (!*p)
      return bad(err, errlen, "%s: empty address after ','", "servers");
  }
  return 0;
}

int idgen_client_new(idgen_client **out, const char *servers, const idgen_client_options *o,
                     char *err, size_t errlen) {
  return idgen_client_new_tls(out, servers, o, NULL, err, errlen);
}

/* A field of the caller's idgen_client_tls, NULL if its struct is too old to have it. */
#define TLS_FIELD(t, f)                                                                    \
  ((t)->struct_size >= offsetof(idgen_client_tls, f) + sizeof((t)->f) ? (t)->f : NULL)

/* c's TLS context from tls (NULL: plain). */
static int open_tls(idgen_client *c, const idgen_client_tls *tls, char *err,
                    size_t errlen) {
  if (!tls)
    return 0;
  if (tls->struct_size < offsetof(idgen_client_tls, ca_file) + sizeof tls->ca_file)
    return bad(err, errlen, "%s: struct_size is unset (idgen_client_tls_init)", "tls");
  const char *ca = TLS_FIELD(tls, ca_file), *cert = TLS_FIELD(tls, cert_file),
             *key = TLS_FIELD(tls, key_file), *name = TLS_FIELD(tls, server_name);
  int has_cert = cert && *cert, has_key = key && *key;
  if (has_cert != has_key)
    return bad(err, errlen, "%s: cert_file and key_file go together", "tls");
  if (name && strlen(name) >= sizeof c->server_name)
    return bad(err, errlen, "%s is too long", "tls.server_name");
  char why[320];
  c->tls = idgen__conn_tls_new(&idgen__client_tls_names, ca, cert, key, why, sizeof why);
  if (!c->tls)
    return bad(err, errlen, "%s", why);
  c->has_cert = has_cert;
  snprintf(c->server_name, sizeof c->server_name, "%s", name ? name : "");
  return 0;
}

int idgen_client_new_tls(idgen_client **out, const char *servers,
                         const idgen_client_options *o, const idgen_client_tls *tls,
                         char *err, size_t errlen) {
  pthread_once(&atfork_once, install_atfork);
  idgen_client_options defaults;
  if (!o) {
    idgen_client_options_init(&defaults);
    o = &defaults;
  }
  if (!out)
    return bad(err, errlen, "%s is NULL", "out");
  int rc = check_options(o, err, errlen);
  if (rc < 0)
    return rc;
  idgen_client *c = calloc(1, sizeof *c);
  if (!c)
    return IDGEN_ENOMEM;
  c->opt = *o;
  if (o->auth_token)
    snprintf(c->token, sizeof c->token, "%s", o->auth_token);
  c->opt.auth_token = NULL;
  if ((rc = parse_servers(c, servers, err, errlen)) < 0 ||
      (rc = open_tls(c, tls, err, errlen)) < 0) {
    free(c);
    return rc;
  }
  pthread_mutex_init(&c->mu, NULL);
  idgen__client_cond_init(&c->refill_cv);
  c->uid = atomic_fetch_add(&next_uid, 1);
  c->epoch = atomic_load(&idgen__client_fork_epoch);
  pthread_mutex_lock(&registry_mu);
  c->next_client = registry;
  registry = c;
  pthread_mutex_unlock(&registry_mu);
  *out = c;
  return 0;
}

static void free_streams(idgen_client *c) {
  stream *s = c->streams;
  while (s) {
    stream *next = s->next;
    for (int i = 0; i < IDGEN__CLIENT_SLOTS; i++)
      free(s->slots[i].ids);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
    s = next;
  }
  c->streams = NULL;
}

void idgen_client_free(idgen_client *c) {
  if (!c)
    return;
  pthread_mutex_lock(&registry_mu);
  for (idgen_client **p = &registry; *p; p = &(*p)->next_client)
    if (*p == c) {
      *p = c->next_client;
      break;
    }
  pthread_mutex_unlock(&registry_mu);
  /* A child never joins its parent's threads: they do not exist here. */
  int mine = c->epoch == atomic_load(&idgen__client_fork_epoch);
  if (mine)
    idgen__client_stop_threads(c);
  for (size_t i = 0; i < c->nservers; i++)
    if (mine)
      idgen__client_server_close(&c->servers[i]);
    else
      idgen__client_server_forget(&c->servers[i]);
  idgen__redis_tls_free(c->tls);
  free_streams(c);
  pthread_cond_destroy(&c->refill_cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* ---- the parent's buffers, dropped in a child ---------------------------------------- */

/* In a forked child at its first call: every slot of every name burnt (pos moved past
 * every generation filled), the threads and connections of the parent forgotten. */
static void drop_forked(idgen_client *c) {
  pthread_mutex_lock(&c->mu);
  uint64_t epoch = atomic_load(&idgen__client_fork_epoch);
  if (c->epoch != epoch) {
    for (stream *s = c->streams; s; s = s->next) {
      pthread_mutex_lock(&s->mu);
      uint64_t gen = s->tail;
      for (int i = 0; i < IDGEN__CLIENT_SLOTS; i++) {
        atomic_store(&s->slots[i].count, 0);
        s->slots[i].state = SLOT_EMPTY;
      }
      s->inflight = 0;
      atomic_store(&s->pos, gen << IDGEN__CLIENT_OFF_BITS);
      s->tail = gen + 1;
      pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = 0; i < c->nservers; i++)
      idgen__client_server_forget(&c->servers[i]);
    c->threads_started = 0;
    c->stop = 0;
    c->epoch = epoch;
    if (c->streams && idgen__client_start_threads(c) == 0)
      c->threads_started = 1;
  }
  pthread_mutex_unlock(&c->mu);
}

/* ---- names --------------------------------------------------------------------------- */

static int name_ok(const char *name, size_t *len) {
  size_t n = 0;
  for (; name[n]; n++) {
    char ch = name[n];
    if (n >= IDGEN__CLIENT_NAME_MAX ||
        !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
      return 0;
  }
  *len = n;
  return n > 0;
}

/* The stream of name, made at its first use (and the refill threads with the first). */
static stream *stream_of(idgen_client *c, const char *name) {
  stream *s = atomic_load_explicit(&c->streams_head, memory_order_acquire);
  for (; s; s = s->next)
    if (!strcmp(s->name, name))
      return s;
  pthread_mutex_lock(&c->mu);
  for (s = c->streams; s; s = s->next)
    if (!strcmp(s->name, name))
      break;
  if (!s && (s = calloc(1, sizeof *s)) != NULL) {
    snprintf(s->name, sizeof s->name, "%s", name);
    s->uid = atomic_fetch_add(&next_uid, 1);
    pthread_mutex_init(&s->mu, NULL);
    idgen__client_cond_init(&s->cv);
    s->tail = 1; /* generation 0: an empty slot, used up */
    s->batch = c->opt.min_batch;
    s->last_reserve_ns = -1;
    s->next = c->streams;
    c->streams = s;
    atomic_store_explicit(&c->streams_head, s, memory_order_release);
  }
  if (s && !c->threads_started && idgen__client_start_threads(c) == 0)
    c->threads_started = 1;
  pthread_mutex_unlock(&c->mu);
  return s;
}

/* ---- the hot path -------------------------------------------------------------------- */

#define GEN_OF(w) ((w) >> IDGEN__CLIENT_OFF_BITS)
#define OFF_MASK ((UINT64_C(1) << IDGEN__CLIENT_OFF_BITS) - 1)

/* Takes up to want numbers of the current slot with one CAS (the slot read before it:
 * a slot is refilled only once pos has left its generation, so a CAS that succeeds
 * proves what was read was the slot's). A range: *first, *stride. An array: the IDs
 * into ids. 0 when the slot is used up (then *w is the word that showed it). An
 * array slot older than max_age_ms is burnt whole here. */
static uint64_t reserve(idgen_client *c, stream *s, uint64_t want, uint64_t *first,
                        uint64_t *stride, uint64_t *ids, uint64_t ids_cap, uint64_t *w) {
  for (;;) {
    uint64_t word = atomic_load(&s->pos);
    slot *sl = &s->slots[GEN_OF(word) % IDGEN__CLIENT_SLOTS];
    uint64_t off = word & OFF_MASK, count = atomic_load(&sl->count);
    if (off >= count) {
      *w = word;
      return 0;
    }
    uint64_t k = count - off < want ? count - off : want;
    if (atomic_load_explicit(&sl->is_array, memory_order_relaxed)) {
      int64_t born = atomic_load(&sl->born_ns);
      if (c->opt.max_age_ms > 0 && age_now_ns(c) - born > c->opt.max_age_ms * 1000000) {
        /* Too old: the rest of the slot is burnt, never handed out. */
        if (atomic_compare_exchange_strong(&s->pos, &word, word - off + count))
          atomic_fetch_add_explicit(&c->stats.burnt, count - off, memory_order_relaxed);
        continue;
      }
      if (k > ids_cap)
        k = ids_cap;
      for (uint64_t i = 0; i < k; i++)
        ids[i] = atomic_load_explicit(&sl->ids[off + i], memory_order_relaxed);
      *first = 0;
      *stride = 0;
    } else {
      *first = atomic_load(&sl->first) + off * atomic_load(&sl->stride);
      *stride = atomic_load(&sl->stride);
    }
    if (atomic_compare_exchange_weak(&s->pos, &word, word + k))
      return k;
  }
}

/* The current slot is used up (as word w showed): move to the next filled one, or wait
 * for a refill until deadline (real monotonic ns). 0 to try again, or an error. */
static int advance(idgen_client *c, stream *s, uint64_t w, int64_t deadline_ns) {
  int rc = 0, waited = 0, poked = 0;
  pthread_mutex_lock(&s->mu);
  while (atomic_load(&s->pos) == w) {
    uint64_t gen = GEN_OF(w);
    slot *next = &s->slots[(gen + 1) % IDGEN__CLIENT_SLOTS];
    if (gen + 1 < s->tail && next->state == SLOT_READY) {
      s->slots[gen % IDGEN__CLIENT_SLOTS].state = SLOT_EMPTY;
      atomic_store(&s->pos, (gen + 1) << IDGEN__CLIENT_OFF_BITS);
      break;
    }
    if (s->fatal) {
      rc = IDGEN_EINVAL;
      break;
    }
    if (!waited) {
      atomic_fetch_add_explicit(&c->stats.waits, 1, memory_order_relaxed);
      waited = 1;
    }
    if (idgen__client_real_ns() >= deadline_ns) {
      atomic_fetch_add_explicit(&c->stats.unavailable, 1, memory_order_relaxed);
      rc = IDGEN_EUNAVAIL;
      break;
    }
    s->want = 1;
    if (!poked) {
      /* The refill threads take c->mu before a stream's mu: never the other way. */
      poked = 1;
      pthread_mutex_unlock(&s->mu);
      idgen__client_poke(c);
      pthread_mutex_lock(&s->mu);
      continue;
    }
    idgen__client_wait(&s->cv, &s->mu, deadline_ns);
  }
  pthread_mutex_unlock(&s->mu);
  /* A refill thread looks at the levels again after a slot was used up. */
  if (rc == 0)
    idgen__client_poke(c);
  return rc;
}

/* up to want numbers (a range: *first, *stride; an array: ids), at least one, or an
 * error; waits at most max_wait_ms. */
static int64_t take(idgen_client *c, stream *s, uint64_t want, uint64_t *first,
                    uint64_t *stride, uint64_t *ids, uint64_t ids_cap) {
  int64_t deadline = -1;
  for (;;) {
    uint64_t w;
    uint64_t k = reserve(c, s, want, first, stride, ids, ids_cap, &w);
    if (k)
      return (int64_t)k;
    if (deadline < 0)
      deadline = idgen__client_real_ns() + c->opt.max_wait_ms * 1000000;
    int rc = advance(c, s, w, deadline);
    if (rc)
      return rc;
  }
}

/* One thread's chunk of a range of one name: next..end (stride apart), of the client
 * and fork epoch it was taken in. A few per thread, by name pointer. */
typedef struct chunk {
  uint64_t client_uid, stream_uid, epoch;
  const char *name_ptr;
  stream *s;
  uint64_t next, left, stride;
} chunk;
#define CHUNKS 8
static _Thread_local chunk chunks[CHUNKS];

/* How many numbers one thread takes from the shared range at a time. */
#define CHUNK_MAX 256

static int next_slow(idgen_client *c, const char *name, chunk *ch, uint64_t *id) {
  size_t len;
  if (!name || !name_ok(name, &len))
    return IDGEN_EINVAL;
  if (c->epoch != atomic_load_explicit(&idgen__client_fork_epoch, memory_order_relaxed))
    drop_forked(c);
  stream *s = ch->s && ch->client_uid == c->uid && ch->name_ptr == name &&
                      !strcmp(ch->s->name, name)
                  ? ch->s
                  : stream_of(c, name);
  if (!s)
    return IDGEN_ENOMEM;
  uint64_t first, stride, one;
  /* An array name: one ID, one CAS (no chunk: each ID's age is checked). */
  int64_t k = take(c, s, CHUNK_MAX, &first, &stride, &one, 1);
  if (k < 0)
    return (int)k;
  if (stride == 0) {
    /* An array's ID, taken alone. */
    *id = one;
    ch->s = s;
    ch->name_ptr = name;
    ch->client_uid = c->uid;
    ch->left = 0;
    return 0;
  }
  *id = first;
  ch->client_uid = c->uid;
  ch->stream_uid = s->uid;
  ch->epoch = c->epoch;
  ch->name_ptr = name;
  ch->s = s;
  ch->next = first + stride;
  ch->stride = stride;
  ch->left = (uint64_t)k - 1;
  return 0;
}

int idgen_client_next(idgen_client *c, const char *name, uint64_t *id) {
  chunk *ch = &chunks[((uintptr_t)name >> 3) % CHUNKS];
  /* The name's text too, not only its pointer: a caller may reuse one buffer for
   * several names, and a number of one sequence is no ID of another. */
  if (ch->left && ch->name_ptr == name && ch->client_uid == c->uid &&
      ch->epoch == atomic_load_explicit(&idgen__client_fork_epoch, memory_order_relaxed) &&
      strcmp(ch->s->name, name) == 0) {
    *id = ch->next;
    ch->next += ch->stride;
    ch->left--;
    return 0;
  }
  return next_slow(c, name, ch, id);
}

int idgen_client_next_n(idgen_client *c, const char *name, uint64_t *ids, size_t n) {
  size_t len;
  if (!name || !name_ok(name, &len) || (n && !ids))
    return IDGEN_EINVAL;
  if (c->epoch != atomic_load(&idgen__client_fork_epoch))
    drop_forked(c);
  stream *s = stream_of(c, name);
  if (!s)
    return IDGEN_ENOMEM;
  size_t done = 0;
  while (done < n) {
    uint64_t first, stride;
    int64_t k = take(c, s, n - done, &first, &stride, ids + done, n - done);
    if (k < 0) {
      if (done)
        atomic_fetch_add_explicit(&c->stats.burnt, done, memory_order_relaxed);
      return (int)k;
    }
    if (stride)
      for (int64_t i = 0; i < k; i++)
        ids[done + (size_t)i] = first + (uint64_t)i * stride;
    done += (size_t)k;
  }
  return 0;
}

void idgen_client_name_error(idgen_client *c, const char *name, char *out, size_t outlen) {
  if (!outlen)
    return;
  out[0] = 0;
  size_t len;
  if (!name || !name_ok(name, &len))
    return;
  for (stream *s = atomic_load(&c->streams_head); s; s = s->next)
    if (!strcmp(s->name, name)) {
      pthread_mutex_lock(&s->mu);
      snprintf(out, outlen, "%s", s->err);
      pthread_mutex_unlock(&s->mu);
    }
}

void idgen_client_server_error(idgen_client *c, size_t i, char *out, size_t outlen) {
  if (!out || !outlen)
    return;
  out[0] = '\0';
  if (!c || i >= c->nservers)
    return;
  pthread_mutex_lock(&c->mu);
  snprintf(out, outlen, "%s", c->servers[i].why);
  pthread_mutex_unlock(&c->mu);
}

void idgen_client_stats_get(idgen_client *c, idgen_client_stats *o) {
  o->refills = atomic_load(&c->stats.refills);
  o->refill_errors = atomic_load(&c->stats.refill_errors);
  o->late_discarded = atomic_load(&c->stats.late_discarded);
  o->burnt = atomic_load(&c->stats.burnt);
  o->waits = atomic_load(&c->stats.waits);
  o->unavailable = atomic_load(&c->stats.unavailable);
  o->failovers = atomic_load(&c->stats.failovers);
}
