/* etcd.c: the etcd provider: worker IDs as keys under a lease, the HWM as a persistent
 * key written only while our worker key still carries our lease; a worker with no HWM
 * key makes its new holder wait (see fresh_hwm); keys of a datacenter under
 * /idgen/<ns>/dc/<D>/ (the client, HTTP and JSON: src/etcd/; the transactions:
 * etcd_txn.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "etcd/client.h"
#include "idgen/etcd.h"
#include "lease/etcd_txn.h"
#include "lease/lease_internal.h"

typedef struct etcd_lease {
  idgen_lease base;
  idgen__etcd_http http;
  char ns[IDGEN_LEASE_NAME_MAX];
  idgen_lease_space space;
  int64_t ttl_s;
  int64_t max_skew_ms;
  int64_t fresh_wait_ms; /* ahead + one HWM interval: see fresh_hwm */
  int started;           /* the start checks (clock skew, region) passed */
  char host[IDGEN_LEASE_NAME_MAX];
  char region[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int64_t lease_id; /* 0: none */
  int held;
  int64_t hwm_revision; /* our HWM key's mod_revision as we last saw it (0: no key) */
  uint64_t fork_gen;    /* the fork generation when it was opened */
  uint64_t worker;      /* the claimed value held */
  /* the last reply, as post() left it (owned by http) */
  const char *body;
  size_t len;
  long status;
} etcd_lease;

/* A provider opened before a fork() belongs to the parent: its connections are shared
 * with it (a request from the child would corrupt the parent's), and so is its lease. */
static int refuse_in_child(etcd_lease *e) {
  if (!idgen__lease_forked(e->fork_gen))
    return 0;
  return idgen__why(&e->base, IDGEN_EFORKED,
                    "this provider was opened by the parent process: open a new one");
}

static void observe(void *ctx, int64_t ns) {
  idgen__lease_observe(ctx, ns);
}

/* POSTs body to path (failing over, see idgen__etcd_http_post): 0 with e->body/len/
 * status set, or IDGEN_EUNAVAIL with why(). */
static int post(etcd_lease *e, const char *path, const char *body) {
  int rc = idgen__etcd_http_post(&e->http, path, body);
  e->body = e->http.body;
  e->len = e->http.len;
  e->status = e->http.status;
  return rc ? idgen__why(&e->base, rc, "%s", e->http.why) : 0;
}

static int post_free(etcd_lease *e, const char *path, char *body) {
  int rc = post(e, path, body);
  free(body);
  return rc;
}

/* A reply that is a gateway error: EUNAVAIL, with code 5 (not found) as ELEASE. */
static int reply_error(etcd_lease *e, const char *what) {
  int code = 0;
  char msg[160];
  if (!idgen__etcd_error(e->body, e->len, &code, msg, sizeof msg)) {
    if (e->status == 200)
      return 0;
    snprintf(msg, sizeof msg, "HTTP %ld", e->status);
  }
  if (code == 5)
    return idgen__why(&e->base, IDGEN_ELEASE, "etcd %s: lease gone (%s)", what, msg);
  return idgen__why(&e->base, IDGEN_EUNAVAIL, "etcd %s: %s", what, msg);
}

/* "/idgen/<ns>/" and, under datacenter dc >= 0, "dc/<dc>/". */
static void space_prefix(const etcd_lease *e, int64_t dc, char *out, size_t outlen) {
  if (dc >= 0)
    snprintf(out, outlen, "/idgen/%s/dc/%lld/", e->ns, (long long)dc);
  else
    snprintf(out, outlen, "/idgen/%s/", e->ns);
}

/* The key of kind ("workers", "hwm") of w, in our space. */
static void key_of(const etcd_lease *e, const char *kind, uint64_t w, char *out,
                   size_t outlen) {
  char prefix[128];
  space_prefix(e, e->space.datacenter, prefix, sizeof prefix);
  snprintf(out, outlen, "%s%s/%llu", prefix, kind, (unsigned long long)w);
}

