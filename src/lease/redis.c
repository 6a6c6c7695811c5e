/* redis.c: the Redis provider: a worker ID is the key idgen:<ns>:worker:<N> holding a
 * random 128-bit token with a PX expiry; its HWM, fencing counter and holder record live
 * in the hash idgen:<ns>:hwm:<N> (fields hwm, fence, run_id, replid, replicas, attaches,
 * record), never expiring.
 * Every step is one Lua script, so Redis runs it whole: claim (first free key, SET NX
 * PX, read the HWM, bump the counter), renew (token, then PEXPIRE), HWM write (token and
 * counter, never lower), release (token, final HWM, DEL). Each HWM write stamps the
 * hash with the server's history as the script reads it from INFO (HISTORY_LUA); a claim
 * trusts a HWM only under the same history, else it may be lost and the claim waits TTL
 * + ahead (see claim_floor). Keys of a datacenter live under idgen:<ns>:dc:<D>:. The
 * client: src/redis/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <hiredis/hiredis.h>

#include "core/core_internal.h"
#include "idgen/clock.h"
#include "idgen/redis.h"
#include "lease/lease_internal.h"
#include "redis/client.h"

/* The server's history now, read by the script itself so it is the one the script runs
 * under: run_id changes with every start (data lost by a restart); master_replid with a
 * promotion (a replica taking over has another history) and when a primary re-syncs as
 * a replica. A replica that left this primary may have been promoted and handed out a
 * lease on its own history while this primary never learnt of it (issue 35: a failback
 * to the old primary), so the stamp also counts the replicas connected and the attaches
 * so far (INFO stats' sync_full + sync_partial_ok: every replica's sync is one of them).
 * stamp(hk) writes it; same(hk) is 1 when hk was stamped under this history and no
 * replica has left since: every replica of the stamp and every one attached since is
 * still connected. A reset of the counters (CONFIG RESETSTAT) reads as a replica left. */
#define HISTORY_LUA                                                                    \
  "local function history()\n"                                                          \
  "  local s, r = redis.call('INFO', 'server'), redis.call('INFO', 'replication')\n"     \
  "  local st = redis.call('INFO', 'stats')\n"                                          \
  "  local function n(t, f) return tonumber(string.match(t, f .. ':(%d+)') or '0') end\n" \
  "  return string.match(s, 'run_id:(%x+)') or '', "                                   \
  "string.match(r, 'master_replid:(%x+)') or '', n(r, 'connected_slaves'), "           \
  "n(st, 'sync_full') + n(st, 'sync_partial_ok')\n"                                     \
  "end\n"                                                                               \
  "local function stamp(hk)\n"                                                          \
  "  local run, rid, n, a = history()\n"                                                \
  "  redis.call('HSET', hk, 'run_id', run, 'replid', rid, 'replicas', n, 'attaches', a)\n" \
  "end\n"                                                                               \
  "local function same(hk)\n"                                                           \
  "  local run, rid, n, a = history()\n"                                                \
  "  local h = redis.call('HMGET', hk, 'run_id', 'replid', 'replicas', 'attaches')\n"   \
  "  local hn, ha = tonumber(h[3]), tonumber(h[4])\n"                                   \
  "  if h[1] ~= run or h[2] ~= rid or not hn or not ha or a < ha then return 0 end\n"   \
  "  if n < hn + (a - ha) then return 0 end\n"                                          \
  "  return 1\n"                                                                        \
  "end\n"

/* KEYS none (the scan builds them: one primary, not Redis Cluster). ARGV: 1 prefix,
 * 2 lo, 3 hi, 4 token, 5 ttl_ms, 6 record, 7 alias mode (0 none; 1 our claimed value
 * under a datacenter, alias = whole worker ID dc * 2^low + w under 8; 2 a whole worker
 * ID, alias = its split under 8 .. "dc:" .. high .. ":"), 8 alias base, 9 low bits,
 * 10 datacenter. Returns {w, fence, hwm, alias hwm, same history 1/0 (of both, when the
 * alias has a hash: its holder may have written it elsewhere), skipped} (hwm -1: no
 * record), or {-1, skipped} when every ID is taken. A hash whose hwm is not a number is
 * passed over (skipped): everyone takes the smallest free ID, so one bad record must
 * not stop them all. */
