/* json.c: request bodies and reply parsing for etcd's v3 JSON gateway (etcd/client.h):
 * keys, values, leases and transactions, no I/O. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/error.h"
#include "etcd/client.h"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int idgen__b64_encode(const void *in, size_t len, char *out, size_t outlen) {
  const unsigned char *p = in;
  size_t need = (len + 2) / 3 * 4;
  if (outlen < need + 1)
    return IDGEN_EBUFSIZE;
  size_t j = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < len)
      v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < len)
      v |= p[i + 2];
    out[j++] = b64chars[(v >> 18) & 63];
    out[j++] = b64chars[(v >> 12) & 63];
    out[j++] = i + 1 < len ? b64chars[(v >> 6) & 63] : '=';
    out[j++] = i + 2 < len ? b64chars[v & 63] : '=';
  }
  out[j] = '\0';
  return (int)j;
}

static int b64val(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

int idgen__b64_decode(const char *in, size_t len, void *out, size_t outlen) {
  unsigned char *o = out;
  if (len % 4)
    return IDGEN_EFORMAT;
  size_t j = 0;
  for (size_t i = 0; i < len; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      char c = in[i + (size_t)k];
      if (c == '=') {
        /* padding only in the last group, only at its end */
        if (i + 4 != len || k < 2)
          return IDGEN_EFORMAT;
        pad++;
        v[k] = 0;
      } else {
        if (pad)
          return IDGEN_EFORMAT;
        v[k] = b64val(c);
        if (v[k] < 0)
          return IDGEN_EFORMAT;
      }
    }
    uint32_t x =
        (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    size_t nbytes = 3 - (size_t)pad;
    if (j + nbytes > outlen)
      return IDGEN_EBUFSIZE;
    o[j++] = (unsigned char)(x >> 16);
    if (nbytes > 1)
      o[j++] = (unsigned char)(x >> 8);
    if (nbytes > 2)
      o[j++] = (unsigned char)x;
  }
  return (int)j;
}

int idgen__etcd_prefix_end(const char *prefix, size_t len, char *out, size_t outlen) {
  while (len && (unsigned char)prefix[len - 1] == 0xff)
    len--;
  if (len == 0)
    return IDGEN_EINVAL;
  if (outlen < len)
    return IDGEN_EBUFSIZE;
  memcpy(out, prefix, len);
  out[len - 1] = (char)((unsigned char)out[len - 1] + 1);
  return (int)len;
}

int idgen__json_i64(const json_t *obj, const char *key, int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    *out = 0;
    return 0;
  }
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return 0;
  }
  if (!json_is_string(v))
    return IDGEN_EPROTO;
  const char *s = json_string_value(v);
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || end == s || *end)
    return IDGEN_EPROTO;
  *out = x;
  return 0;
}

/* ---- bodies ------------------------------------------------------------------------ */

static json_t *b64_string(const char *s, size_t len) {
  char buf[4096];
  if (idgen__b64_encode(s, len, buf, sizeof buf) < 0)
    return NULL;
  return json_string(buf);
}

json_t *idgen__etcd_b64(const char *s) {
  return b64_string(s, strlen(s));
}

char *idgen__etcd_dump(json_t *root) {
  if (!root)
    return NULL;
  char *s = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  return s;
}

json_t *idgen__etcd_i64_string(int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  return json_string(buf);
}

char *idgen__etcd_grant_body(int64_t ttl_s) {
  /* "TTL", capitalised: the gateway silently ignores "ttl". */
  return idgen__etcd_dump(json_pack("{sI}", "TTL", (json_int_t)ttl_s));
}

char *idgen__etcd_id_body(int64_t lease_id) {
  return idgen__etcd_dump(json_pack("{so}", "ID", idgen__etcd_i64_string(lease_id)));
}

char *idgen__etcd_range_body(const char *key, const char *range_end) {
  json_t *root = json_pack("{so}", "key", b64_string(key, strlen(key)));
  if (root && range_end)
    json_object_set_new(root, "range_end", b64_string(range_end, strlen(range_end)));
  return idgen__etcd_dump(root);
}