/* The keys of w's other name (two-field layouts): 0, or -1 when it has none. */
static int other_keys(const etcd_lease *e, uint64_t w, char *wkey, char *hkey,
                      size_t keylen) {
  int64_t dc;
  uint64_t aw = idgen__space_alias(&e->space, w, &dc);
  if (dc == -2)
    return -1;
  char prefix[128];
  space_prefix(e, dc, prefix, sizeof prefix);
  snprintf(wkey, keylen, "%sworkers/%llu", prefix, (unsigned long long)aw);
  snprintf(hkey, keylen, "%shwm/%llu", prefix, (unsigned long long)aw);
  return 0;
}

/* Lists every key under prefix (the reply's kvs, malloc'd). */
static int range_all(etcd_lease *e, const char *prefix, idgen__etcd_kv **kvs, size_t *n) {
  int rc = post_free(e, "/v3/kv/range", idgen__etcd_prefix_body(prefix));
  if (rc)
    return rc;
  if ((rc = reply_error(e, "range")))
    return rc;
  rc = idgen__etcd_parse_range(e->body, e->len, kvs, n);
  if (rc)
    return idgen__why(&e->base, IDGEN_EPROTO, "etcd range: unexpected reply");
  return 0;
}

/* Lists our space's keys of kind ("workers", "hwm"). */
static int range_prefix(etcd_lease *e, const char *kind, idgen__etcd_kv **kvs, size_t *n) {
  char space[128], prefix[160];
  space_prefix(e, e->space.datacenter, space, sizeof space);
  snprintf(prefix, sizeof prefix, "%s%s/", space, kind);
  return range_all(e, prefix, kvs, n);
}