static const char claim_lua[] = HISTORY_LUA
    "local p, lo, hi, tok, ttl, rec = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), "
    "ARGV[4], ARGV[5], ARGV[6]\n"
    "local mode, base, low, dc = tonumber(ARGV[7]), ARGV[8], tonumber(ARGV[9]), "
    "tonumber(ARGV[10])\n"
    "local function alias(w)\n"
    "  if mode == 1 then return base, string.format('%d', dc * 2^low + w) end\n"
    "  if mode == 2 then\n"
    "    local high = string.format('%d', math.floor(w / 2^low))\n"
    "    return base .. 'dc:' .. high .. ':', string.format('%d', w % 2^low)\n"
    "  end\n"
    "  return nil, nil\n"
    "end\n"
    "local function hwm_of(h)\n"
    "  local ok, v = pcall(redis.call, 'HGET', h, 'hwm')\n"
    "  if not ok then return nil end\n"
    "  if not v then return -1 end\n"
    "  return tonumber(v)\n"
    "end\n"
    "local skipped = 0\n"
    "for w = lo, hi do\n"
    "  local n = string.format('%d', w)\n"
    "  local wk, hk = p .. 'worker:' .. n, p .. 'hwm:' .. n\n"
    "  local ap, an = alias(w)\n"
    "  local free = redis.call('EXISTS', wk) == 0\n"
    "  if free and ap then free = redis.call('EXISTS', ap .. 'worker:' .. an) == 0 end\n"
    "  if free then\n"
    "    local h = hwm_of(hk)\n"
    "    local oh = -1\n"
    "    if ap then oh = hwm_of(ap .. 'hwm:' .. an) end\n"
    "    if h == nil or oh == nil then\n"
    "      skipped = skipped + 1\n"
    "    else\n"
    "      redis.call('SET', wk, tok, 'NX', 'PX', ttl)\n"
    "      local fence = redis.call('HINCRBY', hk, 'fence', 1)\n"
    "      local trusted = same(hk)\n"
    "      if trusted == 1 and ap and oh >= 0 then trusted = same(ap .. 'hwm:' .. an) end\n"
    "      redis.call('HSET', hk, 'record', rec)\n"
    "      local hs, ohs = string.format('%d', h), string.format('%d', oh)\n"
    "      return {w, fence, hs, ohs, trusted, skipped}\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return {-1, skipped}\n";

/* KEYS 1 worker key. ARGV 1 token, 2 ttl_ms. 1 renewed, 0 not ours (gone or another's). */
static const char renew_lua[] = "local held = redis.call('GET', KEYS[1])\n"
                                "if held ~= ARGV[1] then return 0 end\n"
                                "return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n";

/* KEYS 1 worker key, 2 HWM hash. ARGV 1 token, 2 fence, 3 hwm, 4 record.
 * {1, hwm stored} written (never lowered: the stored one may be higher), {0} the worker
 * key is not ours, {-1} the counter moved (another claim since ours). */
static const char hwm_lua[] = HISTORY_LUA
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end\n"
    "if redis.call('HGET', KEYS[2], 'fence') ~= ARGV[2] then return {-1} end\n"
    "local cur = tonumber(redis.call('HGET', KEYS[2], 'hwm') or '0') or 0\n"
    "local new = tonumber(ARGV[3])\n"
    "if new > cur then redis.call('HSET', KEYS[2], 'hwm', ARGV[3]) else new = cur end\n"
    "stamp(KEYS[2])\n"
    "redis.call('HSET', KEYS[2], 'record', ARGV[4])\n"
    "return {1, string.format('%d', new)}\n";

/* KEYS 1 worker key, 2 HWM hash. ARGV 1 token, 2 fence, 3 final hwm (0: leave it).
 * 1 released, 0 not ours (nothing done). */
