/* backend_etcd.c: the segment backend on etcd: one key per name, /idgen/segment/NAME,
 * holding the max in decimal; a block is a transaction that puts max + step only if
 * the key's mod_revision is still the one read, retried on conflict. etcd commits
 * through its raft log before it answers, so the block is durable when handed out. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"
#include "idgen/lease.h"
#include "segment/segment.h"

#define ATTEMPTS 64 /* compare-and-swap tries per block before giving up (ECONFLICT) */

typedef struct etcd_backend {
  idgen__segment_backend base;
  idgen__etcd_http http;
} etcd_backend;

static void key_of(const char *name, char *out, size_t outlen) {
  snprintf(out, outlen, "/idgen/segment/%s", name);
}

/* POSTs and turns a transport failure or a gateway error into why(). */
static int post(etcd_backend *e, const char *what, const char *path, char *body) {
  int rc = idgen__etcd_http_post(&e->http, path, body);
  free(body);
  if (rc)
    return idgen__segment_why(&e->base, rc, "%s", e->http.why);
  char msg[160];
  if (idgen__etcd_error(e->http.body, e->http.len, NULL, msg, sizeof msg) ||
      e->http.status != 200) {
    if (e->http.status == 200)
      snprintf(msg, sizeof msg, "error");
    return idgen__segment_why(&e->base, IDGEN_EUNAVAIL, "etcd %s %s: HTTP %ld %s",
                              idgen__etcd_http_endpoint(&e->http), what, e->http.status,
                              msg);
  }
  return 0;
}

/* The max a key holds: decimal digits, at most 2^63 - 1. */
static int parse_max(etcd_backend *e, const idgen__etcd_kv *kv, uint64_t *max) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(kv->value, &end, 10);
  if (errno || end == kv->value || *end || kv->value[0] < '0' || kv->value[0] > '9' ||
      v > IDGEN_SEGMENT_NUMBER_MAX || kv->value_len != strlen(kv->value))
    return idgen__segment_why(&e->base, IDGEN_EPROTO,
                              "etcd key %s: '%.40s' is not a segment max", kv->key,
                              kv->value);
  *max = v;
  return 0;
}

/* One compare-and-swap: puts value if the key's mod_revision is rev. *swapped says
 * whether it did; if not, *now gets the key as it is (found 0: the key is gone). */
static int cas(etcd_backend *e, const char *key, int64_t rev, uint64_t value, int *swapped,
               idgen__etcd_kv *now, int *found) {
  char text[24];
  snprintf(text, sizeof text, "%" PRIu64, value);
  int rc = post(e, "txn", "/v3/kv/txn", idgen__etcd_cas_body(key, rev, text));
  if (rc)
    return rc;
  if (idgen__etcd_parse_txn(e->http.body, e->http.len, swapped, 0, now, found))
    return idgen__segment_why(&e->base, IDGEN_EPROTO, "etcd txn: unexpected reply");
  return 0;
}

static int etcd_init(idgen__segment_backend *b, const char *name, uint64_t step,
                     uint64_t start_after) {
  etcd_backend *e = (etcd_backend *)b;
  (void)step; /* the step is the generator's; the key keeps only the max */
  char key[IDGEN_SEGMENT_NAME_MAX + 32];
  key_of(name, key, sizeof key);
  int swapped = 0, found = 0;
  idgen__etcd_kv kv;
  int rc = cas(e, key, 0, start_after, &swapped, &kv, &found);
  if (rc)
    return rc;
  if (swapped)
    return 0;
  uint64_t max;
  return found ? (parse_max(e, &kv, &max) ? IDGEN_EPROTO : 1) : 1;
}

static int etcd_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  etcd_backend *e = (etcd_backend *)b;
  (void)floor; /* one key: each block lies above the last */
  char key[IDGEN_SEGMENT_NAME_MAX + 32];
  key_of(name, key, sizeof key);
  int rc = post(e, "range", "/v3/kv/range", idgen__etcd_range_body(key, NULL));
  if (rc)
    return rc;
  idgen__etcd_kv *kvs = NULL;
  size_t n = 0;
  if (idgen__etcd_parse_range(e->http.body, e->http.len, &kvs, &n))
    return idgen__segment_why(b, IDGEN_EPROTO, "etcd range: unexpected reply");
  idgen__etcd_kv kv;
  if (n == 1)
    kv = kvs[0];
  free(kvs);
  for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
    uint64_t max;
    if (n != 1)
      return idgen__segment_why(b, -ENOENT,
                                "etcd: no key %s: run 'idgen segment init --backend etcd' "
                                "first",
                                key);
    if ((rc = parse_max(e, &kv, &max)))
      return rc;
    if (max > IDGEN_SEGMENT_NUMBER_MAX - step)
      return idgen__segment_why(b, IDGEN_ERANGE,
                                "etcd key %s is at %" PRIu64 ": a block of %" PRIu64
                                " would pass 2^63 - 1",
                                key, max, step);
    int swapped = 0, found = 0;
    if ((rc = cas(e, key, kv.mod_revision, max + step, &swapped, &kv, &found)))
      return rc;
    if (swapped) {
      *out = (idgen__segment_block){max + step, step, 1};
      return 0;
    }
    n = (size_t)found; /* another generator moved it first: go on from its value */
  }
  return idgen__segment_why(b, IDGEN_ECONFLICT, "etcd key %s: lost %d races in a row", key,
                            ATTEMPTS);
}

static void etcd_free(idgen__segment_backend *b) {
  etcd_backend *e = (etcd_backend *)b;
  idgen__etcd_http_free(&e->http);
  free(e);
}

static const idgen__segment_backend_class etcd_class = {
    "etcd", etcd_init, etcd_fetch, etcd_free, NULL, NULL, NULL};

int idgen__segment_etcd_new(idgen__segment_backend **out, const char *dsn,
                            int64_t timeout_ms, char *err, size_t errlen) {
  /* The DSN is what --etcd takes: the lease's public parser reads it. */
  idgen_lease_config lc;
  idgen_lease_config_init(&lc);
  char why[IDGEN_LEASE_WHY_MAX];
  if (idgen_lease_config_set(&lc, "etcd", dsn, why, sizeof why)) {
    const char *reason = strncmp(why, "--etcd: ", 8) ? why : why + 8;
    snprintf(err, errlen, "segment etcd DSN: %s", reason);
    return IDGEN_EINVAL;
  }
  etcd_backend *e = calloc(1, sizeof *e);
  if (!e)
    return IDGEN_ENOMEM;
  e->base.vtable = &etcd_class;
  if (idgen__etcd_http_init(&e->http, (const char(*)[IDGEN_LEASE_PATH_MAX])lc.endpoints,
                            lc.nendpoints, timeout_ms)) {
    free(e);
    return IDGEN_ENOMEM;
  }
  *out = &e->base;
  return 0;
}