static void revoke(etcd_lease *e) {
  if (!e->lease_id)
    return;
  char save[IDGEN_LEASE_WHY_MAX];
  memcpy(save, e->base.why, sizeof save);
  post_free(e, "/v3/lease/revoke", idgen__etcd_id_body(e->lease_id));
  memcpy(e->base.why, save, sizeof save);
  e->lease_id = 0;
  e->held = 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Refuses when the local clock is far from the median of live peers' reports. */
static int check_skew(etcd_lease *e, const idgen__etcd_kv *workers, size_t nw) {
  if (e->max_skew_ms <= 0 || nw == 0)
    return 0;
  idgen__etcd_kv *hwms = NULL;
  size_t nh = 0;
  int rc = range_prefix(e, "hwm", &hwms, &nh);
  if (rc)
    return rc;
  int64_t *clocks = calloc(nh ? nh : 1, sizeof *clocks);
  size_t nc = 0;
  int64_t now = idgen_wall_ns() / NS_PER_MS;
  for (size_t i = 0; clocks && i < nh; i++) {
    /* A peer's clock counts only from a record its current holder wrote: one older
     * than the worker key is a departed holder's, until the new one rewrites it. */
    int64_t w = idgen__etcd_key_worker(hwms[i].key);
    int live = 0;
    for (size_t j = 0; j < nw; j++)
      live |= idgen__etcd_key_worker(workers[j].key) == w &&
              hwms[i].mod_revision >= workers[j].create_revision;
    idgen__record r;
    if (live && !idgen__record_parse(hwms[i].value, hwms[i].value_len, &r) && r.wall_ms > 0)
      clocks[nc++] = r.wall_ms;
  }
  free(hwms);
  rc = 0;
  if (nc > 0) {
    qsort(clocks, nc, sizeof *clocks, cmp_i64);
    int64_t median = nc % 2 ? clocks[nc / 2] : (clocks[nc / 2 - 1] + clocks[nc / 2]) / 2;
    int64_t d = now - median;
    if (d > e->max_skew_ms || -d > e->max_skew_ms)
      rc = idgen__why(
          &e->base, IDGEN_ECLOCKSKEW,
          "local clock is %+lld ms off the median of %zu live peers in namespace "
          "'%s' (limit %lld ms, --max-clock-skew)",
          (long long)d, nc, e->ns, (long long)e->max_skew_ms);
  }
  free(clocks);
  return rc;
}

/* Reads the HWM record at hkey into *rec (all zero when there is none) and, if revision
 * is not NULL, its mod_revision (0: none): for a claim adopted from a listing, whose
 * transaction's reply was lost. */
static int read_hwm(etcd_lease *e, const char *hkey, idgen__record *rec, int *found,
                    int64_t *revision) {
  int rc = post_free(e, "/v3/kv/range", idgen__etcd_range_body(hkey, NULL));
  if (rc || (rc = reply_error(e, "range")))
    return rc;
  idgen__etcd_kv *kvs = NULL;
  size_t n = 0;
  if (idgen__etcd_parse_range(e->body, e->len, &kvs, &n))
    return idgen__why(&e->base, IDGEN_EPROTO, "etcd range: unexpected reply");
  memset(rec, 0, sizeof *rec);
  *found = n > 0;
  if (revision)
    *revision = n > 0 ? kvs[0].mod_revision : 0;
  rc = n > 0 ? idgen__record_parse(kvs[0].value, kvs[0].value_len, rec) : 0;
  free(kvs);
  return rc;
}

/* Gives back worker key w, claimed under our lease, when its HWM is unreadable. */
static void unclaim(etcd_lease *e, uint64_t w) {
  char wkey[160];
  key_of(e, "workers", w, wkey, sizeof wkey);
  char save[IDGEN_LEASE_WHY_MAX];
  memcpy(save, e->base.why, sizeof save);
  post_free(e, "/v3/kv/txn", idgen__etcd_fenced_delete_body(wkey, e->lease_id));
  memcpy(e->base.why, save, sizeof save);
}

/* At start, under a datacenter: a live holder of it that names another region is a
 * second region configured with our datacenter number, and pointed at this etcd. */
static int check_region(etcd_lease *e, const idgen__etcd_kv *workers, size_t nw) {
  if (e->space.datacenter < 0)
    return 0;
  for (size_t i = 0; i < nw; i++) {
    idgen__record r;
    if (idgen__record_parse(workers[i].value, workers[i].value_len, &r) || !r.region[0] ||
        !strcmp(r.region, e->region))
      continue;
    return idgen__why(&e->base, IDGEN_ECONFLICT,
                      "%s %lld of namespace '%s' has a live holder in region '%s' (host "
                      "%s, etcd key %s), and this is region '%s': two regions with one "
                      "%s number? (--datacenter, --region)",
                      e->space.dc_field, (long long)e->space.datacenter, e->ns, r.region,
                      r.host, workers[i].key, e->region, e->space.dc_field);
  }
  return 0;
}

/* The floor of a worker claimed with no HWM key: its first use in this namespace, or its
 * history lost (the key or the namespace's prefix deleted). etcd cannot tell the two
 * apart (a deleted key leaves only a tombstone, gone at the next compaction), so both
 * wait. The last holder, if any, no longer has its worker key (the claim compared it
 * absent), so each of its successful HWM writes came before our claim; its cap was at
 * most `ahead` past the last one. Waiting past now + ahead, plus one HWM interval of
 * margin, on this host's clock, is past that cap while its clock was not ahead of ours
 * by more than the interval (docs/leases.md, step 11). The wait is written as the key's
 * first record before the claim counts, so that a holder dying in it, or its reply lost,
 * leaves it for the next one, whose clock may be behind ours. */
static int64_t fresh_hwm(const etcd_lease *e) {
  return idgen_wall_ns() / NS_PER_MS + e->fresh_wait_ms;
}

static int fenced_put(etcd_lease *e, int64_t hwm_ms, int64_t *written);

/* Parses the record of a HWM key read (found) into *rec; 0 when none. */
static int hwm_record(const idgen__etcd_kv *kv, int found, idgen__record *rec) {
  memset(rec, 0, sizeof *rec);
  return found ? idgen__record_parse(kv->value, kv->value_len, rec) : 0;
}

/* What one try at a worker ID came to (try_worker); etcd_acquire dispatches on it, as
 * the keeper does on its steps. */
typedef enum try_result {
  TRY_HELD,   /* the ID is ours (claimed, or a claim of ours adopted), its HWMs read */
  TRY_RACE,   /* lost a race, or a reply: list again (one of the 64 races) */
  TRY_PASSED, /* the ID was passed over (idgen__pass_over): list again */
  TRY_FAILED  /* *rc says why */
} try_result;

/* An acquire in progress: the granted lease, this holder's record, the IDs passed over;
 * and, once TRY_HELD, the ID with its HWM records and our HWM key's revision. */
typedef struct acquiring {
  int64_t id; /* the lease granted for this acquire */
  idgen__record self;
  idgen__passed p;
  uint64_t w;
  int other; /* the ID has another name (two-field layouts): owkey, ohkey */
  char wkey[160], hkey[160], owkey[160], ohkey[160];
  idgen__record rec, orec;
  int found, ofound;
  int64_t hrev; /* our HWM key's revision: our first write's compare */
} acquiring;

/* Lists the worker keys (checking the clocks and regions of the first listing) and
 * picks the ID to take: *ours when a claim of ours is there already. */
static int pick_worker(etcd_lease *e, acquiring *a, int *ours) {
  idgen__etcd_kv *kvs = NULL;
  size_t n = 0;
  int rc = range_prefix(e, "workers", &kvs, &n);
  if (rc)
    return rc;
  if (!e->started) {
    if ((rc = check_skew(e, kvs, n)) || (rc = check_region(e, kvs, n))) {
      free(kvs);
      return rc;
    }
    e->started = 1;
  }
  int64_t pick =
      idgen__etcd_pick(kvs, n, a->id, e->space.lo, e->space.hi, a->p.ids, a->p.n, ours);
  free(kvs);
  if (pick < 0)
    return idgen__none_free(&e->base, &e->space, e->ns, "etcd", &a->p);
  a->w = (uint64_t)pick;
  return 0;
}

/* Claims a->w in one txn that reads its HWM keys: TRY_HELD with the records read (or, in
 * *rc, why one cannot be; *bad names its key); TRY_RACE or TRY_PASSED when the claim did
 * not apply; TRY_FAILED. */
static try_result claim(etcd_lease *e, acquiring *a, int *rc, const char **bad) {
  idgen_lease *l = &e->base;
  char value[512];
  const char *wkey = a->wkey, *hkey = a->hkey, *owkey = a->owkey, *ohkey = a->ohkey;
  int64_t id = a->id;
  int other = a->other;
  a->self.wall_ms = idgen_wall_ns() / NS_PER_MS;
  if (idgen__record_format(&a->self, value, sizeof value) < 0) {
    *rc = idgen__why(l, IDGEN_EBUFSIZE, "holder record too long");
    return TRY_FAILED;
  }
  *rc = post_free(e, "/v3/kv/txn",
                  idgen__etcd_claim_body(wkey, value, id, hkey, other ? owkey : NULL,
                                         other ? ohkey : NULL));
  if (*rc == IDGEN_EUNAVAIL)
    return TRY_RACE; /* maybe applied: the next listing shows it as ours, or fails too */
  if (*rc)
    return TRY_FAILED;
  if ((*rc = reply_error(e, "claim txn"))) {
    *rc = *rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : *rc; /* our new lease expired already */
    return TRY_FAILED;
  }
  /* Applied: responses 1 and 2 read the HWMs. Not: the failure's response 0 read the
   * other name's worker key. */
  int ok = 0;
  idgen__etcd_kv hwm, ohwm;
  if (idgen__etcd_parse_txn(e->body, e->len, &ok, 1, &hwm, &a->found) ||
      (other &&
       idgen__etcd_parse_txn(e->body, e->len, &ok, ok ? 2 : 0, &ohwm, &a->ofound))) {
    *rc = idgen__why(l, IDGEN_EPROTO, "etcd claim txn: unexpected reply");
    return TRY_FAILED;
  }
  if (!ok && a->ofound) { /* the failure branch read the other name's worker key */
    if ((*rc = idgen__pass_over(&e->base, &a->p, a->w)))
      return TRY_FAILED;
    a->p.other++;
    return TRY_PASSED;
  }
  if (!ok)
    return TRY_RACE; /* lost a race, or an earlier attempt of ours won it: list again */
  a->hrev = a->found ? hwm.mod_revision : 0;
  *rc = hwm_record(&hwm, a->found, &a->rec);
  if (!*rc && other && (*rc = hwm_record(&ohwm, a->ofound, &a->orec)))
    *bad = ohkey;
  return TRY_HELD;
}

/* One try: pick an ID, then adopt the claim of ours found on it or claim it, and read
 * its HWM records. An ID whose record cannot be read is given back and passed over:
 * everyone takes the smallest free ID, so one bad record must not stop them all. */
static try_result try_worker(etcd_lease *e, acquiring *a, int *rc) {
  idgen_lease *l = &e->base;
  int ours = 0;
  if ((*rc = pick_worker(e, a, &ours)))
    return TRY_FAILED;
  key_of(e, "workers", a->w, a->wkey, sizeof a->wkey);
  key_of(e, "hwm", a->w, a->hkey, sizeof a->hkey);
  a->other = other_keys(e, a->w, a->owkey, a->ohkey, sizeof a->owkey) == 0;
  memset(&a->rec, 0, sizeof a->rec);
  memset(&a->orec, 0, sizeof a->orec);
  a->found = a->ofound = 0;
  a->hrev = 0;
  const char *bad = a->hkey;
  if (ours) {
    *rc = read_hwm(e, a->hkey, &a->rec, &a->found, &a->hrev);
    if (!*rc && a->other && (*rc = read_hwm(e, a->ohkey, &a->orec, &a->ofound, NULL)))
      bad = a->ohkey;
    if (*rc && *rc != IDGEN_EEMPTY && *rc != IDGEN_EFORMAT)
      return TRY_FAILED; /* not the record: etcd itself */
  } else {
    try_result t = claim(e, a, rc, &bad);
    if (t != TRY_HELD)
      return t;
  }
  if (!*rc)
    return TRY_HELD;
  idgen__why(l, *rc, "etcd key %s: unreadable HWM record (%s)", bad, idgen_strerror(*rc));
  snprintf(a->p.last_corrupt, sizeof a->p.last_corrupt, "%s", l->why);
  unclaim(e, a->w);
  if ((*rc = idgen__pass_over(&e->base, &a->p, a->w)))
    return TRY_FAILED;
  a->p.corrupt++;
  return TRY_PASSED;
}

/* Holds the ID a try won: a worker ID with no HWM key yet gets one before it is used
 * (never HWM 0). */
static int hold(etcd_lease *e, acquiring *a, int64_t ttl, idgen_lease_grant *out) {
  idgen_lease *l = &e->base;
  uint64_t w = a->w;
  idgen__record rec = a->rec, orec = a->orec;
  int found = a->found, rc;
  e->held = 1;
  e->worker = w;
  e->hwm_revision = a->hrev;
  if (!found && (rc = fenced_put(e, fresh_hwm(e), &rec.hwm_ms))) { /* never HWM 0 */
    e->held = 0;
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc; /* our new lease expired already */
  }
  out->worker = idgen_lease_space_worker(&e->space, w);
  out->hwm_ms = rec.hwm_ms > orec.hwm_ms ? rec.hwm_ms : orec.hwm_ms;
  out->ttl_ms = ttl * 1000;
  out->fenced = 1;
  out->skipped = (uint32_t)a->p.corrupt;
  if (a->p.corrupt)
    idgen__why(l, 0, "%s: skipped", a->p.last_corrupt);
  return 0;
}

static int etcd_acquire(idgen_lease *l, idgen_lease_grant *out) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  revoke(e); /* a lease from before a loss */
  rc = post_free(e, "/v3/lease/grant", idgen__etcd_grant_body(e->ttl_s));
  if (rc)
    return rc;
  if ((rc = reply_error(e, "lease grant")))
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
  int64_t id, ttl;
  if (idgen__etcd_parse_grant(e->body, e->len, &id, &ttl))
    return idgen__why(l, IDGEN_EPROTO, "etcd lease grant: unexpected reply");
  e->lease_id = id;

  acquiring a;
  memset(&a, 0, sizeof a);
  a.id = id;
  idgen__record_self(&a.self, e->host, e->start_ms, e->space.datacenter, e->region);
  for (int races = 0; races < 64;) {
    switch (try_worker(e, &a, &rc)) {
    case TRY_HELD:
      rc = hold(e, &a, ttl, out);
      if (rc == 0) {
        free(a.p.ids);
        return 0;
      }
      goto fail;
    case TRY_RACE:
      races++;
      continue;
    case TRY_PASSED:
      continue;
    case TRY_FAILED:
      goto fail;
    }
  }
  rc = idgen__why(l, IDGEN_ECONFLICT,
                  "etcd: lost 64 races for a worker ID in namespace '%s'", e->ns);
fail:
  free(a.p.ids);
  revoke(e);
  return rc;
}

