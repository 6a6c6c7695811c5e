/* etcd.c: the etcd provider: worker IDs as keys under a lease, the HWM as a persistent
 * key written only while our worker key still carries our lease (HTTP in etcd_http.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/etcd_http.h"
#include "lease/etcd_json.h"
#include "lease/lease_internal.h"

typedef struct etcd_lease {
  idgen_lease base;
  idgen__etcd_http http;
  char ns[IDGEN_LEASE_NAME_MAX];
  uint64_t max_worker;
  int64_t ttl_s;
  int64_t max_skew_ms;
  int skew_checked;
  char host[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int64_t lease_id; /* 0: none */
  int held;
  uint64_t worker;
  /* the last reply, as post() left it (owned by http) */
  const char *body;
  size_t len;
  long status;
} etcd_lease;

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

static void key_of(const etcd_lease *e, const char *kind, uint64_t w, char *out,
                   size_t outlen) {
  snprintf(out, outlen, "/idgen/%s/%s/%llu", e->ns, kind, (unsigned long long)w);
}

static int range_prefix(etcd_lease *e, const char *kind, idgen__etcd_kv **kvs, size_t *n) {
  char prefix[160];
  snprintf(prefix, sizeof prefix, "/idgen/%s/%s/", e->ns, kind);
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

/* The worker ID at the end of a key, or -1. */
static int64_t key_worker(const char *key) {
  const char *slash = strrchr(key, '/');
  if (!slash || !slash[1])
    return -1;
  char *end;
  long long v = strtoll(slash + 1, &end, 10);
  if (*end || v < 0 || slash[1] < '0' || slash[1] > '9')
    return -1;
  return v;
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
  int64_t now = idgen__wall_ms();
  for (size_t i = 0; clocks && i < nh; i++) {
    /* A peer's clock counts only from a record its current holder wrote: one older
     * than the worker key is a departed holder's, until the new one rewrites it. */
    int64_t w = key_worker(hwms[i].key);
    int live = 0;
    for (size_t j = 0; j < nw; j++)
      live |= key_worker(workers[j].key) == w &&
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

static int etcd_acquire(idgen_lease *l, idgen_lease_grant *out) {
  etcd_lease *e = (etcd_lease *)l;
  revoke(e); /* a lease from before a loss */
  int rc = post_free(e, "/v3/lease/grant", idgen__etcd_grant_body(e->ttl_s));
  if (rc)
    return rc;
  if ((rc = reply_error(e, "lease grant")))
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
  int64_t id, ttl;
  if (idgen__etcd_parse_grant(e->body, e->len, &id, &ttl))
    return idgen__why(l, IDGEN_EPROTO, "etcd lease grant: unexpected reply");
  e->lease_id = id;

  idgen__record self;
  idgen__record_self(&self, e->host, e->start_ms);
  char wkey[160], hkey[160], value[512];
  for (int attempt = 0; attempt < 64; attempt++) {
    idgen__etcd_kv *kvs = NULL;
    size_t n = 0;
    if ((rc = range_prefix(e, "workers", &kvs, &n)))
      goto fail;
    if (!e->skew_checked) {
      rc = check_skew(e, kvs, n);
      if (rc) {
        free(kvs);
        goto fail;
      }
      e->skew_checked = 1;
    }
    /* the smallest ID not in the list (keys come in byte order, not numeric) */
    uint64_t free_id = UINT64_MAX;
    for (uint64_t w = 0; w <= e->max_worker && free_id == UINT64_MAX; w++) {
      int taken = 0;
      for (size_t j = 0; j < n && !taken; j++)
        taken = key_worker(kvs[j].key) == (int64_t)w;
      if (!taken)
        free_id = w;
    }
    free(kvs);
    if (free_id == UINT64_MAX) {
      rc = idgen__why(l, IDGEN_ENOWORKER,
                      "all %llu worker IDs of namespace '%s' are taken (etcd)",
                      (unsigned long long)e->max_worker + 1, e->ns);
      goto fail;
    }
    key_of(e, "workers", free_id, wkey, sizeof wkey);
    key_of(e, "hwm", free_id, hkey, sizeof hkey);
    self.wall_ms = idgen__wall_ms();
    if (idgen__record_format(&self, value, sizeof value) < 0) {
      rc = idgen__why(l, IDGEN_EBUFSIZE, "holder record too long");
      goto fail;
    }
    if ((rc = post_free(e, "/v3/kv/txn", idgen__etcd_claim_body(wkey, value, id, hkey))))
      goto fail;
    if ((rc = reply_error(e, "claim txn"))) {
      rc = rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc; /* our new lease expired already */
      goto fail;
    }
    int ok = 0, found = 0;
    idgen__etcd_kv hwm;
    if (idgen__etcd_parse_txn(e->body, e->len, &ok, 1, &hwm, &found)) {
      rc = idgen__why(l, IDGEN_EPROTO, "etcd claim txn: unexpected reply");
      goto fail;
    }
    if (!ok)
      continue; /* lost a race: list again */
    idgen__record rec;
    memset(&rec, 0, sizeof rec);
    if (found && idgen__record_parse(hwm.value, hwm.value_len, &rec)) {
      rc = idgen__why(l, IDGEN_EPROTO, "etcd key %s: unreadable HWM record", hkey);
      goto fail;
    }
    e->held = 1;
    e->worker = free_id;
    out->worker = free_id;
    out->hwm_ms = rec.hwm_ms;
    out->ttl_ms = ttl * 1000;
    out->fenced = 1;
    return 0;
  }
  rc = idgen__why(l, IDGEN_ECONFLICT,
                  "etcd: lost 64 races for a worker ID in namespace '%s'", e->ns);
fail:
  revoke(e);
  return rc;
}

static int etcd_keepalive(idgen_lease *l) {
  etcd_lease *e = (etcd_lease *)l;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  int rc = post_free(e, "/v3/lease/keepalive", idgen__etcd_id_body(e->lease_id));
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

static int fenced_put(etcd_lease *e, int64_t hwm_ms) {
  idgen__record rec;
  idgen__record_self(&rec, e->host, e->start_ms);
  rec.hwm_ms = hwm_ms;
  rec.wall_ms = idgen__wall_ms();
  char wkey[160], hkey[160], value[512];
  key_of(e, "workers", e->worker, wkey, sizeof wkey);
  key_of(e, "hwm", e->worker, hkey, sizeof hkey);
  if (idgen__record_format(&rec, value, sizeof value) < 0)
    return idgen__why(&e->base, IDGEN_EBUFSIZE, "holder record too long");
  int rc = post_free(e, "/v3/kv/txn",
                     idgen__etcd_fenced_put_body(wkey, e->lease_id, hkey, value));
  if (rc)
    return rc;
  if ((rc = reply_error(e, "HWM txn")))
    return rc;
  int ok = 0;
  if (idgen__etcd_parse_txn(e->body, e->len, &ok, 0, NULL, NULL))
    return idgen__why(&e->base, IDGEN_EUNAVAIL, "etcd HWM txn: unexpected reply");
  if (!ok)
    return idgen__why(&e->base, IDGEN_ELEASE,
                      "etcd: %s no longer carries our lease: HWM not written", wkey);
  return 0;
}

static int etcd_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  etcd_lease *e = (etcd_lease *)l;
  if (!e->held)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  return fenced_put(e, hwm_ms);
}

static int etcd_release(idgen_lease *l, int64_t final_hwm_ms) {
  etcd_lease *e = (etcd_lease *)l;
  int rc = 0;
  if (e->held && final_hwm_ms > 0)
    rc = fenced_put(e, final_hwm_ms);
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

static int etcd_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  etcd_lease *e = (etcd_lease *)l;
  idgen__etcd_kv *ws = NULL, *hs = NULL;
  size_t nw = 0, nh = 0;
  int rc = range_prefix(e, "workers", &ws, &nw);
  if (rc)
    return rc;
  if ((rc = range_prefix(e, "hwm", &hs, &nh))) {
    free(ws);
    return rc;
  }
  size_t n = 0;
  /* every worker ID that has a worker key or a HWM, in numeric order */
  for (uint64_t w = 0; w <= e->max_worker; w++) {
    idgen__etcd_kv *wk = NULL, *hk = NULL;
    for (size_t j = 0; j < nw; j++)
      if (key_worker(ws[j].key) == (int64_t)w)
        wk = &ws[j];
    for (size_t j = 0; j < nh; j++)
      if (key_worker(hs[j].key) == (int64_t)w)
        hk = &hs[j];
    if (!wk && !hk)
      continue;
    if (n < max) {
      idgen_lease_holder *h = &out[n];
      memset(h, 0, sizeof *h);
      h->worker = w;
      h->live = wk != NULL;
      h->ttl_left_ms = -1;
      idgen__record r;
      if (hk && !idgen__record_parse(hk->value, hk->value_len, &r)) {
        h->hwm_ms = r.hwm_ms;
        h->wall_ms = r.wall_ms;
        snprintf(h->host, sizeof h->host, "%s", r.host);
        h->pid = r.pid;
        h->start_ms = r.start_ms;
      }
      if (wk && !idgen__record_parse(wk->value, wk->value_len, &r)) {
        snprintf(h->host, sizeof h->host, "%s", r.host);
        h->pid = r.pid;
        h->start_ms = r.start_ms;
        if (!h->wall_ms)
          h->wall_ms = r.wall_ms;
      }
      if (wk && wk->lease &&
          !post_free(e, "/v3/lease/timetolive", idgen__etcd_id_body(wk->lease)) &&
          !reply_error(e, "timetolive")) {
        int64_t ttl;
        if (!idgen__etcd_parse_ttl(e->body, e->len, &ttl))
          h->ttl_left_ms = ttl >= 0 ? ttl * 1000 : 0;
      }
    }
    n++;
  }
  free(ws);
  free(hs);
  *count = n;
  return 0;
}

static void etcd_describe(idgen_lease *l, char *out, size_t outlen) {
  etcd_lease *e = (etcd_lease *)l;
  idgen__etcd_kv *kvs = NULL;
  size_t n = 0;
  if (range_prefix(e, "workers", &kvs, &n)) {
    snprintf(out, outlen, "etcd: namespace '%s': %s", e->ns, l->why);
    return;
  }
  uint64_t w;
  for (w = 0; w <= e->max_worker; w++) {
    int taken = 0;
    for (size_t j = 0; j < n && !taken; j++)
      taken = key_worker(kvs[j].key) == (int64_t)w;
    if (!taken)
      break;
  }
  free(kvs);
  if (w > e->max_worker)
    snprintf(out, outlen, "etcd %s: namespace '%s', TTL %lld s, all %llu worker IDs taken",
             idgen__etcd_http_endpoint(&e->http), e->ns, (long long)e->ttl_s,
             (unsigned long long)e->max_worker + 1);
  else
    snprintf(out, outlen,
             "etcd %s: namespace '%s', TTL %lld s, would claim worker ID %llu of 0-%llu "
             "(%zu held)",
             idgen__etcd_http_endpoint(&e->http), e->ns, (long long)e->ttl_s,
             (unsigned long long)w, (unsigned long long)e->max_worker, n);
}

static void etcd_free(idgen_lease *l) {
  etcd_lease *e = (etcd_lease *)l;
  idgen__etcd_http_free(&e->http);
  free(e);
}

static const idgen_lease_class etcd_class = {"etcd",         etcd_acquire, etcd_keepalive,
                                             etcd_write_hwm, etcd_release, etcd_holders,
                                             etcd_describe,  etcd_free};

int idgen__lease_etcd_new(idgen_lease **out, const idgen_lease_config *c,
                          uint64_t max_worker, char *err, size_t errlen) {
  etcd_lease *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &etcd_class;
  if (idgen__etcd_http_init(&e->http, c->endpoints, c->nendpoints, c->request_timeout_ms)) {
    free(e);
    return IDGEN_ENOMEM;
  }
  e->http.observe = observe;
  e->http.observe_ctx = &e->base;
  snprintf(e->ns, sizeof e->ns, "%s", c->ns);
  e->max_worker = max_worker;
  e->ttl_s = c->ttl_ms / 1000;
  e->max_skew_ms = c->max_skew_ms;
  snprintf(e->host, sizeof e->host, "%s", c->hostname);
  e->start_ms = idgen__wall_ms();
  /* Is anyone there? A status call on each endpoint until one answers. */
  int rc = post(e, "/v3/maintenance/status", "{}");
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
