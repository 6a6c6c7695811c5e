/* backend_etcd.c: the segment backend on etcd: one key per name, /idgen/segment/NAME,
 * holding the max in decimal; a block is a transaction that puts max + step only if
 * the key's mod_revision is still the one read, retried on conflict. etcd commits
 * through its raft log before it answers, so the block is durable when handed out.
 * /idgen/segment-made/NAME records that the key was made, put in the transaction that
 * makes it (init, a period's first fetch) or, for a key made before the records, in
 * its next block's: a key gone while its record is there was lost (a delete, a restore
 * without it) and is refused by fetch and init, never started again at 1. */
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

static void made_of(const char *name, char *out, size_t outlen) {
  snprintf(out, outlen, "/idgen/segment-made/%s", name);
}

/* What a made record holds: for whoever reads it with etcdctl. */
static void made_text(const char *name, char *out, size_t outlen) {
  snprintf(out, outlen,
           "/idgen/segment/%s was made in this etcd: without it its numbers are lost, and "
           "only 'idgen segment init --start-after N %s' makes it again",
           name, name);
}

static json_t *op_put(const char *key, const char *value) {
  return json_pack("{s{soso}}", "request_put", "key", idgen__etcd_b64(key), "value",
                   idgen__etcd_b64(value));
}

/* The name's key and record as one transaction found them. */
typedef struct found {
  int key, made; /* 1 if there */
  idgen__etcd_kv kv;
} found;

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

/* One transaction: if every compare holds (compare: a JSON array, taken), the
 * success ops (taken); *done says whether it ran them. When reads is set, or when it
 * did not, the branch that ran read key then made: *f gets what it found. */
static int txn(etcd_backend *e, json_t *compare, json_t *success, const char *key,
               const char *made, int reads, int *done, found *f) {
  json_t *failure =
      json_pack("[oo]", idgen__etcd_op_range(key), idgen__etcd_op_range(made));
  char *body = idgen__etcd_dump(
      json_pack("{soso so}", "compare", compare, "success", success, "failure", failure));
  int rc = post(e, "txn", "/v3/kv/txn", body);
  if (rc)
    return rc;
  json_t *root = idgen__etcd_json_load(e->http.body, e->http.len);
  json_t *ok = root ? json_object_get(root, "succeeded") : NULL;
  *done = json_is_true(ok);
  int bad = !root || !json_object_get(root, "header") || (ok && !json_is_boolean(ok));
  if (!bad && (reads || !*done)) {
    idgen__etcd_kv other;
    int k = idgen__etcd_txn_kv(root, 0, &f->kv), m = idgen__etcd_txn_kv(root, 1, &other);
    bad = k < 0 || m < 0;
    f->key = k == 1;
    f->made = m == 1;
  }
  json_decref(root);
  if (bad)
    return idgen__segment_why(&e->base, IDGEN_EPROTO, "etcd txn: unexpected reply");
  return 0;
}

/* The refusal of a key that is gone while its record says it was made. */
static int gone(etcd_backend *e, const char *key, const char *name) {
  if (strchr(name, ':')) /* a period's key: init takes no period key */
    return idgen__segment_why(
        &e->base, IDGEN_EPROTO,
        "etcd: key %s is gone, but this etcd made it "
        "(/idgen/segment-made/%s): refused, its numbers would repeat; "
        "restore the key at or above every number handed out",
        key, name);
  return idgen__segment_why(&e->base, IDGEN_EPROTO,
                            "etcd: key %s is gone, but this etcd made it "
                            "(/idgen/segment-made/%s): restore it above every number "
                            "handed out, or 'idgen segment init --start-after N %s'",
                            key, name, name);
}

/* The key made at start_after with its record, in one transaction, if it is absent and
 * (unless start_after, the operator's N > 0) was never made. */
static int etcd_init(idgen__segment_backend *b, const char *name, uint64_t step,
                     uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  etcd_backend *e = (etcd_backend *)b;
  (void)step; /* the step is the generator's; the key keeps only the max */
  char key[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 32];
  char text[24], record[3 * IDGEN_SEGMENT_NAME_MAX + 160];
  key_of(name, key, sizeof key);
  made_of(name, made, sizeof made);
  made_text(name, record, sizeof record);
  snprintf(text, sizeof text, "%" PRIu64, start_after);
  for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
    json_t *compare = start_after ? json_pack("[o]", idgen__etcd_cmp_absent(key))
                                  : json_pack("[oo]", idgen__etcd_cmp_absent(key),
                                              idgen__etcd_cmp_absent(made));
    int done = 0;
    found f = {0};
    int rc = txn(e, compare, json_pack("[oo]", op_put(key, text), op_put(made, record)),
                 key, made, 0, &done, &f);
    if (rc)
      return rc;
    if (done)
      return 0;
    uint64_t max;
    if (f.key)
      return parse_max(e, &f.kv, &max) ? IDGEN_EPROTO : 1;
    if (f.made && !start_after)
      return gone(e, key, name);
    /* neither there now: both changed since the compare; look again */
  }
  return idgen__segment_why(b, IDGEN_ECONFLICT, "etcd key %s: lost %d races in a row", key,
                            ATTEMPTS);
}

static int etcd_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  etcd_backend *e = (etcd_backend *)b;
  (void)floor; /* one key: each block lies above the last */
  char key[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 32];
  char record[3 * IDGEN_SEGMENT_NAME_MAX + 160];
  key_of(name, key, sizeof key);
  made_of(name, made, sizeof made);
  made_text(name, record, sizeof record);
  found f = {0};
  int done = 0;
  int rc = txn(e, json_array(),
               json_pack("[oo]", idgen__etcd_op_range(key), idgen__etcd_op_range(made)),
               key, made, 1, &done, &f);
  if (rc)
    return rc;
  for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
    uint64_t max;
    if (!f.key && f.made)
      return gone(e, key, name);
    if (!f.key)
      return idgen__segment_why(b, -ENOENT,
                                "etcd: no key %s: run 'idgen segment init --backend etcd' "
                                "first",
                                key);
    if ((rc = parse_max(e, &f.kv, &max)))
      return rc;
    if (max > IDGEN_SEGMENT_NUMBER_MAX - step)
      return idgen__segment_why(b, IDGEN_ERANGE,
                                "etcd key %s is at %" PRIu64 ": a block of %" PRIu64
                                " would pass 2^63 - 1",
                                key, max, step);
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, max + step);
    /* A key without its record (made before the records) gets it with this block. */
    json_t *success = f.made ? json_pack("[o]", op_put(key, text))
                             : json_pack("[oo]", op_put(key, text), op_put(made, record));
    if ((rc = txn(e, json_pack("[o]", idgen__etcd_cmp_unmoved(key, f.kv.mod_revision)),
                  success, key, made, 0, &done, &f)))
      return rc;
    if (done) {
      *out = (idgen__segment_block){max + step, step, 1};
      return 0;
    }
    /* another generator moved it first: go on from its value */
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