static int etcd_keepalive(idgen_lease *l) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  rc = post_free(e, "/v3/lease/keepalive", idgen__etcd_id_body(e->lease_id));
  if (rc)
    return rc;
  if ((rc = reply_error(e, "keepalive")))
    return rc;
  int64_t ttl;
  if (idgen__etcd_parse_keepalive(e->body, e->len, &ttl))
    return idgen__why(l, IDGEN_EUNAVAIL, "etcd keepalive: unexpected reply");
  if (ttl <= 0)
    return idgen__why(l, IDGEN_ELEASE, "etcd lease %" PRId64 " expired (keepalive: no TTL)",
                      e->lease_id);
  return 0;
}

/* Writes our HWM, one transaction with two compares:
 * - LEASE(worker key) == our lease, the fence (docs/leases.md, step 2);
 * - MOD(HWM key) == the revision we last saw it at (read with the claim, then the one
 *   each write of ours made): no write has landed on it since (step 3).
 * Why the second: etcd may apply a request after its client gave up on it (a timeout,
 * then the same body on the next endpoint, or the next interval's write). A write of
 * ours applied after a later one would lower the HWM below the cap we armed with, and
 * the next holder would wait past the lower HWM only. With the compare, a write applied
 * late expects a revision that the later write has moved the key from: refused.
 * When only the second compare fails, the failure branch read both keys: the worker
 * key still carries our lease, so the write that moved the HWM key was one of ours
 * (applied, its reply lost: anyone else's fenced write needs our lease on the key), or an
 * operator's. Take its revision and write again, once, the higher of our HWM and the
 * one it left: ours is at or above every cap the generator was given (the keeper never
 * writes below its last HWM written, and the final HWM below the last one only once
 * nothing can issue), and the retry never lowers the HWM either. *written, if not NULL,
 * gets the HWM written. */
