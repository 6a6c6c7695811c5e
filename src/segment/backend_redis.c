/* backend_redis.c: the segment backend on Redis: one key per name,
 * idgen:default:segment:NAME, holding the max; a block is one script that checks the
 * key, INCRBYs it by the step and records the step in the registry hash
 * idgen:default:segments (name -> step). The registry is the guard: a key missing while
 * the registry names it was lost (DEL, eviction, a restore without it) and is refused,
 * never started again at 1. Redis acknowledges a write before it is on disk unless
 * appendfsync is always, and a restart without AOF, or a failover to a lagging replica,
 * loses both key and registry: docs/segment.md says what then repeats. */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redis/client.h"
#include "segment/segment.h"

#define REGISTRY "idgen:default:segments"

/* KEYS 1 counter, 2 registry. ARGV 1 name, 2 step, 3 start_after. 0 created (at
 * start_after: the first block is start_after + 1..), 1 there already, -1 lost (the
 * registry names it, the key is gone) and no start_after: a start_after N > 0 is the
 * operator's word that no number above N was handed out, as on PostgreSQL and etcd. */
static const char init_lua[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end\n"
    "if ARGV[3] == '0' and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return -1 end\n"
    "redis.call('SET', KEYS[1], ARGV[3])\n"
    "redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
    "return 0\n";

/* KEYS 1 counter, 2 registry. ARGV 1 name, 2 step, 3 the largest max allowed.
 * {1, max} leased; {-1} never made; {-2} lost (registry names it); {-3, max} full;
 * {-4} not a counter. */
static const char fetch_lua[] =
    "local cur = redis.call('GET', KEYS[1])\n"
    "if not cur then\n"
    "  if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return {-2} end\n"
    "  return {-1}\n"
    "end\n"
    "local n = tonumber(cur)\n"
    "if not n or not string.match(cur, '^%d+$') then return {-4} end\n"
    "if n > tonumber(ARGV[3]) - tonumber(ARGV[2]) then return {-3, cur} end\n"
    "local max = redis.call('INCRBY', KEYS[1], ARGV[2])\n"
    "redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
    "return {1, max}\n";

typedef struct redis_backend {
  idgen__segment_backend base;
  idgen__redis r;
  pthread_mutex_t mu; /* guards warning: the fetcher writes it, the server reads it */
  char warning[IDGEN__REDIS_WHY_MAX];
} redis_backend;

static void keep_warning(redis_backend *e) {
  pthread_mutex_lock(&e->mu);
  snprintf(e->warning, sizeof e->warning, "%s", e->r.warning);
  pthread_mutex_unlock(&e->mu);
}

static void redis_warning(idgen__segment_backend *b, char *out, size_t outlen) {
  redis_backend *e = (redis_backend *)b;
  pthread_mutex_lock(&e->mu);
  snprintf(out, outlen, "%s", e->warning);
  pthread_mutex_unlock(&e->mu);
}

static void key_of(const char *name, char *out, size_t outlen) {
  snprintf(out, outlen, "idgen:default:segment:%s", name);
}

static redisReply *eval(redis_backend *e, const char *script, const char *name,
                        const char *step, const char *extra, int *rc) {
  char key[IDGEN_SEGMENT_NAME_MAX + 32];
  key_of(name, key, sizeof key);
  const char *argv[] = {"EVAL", script, "2", key, REGISTRY, name, step, extra};
  redisReply *rep = idgen__redis_argv(&e->r, extra ? 8 : 7, argv, rc);
  keep_warning(e);
  if (!rep) {
    *rc = idgen__segment_why(&e->base, *rc == IDGEN_EINVAL ? IDGEN_EPROTO : IDGEN_EUNAVAIL,
                             "%s", e->r.why);
    return NULL;
  }
  if (rep->type == REDIS_REPLY_ERROR) {
    *rc = idgen__segment_why(&e->base, IDGEN_EUNAVAIL, "%s: %.200s",
                             idgen__redis_where(&e->r), rep->str);
    freeReplyObject(rep);
    return NULL;
  }
  return rep;
}

static int redis_init(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  redis_backend *e = (redis_backend *)b;
  char s[24], after[24];
  snprintf(s, sizeof s, "%" PRIu64, step);
  snprintf(after, sizeof after, "%" PRIu64, start_after);
  int rc;
  redisReply *rep = eval(e, init_lua, name, s, after, &rc);
  if (!rep)
    return rc;
  long long v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -9;
  freeReplyObject(rep);
  if (v == -1)
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "%s: key idgen:default:segment:%s is gone but " REGISTRY
                              " says it existed: its numbers would start again at 1 "
                              "(restore the key, or 'idgen segment init --start-after N %s' "
                              "with N at or above every number handed out)",
                              idgen__redis_where(&e->r), name, name);
  if (v != 0 && v != 1)
    return idgen__segment_why(b, IDGEN_EPROTO, "redis init script: unexpected reply");
  return (int)v;
}

