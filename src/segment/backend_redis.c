/* backend_redis.c: the segment backend on Redis: one key per name,
 * idgen:default:segment:NAME, holding the max; a block is one script that checks the
 * server and the key, INCRBYs it by the step and writes the new max into the key's
 * made record, idgen:default:segment-made:NAME, a key of its own (so that one eviction
 * or DEL does not take both). A counter missing while its record is there was lost and
 * is refused, naming the recorded max; init --start-after N below it needs --force.
 * A period's key (NAME:NUMBER) is made only by key_start, which also keeps the fleet's
 * newest period, idgen:default:segment-newest:NAME:KIND, and never makes a key at or
 * below it. Every script refuses a server whose maxmemory-policy may evict idgen's keys
 * (allkeys-*), or a key of idgen's with an expiry; a key is made only with AOF on
 * (init --force overrides). The older registry hash idgen:default:segments (name ->
 * step) is still read as a record without a number. Redis acknowledges a write before
 * it is on disk unless appendfsync is always, and a restart from an RDB snapshot or a
 * failover to a lagging replica takes counter and records back together:
 * docs/segment.md says what then repeats. */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lease/lease_internal.h"
#include "redis/client.h"
#include "segment/segment.h"

#define PREFIX "idgen:default:segment"
#define REGISTRY "idgen:default:segments"

/* What every script checks first, with its helpers. evicting(): {-8, the maxmemory-policy}
 * when it may evict a key without an expiry, {-10, key} for the first of KEYS that has
 * one, nil when none may go. gt(a, b): a > b for decimal strings without leading zeros
 * (exact past 2^53, where Lua's numbers are not). canonical(s): s is such a string.
 * aof_off(): AOF is off now (INFO, not the connect's copy: CONFIG SET changes it). */
#define PRELUDE                                                                            \
  "local function evicting()\n"                                                            \
  "  local p = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)')\n" \
  "  if p ~= 'noeviction' and not (p and string.sub(p, 1, 9) == 'volatile-') then\n"       \
  "    return {-8, p or '?'} end\n"                                                        \
  "  for i = 1, #KEYS do\n"                                                                \
  "    if redis.call('PTTL', KEYS[i]) >= 0 then return {-10, KEYS[i]} end\n"               \
  "  end\n"                                                                                \
  "  return nil\n"                                                                         \
  "end\n"                                                                                  \
  "local function canonical(s) return s == '0' or string.match(s, '^[1-9]%d*$') end\n"     \
  "local function gt(a, b) if #a ~= #b then return #a > #b end return a > b end\n"         \
  "local function aof_off()\n"                                                             \
  "  return string.match(redis.call('INFO', 'persistence'), 'aof_enabled:0') ~= nil\n"     \
  "end\n"                                                                                  \
  "local bad = evicting()\n"                                                               \
  "if bad then return bad end\n"                                                           \
  "local made = redis.call('GET', KEYS[2])\n"                                              \
  "if made and not canonical(made) then return {-4, KEYS[2]} end\n"                        \
  "local legacy = redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1\n"

/* The replies, {code[, value]}. */
enum {
  R_MADE = 0,      /* init, key_start: made */
  R_THERE = 1,     /* init, key_start: there already; fetch: {1, max} leased */
  R_NEVER = -1,    /* fetch: no key and no record */
  R_LOST = -2,     /* no key, its record there: {-2, recorded max or '?'} */
  R_FULL = -3,     /* {-3, max}: a block would pass the largest max */
  R_NOT_MAX = -4,  /* {-4, key}: a key that holds no max */
  R_PASSED = -5,   /* key_start: {-5, newest}: a period at or below the newest */
  R_BACK = -6,     /* fetch: {-6, recorded}: the counter below its record */
  R_BELOW = -7,    /* init: {-7, recorded}: --start-after below the record */
  R_EVICTING = -8, /* {-8, what}: the server may evict idgen's keys */
  R_VOLATILE = -9, /* init, key_start: AOF off */
  R_EXPIRES = -10, /* {-10, key}: a key of idgen\'s with an expiry */
};

/* KEYS 1 counter, 2 made, 3 registry. ARGV 1 name, 2 start_after, 3 force. A
 * start_after N > 0 is the operator's word that no number above N was handed out, as
 * on PostgreSQL and etcd; below the record's max only with force. */