char *idgen__etcd_prefix_body(const char *prefix) {
  char end[1024];
  size_t len = strlen(prefix);
  int n = idgen__etcd_prefix_end(prefix, len, end, sizeof end - 1);
  if (n < 0)
    return NULL;
  return idgen__etcd_dump(json_pack("{soso}", "key", b64_string(prefix, len), "range_end",
                                    b64_string(end, (size_t)n)));
}

/* A compare that holds while key was never created (or was deleted since). */
json_t *idgen__etcd_cmp_absent(const char *key) {
  return json_pack("{sosssssI}", "key", b64_string(key, strlen(key)), "target", "CREATE",
                   "result", "EQUAL", "create_revision", (json_int_t)0);
}

/* A compare that holds while key was last changed at revision mod_revision (0: while it
 * does not exist). */
json_t *idgen__etcd_cmp_unmoved(const char *key, int64_t mod_revision) {
  return json_pack("{sossssso}", "key", b64_string(key, strlen(key)), "target", "MOD",
                   "result", "EQUAL", "mod_revision", idgen__etcd_i64_string(mod_revision));
}

json_t *idgen__etcd_cmp_lease(const char *key, int64_t lease_id) {
  return json_pack("{sossssso}", "key", b64_string(key, strlen(key)), "target", "LEASE",
                   "result", "EQUAL", "lease", idgen__etcd_i64_string(lease_id));
}

json_t *idgen__etcd_op_range(const char *key) {
  return json_pack("{s{so}}", "request_range", "key", b64_string(key, strlen(key)));
}

char *idgen__etcd_cas_body(const char *key, int64_t mod_revision, const char *value) {
  return idgen__etcd_dump(json_pack(
      "{s[o]s[{s{soso}}]s[o]}", "compare", idgen__etcd_cmp_unmoved(key, mod_revision),
      "success", "request_put", "key", b64_string(key, strlen(key)), "value",
      b64_string(value, strlen(value)), "failure", idgen__etcd_op_range(key)));
}

/* ---- replies ----------------------------------------------------------------------- */

json_t *idgen__etcd_json_load(const char *body, size_t len) {
  json_error_t jerr;
  json_t *root = json_loadb(body, len, 0, &jerr);
  if (root && !json_is_object(root)) {
    json_decref(root);
    return NULL;
  }
  return root;
}

int idgen__etcd_error(const char *body, size_t len, int *code, char *msg, size_t msglen) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return 0;
  json_t *e = root;
  json_t *inner = json_object_get(root, "error");
  if (json_is_object(inner)) /* streaming replies wrap it: {"error":{...}} */
    e = inner;
  int is_err = (inner || json_object_get(e, "code")) && !json_object_get(e, "header");
  if (is_err) {
    json_t *c = json_object_get(e, "code");
    json_t *m = json_object_get(e, "message");
    if (!json_is_string(m))
      m = json_object_get(e, "error");
    if (code)
      *code = json_is_integer(c) ? (int)json_integer_value(c) : 0;
    if (msg && msglen)
      snprintf(msg, msglen, "%s", json_is_string(m) ? json_string_value(m) : "error");
  }
  json_decref(root);
  return is_err;
}

int idgen__etcd_parse_grant(const char *body, size_t len, int64_t *lease_id,
                            int64_t *ttl_s) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  int64_t id = 0, ttl = 0;
  int rc = IDGEN_EPROTO;
  if (json_object_get(root, "ID") && !idgen__json_i64(root, "ID", &id) &&
      !idgen__json_i64(root, "TTL", &ttl) && id != 0 && ttl > 0) {
    *lease_id = id;
    *ttl_s = ttl;
    rc = 0;
  }
  json_decref(root);
  return rc;
}

int idgen__etcd_parse_keepalive(const char *body, size_t len, int64_t *ttl_s) {
  /* The stream may hold more than one message; the first one counts. */
  const char *nl = memchr(body, '\n', len);
  if (nl && nl + 1 < body + len)
    len = (size_t)(nl - body);
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  json_t *res = json_object_get(root, "result");
  int64_t ttl = 0;
  int rc = IDGEN_EPROTO;
  if (json_is_object(res) && !idgen__json_i64(res, "TTL", &ttl)) {
    *ttl_s = ttl > 0 ? ttl : 0;
    rc = 0;
  }
  json_decref(root);
  return rc;
}