static int fenced_put(etcd_lease *e, int64_t hwm_ms, int64_t *written) {
  idgen__record rec;
  idgen__record_self(&rec, e->host, e->start_ms, e->space.datacenter, e->region);
  rec.hwm_ms = hwm_ms;
  rec.wall_ms = idgen_wall_ns() / NS_PER_MS;
  char wkey[160], hkey[160], value[512];
  key_of(e, "workers", e->worker, wkey, sizeof wkey);
  key_of(e, "hwm", e->worker, hkey, sizeof hkey);
  for (int attempt = 0;; attempt++) {
    if (idgen__record_format(&rec, value, sizeof value) < 0)
      return idgen__why(&e->base, IDGEN_EBUFSIZE, "holder record too long");
    int rc = post_free(
        e, "/v3/kv/txn",
        idgen__etcd_fenced_put_body(wkey, e->lease_id, hkey, e->hwm_revision, value));
    if (rc)
      return rc; /* maybe applied: then the next write finds the key moved */
    if ((rc = reply_error(e, "HWM txn")))
      return rc;
    idgen__etcd_hwm_put outcome;
    int64_t revision;
    idgen__etcd_kv stored;
    if (idgen__etcd_parse_fenced_put(e->body, e->len, e->lease_id, e->hwm_revision,
                                     &outcome, &revision, &stored))
      return idgen__why(&e->base, IDGEN_EUNAVAIL, "etcd HWM txn: unexpected reply");
    if (outcome == IDGEN__HWM_NOT_OURS)
      return idgen__why(&e->base, IDGEN_ELEASE,
                        "etcd: %s no longer carries our lease: HWM not written", wkey);
    e->hwm_revision = revision;
    if (outcome == IDGEN__HWM_WRITTEN) {
      if (written)
        *written = rec.hwm_ms;
      return 0;
    }
    if (attempt > 0) /* moved again: someone else writes it; the next write tries again */
      return idgen__why(&e->base, IDGEN_EUNAVAIL,
                        "etcd: %s changed twice under our lease: HWM not written", hkey);
    idgen__record left; /* unreadable: ours replaces it, as a first write would */
    if (stored.value_len && !idgen__record_parse(stored.value, stored.value_len, &left) &&
        left.hwm_ms > rec.hwm_ms)
      rec.hwm_ms = left.hwm_ms;
  }
}