static const char init_lua[] =
    PRELUDE "if redis.call('EXISTS', KEYS[1]) == 1 then return {1} end\n"
            "if (made or legacy) and ARGV[2] == '0' then return {-2, made or '?'} end\n"
            "if made and gt(made, ARGV[2]) and ARGV[3] ~= '1' then return {-7, made} end\n"
            "if aof_off() and ARGV[3] ~= '1' then return {-9} end\n"
            "redis.call('SET', KEYS[1], ARGV[2])\n"
            "redis.call('SET', KEYS[2], ARGV[2])\n"
            "return {0}\n";

/* KEYS 1 counter, 2 made, 3 registry, 4 the newest period of the name and kind. ARGV 1
 * key name, 2 the period's number. A period key is made at 0 only above the newest
 * period any server entered (a newest at or above it means its key was made once), and
 * the newest raised to it; one that is there raises the newest too. */
static const char key_start_lua[] = PRELUDE
    "local newest = redis.call('GET', KEYS[4])\n"
    "if newest and not canonical(newest) then return {-4, KEYS[4]} end\n"
    "if redis.call('EXISTS', KEYS[1]) == 1 then\n"
    "  if not newest or gt(ARGV[2], newest) then redis.call('SET', KEYS[4], ARGV[2]) end\n"
    "  return {1}\n"
    "end\n"
    "if made or legacy then return {-2, made or '?'} end\n"
    "if newest and not gt(ARGV[2], newest) then return {-5, newest} end\n"
    "if aof_off() then return {-9} end\n"
    "redis.call('SET', KEYS[1], '0')\n"
    "redis.call('SET', KEYS[2], '0')\n"
    "redis.call('SET', KEYS[4], ARGV[2])\n"
    "return {0}\n";

/* KEYS 1 counter, 2 made, 3 registry. ARGV 1 name, 2 step, 3 the largest max allowed.
 * The new max goes into the made record in the same script. */
static const char fetch_lua[] = PRELUDE
    "local cur = redis.call('GET', KEYS[1])\n"
    "if not cur then\n"
    "  if made or legacy then return {-2, made or '?'} end\n"
    "  return {-1}\n"
    "end\n"
    "if not canonical(cur) then return {-4, KEYS[1]} end\n"
    "if made and gt(made, cur) then return {-6, made} end\n"
    "if tonumber(cur) > tonumber(ARGV[3]) - tonumber(ARGV[2]) then return {-3, cur} end\n"
    "redis.call('INCRBY', KEYS[1], ARGV[2])\n"
    "local max = redis.call('GET', KEYS[1])\n"
    "redis.call('SET', KEYS[2], max)\n"
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

/* The keys of a name: its counter, its made record. */
typedef struct keys {
  char counter[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 40];
} keys;

static keys keys_of(const char *name) {
  keys k;
  snprintf(k.counter, sizeof k.counter, PREFIX ":%s", name);
  snprintf(k.made, sizeof k.made, PREFIX "-made:%s", name);
  return k;
}

/* A script's reply {code[, value]}: the code, and the value as text into value. */
typedef struct outcome {
  long long code;
  char value[IDGEN_SEGMENT_NAME_MAX + 48];
} outcome;

/* Runs script with KEYS counter, made, registry (and extra_key if not NULL) and the
 * nargs ARGV; 0 and *o, or an error with why set. */
static int run(redis_backend *e, const char *script, const keys *k, const char *extra_key,
               int nargs, const char *const *args, outcome *o) {
  const char *argv[10] = {"EVAL",     script,  extra_key ? "4" : "3",
                          k->counter, k->made, REGISTRY};
  int argc = 6;
  if (extra_key)
    argv[argc++] = extra_key;
  for (int i = 0; i < nargs; i++)
    argv[argc++] = args[i];
  int rc;
  redisReply *rep = idgen__redis_argv(&e->r, argc, argv, &rc);
  keep_warning(e);
  if (!rep)
    return idgen__segment_why(&e->base, rc == IDGEN_EINVAL ? IDGEN_EPROTO : IDGEN_EUNAVAIL,
                              "%s", e->r.why);
  if (rep->type == REDIS_REPLY_ERROR) {
    rc = idgen__segment_why(&e->base, IDGEN_EUNAVAIL, "%s: %.200s",
                            idgen__redis_where(&e->r), rep->str);
    freeReplyObject(rep);
    return rc;
  }
  o->code = -99;
  o->value[0] = '\0';
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
      rep->element[0]->type == REDIS_REPLY_INTEGER)
    o->code = rep->element[0]->integer;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2) {
    redisReply *v = rep->element[1];
    if (v->type == REDIS_REPLY_INTEGER)
      snprintf(o->value, sizeof o->value, "%lld", v->integer);
    else if (v->type == REDIS_REPLY_STRING)
      snprintf(o->value, sizeof o->value, "%.*s", (int)(v->len < 100 ? v->len : 100),
               v->str);
  }
  freeReplyObject(rep);
  return 0;
}