int idgen__etcd_parse_ttl(const char *body, size_t len, int64_t *ttl_s) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  int64_t ttl = 0;
  int rc = IDGEN_EPROTO;
  if (json_object_get(root, "header") && !idgen__json_i64(root, "TTL", &ttl)) {
    *ttl_s = ttl;
    rc = 0;
  }
  json_decref(root);
  return rc;
}

static int decode_kv(json_t *o, idgen__etcd_kv *kv) {
  memset(kv, 0, sizeof *kv);
  json_t *k = json_object_get(o, "key");
  json_t *v = json_object_get(o, "value");
  if (!json_is_string(k) || (v && !json_is_string(v)))
    return IDGEN_EPROTO;
  int n = idgen__b64_decode(json_string_value(k), json_string_length(k), kv->key,
                            sizeof kv->key - 1);
  if (n < 0)
    return IDGEN_EPROTO;
  kv->key[n] = '\0';
  if (v) {
    n = idgen__b64_decode(json_string_value(v), json_string_length(v), kv->value,
                          sizeof kv->value - 1);
    if (n < 0)
      return IDGEN_EPROTO;
    kv->value[n] = '\0';
    kv->value_len = (size_t)n;
  }
  if (idgen__json_i64(o, "lease", &kv->lease) ||
      idgen__json_i64(o, "create_revision", &kv->create_revision) ||
      idgen__json_i64(o, "mod_revision", &kv->mod_revision))
    return IDGEN_EPROTO;
  return 0;
}

static int decode_kvs(json_t *arr, idgen__etcd_kv **kvs, size_t *n) {
  size_t count = arr ? json_array_size(arr) : 0;
  if (arr && !json_is_array(arr))
    return IDGEN_EPROTO;
  idgen__etcd_kv *out = calloc(count ? count : 1, sizeof *out);
  if (!out)
    return IDGEN_ENOMEM;
  for (size_t i = 0; i < count; i++)
    if (decode_kv(json_array_get(arr, i), &out[i])) {
      free(out);
      return IDGEN_EPROTO;
    }
  *kvs = out;
  *n = count;
  return 0;
}

int idgen__etcd_parse_range(const char *body, size_t len, idgen__etcd_kv **kvs, size_t *n) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  int rc = IDGEN_EPROTO;
  if (json_object_get(root, "header"))
    rc = decode_kvs(json_object_get(root, "kvs"), kvs, n);
  json_decref(root);
  return rc;
}

int idgen__etcd_parse_txn(const char *body, size_t len, int *succeeded, size_t range_index,
                          idgen__etcd_kv *kv, int *found) {
  json_t *root = idgen__etcd_json_load(body, len);
  if (!root)
    return IDGEN_EPROTO;
  int rc = IDGEN_EPROTO;
  if (!json_object_get(root, "header"))
    goto done;
  json_t *s = json_object_get(root, "succeeded");
  if (s && !json_is_boolean(s))
    goto done;
  *succeeded = s ? json_is_true(s) : 0;
  if (kv && found) {
    *found = 0;
    json_t *r = json_object_get(root, "responses");
    json_t *rr = json_object_get(json_array_get(r, range_index), "response_range");
    json_t *arr = json_object_get(rr, "kvs");
    if (json_array_size(arr) > 0) {
      if (decode_kv(json_array_get(arr, 0), kv))
        goto done;
      *found = 1;
    }
  }
  rc = 0;
done:
  json_decref(root);
  return rc;
}

/* The first kv of the txn's response at index i, a range: 1 with *kv, 0 when the range
 * found nothing (kvs omitted), -1 when that response is not a range or not well formed. */
int idgen__etcd_txn_kv(json_t *root, size_t i, idgen__etcd_kv *kv) {
  json_t *r = json_array_get(json_object_get(root, "responses"), i);
  json_t *rr = json_object_get(r, "response_range");
  json_t *arr = json_object_get(rr, "kvs");
  if (!json_is_object(rr) || (arr && !json_is_array(arr)))
    return -1;
  if (json_array_size(arr) == 0)
    return 0;
  return decode_kv(json_array_get(arr, 0), kv) ? -1 : 1;
}
