/* etcd_txn.c: the etcd provider's transactions (claim a worker key, the fenced HWM write
 * and delete) and its choice of a worker ID from a listing of the worker keys: what the
 * lease keeps in etcd, built on the client's encoding (etcd/client.h), with no I/O. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"
#include "idgen/error.h"
#include "lease/etcd_txn.h"

/* ---- bodies ------------------------------------------------------------------------ */

/* The fence of every write a holder makes: worker_key still carries lease_id. */
static json_t *carries_lease(const char *worker_key, int64_t lease_id) {
  return idgen__etcd_cmp_lease(worker_key, lease_id);
}

char *idgen__etcd_claim_body(const char *worker_key, const char *value, int64_t lease_id,
                             const char *hwm_key, const char *other_worker_key,
                             const char *other_hwm_key) {
  json_t *root = json_pack(
      "{s[o]s[{s{sososo}}o]}", "compare", idgen__etcd_cmp_absent(worker_key), "success",
      "request_put", "key", idgen__etcd_b64(worker_key), "value", idgen__etcd_b64(value),
      "lease", idgen__etcd_i64_string(lease_id), idgen__etcd_op_range(hwm_key));
  if (root && other_worker_key) {
    json_array_append_new(json_object_get(root, "compare"),
                          idgen__etcd_cmp_absent(other_worker_key));
    json_array_append_new(json_object_get(root, "success"),
                          idgen__etcd_op_range(other_hwm_key));
    json_object_set_new(root, "failure",
                        json_pack("[o]", idgen__etcd_op_range(other_worker_key)));
  }
  return idgen__etcd_dump(root);
}

/* The HWM write of a holder: the fence, and the HWM key as the holder last saw it (so that
 * a write of ours that etcd applies late, after a later one, is refused: see
 * fenced_put in etcd.c). */
char *idgen__etcd_fenced_put_body(const char *worker_key, int64_t lease_id,
                                  const char *hwm_key, int64_t hwm_revision,
                                  const char *value) {
  json_t *fence = carries_lease(worker_key, lease_id);
  json_t *seen = idgen__etcd_cmp_unmoved(hwm_key, hwm_revision);
  return idgen__etcd_dump(json_pack(
      "{s[oo]s[{s{soso}}]s[oo]}", "compare", fence, seen, "success", "request_put", "key",
      idgen__etcd_b64(hwm_key), "value", idgen__etcd_b64(value), "failure",
      idgen__etcd_op_range(worker_key), idgen__etcd_op_range(hwm_key)));
}

char *idgen__etcd_fenced_delete_body(const char *worker_key, int64_t lease_id) {
  return idgen__etcd_dump(
      json_pack("{s[o]s[{s{so}}]}", "compare", carries_lease(worker_key, lease_id),
                "success", "request_delete_range", "key", idgen__etcd_b64(worker_key)));
}

/* ---- replies ----------------------------------------------------------------------- */

int64_t idgen__etcd_key_worker(const char *key) {
  const char *slash = strrchr(key, '/');
  if (!slash || !slash[1])
    return -1;
  char *end;
  errno = 0;
  long long v = strtoll(slash + 1, &end, 10);
  if (errno || *end || v < 0 || slash[1] < '0' || slash[1] > '9')
    return -1;
  return v;
}

/* Strict decimal digits of s up to the end or a '/': the number, *end after it; -1. */
static int digits(const char *s, uint64_t *out, const char **end) {
  if (*s < '0' || *s > '9')
    return -1;
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  if (errno || (*e && *e != '/'))
    return -1;
  *out = v;
  *end = e;
  return 0;
}

int idgen__etcd_key_parse(const char *rest, int64_t *dc, int *hwm, uint64_t *worker) {
  uint64_t d;
  *dc = -1;
  if (!strncmp(rest, "dc/", 3)) {
    if (digits(rest + 3, &d, &rest) || *rest != '/' || d > INT64_MAX)
      return -1;
    *dc = (int64_t)d;
    rest++;
  }
  if (!strncmp(rest, "workers/", 8))
    *hwm = 0, rest += 8;
  else if (!strncmp(rest, "hwm/", 4))
    *hwm = 1, rest += 4;
  else
    return -1;
  return digits(rest, worker, &rest) || *rest ? -1 : 0;
}

static int listed(const uint64_t *list, size_t n, uint64_t w) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == w)
      return 1;
  return 0;
}

int64_t idgen__etcd_pick(const idgen__etcd_kv *kvs, size_t n, int64_t lease_id, uint64_t lo,
                         uint64_t hi, const uint64_t *skip, size_t nskip, int *ours) {
  *ours = 0;
  for (size_t i = 0; lease_id && i < n; i++) {
    int64_t w = idgen__etcd_key_worker(kvs[i].key);
    if (w >= 0 && (uint64_t)w >= lo && (uint64_t)w <= hi && kvs[i].lease == lease_id &&
        !listed(skip, nskip, (uint64_t)w)) {
      *ours = 1;
      return w;
    }
  }
  /* Keys come in byte order (".../17" before ".../3"), not numeric order. */
  for (uint64_t w = lo; w <= hi; w++) {
    int taken = listed(skip, nskip, w);
    for (size_t i = 0; i < n && !taken; i++)
      taken = idgen__etcd_key_worker(kvs[i].key) == (int64_t)w;
    if (!taken)
      return (int64_t)w;
  }
  return -1;
}

int idgen__etcd_parse_fenced_put(const char *body, size_t len, int64_t lease_id,
                                 int64_t hwm_revision, idgen__etcd_hwm_put *outcome,
                                 int64_t *revision, idgen__etcd_kv *hwm) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  int rc = IDGEN_EPROTO;
  json_t *header = json_object_get(root, "header");
  json_t *s = json_object_get(root, "succeeded");
  int64_t rev = 0;
  if (!json_is_object(header) || (s && !json_is_boolean(s)))
    goto done;
  if (json_is_true(s)) {
    /* A txn that writes makes one revision, the header's: the HWM key's mod_revision. */
    if (idgen__json_i64(header, "revision", &rev) || rev <= 0)
      goto done;
    *outcome = IDGEN__HWM_WRITTEN;
    *revision = rev;
    rc = 0;
    goto done;
  }
  idgen__etcd_kv wk, hk;
  int wfound = idgen__etcd_txn_kv(root, 0, &wk), hfound = idgen__etcd_txn_kv(root, 1, &hk);
  if (wfound < 0 || hfound < 0)
    goto done;
  if (!hfound)
    memset(&hk, 0, sizeof hk);
  rev = hk.mod_revision;
  if (wfound && wk.lease == lease_id && rev == hwm_revision)
    goto done; /* both compares held, yet it failed: not the reply to our body */
  *outcome = wfound && wk.lease == lease_id ? IDGEN__HWM_MOVED : IDGEN__HWM_NOT_OURS;
  *revision = rev;
  *hwm = hk;
  rc = 0;
done:
  json_decref(root);
  return rc;
}
