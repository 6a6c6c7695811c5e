/* client.h: a small client of etcd's v3 JSON gateway, shared by the etcd lease provider
 * (src/lease/etcd*.c) and the segment etcd backend (src/segment/backend_etcd.c): POST a
 * body to one of several endpoints, failing over (http.c); the gateway's encoding, bytes
 * in and bytes out, no sockets: base64 keys and values, int64 values as strings, false
 * and zero fields omitted (json.c). It knows keys, values, leases and transactions, not
 * what its users keep in them. Built into libidgen-etcd (libcurl, jansson). */
#ifndef IDGEN_ETCD_CLIENT_H
#define IDGEN_ETCD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "idgen/lease.h"

/* ---- HTTP (http.c) ------------------------------------------------------------------ */

#define IDGEN__ETCD_TOKEN_MAX 2048 /* a simple token is ~20 bytes, a JWT a few hundred */

typedef struct idgen__etcd_http {
  CURL *curl;
  char eps[IDGEN_LEASE_ENDPOINTS_MAX][IDGEN_LEASE_PATH_MAX];
  int neps, cur; /* cur: the endpoint that answered last, tried first */
  int64_t timeout_ms;
  int tls;      /* https:// endpoints: peer and host name verified */
  int has_cert; /* a client certificate is sent */
  /* etcd auth: user "" = none; the token sent as Authorization, "" until the first
   * request authenticates; reauths counts the tokens etcd refused (expired) */
  char user[IDGEN_LEASE_NAME_MAX];
  char password[IDGEN_LEASE_NAME_MAX * 4];
  char token[IDGEN__ETCD_TOKEN_MAX];
  int64_t reauths;
  char curl_err[CURL_ERROR_SIZE]; /* libcurl's detail of the last transport failure */
  /* the last reply: body (NUL-terminated, owned), its length and HTTP status */
  char *body;
  size_t len, cap;
  long status;
  char why[IDGEN_LEASE_WHY_MAX]; /* the last transport failure, one line */
  /* Called with the duration of every request, answered or not (may be NULL). */
  void (*observe)(void *ctx, int64_t ns);
  void *observe_ctx;
} idgen__etcd_http;

/* Sets up a client for c's endpoints, request timeout, TLS files and user (copied; the
 * password file is read now); no request is sent. h must not move afterwards.
 * IDGEN_ENOMEM; IDGEN_EINVAL with one line in err (may be NULL) for a file that cannot
 * be read (naming its option) or an empty password file. */
int idgen__etcd_http_init(idgen__etcd_http *h, const idgen_lease_config *c, char *err,
                          size_t errlen);
void idgen__etcd_http_free(idgen__etcd_http *h);

/* POSTs body (JSON; NULL counts as out of memory) to path on the endpoint that answered
 * last, failing over to the others on transport errors (TLS ones too) and on 5xx
 * replies (a member without quorum). With a user, the first request authenticates
 * (/v3/auth/authenticate) and every request carries the token; a reply that refuses
 * the token (HTTP 401 "etcdserver: invalid auth token": a simple token expires after
 * --auth-token-ttl idle seconds; "revision of auth store is old") was not applied, so
 * the request is sent once more with a new token, and that reply is the one returned.
 * 0 with body, len and status set; IDGEN_EUNAVAIL with why set (a failed
 * authentication too); IDGEN_ENOMEM. One thread at a time. */
int idgen__etcd_http_post(idgen__etcd_http *h, const char *path, const char *body);

/* The endpoint tried first ("http://127.0.0.1:2379"). */
const char *idgen__etcd_http_endpoint(const idgen__etcd_http *h);

/* ---- encoding (json.c) -------------------------------------------------------------- */

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
/* Compare-and-swap: if mod_revision(key) == mod_revision (0: the key does not exist),
 * put key = value; otherwise read key (the failure branch's response 0). */
char *idgen__etcd_cas_body(const char *key, int64_t mod_revision, const char *value);

/* The parts of a transaction a user builds itself (json_t, new references; NULL when
 * out of memory, which json_pack's "o" passes on as a failure). */
json_t *idgen__etcd_b64(const char *s);          /* a key or value, base64 */
json_t *idgen__etcd_i64_string(int64_t v);       /* an int64, as etcd spells it */
json_t *idgen__etcd_cmp_absent(const char *key); /* create_revision(key) == 0 */
/* mod_revision(key) == mod_revision (0: while it does not exist). */
json_t *idgen__etcd_cmp_unmoved(const char *key, int64_t mod_revision);
json_t *idgen__etcd_cmp_lease(const char *key, int64_t lease_id); /* lease(key) == id */
json_t *idgen__etcd_op_range(const char *key);                    /* read key */
/* The body of root, compact, malloc'd; takes root's reference (NULL: NULL). */
char *idgen__etcd_dump(json_t *root);

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

/* A range reply (kvs omitted when empty): *kvs malloc'd (free it), *n entries. */
int idgen__etcd_parse_range(const char *body, size_t len, idgen__etcd_kv **kvs, size_t *n);

/* A txn reply: succeeded (0 when omitted). If kv is not NULL and the response index
 * range_index is a range with a kv, it is decoded into *kv and *found = 1. */
int idgen__etcd_parse_txn(const char *body, size_t len, int *succeeded, size_t range_index,
                          idgen__etcd_kv *kv, int *found);

/* The reply as a JSON object (NULL: not JSON, or not an object); json_decref it. */
json_t *idgen__etcd_json_load(const char *body, size_t len);
/* The first kv of a txn reply's response at index i, a range: 1 with *kv, 0 when the
 * range found nothing (kvs omitted), -1 when that response is not a range or not well
 * formed. */
int idgen__etcd_txn_kv(json_t *root, size_t i, idgen__etcd_kv *kv);

#endif
