/* backend_etcd.c: the segment backend on etcd: one key per name, /idgen/segment/NAME,
 * holding the max in decimal; a block is a transaction that puts max + step only if
 * the key's mod_revision is still the one read, retried on conflict. etcd commits
 * through its raft log before it answers, so the block is durable when handed out.
 * /idgen/segment-made/NAME records that the key was made, put in the transaction that
 * makes it (init, a period's first fetch) or, for a key made before the records, in
 * its next block's: a key gone while its record is there was lost (a delete, a restore
 * without it) and is refused by fetch and init, never started again at 1. The record's
 * value starts with the highest max handed out, put by each block's transaction, which
 * init --start-after must not go below unless forced. /idgen/segment-newest/FAMILY
 * (orders:YYYYMMDD) holds the newest period any server entered: a period's key is made
 * only by a transaction that compares it unmoved and raises it, so no period below it
 * is made again, whatever keys and records of old periods were deleted. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"
#include "lease/lease_internal.h"
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

static void newest_of(const char *family, char *out, size_t outlen) {
  snprintf(out, outlen, "/idgen/segment-newest/%s", family);
}

/* What a made record holds: the highest max handed out, then words for whoever reads
 * it with etcdctl. */
static void made_text(const char *name, uint64_t highest, char *out, size_t outlen) {
  snprintf(out, outlen,
           "%" PRIu64
           " is the highest number handed out of /idgen/segment/%s, made in this "
           "etcd: without it its numbers are lost, and only 'idgen segment init "
           "--start-after N %s' makes it again",
           highest, name, name);
}

/* The leading number of a value (a made record's highest, a newest period): 1 and *v,
 * or 0 for none (a made record from before it kept one). */
static int leading_number(const idgen__etcd_kv *kv, uint64_t *v) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(kv->value, &end, 10);
  if (errno || end == kv->value || kv->value[0] < '0' || kv->value[0] > '9' ||
      (*end && *end != ' '))
    return 0;
  *v = n;
  return 1;
}

static json_t *op_put(const char *key, const char *value) {
  return json_pack("{s{soso}}", "request_put", "key", idgen__etcd_b64(key), "value",
                   idgen__etcd_b64(value));
}

/* The name's key and record as one transaction found them. */
typedef struct found {
  int key, made; /* 1 if there */
  idgen__etcd_kv kv, made_kv;
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
    int k = idgen__etcd_txn_kv(root, 0, &f->kv),
        m = idgen__etcd_txn_kv(root, 1, &f->made_kv);
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

/* The refusal of an init --start-after N below the highest the record names. */
static int below(etcd_backend *e, const char *key, const char *name, uint64_t start_after,
                 uint64_t highest) {
  return idgen__segment_why(&e->base, IDGEN_EPROTO,
                            "etcd: key %s is gone, and /idgen/segment-made/%s says %" PRIu64
                            " was handed out: --start-after %" PRIu64 " is below it, "
                            "refused (its numbers would repeat); --start-after %" PRIu64
                            ", or --force",
                            key, name, highest, start_after, highest);
}

/* The key made at start_after with its record, in one transaction, if it is absent and
 * its record is as last read: absent, or (only for the operator's N > 0) one whose
 * highest is at or below N, or any when forced. */
static int etcd_key_start(idgen__segment_backend *b, const char *ns, const char *key_name,
                          uint64_t step);

static int etcd_init(idgen__segment_backend *b, const char *name, uint64_t step,
                     uint64_t start_after, int force) {
  etcd_backend *e = (etcd_backend *)b;
  /* a period's key by its number alone: under the newest-period record, as a fetch's */
  if (strchr(name, ':') && !start_after)
    return etcd_key_start(b, NULL, name, step);
  (void)step; /* the step is the generator's; the key keeps only the max */
  char key[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 32];
  char text[24], record[3 * IDGEN_SEGMENT_NAME_MAX + 200];
  key_of(name, key, sizeof key);
  made_of(name, made, sizeof made);
  made_text(name, start_after, record, sizeof record);
  snprintf(text, sizeof text, "%" PRIu64, start_after);
  int64_t made_rev = 0; /* the record as last read (0: absent) */
  for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
    json_t *compare = json_pack("[oo]", idgen__etcd_cmp_absent(key),
                                idgen__etcd_cmp_unmoved(made, made_rev));
    int done = 0;
    found f = {0};
    int rc = txn(e, compare, json_pack("[oo]", op_put(key, text), op_put(made, record)),
                 key, made, 0, &done, &f);
    if (rc)
      return rc;
    if (done)
      return 0;
    uint64_t max, highest;
    if (f.key)
      return parse_max(e, &f.kv, &max) ? IDGEN_EPROTO : 1;
    made_rev = f.made ? f.made_kv.mod_revision : 0;
    if (f.made && !start_after)
      return gone(e, key, name);
    if (f.made && !force && leading_number(&f.made_kv, &highest) && start_after < highest)
      return below(e, key, name, start_after, highest);
    /* the record changed since the compare, or is one N may pass: again, against it */
  }
  return idgen__segment_why(b, IDGEN_ECONFLICT, "etcd key %s: lost %d races in a row", key,
                            ATTEMPTS);
}

static int etcd_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  etcd_backend *e = (etcd_backend *)b;
  (void)floor; /* one key: each block lies above the last */
  char key[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 32];
  char record[3 * IDGEN_SEGMENT_NAME_MAX + 200];
  key_of(name, key, sizeof key);
  made_of(name, made, sizeof made);
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
    /* The record's highest with the block (a key made before the records gets its
     * record so). */
    made_text(name, max + step, record, sizeof record);
    json_t *success = json_pack("[oo]", op_put(key, text), op_put(made, record));
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