static int etcd_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  return fenced_put(e, hwm_ms, NULL);
}

static int etcd_release(idgen_lease *l, int64_t final_hwm_ms) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  if (e->held && final_hwm_ms > 0)
    rc = fenced_put(e, final_hwm_ms, NULL);
  if (e->lease_id) {
    int r2 = post_free(e, "/v3/lease/revoke", idgen__etcd_id_body(e->lease_id));
    if (!r2)
      r2 = reply_error(e, "revoke");
    if (r2 == IDGEN_ELEASE) /* already gone */
      r2 = 0;
    if (!rc)
      rc = r2;
  }
  e->lease_id = 0;
  e->held = 0;
  return rc;
}

/* One worker ID named in the namespace: its worker key and HWM key, if any. */
typedef struct named {
  int64_t dc;
  uint64_t w;
  const idgen__etcd_kv *wk, *hk;
} named;

static int cmp_named(const void *a, const void *b) {
  const named *x = a, *y = b;
  if (x->dc != y->dc)
    return x->dc < y->dc ? -1 : 1;
  return x->w < y->w ? -1 : x->w > y->w;
}

/* Fills a holder from its keys' records (the worker key's for who, the HWM key's for
 * the HWM and clock) and, for a live one, its lease's time left. */
static void fill_holder(etcd_lease *e, const named *k, idgen_lease_holder *h) {
  memset(h, 0, sizeof *h);
  h->worker = k->w;
  h->datacenter = k->dc;
  h->live = k->wk != NULL;
  h->ttl_left_ms = -1;
  idgen__record r;
  for (int i = 0; i < 2; i++) {
    const idgen__etcd_kv *kv = i == 0 ? k->hk : k->wk;
    if (!kv || idgen__record_parse(kv->value, kv->value_len, &r))
      continue;
    if (i == 0) {
      h->hwm_ms = r.hwm_ms;
      h->wall_ms = r.wall_ms;
    } else if (!h->wall_ms) {
      h->wall_ms = r.wall_ms;
    }
    snprintf(h->host, sizeof h->host, "%s", r.host);
    snprintf(h->region, sizeof h->region, "%s", r.region);
    h->pid = r.pid;
    h->start_ms = r.start_ms;
  }
  int64_t ttl;
  if (k->wk && k->wk->lease &&
      !post_free(e, "/v3/lease/timetolive", idgen__etcd_id_body(k->wk->lease)) &&
      !reply_error(e, "timetolive") && !idgen__etcd_parse_ttl(e->body, e->len, &ttl))
    h->ttl_left_ms = ttl >= 0 ? ttl * 1000 : 0;
}

