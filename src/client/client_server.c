/* client_server.c: libidgen-client's servers: one refill thread per server, each with
 * its own connection (src/redis/conn.c: a poll-timed socket, plain or TLS, hiredis's
 * reader for the replies), the
 * requests tagged by an ECHO so that a reply arriving after its time-out is discarded,
 * failover with backoff and a health check (PING + INFO) before a failed server is used
 * again. */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_internal.h"
#include "client/client_reply.h"
#include "redis/conn.h"

#define NS_PER_MS INT64_C(1000000)

/* ---- one connection ------------------------------------------------------------------ */

const idgen__conn_names idgen__client_tls_names = {
    "tls.ca_file", "tls.cert_file", "tls.key_file", " then idgen_client_new_tls"};

/* Sets sv->failure (what idgen_client_server_error shows once the server is down). */
static void failed(idgen__client_server *sv, const char *why) {
  snprintf(sv->failure, sizeof sv->failure, "%.100s:%d: %.140s", sv->host, sv->port, why);
}

static void conn_close(struct idgen__redis_conn **k) {
  if (*k)
    idgen__redis_conn_close(*k, 0);
  *k = NULL;
}

static int conn_open(idgen__client_server *sv, struct idgen__redis_conn **k,
                     int64_t deadline_ns) {
  idgen_client *c = sv->client;
  idgen__conn_how how = {c->server_name, idgen__client_reader_create,
                         idgen__client_reader_free, &idgen__client_tls_names};
  char why[256];
  /* conn.c says "timed out" for a deadline passed (the connection is gone: no flag). */
  if (idgen__conn_open(k, sv->host, sv->port, c->tls, c->has_cert, &how, deadline_ns, why,
                       sizeof why) < 0) {
    *k = NULL;
    failed(sv, why);
    return strstr(why, "timed out") ? IDGEN_ETIMEDOUT : IDGEN_EUNAVAIL;
  }
  return 0;
}

/* Sends ECHO tag and the command, then reads replies until the ECHO of this tag: all
 * before it answer requests that timed out (late replies), discarded unread; the one
 * after it is this command's. A time-out leaves the connection open: the tags keep
 * whatever comes late from being taken for a later request's answer. */
static int request(idgen__client_server *sv, struct idgen__redis_conn **k, uint64_t *tag,
                   int argc, const char **argv, redisReply **out, int64_t deadline_ns) {
  idgen_client *c = sv->client;
  char tagtext[48];
  snprintf(tagtext, sizeof tagtext, "idgen-client-%llu", (unsigned long long)++*tag);
  const char *echo[2] = {"ECHO", tagtext};
  char *a = NULL, *b = NULL;
  int la = redisFormatCommandArgv(&a, 2, echo, NULL);
  int lb = redisFormatCommandArgv(&b, argc, argv, NULL);
  int rc = la < 0 || lb < 0 ? IDGEN_ENOMEM : 0;
  /* A command cut by a time-out would garble the next one: a failed send closes. */
  if (rc == 0 && (idgen__redis_conn_send(*k, a, (size_t)la, deadline_ns) < 0 ||
                  idgen__redis_conn_send(*k, b, (size_t)lb, deadline_ns) < 0)) {
    rc = idgen__redis_conn_timed_out(*k) ? IDGEN_ETIMEDOUT : IDGEN_EUNAVAIL;
    failed(sv, idgen__redis_conn_error(*k));
    conn_close(k);
  }
  free(a);
  free(b);
  int mine = 0;
  while (rc == 0) {
    redisReply *r = idgen__redis_conn_read(*k, deadline_ns);
    if (!r) {
      /* conn.c's reader errors begin "reply: ": a garbled stream, not a closed one. */
      rc = idgen__redis_conn_timed_out(*k) ? IDGEN_ETIMEDOUT
           : strstr(idgen__redis_conn_error(*k), "reply: ") == idgen__redis_conn_error(*k)
               ? IDGEN_EPROTO
               : IDGEN_EUNAVAIL;
      failed(sv, idgen__redis_conn_error(*k));
      /* Closed or garbled: a new connection next time. A time-out leaves it open. */
      if (rc != IDGEN_ETIMEDOUT)
        conn_close(k);
      return rc;
    }
    if (mine) {
      *out = r;
      return 0;
    }
    mine = idgen__client_reply_is_tag(r, tagtext);
    freeReplyObject(r);
    if (!mine)
      atomic_fetch_add_explicit(&c->stats.late_discarded, 1, memory_order_relaxed);
  }
  return rc;
}