static const char release_lua[] =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
    "if ARGV[3] ~= '0' and redis.call('HGET', KEYS[2], 'fence') == ARGV[2] then\n"
    "  local cur = tonumber(redis.call('HGET', KEYS[2], 'hwm') or '0') or 0\n"
    "  if tonumber(ARGV[3]) > cur then redis.call('HSET', KEYS[2], 'hwm', ARGV[3]) end\n"
    "end\n"
    "redis.call('DEL', KEYS[1])\n"
    "return 1\n";

typedef struct redis_lease {
  idgen_lease base;
  idgen__redis r;
  char ns[IDGEN_LEASE_NAME_MAX];
  idgen_lease_space space;
  int64_t ttl_ms;
  int64_t ahead_ms;
  int64_t max_skew_ms;
  int64_t min_replicas;
  int started; /* the start checks (clock skew, region) passed */
  char host[IDGEN_LEASE_NAME_MAX];
  char region[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int held;
  uint64_t worker; /* the claimed value held */
  char token[33];  /* 128 random bits in hex */
  char fence[24];  /* the counter our claim set */
  uint64_t fork_gen;
} redis_lease;

static int refuse_in_child(redis_lease *e) {
  if (!idgen__lease_forked(e->fork_gen))
    return 0;
  return idgen__why(&e->base, IDGEN_EFORKED,
                    "this provider was opened by the parent process: open a new one");
}

static void observe(void *ctx, int64_t ns) {
  idgen__lease_observe(ctx, ns);
}

/* "idgen:<ns>:" and, under datacenter dc >= 0, "dc:<dc>:". */
static void prefix_of(const redis_lease *e, int64_t dc, char *out, size_t outlen) {
  if (dc >= 0)
    snprintf(out, outlen, "idgen:%s:dc:%lld:", e->ns, (long long)dc);
  else
    snprintf(out, outlen, "idgen:%s:", e->ns);
}

static void key_of(const redis_lease *e, const char *kind, uint64_t w, char *out,
                   size_t outlen) {
  char prefix[128];
  prefix_of(e, e->space.datacenter, prefix, sizeof prefix);
  snprintf(out, outlen, "%s%s:%llu", prefix, kind, (unsigned long long)w);
}

/* Runs a script; a transport failure or a server error becomes why(). refused (a
 * replica now, idgen) is EUNAVAIL to the keeper: it retries, and the next connect
 * checks again. */
static redisReply *eval(redis_lease *e, const char *what, int argc, const char **argv,
                        int *rc) {
  redisReply *rep = idgen__redis_argv(&e->r, argc, argv, rc);
  if (!rep) {
    *rc = idgen__why(&e->base, IDGEN_EUNAVAIL, "%s", e->r.why);
    return NULL;
  }
  if (rep->type == REDIS_REPLY_ERROR) {
    *rc = idgen__why(&e->base, IDGEN_EUNAVAIL, "%s %s: %.160s", idgen__redis_where(&e->r),
                     what, rep->str);
    freeReplyObject(rep);
    return NULL;
  }
  return rep;
}

static int64_t int_of(const redisReply *r) {
  if (r->type == REDIS_REPLY_INTEGER)
    return r->integer;
  if (r->type == REDIS_REPLY_STRING)
    return strtoll(r->str, NULL, 10);
  return 0;
}

/* With --redis-min-replicas N, a write counts once N replicas have it (WAIT). Redis
 * promises nothing more: a replica that acknowledged can still lose the write in a
 * failover to another one (docs/leases.md). */
static int wait_replicas(redis_lease *e) {
  if (e->min_replicas <= 0)
    return 0;
  char n[24], ms[24];
  snprintf(n, sizeof n, "%lld", (long long)e->min_replicas);
  snprintf(ms, sizeof ms, "%lld", (long long)e->r.timeout_ms);
  const char *argv[] = {"WAIT", n, ms};
  int rc;
  redisReply *rep = eval(e, "WAIT", 3, argv, &rc);
  if (!rep)
    return rc;
  int64_t acked = int_of(rep);
  freeReplyObject(rep);
  if (acked < e->min_replicas)
    return idgen__why(&e->base, IDGEN_EUNAVAIL,
                      "%s: WAIT: %lld of --redis-min-replicas %lld replicas acknowledged",
                      idgen__redis_where(&e->r), (long long)acked,
                      (long long)e->min_replicas);
  return 0;
}

static int record_text(redis_lease *e, int64_t hwm_ms, char *out, size_t outlen) {
  idgen__record rec;
  idgen__record_self(&rec, e->host, e->start_ms, e->space.datacenter, e->region);
  rec.hwm_ms = hwm_ms;
  rec.wall_ms = idgen_wall_ns() / NS_PER_MS;
  if (idgen__record_format(&rec, out, outlen) < 0)
    return idgen__why(&e->base, IDGEN_EBUFSIZE, "holder record too long");
  return 0;
}

/* The fenced HWM write: token and counter compared, never lowered; *written gets the
 * HWM stored (ours or a higher one left there). */
static int fenced_write(redis_lease *e, int64_t hwm_ms, int64_t *written) {
  char wkey[160], hkey[160], hwm[24], value[512];
  key_of(e, "worker", e->worker, wkey, sizeof wkey);
  key_of(e, "hwm", e->worker, hkey, sizeof hkey);
  snprintf(hwm, sizeof hwm, "%lld", (long long)hwm_ms);
  int rc = record_text(e, hwm_ms, value, sizeof value);
  if (rc)
    return rc;
  const char *argv[] = {"EVAL", hwm_lua, "2", wkey, hkey, e->token, e->fence, hwm, value};
  redisReply *rep = eval(e, "HWM script", 9, argv, &rc);
  if (!rep)
    return rc;
  int64_t outcome =
      rep->type == REDIS_REPLY_ARRAY && rep->elements ? int_of(rep->element[0]) : -9;
  int64_t stored = outcome == 1 && rep->elements == 2 ? int_of(rep->element[1]) : 0;
  freeReplyObject(rep);
  if (outcome == 0)
    return idgen__why(&e->base, IDGEN_ELEASE,
                      "redis: %s is no longer ours: HWM not written", wkey);
  if (outcome == -1)
    return idgen__why(&e->base, IDGEN_ELEASE,
                      "redis: %s was claimed again (fence moved past %s): HWM not written",
                      hkey, e->fence);
  if (outcome != 1)
    return idgen__why(&e->base, IDGEN_EPROTO, "redis HWM script: unexpected reply");
  if ((rc = wait_replicas(e)))
    return rc;
  if (written)
    *written = stored;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The live holders' records of our space (worker keys that exist), for the start
 * checks: their clocks' median against ours, and their regions. */
static int start_checks(redis_lease *e) {
  char prefix[128], pattern[160];
  prefix_of(e, e->space.datacenter, prefix, sizeof prefix);
  snprintf(pattern, sizeof pattern, "%sworker:*", prefix);
  int64_t clocks[256];
  size_t nc = 0;
  int rc = 0;
  char cursor[32] = "0";
  int64_t now = idgen_wall_ns() / NS_PER_MS;
  do {
    const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    redisReply *rep = eval(e, "SCAN", 6, argv, &rc);
    if (!rep)
      return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
      freeReplyObject(rep);
      return idgen__why(&e->base, IDGEN_EPROTO, "redis SCAN: unexpected reply");
    }
    snprintf(cursor, sizeof cursor, "%s", rep->element[0]->str);
    for (size_t i = 0; i < rep->element[1]->elements && !rc; i++) {
      const char *wk = rep->element[1]->element[i]->str;
      const char *colon = strrchr(wk, ':');
      char hk[200];
      snprintf(hk, sizeof hk, "%shwm%s", prefix, colon ? colon : ":");
      const char *hargv[] = {"HGET", hk, "record"};
      redisReply *h = eval(e, "HGET", 3, hargv, &rc);
      if (!h)
        break;
      idgen__record r;
      if (h->type == REDIS_REPLY_STRING && !idgen__record_parse(h->str, h->len, &r)) {
        if (r.region[0] && strcmp(r.region, e->region))
          rc = idgen__why(&e->base, IDGEN_ECONFLICT,
                          "redis: worker %s is held by %s of region '%s', not '%s': one "
                          "datacenter per region (--datacenter)",
                          colon ? colon + 1 : wk, r.host, r.region, e->region);
        else if (r.wall_ms > 0 && nc < sizeof clocks / sizeof clocks[0])
          clocks[nc++] = r.wall_ms;
      }
      freeReplyObject(h);
    }
    freeReplyObject(rep);
  } while (!rc && strcmp(cursor, "0"));
  if (rc || e->max_skew_ms <= 0 || nc == 0)
    return rc;
  qsort(clocks, nc, sizeof *clocks, cmp_i64);
  int64_t median = nc % 2 ? clocks[nc / 2] : (clocks[nc / 2 - 1] + clocks[nc / 2]) / 2;
  /* A record is written once a second or so: allow its age. */
  int64_t d = now - median;
  if (d > e->max_skew_ms + e->ttl_ms || -d > e->max_skew_ms)
    return idgen__why(&e->base, IDGEN_ECLOCKSKEW,
                      "local clock is %+lld ms off the median of %zu live peers in "
                      "namespace '%s' (limit %lld ms, --max-clock-skew)",
                      (long long)d, nc, e->ns, (long long)e->max_skew_ms);
  return 0;
}

/* The floor a claim issues above. A HWM record stamped under the server's history now
 * (HISTORY_LUA: the same run_id and replication ID, no replica gone since) is whole
 * history: it is the floor. One missing, or stamped under another history (the server
 * restarted, a replica took over, a replica left and may have been promoted, since it
 * was written), may have lost the newest writes: the holder that wrote them stops by its
 * own deadline (at most TTL after its last renewal, which was before the loss) and never
 * issued past its last cap (at most ahead past its last write), so waiting TTL + ahead
 * from now covers it. */
static int64_t claim_floor(const redis_lease *e, int64_t hwm, int64_t ohwm,
                           int same_history, int *untrusted) {
  int64_t floor = hwm > ohwm ? hwm : ohwm;
  *untrusted = hwm < 0 || !same_history;
  if (*untrusted) {
    int64_t wait = idgen_wall_ns() / NS_PER_MS + e->ttl_ms + e->ahead_ms;
    if (wait > floor)
      floor = wait;
  }
  return floor;
}

static int redis_acquire(idgen_lease *l, idgen_lease_grant *out) {
  redis_lease *e = (redis_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  e->held = 0;
  if (!e->started && (rc = start_checks(e)))
    return rc;
  e->started = 1;
  unsigned char raw[16];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
    return idgen__why(l, IDGEN_EUNAVAIL, "getrandom failed");
  for (size_t i = 0; i < sizeof raw; i++)
    snprintf(e->token + 2 * i, 3, "%02x", raw[i]);
  char prefix[128], base[128], lo[24], hi[24], ttl[24], mode[4], low[8], dc[24], value[512];
  prefix_of(e, e->space.datacenter, prefix, sizeof prefix);
  int amode = e->space.low_bits == 0 ? 0 : e->space.datacenter >= 0 ? 1 : 2;
  prefix_of(e, -1, base, sizeof base);
  snprintf(lo, sizeof lo, "%llu", (unsigned long long)e->space.lo);
  snprintf(hi, sizeof hi, "%llu", (unsigned long long)e->space.hi);
  snprintf(ttl, sizeof ttl, "%lld", (long long)e->ttl_ms);
  snprintf(mode, sizeof mode, "%d", amode);
  snprintf(low, sizeof low, "%u", e->space.low_bits);
  snprintf(dc, sizeof dc, "%lld", (long long)e->space.datacenter);
  if ((rc = record_text(e, 0, value, sizeof value)))
    return rc;
  const char *argv[] = {"EVAL", claim_lua, "0",  prefix, lo,  hi, e->token,
                        ttl,    value,     mode, base,   low, dc};
  redisReply *rep = eval(e, "claim script", 13, argv, &rc);
  if (!rep)
    return rc;
  if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2) {
    freeReplyObject(rep);
    return idgen__why(l, IDGEN_EPROTO, "redis claim script: unexpected reply");
  }
  int64_t w = int_of(rep->element[0]);
  if (w < 0) {
    int64_t skipped = int_of(rep->element[1]);
    freeReplyObject(rep);
    char space[160];
    idgen__space_name(&e->space, e->ns, space, sizeof space);
    return idgen__why(l, IDGEN_ENOWORKER, "redis: all %llu %s are taken%s",
                      (unsigned long long)idgen__space_size(&e->space), space,
                      skipped ? " (some passed over for an unreadable HWM record)" : "");
  }
  if (rep->elements != 6) {
    freeReplyObject(rep);
    return idgen__why(l, IDGEN_EPROTO, "redis claim script: unexpected reply");
  }
  snprintf(e->fence, sizeof e->fence, "%lld", (long long)int_of(rep->element[1]));
  int64_t hwm = int_of(rep->element[2]), ohwm = int_of(rep->element[3]);
  int same_history = int_of(rep->element[4]) == 1;
  uint32_t skipped = (uint32_t)int_of(rep->element[5]);
  freeReplyObject(rep);
  e->worker = (uint64_t)w;
  e->held = 1;
  int untrusted;
  int64_t floor = claim_floor(e, hwm, ohwm, same_history, &untrusted);
  /* The floor is written before it is used: a claim after ours reads it. */
  int64_t written = floor;
  if ((rc = fenced_write(e, floor, &written))) {
    e->held = 0;
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
  }
  if (written > floor)
    floor = written;
  out->worker = idgen_lease_space_worker(&e->space, e->worker);
  out->hwm_ms = floor;
  out->ttl_ms = e->ttl_ms;
  out->fenced = 1;
  out->skipped = skipped;
  if (untrusted)
    idgen__why(l, 0,
               "redis: worker %llu has %s HWM record: waiting TTL + --hwm-ahead (%lld ms) "
               "before issuing",
               (unsigned long long)e->worker,
               hwm < 0 ? "no" : "another history's (a restart, a failover, a replica gone)",
               (long long)(e->ttl_ms + e->ahead_ms));
  return 0;
}

static int redis_keepalive(idgen_lease *l) {
  redis_lease *e = (redis_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  char wkey[160], ttl[24];
  key_of(e, "worker", e->worker, wkey, sizeof wkey);
  snprintf(ttl, sizeof ttl, "%lld", (long long)e->ttl_ms);
  const char *argv[] = {"EVAL", renew_lua, "1", wkey, e->token, ttl};
  redisReply *rep = eval(e, "renew script", 6, argv, &rc);
  if (!rep)
    return rc;
  int64_t ok = int_of(rep);
  freeReplyObject(rep);
  if (ok != 1)
    return idgen__why(l, IDGEN_ELEASE, "redis: %s is gone or another's: lease lost", wkey);
  return 0;
}

static int redis_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  redis_lease *e = (redis_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  return fenced_write(e, hwm_ms, NULL);
}

static int redis_release(idgen_lease *l, int64_t final_hwm_ms) {
  redis_lease *e = (redis_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (!e->held)
    return 0;
  char wkey[160], hkey[160], hwm[24];
  key_of(e, "worker", e->worker, wkey, sizeof wkey);
  key_of(e, "hwm", e->worker, hkey, sizeof hkey);
  snprintf(hwm, sizeof hwm, "%lld", (long long)(final_hwm_ms > 0 ? final_hwm_ms : 0));
  const char *argv[] = {"EVAL", release_lua, "2", wkey, hkey, e->token, e->fence, hwm};
  redisReply *rep = eval(e, "release script", 8, argv, &rc);
  e->held = 0;
  if (!rep)
    return rc;
  freeReplyObject(rep);
  return wait_replicas(e);
}

/* One worker named in the namespace, from a SCAN of idgen:<ns>:*. */
typedef struct named {
  int64_t dc;
  uint64_t w;
  int live;
  char hkey[200], wkey[200];
} named;

static int cmp_named(const void *a, const void *b) {
  const named *x = a, *y = b;
  if (x->dc != y->dc)
    return x->dc < y->dc ? -1 : 1;
  return x->w < y->w ? -1 : x->w > y->w;
}

/* Parses "[dc:<D>:]worker:<N>" or "[dc:<D>:]hwm:<N>" after the namespace's prefix. */
static int parse_key(const char *k, int64_t *dc, int *is_hwm, uint64_t *w) {
  *dc = -1;
  if (!strncmp(k, "dc:", 3)) {
    char *end;
    *dc = strtoll(k + 3, &end, 10);
    if (end == k + 3 || *end != ':')
      return -1;
    k = end + 1;
  }
  if (!strncmp(k, "worker:", 7))
    *is_hwm = 0, k += 7;
  else if (!strncmp(k, "hwm:", 4))
    *is_hwm = 1, k += 4;
  else
    return -1;
  char *end;
  if (*k < '0' || *k > '9')
    return -1;
  *w = strtoull(k, &end, 10);
  return *end ? -1 : 0;
}

static int redis_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                         size_t *count) {
  redis_lease *e = (redis_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  char prefix[128], pattern[160], cursor[32] = "0";
  prefix_of(e, -1, prefix, sizeof prefix);
  snprintf(pattern, sizeof pattern, "%s*", prefix);
  size_t plen = strlen(prefix), n = 0, cap = 64;
  named *ks = malloc(cap * sizeof *ks);
  if (!ks)
    return idgen__why(l, IDGEN_ENOMEM, "out of memory");
  do {
    const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    redisReply *rep = eval(e, "SCAN", 6, argv, &rc);
    if (!rep)
      break;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
      freeReplyObject(rep);
      rc = idgen__why(l, IDGEN_EPROTO, "redis SCAN: unexpected reply");
      break;
    }
    snprintf(cursor, sizeof cursor, "%s", rep->element[0]->str);
    for (size_t i = 0; i < rep->element[1]->elements; i++) {
      const char *k = rep->element[1]->element[i]->str;
      int64_t dc;
      int is_hwm;
      uint64_t w;
      if (strlen(k) <= plen || parse_key(k + plen, &dc, &is_hwm, &w))
        continue;
      size_t j = 0;
      while (j < n && (ks[j].dc != dc || ks[j].w != w))
        j++;
      if (j == n) {
        if (n == cap) {
          named *more = realloc(ks, 2 * cap * sizeof *ks);
          if (!more)
            continue;
          ks = more, cap *= 2;
        }
        ks[n] = (named){dc, w, 0, "", ""};
        char sub[160] = "";
        if (dc >= 0)
          snprintf(sub, sizeof sub, "dc:%lld:", (long long)dc);
        snprintf(ks[n].hkey, sizeof ks[n].hkey, "%s%shwm:%llu", prefix, sub,
                 (unsigned long long)w);
        snprintf(ks[n].wkey, sizeof ks[n].wkey, "%s%sworker:%llu", prefix, sub,
                 (unsigned long long)w);
        n++;
      }
      if (!is_hwm)
        ks[j].live = 1;
    }
    freeReplyObject(rep);
  } while (strcmp(cursor, "0"));
  if (rc) {
    free(ks);
    return rc;
  }
  qsort(ks, n, sizeof *ks, cmp_named);
  for (size_t i = 0; i < n && i < max; i++) {
    idgen_lease_holder *h = &out[i];
    memset(h, 0, sizeof *h);
    h->worker = ks[i].w;
    h->datacenter = ks[i].dc;
    h->live = ks[i].live;
    h->ttl_left_ms = -1;
    const char *argv[] = {"HMGET", ks[i].hkey, "hwm", "record"};
    redisReply *rep = eval(e, "HMGET", 4, argv, &rc);
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2) {
      if (rep->element[0]->type == REDIS_REPLY_STRING)
        h->hwm_ms = strtoll(rep->element[0]->str, NULL, 10);
      idgen__record r;
      if (rep->element[1]->type == REDIS_REPLY_STRING &&
          !idgen__record_parse(rep->element[1]->str, rep->element[1]->len, &r)) {
        snprintf(h->host, sizeof h->host, "%s", r.host);
        snprintf(h->region, sizeof h->region, "%s", r.region);
        h->pid = r.pid;
        h->start_ms = r.start_ms;
        h->wall_ms = r.wall_ms;
      }
    }
    if (rep)
      freeReplyObject(rep);
    if (h->live) {
      const char *pargv[] = {"PTTL", ks[i].wkey};
      rep = eval(e, "PTTL", 2, pargv, &rc);
      if (rep && rep->type == REDIS_REPLY_INTEGER)
        h->ttl_left_ms = rep->integer >= 0 ? rep->integer : 0;
      if (rep)
        freeReplyObject(rep);
    }
  }
  free(ks);
  *count = n;
  return 0;
}

static void redis_describe(idgen_lease *l, char *out, size_t outlen) {
  redis_lease *e = (redis_lease *)l;
  char space[160];
  idgen__space_name(&e->space, e->ns, space, sizeof space);
  snprintf(out, outlen, "%s: TTL %lld ms, claims the first free of the %s%s%s",
           idgen__redis_where(&e->r), (long long)e->ttl_ms, space,
           e->r.warning[0] ? "; warning: " : "", e->r.warning);
}

static void redis_free(idgen_lease *l) {
  redis_lease *e = (redis_lease *)l;
  idgen__redis_free(&e->r, idgen__lease_forked(e->fork_gen));
  free(e);
}

static const idgen_lease_class redis_class = {
    "redis",       redis_acquire, redis_keepalive, redis_write_hwm,
    redis_release, redis_holders, redis_describe,  redis_free};

static int redis_open(idgen_lease **out, const idgen_lease_config *c,
                      const idgen_lease_space *space, int readonly, char *err,
                      size_t errlen) {
  (void)readonly; /* opening only reads */
  idgen__redis_url url;
  if (idgen__redis_url_parse(c->redis_url, &url, err, errlen))
    return IDGEN_EINVAL;
  redis_lease *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &redis_class;
  idgen__fork_watch();
  e->fork_gen = idgen__fork_generation();
  int rc = idgen__redis_init(&e->r, &url, c, c->request_timeout_ms, err, errlen);
  if (rc) {
    redis_free(&e->base);
    return rc;
  }
  e->r.observe = observe;
  e->r.observe_ctx = &e->base;
  snprintf(e->ns, sizeof e->ns, "%s", c->ns);
  e->space = *space;
  snprintf(e->region, sizeof e->region, "%s", c->region);
  snprintf(e->host, sizeof e->host, "%s", c->hostname);
  e->ttl_ms = c->ttl_ms;
  e->ahead_ms = c->ahead_ms;
  e->max_skew_ms = c->max_skew_ms;
  e->min_replicas = c->redis_min_replicas;
  e->start_ms = idgen_wall_ns() / NS_PER_MS;
  rc = idgen__redis_connect(&e->r);
  if (rc) {
    if (err && errlen)
      snprintf(err, errlen, "%s", e->r.why);
    redis_free(&e->base);
    return rc == IDGEN_EINVAL ? IDGEN_EUNAVAIL : rc;
  }
  idgen__why(&e->base, 0, "%s", e->r.warning);
  *out = &e->base;
  return 0;
}

const idgen_lease_provider idgen_lease_redis = {IDGEN_LEASE_REDIS, "redis", redis_open};