static int etcd_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = refuse_in_child(e);
  if (rc)
    return rc;
  /* The whole namespace: every datacenter's keys and those without one. */
  char prefix[128];
  space_prefix(e, -1, prefix, sizeof prefix);
  idgen__etcd_kv *kvs = NULL;
  size_t nkv = 0;
  if ((rc = range_all(e, prefix, &kvs, &nkv)))
    return rc;
  named *ks = calloc(nkv ? nkv : 1, sizeof *ks);
  if (!ks) {
    free(kvs);
    return idgen__why(l, IDGEN_ENOMEM, "out of memory");
  }
  size_t n = 0, plen = strlen(prefix);
  for (size_t i = 0; i < nkv; i++) {
    int64_t dc;
    int is_hwm;
    uint64_t w;
    if (idgen__etcd_key_parse(kvs[i].key + plen, &dc, &is_hwm, &w))
      continue;
    size_t j = 0;
    while (j < n && (ks[j].dc != dc || ks[j].w != w))
      j++;
    if (j == n)
      ks[n++] = (named){dc, w, NULL, NULL};
    *(is_hwm ? &ks[j].hk : &ks[j].wk) = &kvs[i];
  }
  qsort(ks, n, sizeof *ks, cmp_named);
  for (size_t i = 0; i < n && i < max; i++)
    fill_holder(e, &ks[i], &out[i]);
  free(ks);
  free(kvs);
  *count = n;
  return 0;
}