/* A fresh connection, AUTH with the token if there is one. AUTH goes untagged: before
 * it the server answers ECHO with -NOAUTH, and a new connection has no late reply. */
static int open_authed(idgen__client_server *sv, struct idgen__redis_conn **k,
                       int64_t deadline_ns) {
  int rc = conn_open(sv, k, deadline_ns);
  if (rc < 0 || !sv->client->token[0])
    return rc;
  const char *argv[2] = {"AUTH", sv->client->token};
  char *cmd = NULL;
  int len = redisFormatCommandArgv(&cmd, 2, argv, NULL);
  redisReply *r = NULL;
  if (len < 0)
    rc = IDGEN_ENOMEM;
  else if (idgen__redis_conn_send(*k, cmd, (size_t)len, deadline_ns) < 0 ||
           !(r = idgen__redis_conn_read(*k, deadline_ns))) {
    rc = idgen__redis_conn_timed_out(*k) ? IDGEN_ETIMEDOUT : IDGEN_EUNAVAIL;
    failed(sv, idgen__redis_conn_error(*k));
  } else if (r->type == REDIS_REPLY_ERROR) {
    char why[200];
    snprintf(why, sizeof why, "AUTH refused: %.150s", r->str);
    failed(sv, why);
    rc = IDGEN_EUNAVAIL;
  }
  free(cmd);
  if (r)
    freeReplyObject(r);
  if (rc < 0)
    conn_close(k);
  return rc;
}

/* PING and INFO on a connection of its own (a new one shows the server takes
 * connections now): PONG, and INFO's ready:1 (a snowflake default generator armed). */