/* The refusals every script shares; 1 when o is none of them. */
static int refusal(redis_backend *e, const keys *k, const outcome *o) {
  const char *where = idgen__redis_where(&e->r);
  switch (o->code) {
  case R_EVICTING:
    return idgen__segment_why(
        &e->base, IDGEN_EPROTO,
        "%s: maxmemory-policy %s may evict %s and its record: "
        "refused, numbers would repeat (use noeviction or volatile-*)",
        where, o->value, k->counter);
  case R_EXPIRES:
    return idgen__segment_why(
        &e->base, IDGEN_EPROTO,
        "%s: key %s has an expiry: refused, numbers would repeat once "
        "it goes (PERSIST it)",
        where, o->value);
  case R_NOT_MAX:
    return idgen__segment_why(&e->base, IDGEN_EPROTO, "%s: key %s is not a segment max",
                              where, o->value);
  case R_VOLATILE:
    return idgen__segment_why(
        &e->base, IDGEN_EPROTO,
        "%s has AOF off: a restart would lose %s and its records, and "
        "make it again at 1: refused (appendonly yes%s)",
        where, k->counter,
        strchr(k->counter + sizeof PREFIX, ':') ? "" : "; init --force accepts it");
  }
  return 1;
}

/* The refusal of a counter that is gone while its record is there, naming the
 * recorded max ('?': the registry, which keeps none). */
static int lost(redis_backend *e, const keys *k, const char *name, const char *recorded) {
  const char *where = idgen__redis_where(&e->r);
  const char *record = strcmp(recorded, "?") ? k->made : REGISTRY;
  if (strchr(name, ':')) /* a period's key: init takes none */
    return idgen__segment_why(
        &e->base, IDGEN_EPROTO,
        "%s: key %s is gone, but %s records it made, up to %s: "
        "refused, numbers would repeat; restore the key at or above it",
        where, k->counter, record, recorded);
  return idgen__segment_why(
      &e->base, IDGEN_EPROTO,
      "%s: key %s is gone, but %s records it made, up to %s: refused, "
      "numbers would repeat; restore it, or 'idgen segment init "
      "--start-after N %s', N >= every number handed out",
      where, k->counter, record, recorded, name);
}

static int redis_init(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t start_after, int force) {
  (void)step; /* the step is the generator's; the key keeps only the max */
  redis_backend *e = (redis_backend *)b;
  keys k = keys_of(name);
  char after[24];
  snprintf(after, sizeof after, "%" PRIu64, start_after);
  const char *args[] = {name, after, force ? "1" : "0"};
  outcome o;
  int rc = run(e, init_lua, &k, NULL, 3, args, &o);
  if (rc)
    return rc;
  if (o.code == R_MADE || o.code == R_THERE)
    return (int)o.code;
  if (o.code == R_LOST)
    return lost(e, &k, name, o.value);
  if (o.code == R_BELOW)
    return idgen__segment_why(
        b, IDGEN_EPROTO,
        "%s: --start-after %s is below %s, the highest number %s "
        "records as handed out: refused, numbers would repeat (--force "
        "accepts it)",
        idgen__redis_where(&e->r), after, o.value, k.made);
  rc = refusal(e, &k, &o);
  return rc <= 0
             ? rc
             : idgen__segment_why(b, IDGEN_EPROTO, "redis init script: unexpected reply");
}

/* A period's key: made at 0 only above the newest period of its name and kind that any
 * server entered (idgen__segment_key_start). */