/* A period's key: read with its record and its family's newest period, then made at 0
 * with its record and the newest raised to its period, in one transaction that holds
 * only if the key and record are still absent and the newest is unmoved since the read.
 * A period behind the newest is used if its key is there, and never made. */
static int etcd_key_start(idgen__segment_backend *b, const char *ns, const char *key_name,
                          uint64_t step) {
  etcd_backend *e = (etcd_backend *)b;
  (void)ns;
  char family[IDGEN_SEGMENT_NAME_MAX + 8];
  uint64_t number;
  if (!idgen__segment_period_key(key_name, family, sizeof family, &number))
    return etcd_init(b, key_name, step, 0, 0);
  char key[IDGEN_SEGMENT_NAME_MAX + 32], made[IDGEN_SEGMENT_NAME_MAX + 32];
  char newest[IDGEN_SEGMENT_NAME_MAX + 40], record[3 * IDGEN_SEGMENT_NAME_MAX + 200];
  char number_text[24];
  key_of(key_name, key, sizeof key);
  made_of(key_name, made, sizeof made);
  newest_of(family, newest, sizeof newest);
  made_text(key_name, 0, record, sizeof record);
  snprintf(number_text, sizeof number_text, "%" PRIu64, number);
  for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
    char *body = idgen__etcd_dump(
        json_pack("{s[]s[ooo]}", "compare", "success", idgen__etcd_op_range(key),
                  idgen__etcd_op_range(made), idgen__etcd_op_range(newest)));
    int rc = post(e, "txn", "/v3/kv/txn", body);
    if (rc)
      return rc;
    json_t *root = idgen__etcd_json_load(e->http.body, e->http.len);
    idgen__etcd_kv other, kv; /* kv: the newest */
    int k = root ? idgen__etcd_txn_kv(root, 0, &other) : -1;
    int m = root ? idgen__etcd_txn_kv(root, 1, &other) : -1;
    int n = root ? idgen__etcd_txn_kv(root, 2, &kv) : -1;
    json_decref(root);
    uint64_t newest_period = 0;
    if (k < 0 || m < 0 || n < 0 || (n == 1 && !leading_number(&kv, &newest_period)))
      return idgen__segment_why(b, IDGEN_EPROTO, "etcd txn: unexpected reply (%s)", newest);
    if (k == 1)
      return 1; /* there: used, whatever its period */
    if (m == 1)
      return gone(e, key, key_name);
    if (number < newest_period)
      return idgen__segment_behind(b, key_name, newest_period, newest);
    json_t *compare =
        json_pack("[ooo]", idgen__etcd_cmp_absent(key), idgen__etcd_cmp_absent(made),
                  idgen__etcd_cmp_unmoved(newest, n == 1 ? kv.mod_revision : 0));
    json_t *success = json_pack("[ooo]", op_put(key, "0"), op_put(made, record),
                                op_put(newest, number_text));
    body = idgen__etcd_dump(
        json_pack("{soso s[]}", "compare", compare, "success", success, "failure"));
    if ((rc = post(e, "txn", "/v3/kv/txn", body)))
      return rc;
    root = idgen__etcd_json_load(e->http.body, e->http.len);
    int done = root && json_is_true(json_object_get(root, "succeeded"));
    int bad = !root || !json_object_get(root, "header");
    json_decref(root);
    if (bad)
      return idgen__segment_why(b, IDGEN_EPROTO, "etcd txn: unexpected reply");
    if (done)
      return 0;
    /* the key, its record or the newest moved since the read: look again */
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
    "etcd", etcd_init, etcd_fetch, etcd_free, NULL, etcd_key_start, NULL};

int idgen__segment_etcd_new(idgen__segment_backend **out, const char *dsn,
                            int64_t timeout_ms, const idgen_lease_config *access, char *err,
                            size_t errlen) {
  /* The DSN is what --etcd takes: the lease's public parser reads it. */
  idgen_lease_config *lc = malloc(sizeof *lc);
  etcd_backend *e = calloc(1, sizeof *e);
  char why[IDGEN_LEASE_WHY_MAX];
  int rc = IDGEN_ENOMEM;
  if (!lc || !e)
    goto fail;
  idgen_lease_config_init(lc);
  if (access)
    idgen__segment_access_copy(lc, access);
  lc->request_timeout_ms = timeout_ms;
  if ((rc = idgen_lease_config_set(lc, "etcd", dsn, why, sizeof why))) {
    const char *reason = strncmp(why, "--etcd: ", 8) ? why : why + 8;
    snprintf(err, errlen, "segment etcd DSN: %s", reason);
    goto fail;
  }
  if ((rc = idgen__lease_etcd_access_check(lc, why, sizeof why))) {
    snprintf(err, errlen, "segment etcd: %s", why);
    goto fail;
  }
  e->base.vtable = &etcd_class;
  if ((rc = idgen__etcd_http_init(&e->http, lc, why, sizeof why))) {
    snprintf(err, errlen, "segment etcd: %s", why);
    idgen__etcd_http_free(&e->http);
    goto fail;
  }
  memset(lc->etcd_password, 0, sizeof lc->etcd_password);
  free(lc);
  *out = &e->base;
  return 0;
fail:
  if (lc)
    memset(lc->etcd_password, 0, sizeof lc->etcd_password);
  free(lc);
  free(e);
  if (rc == IDGEN_ENOMEM)
    snprintf(err, errlen, "out of memory");
  return rc;
}