static int health_check(idgen__client_server *sv) {
  int64_t deadline = idgen__client_real_ns() + sv->client->opt.timeout_ms * NS_PER_MS;
  struct idgen__redis_conn *k = NULL;
  uint64_t tag = 0;
  int rc = open_authed(sv, &k, deadline);
  if (rc < 0)
    return rc;
  const char *ping[1] = {"PING"}, *info[1] = {"INFO"};
  redisReply *r = NULL;
  rc = request(sv, &k, &tag, 1, ping, &r, deadline);
  if (rc == 0 && !(r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG"))) {
    failed(sv, "PING: no PONG");
    rc = IDGEN_EUNAVAIL;
  }
  if (r)
    freeReplyObject(r);
  r = NULL;
  if (rc == 0)
    rc = request(sv, &k, &tag, 1, info, &r, deadline);
  if (rc == 0 && !idgen__client_info_ready(r)) {
    failed(sv, "INFO: not ready (no generator armed)");
    rc = IDGEN_ENOTARMED;
  }
  if (r)
    freeReplyObject(r);
  conn_close(&k);
  return rc;
}

void idgen__client_server_close(idgen__client_server *sv) {
  conn_close(&sv->conn);
}

/* A forked child's copy: freed and its socket closed here, with no close_notify (the
 * TLS session is the parent's). */
void idgen__client_server_forget(idgen__client_server *sv) {
  if (sv->conn) {
    int fd = idgen__redis_conn_fd(sv->conn);
    idgen__redis_conn_close(sv->conn, 1);
    if (fd >= 0)
      close(fd);
  }
  sv->conn = NULL;
  sv->thread_started = 0;
  sv->down = 0;
  sv->why[0] = '\0';
}

/* ---- refills ------------------------------------------------------------------------- */

#define GEN_OF(w) ((w) >> IDGEN__CLIENT_OFF_BITS)
#define OFF_MASK ((UINT64_C(1) << IDGEN__CLIENT_OFF_BITS) - 1)

/* What stream s holds but has not handed out: the current slot's rest, the filled ones
 * and the ones in flight (mu held). */
static uint64_t buffered(stream *s) {
  uint64_t w = atomic_load(&s->pos), gen = GEN_OF(w), off = w & OFF_MASK;
  uint64_t count = atomic_load(&s->slots[gen % IDGEN__CLIENT_SLOTS].count);
  uint64_t sum = off < count ? count - off : 0;
  for (uint64_t g = gen + 1; g < s->tail; g++) {
    slot *sl = &s->slots[g % IDGEN__CLIENT_SLOTS];
    sum += sl->state == SLOT_INFLIGHT ? sl->asked : atomic_load(&sl->count);
  }
  return sum;
}

typedef struct job {
  stream *s;
  uint64_t gen, n;
  int kind;
} job;

/* A stream that needs a refill and has a slot free: reserves that slot (c->mu held). */
static int pick(idgen_client *c, job *j) {
  for (stream *s = c->streams; s; s = s->next) {
    pthread_mutex_lock(&s->mu);
    uint64_t gen = GEN_OF(atomic_load(&s->pos));
    int room = s->tail - gen < IDGEN__CLIENT_SLOTS;
    uint64_t have = room && !s->fatal ? buffered(s) : 0;
    if (room && !s->fatal &&
        (s->want || have * 100 < s->batch * (uint64_t)c->opt.low_water_pct)) {
      /* Leaf's step: a batch should last about refill_period of demand. */
      int64_t now = idgen__client_real_ns(), period = c->opt.refill_period_ms * NS_PER_MS;
      if (s->last_reserve_ns >= 0 && now - s->last_reserve_ns < period &&
          s->batch * 2 <= c->opt.max_batch)
        s->batch *= 2;
      else if (s->last_reserve_ns >= 0 && now - s->last_reserve_ns > 2 * period &&
               s->batch / 2 >= c->opt.min_batch)
        s->batch /= 2;
      s->last_reserve_ns = now;
      j->s = s;
      j->gen = s->tail++;
      j->kind = s->kind;
      j->n = s->kind == NAME_ARRAY && s->batch > c->opt.max_array ? c->opt.max_array
                                                                  : s->batch;
      slot *sl = &s->slots[j->gen % IDGEN__CLIENT_SLOTS];
      sl->state = SLOT_INFLIGHT;
      sl->asked = j->n;
      atomic_store(&sl->count, 0);
      s->inflight++;
      pthread_mutex_unlock(&s->mu);
      return 1;
    }
    pthread_mutex_unlock(&s->mu);
  }
  return 0;
}

/* Ends job j: its slot filled (count numbers) or empty (count 0), its waiters woken. */
static void publish(job *j, uint64_t count) {
  stream *s = j->s;
  pthread_mutex_lock(&s->mu);
  slot *sl = &s->slots[j->gen % IDGEN__CLIENT_SLOTS];
  atomic_store(&sl->count, count);
  sl->state = SLOT_READY;
  s->inflight--;
  if (count)
    s->want = 0;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void name_refused(job *j, const char *why) {
  pthread_mutex_lock(&j->s->mu);
  j->s->fatal = 1;
  snprintf(j->s->err, sizeof j->s->err, "%s", why);
  pthread_mutex_unlock(&j->s->mu);
}

/* One refill of job j on sv: 0 (the slot filled, or the name refused for good), or an
 * error of the server (the slot left empty: another server's thread fills the next). */
static int refill(idgen__client_server *sv, struct idgen__redis_conn **k, job *j) {
  idgen_client *c = sv->client;
  int64_t deadline = idgen__client_real_ns() + c->opt.timeout_ms * NS_PER_MS;
  slot *sl = &j->s->slots[j->gen % IDGEN__CLIENT_SLOTS];
  char count[24];
  snprintf(count, sizeof count, "%llu", (unsigned long long)j->n);
  redisReply *r = NULL;
  int rc = 0;
  if (j->kind != NAME_ARRAY) {
    const char *argv[3] = {"RANGE", j->s->name, count};
    if ((rc = request(sv, k, &sv->tag, 3, argv, &r, deadline)) < 0)
      goto failed;
    uint64_t first, last, stride;
    int pr = idgen__client_parse_range(r, j->n, &first, &last, &stride);
    if (pr == 0) {
      atomic_store(&sl->is_array, 0);
      atomic_store(&sl->first, first);
      atomic_store(&sl->stride, stride);
      freeReplyObject(r);
      pthread_mutex_lock(&j->s->mu);
      j->s->kind = NAME_RANGE;
      pthread_mutex_unlock(&j->s->mu);
      atomic_fetch_add_explicit(&c->stats.refills, 1, memory_order_relaxed);
      publish(j, (last - first) / stride + 1);
      return 0;
    }
    if (pr != IDGEN__REPLY_NO_RANGES)
      goto refused;
    freeReplyObject(r);
    r = NULL;
    pthread_mutex_lock(&j->s->mu);
    j->s->kind = NAME_ARRAY;
    pthread_mutex_unlock(&j->s->mu);
    if (j->n > c->opt.max_array) {
      j->n = c->opt.max_array;
      snprintf(count, sizeof count, "%llu", (unsigned long long)j->n);
    }
  }
  if (!sl->ids && !(sl->ids = calloc(c->opt.max_array, sizeof *sl->ids))) {
    rc = IDGEN_ENOMEM;
    goto failed;
  }
  /* The age counts from before the request: the IDs were made after this. */
  int64_t born = idgen__client_age_now_ns(c);
  const char *argv[3] = {"IDS", j->s->name, count};
  if ((rc = request(sv, k, &sv->tag, 3, argv, &r, deadline)) < 0)
    goto failed;
  int pr = idgen__client_parse_ids(r, j->n, sl->ids);
  if (pr < 0)
    goto refused;
  freeReplyObject(r);
  atomic_store(&sl->is_array, 1);
  atomic_store(&sl->born_ns, born);
  atomic_fetch_add_explicit(&c->stats.refills, 1, memory_order_relaxed);
  publish(j, j->n);
  return 0;
refused:
  /* An error reply: a temporary one (TRYAGAIN not_armed, ...) fails the server; any
   * other (an unknown name, a text kind) is the name's, for good. A malformed reply
   * fails the server. */
  if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "TRYAGAIN", 8) != 0) {
    name_refused(j, r->str);
    rc = 0;
  } else {
    rc = r && r->type == REDIS_REPLY_ERROR ? IDGEN_ENOTARMED : IDGEN_EPROTO;
    failed(sv, rc == IDGEN_EPROTO ? "a malformed reply" : r->str);
    if (rc == IDGEN_EPROTO)
      conn_close(k);
  }
  freeReplyObject(r);
failed:
  if (rc < 0)
    atomic_fetch_add_explicit(&c->stats.refill_errors, 1, memory_order_relaxed);
  publish(j, 0);
  return rc;
}

