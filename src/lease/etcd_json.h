/* etcd_json.h: the etcd v3 JSON gateway's encoding, bytes in and bytes out (no sockets):
 * base64 keys and values, int64 values as strings, false and zero fields omitted; and
 * the choice of a worker ID from a listing of the worker keys. */
#ifndef IDGEN_ETCD_JSON_H
#define IDGEN_ETCD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Standard base64 with padding. encode returns the length written (NUL added) or
 * IDGEN_EBUFSIZE; decode returns the byte count or IDGEN_EBUFSIZE / IDGEN_EFORMAT
 * (bad character, bad padding, length not a multiple of 4). */
int idgen__b64_encode(const void *in, size_t len, char *out, size_t outlen);
int idgen__b64_decode(const char *in, size_t len, void *out, size_t outlen);

/* The range_end of a prefix: the prefix with its last byte + 1 (bytes 0xff are dropped
 * first, as etcd's clientv3 does). Returns the length, or IDGEN_EINVAL for an empty
 * or all-0xff prefix. out must hold len bytes. */
int idgen__etcd_prefix_end(const char *prefix, size_t len, char *out, size_t outlen);

/* Reads an int64 field that etcd sends as a string (numbers accepted too). A missing
 * field reads 0 (etcd omits zeros). IDGEN_EPROTO for anything else. */
int idgen__json_i64(const json_t *obj, const char *key, int64_t *out);

/* Request bodies, as malloc'd NUL-terminated JSON (NULL when out of memory). */
char *idgen__etcd_grant_body(int64_t ttl_s);
char *idgen__etcd_id_body(int64_t lease_id); /* keepalive, revoke, timetolive */
char *idgen__etcd_range_body(const char *key, const char *range_end_or_null);
/* Prefix range: key = prefix, range_end = idgen__etcd_prefix_end(prefix). */
char *idgen__etcd_prefix_body(const char *prefix);
/* Claim: if create_revision(worker_key) == 0, put worker_key = value with the lease and
 * read hwm_key (response 1), in one transaction. With the ID's other name (two-field
 * layouts; NULL: none), it must be absent too: create_revision(other_worker_key) == 0;
 * then other_hwm_key is read as well (response 2), and a failed compare reads
 * other_worker_key (the failure's response 0), to tell a race from the other name. */
char *idgen__etcd_claim_body(const char *worker_key, const char *value, int64_t lease_id,
                             const char *hwm_key, const char *other_worker_key,
                             const char *other_hwm_key);
/* Fenced HWM write: if lease(worker_key) == lease_id and mod_revision(hwm_key) ==
 * hwm_revision (0: the key does not exist), put hwm_key = value (no lease); otherwise
 * read worker_key and hwm_key (the failure's responses 0 and 1), to tell which compare
 * failed. idgen__etcd_parse_fenced_put reads the reply. */
char *idgen__etcd_fenced_put_body(const char *worker_key, int64_t lease_id,
                                  const char *hwm_key, int64_t hwm_revision,
                                  const char *value);
/* Fenced delete: if lease(worker_key) == lease_id, delete worker_key. */
char *idgen__etcd_fenced_delete_body(const char *worker_key, int64_t lease_id);

/* Compare-and-swap: if mod_revision(key) == mod_revision (0: the key does not exist),
 * put key = value; otherwise read key (the failure branch's response 0). */
char *idgen__etcd_cas_body(const char *key, int64_t mod_revision, const char *value);

/* A gateway error ({"error":..,"code":N,"message":..}): returns 1 and fills code (may
 * be NULL) and message; 0 when the body is not an error. */
int idgen__etcd_error(const char *body, size_t len, int *code, char *msg, size_t msglen);

/* Replies. Each returns 0, IDGEN_EPROTO for malformed JSON or a missing required field. */
int idgen__etcd_parse_grant(const char *body, size_t len, int64_t *lease_id,
                            int64_t *ttl_s);
/* Keepalive stream's first message: ttl_s = 0 when the TTL field is missing (the lease
 * is gone). */
int idgen__etcd_parse_keepalive(const char *body, size_t len, int64_t *ttl_s);
/* timetolive: ttl_s = -1 when the lease has expired, as etcd reports. */
int idgen__etcd_parse_ttl(const char *body, size_t len, int64_t *ttl_s);

typedef struct idgen__etcd_kv {
  char key[256];
  char value[1024]; /* NUL-terminated; value_len bytes */
  size_t value_len;
  int64_t lease;
  int64_t create_revision;
  int64_t mod_revision;
} idgen__etcd_kv;

/* The worker ID at the end of a key (".../17" -> 17), or -1. */
int64_t idgen__etcd_key_worker(const char *key);
/* A key of a namespace, after its "/idgen/<ns>/": "workers/<N>", "hwm/<N>",
 * "dc/<D>/workers/<N>" or "dc/<D>/hwm/<N>". 0 with *dc (-1: none), *hwm (1: a HWM key)
 * and *worker = N; -1 for anything else. */
int idgen__etcd_key_parse(const char *rest, int64_t *dc, int *hwm, uint64_t *worker);

/* Which worker ID to take, from a listing of the worker keys (in any order): the one
 * in [lo, hi] whose key already carries lease_id, with *ours = 1 (a claim of ours that
 * etcd applied though its reply was lost, say to a timeout before a retry on another
 * endpoint: adopt it rather than claim a second ID); else the smallest ID in [lo, hi]
 * with no key, *ours = 0. IDs listed in skip[0..nskip) are passed over either way;
 * lease_id 0 adopts nothing. -1 when no ID is free. */
int64_t idgen__etcd_pick(const idgen__etcd_kv *kvs, size_t n, int64_t lease_id, uint64_t lo,
                         uint64_t hi, const uint64_t *skip, size_t nskip, int *ours);

/* A range reply (kvs omitted when empty): *kvs malloc'd (free it), *n entries. */
int idgen__etcd_parse_range(const char *body, size_t len, idgen__etcd_kv **kvs, size_t *n);
/* What became of a fenced HWM write (idgen__etcd_parse_fenced_put). */
typedef enum idgen__etcd_hwm_put {
  IDGEN__HWM_WRITTEN,  /* applied */
  IDGEN__HWM_NOT_OURS, /* not applied: the worker key is gone or carries another lease */
  IDGEN__HWM_MOVED     /* not applied, though the worker key still carries lease_id: the
                        * HWM key was changed after hwm_revision */
} idgen__etcd_hwm_put;

/* A fenced HWM write's reply, for the body made with lease_id and hwm_revision: 0 with
 * *outcome and *revision, the HWM key's mod_revision after the transaction (0: no key),
 * and, when not written, *hwm: the HWM key as the failure read it (all zero: no key);
 * IDGEN_EPROTO for a reply that is none of the three (a success without a revision, a
 * failure that does not read both keys, or one whose compares would both have held). */
int idgen__etcd_parse_fenced_put(const char *body, size_t len, int64_t lease_id,
                                 int64_t hwm_revision, idgen__etcd_hwm_put *outcome,
                                 int64_t *revision, idgen__etcd_kv *hwm);

/* A txn reply: succeeded (0 when omitted). If kv is not NULL and the response index
 * range_index is a range with a kv, it is decoded into *kv and *found = 1. */
int idgen__etcd_parse_txn(const char *body, size_t len, int *succeeded, size_t range_index,
                          idgen__etcd_kv *kv, int *found);

#endif