static int redis_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                       uint64_t floor, idgen__segment_block *out) {
  redis_backend *e = (redis_backend *)b;
  (void)floor; /* one counter: each block lies above the last (the generator checks) */
  char s[24], max[24];
  snprintf(s, sizeof s, "%" PRIu64, step);
  snprintf(max, sizeof max, "%" PRIu64, (uint64_t)IDGEN_SEGMENT_NUMBER_MAX);
  int rc;
  redisReply *rep = eval(e, fetch_lua, name, s, max, &rc);
  if (!rep)
    return rc;
  long long outcome = -9, v = 0;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
      rep->element[0]->type == REDIS_REPLY_INTEGER)
    outcome = rep->element[0]->integer;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2)
    v = rep->element[1]->type == REDIS_REPLY_INTEGER
            ? rep->element[1]->integer
            : strtoll(rep->element[1]->str, NULL, 10);
  freeReplyObject(rep);
  const char *where = idgen__redis_where(&e->r);
  switch (outcome) {
  case 1:
    if (v < (long long)step)
      return idgen__segment_why(b, IDGEN_EPROTO, "%s: INCRBY gave %lld", where, v);
    *out = (idgen__segment_block){(uint64_t)v, step, 1};
    return 0;
  case -1:
    return idgen__segment_why(
        b, -ENOENT,
        "%s: no key idgen:default:segment:%s: run 'idgen segment init "
        "--backend redis' first",
        where, name);
  case -2:
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "%s: key idgen:default:segment:%s is gone but " REGISTRY
                              " says it existed (lost: a restart without AOF, a failover, "
                              "an eviction or a DEL): refused, its numbers would repeat; "
                              "restore it, or 'idgen segment init --start-after N %s'",
                              where, name, name);
  case -3:
    return idgen__segment_why(
        b, IDGEN_ERANGE,
        "%s: key idgen:default:segment:%s is at %lld: a block of %" PRIu64
        " would pass 2^63 - 1",
        where, name, v, step);
  case -4:
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "%s: key idgen:default:segment:%s is not a segment max",
                              where, name);
  }
  return idgen__segment_why(b, IDGEN_EPROTO, "redis fetch script: unexpected reply");
}

static void redis_free(idgen__segment_backend *b) {
  redis_backend *e = (redis_backend *)b;
  idgen__redis_close(&e->r, 0);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static const idgen__segment_backend_class redis_class = {
    "redis", redis_init, redis_fetch, redis_free, redis_warning, NULL, NULL};

int idgen__segment_redis_new(idgen__segment_backend **out, const char *dsn,
                             int64_t timeout_ms, char *err, size_t errlen) {
  idgen__redis_url url;
  char why[300];
  if (idgen__redis_url_parse(dsn, &url, why, sizeof why)) {
    snprintf(err, errlen, "segment redis DSN: %s", why);
    return IDGEN_EINVAL;
  }
  redis_backend *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &redis_class;
  pthread_mutex_init(&e->mu, NULL);
  idgen__redis_init(&e->r, &url, timeout_ms);
  *out = &e->base;
  return 0;
}