static void *server_main(void *arg) {
  idgen__client_server *sv = arg;
  idgen_client *c = sv->client;
  struct idgen__redis_conn **k = &sv->conn;
  pthread_mutex_lock(&c->mu);
  while (!c->stop) {
    int64_t now = idgen__client_real_ns();
    if (sv->down) {
      if (now < sv->retry_at_ns) {
        idgen__client_wait(&c->refill_cv, &c->mu, sv->retry_at_ns);
        continue;
      }
      pthread_mutex_unlock(&c->mu);
      int rc = health_check(sv);
      pthread_mutex_lock(&c->mu);
      if (rc < 0) {
        snprintf(sv->why, sizeof sv->why, "%s", sv->failure);
        int64_t most = 8 * c->opt.backoff_ms * NS_PER_MS;
        sv->backoff_ns = sv->backoff_ns * 2 > most ? most : sv->backoff_ns * 2;
        sv->retry_at_ns = idgen__client_real_ns() + sv->backoff_ns;
        continue;
      }
      sv->down = 0;
      sv->why[0] = '\0';
    }
    job j;
    if (!pick(c, &j)) {
      uint64_t pokes = c->pokes;
      while (!c->stop && pokes == c->pokes && !sv->down)
        idgen__client_wait(&c->refill_cv, &c->mu, idgen__client_real_ns() + 20 * NS_PER_MS);
      continue;
    }
    pthread_mutex_unlock(&c->mu);
    int rc = 0;
    int64_t deadline = idgen__client_real_ns() + c->opt.timeout_ms * NS_PER_MS;
    if (!*k && (rc = open_authed(sv, k, deadline)) < 0)
      publish(&j, 0);
    else
      rc = refill(sv, k, &j);
    pthread_mutex_lock(&c->mu);
    c->pokes++;
    pthread_cond_broadcast(&c->refill_cv); /* another server takes the next refill */
    if (rc < 0) {
      snprintf(sv->why, sizeof sv->why, "%s", sv->failure);
      sv->down = 1;
      sv->backoff_ns = c->opt.backoff_ms * NS_PER_MS;
      sv->retry_at_ns = idgen__client_real_ns() + sv->backoff_ns;
      atomic_fetch_add_explicit(&c->stats.failovers, 1, memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

int idgen__client_start_threads(idgen_client *c) {
  for (size_t i = 0; i < c->nservers; i++) {
    idgen__client_server *sv = &c->servers[i];
    if (pthread_create(&sv->thread, NULL, server_main, sv) != 0) {
      c->stop = 1;
      return IDGEN_ENOMEM;
    }
    sv->thread_started = 1;
  }
  return 0;
}

void idgen__client_stop_threads(idgen_client *c) {
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_broadcast(&c->refill_cv);
  pthread_mutex_unlock(&c->mu);
  for (size_t i = 0; i < c->nservers; i++)
    if (c->servers[i].thread_started) {
      pthread_join(c->servers[i].thread, NULL);
      c->servers[i].thread_started = 0;
    }
}

void idgen__client_poke(idgen_client *c) {
  pthread_mutex_lock(&c->mu);
  c->pokes++;
  pthread_cond_broadcast(&c->refill_cv);
  pthread_mutex_unlock(&c->mu);
}