static void etcd_describe(idgen_lease *l, char *out, size_t outlen) {
  etcd_lease *e = (etcd_lease *)l;
  idgen__etcd_kv *kvs = NULL;
  size_t n = 0;
  char space[160];
  idgen__space_name(&e->space, e->ns, space, sizeof space);
  if (refuse_in_child(e) || range_prefix(e, "workers", &kvs, &n)) {
    snprintf(out, outlen, "etcd: %s: %s", space, l->why);
    return;
  }
  int ours;
  int64_t w = idgen__etcd_pick(kvs, n, 0, e->space.lo, e->space.hi, NULL, 0, &ours);
  free(kvs);
  if (w < 0)
    snprintf(out, outlen, "etcd %s: TTL %lld s, all %llu %s are taken",
             idgen__etcd_http_endpoint(&e->http), (long long)e->ttl_s,
             (unsigned long long)idgen__space_size(&e->space), space);
  else
    snprintf(out, outlen,
             "etcd %s: TTL %lld s, would claim %llu of the %s (worker ID %llu; %zu held)",
             idgen__etcd_http_endpoint(&e->http), (long long)e->ttl_s,
             (unsigned long long)w, space,
             (unsigned long long)idgen_lease_space_worker(&e->space, (uint64_t)w), n);
}

static void etcd_free(idgen_lease *l) {
  etcd_lease *e = (etcd_lease *)l;
  /* In a forked child the handle's connections are the parent's: closing them could
   * send on them (a TLS close_notify), so the child leaves the handle be. */
  if (idgen__lease_forked(e->fork_gen))
    e->http.curl = NULL;
  idgen__etcd_http_free(&e->http);
  free(e);
}

static const idgen_lease_class etcd_class = {"etcd",         etcd_acquire, etcd_keepalive,
                                             etcd_write_hwm, etcd_release, etcd_holders,
                                             etcd_describe,  etcd_free};

/* The constructor of idgen_lease_etcd's row. Opening only reads (a status call), so a
 * read-only open is the same. */
static int etcd_open(idgen_lease **out, const idgen_lease_config *c,
                     const idgen_lease_space *space, int readonly, char *err,
                     size_t errlen) {
  (void)readonly;
  etcd_lease *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &etcd_class;
  idgen__fork_watch();
  e->fork_gen = idgen__fork_generation();
  int rc = idgen__etcd_http_init(&e->http, c, err, errlen);
  if (rc) {
    idgen__etcd_http_free(&e->http);
    free(e);
    return rc;
  }
  e->http.observe = observe;
  e->http.observe_ctx = &e->base;
  snprintf(e->ns, sizeof e->ns, "%s", c->ns);
  e->space = *space;
  snprintf(e->region, sizeof e->region, "%s", c->region);
  e->ttl_s = c->ttl_ms / 1000;
  e->max_skew_ms = c->max_skew_ms;
  e->fresh_wait_ms = c->ahead_ms + c->hwm_interval_ms;
  snprintf(e->host, sizeof e->host, "%s", c->hostname);
  e->start_ms = idgen_wall_ns() / NS_PER_MS;
  /* Is anyone there? A status call on each endpoint until one answers (with a user:
   * after authenticating, so a wrong password fails here). */
  rc = post(e, "/v3/maintenance/status", "{}");
  if (!rc && e->status != 200)
    rc = idgen__why(&e->base, IDGEN_EUNAVAIL, "etcd %s: HTTP %ld for the status call",
                    idgen__etcd_http_endpoint(&e->http), e->status);
  if (rc) {
    if (err && errlen)
      snprintf(err, errlen, "%s", e->base.why);
    etcd_free(&e->base);
    return rc;
  }
  e->base.why[0] = '\0';
  *out = &e->base;
  return 0;
}

const idgen_lease_provider idgen_lease_etcd = {IDGEN_LEASE_ETCD, "etcd", etcd_open};