static int redis_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                           uint64_t step) {
  (void)ns, (void)step; /* one Redis is the namespace; no step is kept */
  redis_backend *e = (redis_backend *)b;
  const char *colon = strrchr(key, ':');
  if (!colon || idgen__segment_name_check(key))
    return idgen__segment_why(b, IDGEN_EINVAL, "redis: '%s' is not a period key", key);
  size_t digits = strlen(colon + 1);
  const char *kind = digits == 8 ? "day" : digits == 6 ? "month" : "year";
  char newest[IDGEN_SEGMENT_NAME_MAX + 48];
  snprintf(newest, sizeof newest, PREFIX "-newest:%.*s:%s", (int)(colon - key), key, kind);
  keys k = keys_of(key);
  const char *args[] = {key, colon + 1};
  outcome o;
  int rc = run(e, key_start_lua, &k, newest, 2, args, &o);
  if (rc)
    return rc;
  if (o.code == R_MADE || o.code == R_THERE)
    return (int)o.code;
  if (o.code == R_LOST)
    return lost(e, &k, key, o.value);
  if (o.code == R_PASSED)
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "%s: no key %s, and %s says servers have entered period %s: "
                              "a period's key is never made at or below it (numbers would "
                              "repeat): refused",
                              idgen__redis_where(&e->r), k.counter, newest, o.value);
  rc = refusal(e, &k, &o);
  return rc <= 0 ? rc
                 : idgen__segment_why(b, IDGEN_EPROTO,
                                      "redis key_start script: unexpected reply");
}

static int redis_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                       uint64_t floor, idgen__segment_block *out) {
  redis_backend *e = (redis_backend *)b;
  (void)floor; /* one counter: each block lies above the last (the generator checks) */
  keys k = keys_of(name);
  char s[24], largest[24];
  snprintf(s, sizeof s, "%" PRIu64, step);
  snprintf(largest, sizeof largest, "%" PRIu64, (uint64_t)IDGEN_SEGMENT_NUMBER_MAX);
  const char *args[] = {name, s, largest};
  outcome o;
  int rc = run(e, fetch_lua, &k, NULL, 3, args, &o);
  if (rc)
    return rc;
  const char *where = idgen__redis_where(&e->r);
  char *end;
  errno = 0;
  unsigned long long v = strtoull(o.value, &end, 10);
  switch (o.code) {
  case R_THERE:
    if (errno || end == o.value || *end || v < step || v > IDGEN_SEGMENT_NUMBER_MAX)
      return idgen__segment_why(b, IDGEN_EPROTO, "%s: INCRBY gave '%s'", where, o.value);
    *out = (idgen__segment_block){(uint64_t)v, step, 1};
    return 0;
  case R_NEVER:
    return idgen__segment_why(
        b, -ENOENT, "%s: no key %s: run 'idgen segment init --backend redis' first", where,
        k.counter);
  case R_LOST:
    return lost(e, &k, name, o.value);
  case R_FULL:
    return idgen__segment_why(
        b, IDGEN_ERANGE, "%s: key %s is at %s: a block of %" PRIu64 " would pass 2^63 - 1",
        where, k.counter, o.value, step);
  case R_BACK:
    return idgen__segment_why(b, IDGEN_EPROTO,
                              "%s: key %s is below %s, the highest number %s records as "
                              "handed out (set lower, or restored older): refused, its "
                              "numbers would repeat",
                              where, k.counter, o.value, k.made);
  }
  rc = refusal(e, &k, &o);
  return rc <= 0
             ? rc
             : idgen__segment_why(b, IDGEN_EPROTO, "redis fetch script: unexpected reply");
}

static void redis_free(idgen__segment_backend *b) {
  redis_backend *e = (redis_backend *)b;
  idgen__redis_free(&e->r, 0);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static const idgen__segment_backend_class redis_class = {
    "redis", redis_init, redis_fetch, redis_free, redis_warning, redis_key_start, NULL};

int idgen__segment_redis_new(idgen__segment_backend **out, const char *dsn,
                             int64_t timeout_ms, const idgen_lease_config *access,
                             char *err, size_t errlen) {
  idgen__redis_url url;
  char why[300];
  if (idgen__redis_url_parse(dsn, &url, why, sizeof why)) {
    snprintf(err, errlen, "segment redis DSN: %s", why);
    return IDGEN_EINVAL;
  }
  if (access && idgen__lease_redis_access_check(access, dsn, why, sizeof why)) {
    snprintf(err, errlen, "segment redis: %s", why);
    return IDGEN_EINVAL;
  }
  redis_backend *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &redis_class;
  pthread_mutex_init(&e->mu, NULL);
  int rc = idgen__redis_init(&e->r, &url, access, timeout_ms, why, sizeof why);
  if (rc) {
    snprintf(err, errlen, "segment redis: %s", why);
    redis_free(&e->base);
    return rc;
  }
  *out = &e->base;
  return 0;
}
