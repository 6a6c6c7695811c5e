/* test_lease_etcd_json.c: the etcd gateway encoding: base64 (RFC 4648 vectors and
 * rejects), prefix range ends, int64 as strings, omitted false/zero fields, bodies, and
 * what a fenced HWM write's reply says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "etcd/client.h"
#include "lease/etcd_txn.h"
#include "lease/lease_internal.h"

static void test_b64_rfc4648(void **state) {
  (void)state;
  static const char *const vec[][2] = {{"", ""},
                                       {"f", "Zg=="},
                                       {"fo", "Zm8="},
                                       {"foo", "Zm9v"},
                                       {"foob", "Zm9vYg=="},
                                       {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
    char enc[32], dec[32];
    int n = idgen__b64_encode(vec[i][0], strlen(vec[i][0]), enc, sizeof enc);
    assert_int_equal(n, (int)strlen(vec[i][1]));
    assert_string_equal(enc, vec[i][1]);
    n = idgen__b64_decode(vec[i][1], strlen(vec[i][1]), dec, sizeof dec);
    assert_int_equal(n, (int)strlen(vec[i][0]));
    assert_memory_equal(dec, vec[i][0], (size_t)n);
  }
}

static void test_b64_rejects(void **state) {
  (void)state;
  char out[16];
  assert_int_equal(idgen__b64_decode("Zg=", 3, out, sizeof out), IDGEN_EFORMAT);
  assert_int_equal(idgen__b64_decode("Z===", 4, out, sizeof out), IDGEN_EFORMAT);
  assert_int_equal(idgen__b64_decode("Zg==Zg==", 8, out, sizeof out), IDGEN_EFORMAT);
  assert_int_equal(idgen__b64_decode("Zm9v!A==", 8, out, sizeof out), IDGEN_EFORMAT);
  assert_int_equal(idgen__b64_decode("Zm=v", 4, out, sizeof out), IDGEN_EFORMAT);
  assert_int_equal(idgen__b64_decode("Zm9vYmFy", 8, out, 5), IDGEN_EBUFSIZE);
  assert_int_equal(idgen__b64_encode("foo", 3, out, 4), IDGEN_EBUFSIZE);
}

static void test_prefix_end(void **state) {
  (void)state;
  char out[32];
  int n = idgen__etcd_prefix_end("/idgen/a/workers/", 17, out, sizeof out);
  assert_int_equal(n, 17);
  assert_memory_equal(out, "/idgen/a/workers0", 17); /* '/' + 1 = '0' */
  assert_int_equal(idgen__etcd_prefix_end("a\xff\xff", 3, out, sizeof out), 1);
  assert_int_equal(out[0], 'b');
  assert_int_equal(idgen__etcd_prefix_end("\xff", 1, out, sizeof out), IDGEN_EINVAL);
}

static void test_int64_strings(void **state) {
  (void)state;
  json_t *o = json_loads("{\"a\":\"9223372036854775807\",\"b\":12,\"c\":\"x\",\"d\":true}",
                         0, NULL);
  int64_t v = -1;
  assert_int_equal(idgen__json_i64(o, "a", &v), 0);
  assert_true(v == INT64_MAX);
  assert_int_equal(idgen__json_i64(o, "b", &v), 0);
  assert_int_equal(v, 12);
  assert_int_equal(idgen__json_i64(o, "missing", &v), 0); /* omitted zero */
  assert_int_equal(v, 0);
  assert_int_equal(idgen__json_i64(o, "c", &v), IDGEN_EPROTO);
  assert_int_equal(idgen__json_i64(o, "d", &v), IDGEN_EPROTO);
  json_decref(o);
}

static void test_grant_and_keepalive(void **state) {
  (void)state;
  char *b = idgen__etcd_grant_body(10);
  assert_string_equal(b, "{\"TTL\":10}"); /* capitalised: "ttl" is ignored */
  free(b);
  b = idgen__etcd_id_body(4111120336723135749);
  assert_string_equal(b, "{\"ID\":\"4111120336723135749\"}");
  free(b);
  const char *grant = "{\"header\":{\"revision\":\"1\"},\"ID\":\"4111120336723135749\","
                      "\"TTL\":\"10\"}";
  int64_t id = 0, ttl = 0;
  assert_int_equal(idgen__etcd_parse_grant(grant, strlen(grant), &id, &ttl), 0);
  assert_true(id == 4111120336723135749);
  assert_int_equal(ttl, 10);
  const char *ka = "{\"result\":{\"header\":{},\"ID\":\"7\",\"TTL\":\"5\"}}";
  assert_int_equal(idgen__etcd_parse_keepalive(ka, strlen(ka), &ttl), 0);
  assert_int_equal(ttl, 5);
  /* an expired lease: 200 with no TTL */
  const char *gone = "{\"result\":{\"header\":{\"revision\":\"1\"},\"ID\":\"123\"}}";
  assert_int_equal(idgen__etcd_parse_keepalive(gone, strlen(gone), &ttl), 0);
  assert_int_equal(ttl, 0);
  assert_int_equal(idgen__etcd_parse_keepalive("nope", 4, &ttl), IDGEN_EPROTO);
  const char *ttl_gone = "{\"header\":{},\"ID\":\"1\",\"TTL\":\"-1\"}";
  assert_int_equal(idgen__etcd_parse_ttl(ttl_gone, strlen(ttl_gone), &ttl), 0);
  assert_int_equal(ttl, -1);
}

static void test_txn_replies(void **state) {
  (void)state;
  int ok = -1, found = -1;
  idgen__etcd_kv kv;
  /* a failed txn: no "succeeded", no responses */
  const char *failed = "{\"header\":{\"revision\":\"2\"}}";
  assert_int_equal(idgen__etcd_parse_txn(failed, strlen(failed), &ok, 1, &kv, &found), 0);
  assert_int_equal(ok, 0);
  assert_int_equal(found, 0);
  /* claim won; the HWM range found nothing (kvs omitted) */
  const char *won = "{\"header\":{},\"succeeded\":true,\"responses\":[{\"response_put\":"
                    "{\"header\":{}}},{\"response_range\":{\"header\":{}}}]}";
  assert_int_equal(idgen__etcd_parse_txn(won, strlen(won), &ok, 1, &kv, &found), 0);
  assert_int_equal(ok, 1);
  assert_int_equal(found, 0);
  /* claim won with a HWM: value {"hwm_ms":"5"} */
  const char *hwm =
      "{\"header\":{},\"succeeded\":true,\"responses\":[{\"response_put\":{}},"
      "{\"response_range\":{\"kvs\":[{\"key\":\"L2EvaHdtLzA=\",\"value\":"
      "\"eyJod21fbXMiOiI1In0=\",\"create_revision\":\"3\"}]}}]}";
  assert_int_equal(idgen__etcd_parse_txn(hwm, strlen(hwm), &ok, 1, &kv, &found), 0);
  assert_int_equal(found, 1);
  assert_string_equal(kv.key, "/a/hwm/0");
  assert_string_equal(kv.value, "{\"hwm_ms\":\"5\"}");
  assert_int_equal(kv.create_revision, 3);
  assert_int_equal(kv.lease, 0); /* omitted */
  idgen__record rec;
  assert_int_equal(idgen__record_parse(kv.value, kv.value_len, &rec), 0);
  assert_int_equal(rec.hwm_ms, 5);
}

/* A fenced HWM write's reply, as etcd 3.4's gateway sends it (revisions as strings, zero
 * fields and empty kvs omitted), for the body of lease 12 and HWM revision 41. */
static void test_fenced_put_replies(void **state) {
  (void)state;
  idgen__etcd_hwm_put put = IDGEN__HWM_NOT_OURS;
  int64_t rev = -1;
  idgen__etcd_kv hwm;
#define PARSE(reply)                                                                       \
  idgen__etcd_parse_fenced_put(reply, strlen(reply), 12, 41, &put, &rev, &hwm)
  /* applied: the txn's revision is the HWM key's new one */
  assert_int_equal(PARSE("{\"header\":{\"revision\":\"57\"},\"succeeded\":true,"
                         "\"responses\":[{\"response_put\":{\"header\":{}}}]}"),
                   0);
  assert_int_equal(put, IDGEN__HWM_WRITTEN);
  assert_int_equal(rev, 57);
  /* not applied; the worker key carries our lease and the HWM key moved to 50: one of
   * our own writes landed (late, or its reply was lost) */
  static const char moved[] =
      "{\"header\":{\"revision\":\"52\"},\"responses\":["
      "{\"response_range\":{\"header\":{},\"kvs\":[{\"key\":\"L3c=\",\"create_revision\":"
      "\"30\",\"mod_revision\":\"30\",\"version\":\"1\",\"value\":\"eA==\",\"lease\":"
      "\"12\"}],\"count\":\"1\"}},{\"response_range\":{\"header\":{},\"kvs\":[{\"key\":"
      "\"L2g=\",\"create_revision\":\"4\",\"mod_revision\":\"50\",\"version\":\"9\","
      "\"value\":\"eA==\"}],\"count\":\"1\"}}]}";
  assert_int_equal(PARSE(moved), 0);
  assert_int_equal(put, IDGEN__HWM_MOVED);
  assert_int_equal(rev, 50);
  assert_string_equal(hwm.key, "/h"); /* what it left: the retry writes no lower */
  assert_string_equal(hwm.value, "x");
  assert_int_equal(hwm.mod_revision, 50);
  /* the worker key carries another lease, or is gone: the fence */
  static const char theirs[] =
      "{\"header\":{},\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":\"L3c=\","
      "\"lease\":\"13\"}]}},{\"response_range\":{\"kvs\":[{\"key\":\"L2g=\","
      "\"mod_revision\":\"41\"}]}}]}";
  assert_int_equal(PARSE(theirs), 0);
  assert_int_equal(put, IDGEN__HWM_NOT_OURS);
  assert_int_equal(rev, 41);
  static const char gone[] =
      "{\"header\":{},\"responses\":[{\"response_range\":{\"header\":{}}},"
      "{\"response_range\":{\"kvs\":[{\"key\":\"L2g=\",\"mod_revision\":\"44\"}]}}]}";
  assert_int_equal(PARSE(gone), 0);
  assert_int_equal(put, IDGEN__HWM_NOT_OURS);
  /* our worker key, and the HWM key deleted since: moved, to "no key" */
  static const char deleted[] =
      "{\"header\":{},\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":\"L3c=\","
      "\"lease\":\"12\"}]}},{\"response_range\":{\"header\":{}}}]}";
  assert_int_equal(PARSE(deleted), 0);
  assert_int_equal(put, IDGEN__HWM_MOVED);
  assert_int_equal(rev, 0);
  assert_int_equal(hwm.value_len, 0);
  assert_int_equal(hwm.mod_revision, 0);
  /* Not a reply to our body: both compares held, yet it failed; a success without a
   * revision; a failure that does not read both keys; not a txn reply at all. */
  put = IDGEN__HWM_WRITTEN;
  rev = -1;
  static const char *const bad[] = {
      "{\"header\":{},\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":\"L3c=\","
      "\"lease\":\"12\"}]}},{\"response_range\":{\"kvs\":[{\"key\":\"L2g=\","
      "\"mod_revision\":\"41\"}]}}]}",
      "{\"header\":{},\"succeeded\":true}",
      "{\"header\":{\"revision\":\"x\"},\"succeeded\":true}",
      "{\"header\":{}}",
      "{\"header\":{},\"responses\":[{\"response_range\":{}}]}",
      "{\"header\":{},\"responses\":[{\"response_put\":{}},{\"response_range\":{}}]}",
      "{\"header\":{},\"responses\":[{\"response_range\":{\"kvs\":{}}},"
      "{\"response_range\":{}}]}",
      "{\"header\":{},\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":\"!\"}]}},"
      "{\"response_range\":{}}]}",
      "{\"header\":{\"revision\":\"9\"},\"succeeded\":\"true\"}",
      "{\"succeeded\":true}",
      "[]",
      "not json",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(PARSE(bad[i]), IDGEN_EPROTO);
  assert_int_equal(put, IDGEN__HWM_WRITTEN); /* untouched */
  assert_int_equal(rev, -1);
#undef PARSE
}

static void test_range_reply(void **state) {
  (void)state;
  idgen__etcd_kv *kvs = NULL;
  size_t n = 9;
  const char *empty = "{\"header\":{\"revision\":\"3\"}}";
  assert_int_equal(idgen__etcd_parse_range(empty, strlen(empty), &kvs, &n), 0);
  assert_int_equal(n, 0);
  free(kvs);
  const char *two = "{\"header\":{},\"kvs\":[{\"key\":\"YQ==\",\"lease\":\"77\"},"
                    "{\"key\":\"Yg==\",\"value\":\"eA==\"}],\"count\":\"2\"}";
  assert_int_equal(idgen__etcd_parse_range(two, strlen(two), &kvs, &n), 0);
  assert_int_equal(n, 2);
  assert_string_equal(kvs[0].key, "a");
  assert_int_equal(kvs[0].lease, 77);
  assert_int_equal(kvs[0].value_len, 0);
  assert_string_equal(kvs[1].value, "x");
  free(kvs);
  const char *bad = "{\"header\":{},\"kvs\":[{\"key\":\"!!\"}]}";
  assert_int_equal(idgen__etcd_parse_range(bad, strlen(bad), &kvs, &n), IDGEN_EPROTO);
}

static void test_errors(void **state) {
  (void)state;
  int code = 0;
  char msg[64];
  const char *e = "{\"error\":\"etcdserver: requested lease not found\",\"code\":5,"
                  "\"message\":\"etcdserver: requested lease not found\"}";
  assert_int_equal(idgen__etcd_error(e, strlen(e), &code, msg, sizeof msg), 1);
  assert_int_equal(code, 5);
  assert_string_equal(msg, "etcdserver: requested lease not found");
  const char *wrapped = "{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":"
                        "\"no leader\",\"code\":14}}";
  assert_int_equal(idgen__etcd_error(wrapped, strlen(wrapped), &code, msg, sizeof msg), 1);
  assert_int_equal(code, 14);
  assert_string_equal(msg, "no leader");
  const char *fine = "{\"header\":{},\"succeeded\":true}";
  assert_int_equal(idgen__etcd_error(fine, strlen(fine), &code, msg, sizeof msg), 0);
}

static void test_bodies(void **state) {
  (void)state;
  char *b =
      idgen__etcd_claim_body("/idgen/n/workers/3", "v", 9, "/idgen/n/hwm/3", NULL, NULL);
  json_t *o = json_loads(b, 0, NULL);
  assert_non_null(o);
  json_t *cmp = json_array_get(json_object_get(o, "compare"), 0);
  assert_string_equal(json_string_value(json_object_get(cmp, "target")), "CREATE");
  assert_string_equal(json_string_value(json_object_get(cmp, "result")), "EQUAL");
  assert_int_equal(json_integer_value(json_object_get(cmp, "create_revision")), 0);
  assert_string_equal(json_string_value(json_object_get(cmp, "key")),
                      "L2lkZ2VuL24vd29ya2Vycy8z");
  json_t *put =
      json_object_get(json_array_get(json_object_get(o, "success"), 0), "request_put");
  json_t *rr;
  assert_string_equal(json_string_value(json_object_get(put, "lease")), "9");
  assert_string_equal(json_string_value(json_object_get(put, "value")), "dg==");
  json_decref(o);
  free(b);
  b = idgen__etcd_fenced_put_body("/w", 12, "/h", 41, "x");
  o = json_loads(b, 0, NULL);
  assert_int_equal(json_array_size(json_object_get(o, "compare")), 2);
  cmp = json_array_get(json_object_get(o, "compare"), 0);
  assert_string_equal(json_string_value(json_object_get(cmp, "target")), "LEASE");
  assert_string_equal(json_string_value(json_object_get(cmp, "key")), "L3c="); /* "/w" */
  assert_string_equal(json_string_value(json_object_get(cmp, "result")), "EQUAL");
  assert_string_equal(json_string_value(json_object_get(cmp, "lease")), "12");
  /* ... and the HWM key as this holder last saw it: a write applied late is refused */
  cmp = json_array_get(json_object_get(o, "compare"), 1);
  assert_string_equal(json_string_value(json_object_get(cmp, "target")), "MOD");
  assert_string_equal(json_string_value(json_object_get(cmp, "key")), "L2g="); /* "/h" */
  assert_string_equal(json_string_value(json_object_get(cmp, "result")), "EQUAL");
  assert_string_equal(json_string_value(json_object_get(cmp, "mod_revision")), "41");
  assert_int_equal(json_array_size(json_object_get(o, "success")), 1);
  put = json_object_get(json_array_get(json_object_get(o, "success"), 0), "request_put");
  assert_string_equal(json_string_value(json_object_get(put, "key")), "L2g=");
  assert_string_equal(json_string_value(json_object_get(put, "value")), "eA==");
  assert_null(json_object_get(put, "lease")); /* the HWM key is persistent */
  /* the failure reads both keys: which compare failed, and the revision now */
  json_t *fail = json_object_get(o, "failure");
  assert_int_equal(json_array_size(fail), 2);
  rr = json_object_get(json_array_get(fail, 0), "request_range");
  assert_string_equal(json_string_value(json_object_get(rr, "key")), "L3c=");
  rr = json_object_get(json_array_get(fail, 1), "request_range");
  assert_string_equal(json_string_value(json_object_get(rr, "key")), "L2g=");
  json_decref(o);
  free(b);
  /* a holder whose claim found no HWM key compares its revision 0: "no key" */
  b = idgen__etcd_fenced_put_body("/w", 12, "/h", 0, "x");
  o = json_loads(b, 0, NULL);
  cmp = json_array_get(json_object_get(o, "compare"), 1);
  assert_string_equal(json_string_value(json_object_get(cmp, "mod_revision")), "0");
  json_decref(o);
  free(b);
  b = idgen__etcd_fenced_delete_body("/w", 12);
  o = json_loads(b, 0, NULL);
  cmp = json_array_get(json_object_get(o, "compare"), 0);
  assert_string_equal(json_string_value(json_object_get(cmp, "target")), "LEASE");
  assert_string_equal(json_string_value(json_object_get(cmp, "lease")), "12");
  json_t *del = json_object_get(json_array_get(json_object_get(o, "success"), 0),
                                "request_delete_range");
  assert_string_equal(json_string_value(json_object_get(del, "key")), "L3c=");
  json_decref(o);
  free(b);
  /* With the ID's other name: both keys absent, both HWMs read; else read the other. */
  b = idgen__etcd_claim_body("/idgen/n/dc/1/workers/3", "v", 9, "/idgen/n/dc/1/hwm/3",
                             "/idgen/n/workers/35", "/idgen/n/hwm/35");
  o = json_loads(b, 0, NULL);
  assert_non_null(o);
  assert_int_equal(json_array_size(json_object_get(o, "compare")), 2);
  cmp = json_array_get(json_object_get(o, "compare"), 1);
  assert_string_equal(json_string_value(json_object_get(cmp, "target")), "CREATE");
  assert_string_equal(json_string_value(json_object_get(cmp, "result")), "EQUAL");
  assert_int_equal(json_integer_value(json_object_get(cmp, "create_revision")), 0);
  assert_string_equal(json_string_value(json_object_get(cmp, "key")),
                      "L2lkZ2VuL24vd29ya2Vycy8zNQ=="); /* /idgen/n/workers/35 */
  json_t *succ = json_object_get(o, "success");
  assert_int_equal(json_array_size(succ), 3);
  rr = json_object_get(json_array_get(succ, 2), "request_range");
  assert_string_equal(json_string_value(json_object_get(rr, "key")),
                      "L2lkZ2VuL24vaHdtLzM1"); /* /idgen/n/hwm/35 */
  rr = json_object_get(json_array_get(json_object_get(o, "failure"), 0), "request_range");
  assert_string_equal(json_string_value(json_object_get(rr, "key")),
                      "L2lkZ2VuL24vd29ya2Vycy8zNQ==");
  json_decref(o);
  free(b);
  b = idgen__etcd_prefix_body("/p/");
  assert_string_equal(b, "{\"key\":\"L3Av\",\"range_end\":\"L3Aw\"}");
  free(b);
}

static void test_record_roundtrip(void **state) {
  (void)state;
  idgen__record r = {1796000000123, "host-1", 42, 1796000000000, 1796000000100, -1, ""},
                back;
  char buf[256];
  int n = idgen__record_format(&r, buf, sizeof buf);
  assert_true(n > 0);
  assert_null(strstr(buf, "datacenter")); /* none: not written */
  assert_null(strstr(buf, "region"));
  assert_int_equal(idgen__record_parse(buf, (size_t)n, &back), 0);
  assert_true(back.hwm_ms == r.hwm_ms && back.pid == 42 && back.wall_ms == r.wall_ms);
  assert_string_equal(back.host, "host-1");
  assert_int_equal(back.datacenter, -1);
  assert_string_equal(back.region, "");
  /* a holder under a datacenter says which, and its region */
  r.datacenter = 31;
  snprintf(r.region, sizeof r.region, "eu-west.1");
  n = idgen__record_format(&r, buf, sizeof buf);
  assert_true(n > 0);
  assert_int_equal(idgen__record_parse(buf, (size_t)n, &back), 0);
  assert_int_equal(back.datacenter, 31);
  assert_string_equal(back.region, "eu-west.1");
  const char *bad_region = "{\"hwm_ms\":\"1\",\"region\":7}";
  assert_int_equal(idgen__record_parse(bad_region, strlen(bad_region), &back),
                   IDGEN_EFORMAT);
  assert_int_equal(idgen__record_parse("   \n", 4, &back), IDGEN_EEMPTY);
  assert_int_equal(idgen__record_parse("{\"hwm_ms\":\"x\"}", 14, &back), IDGEN_EFORMAT);
  assert_int_equal(idgen__record_parse("[1]", 3, &back), IDGEN_EFORMAT);
  /* no HWM is corrupt, never "HWM 0"; NULs are as empty as spaces */
  assert_int_equal(idgen__record_parse("{\"pid\":\"1\"}", 11, &back), IDGEN_EFORMAT);
  assert_int_equal(idgen__record_parse("\0\0\0\0", 4, &back), IDGEN_EEMPTY);
  assert_int_equal(idgen__record_format(&r, buf, 10), IDGEN_EBUFSIZE);
}

static idgen__etcd_kv kv_of(const char *key, int64_t lease) {
  idgen__etcd_kv kv;
  memset(&kv, 0, sizeof kv);
  snprintf(kv.key, sizeof kv.key, "%s", key);
  kv.lease = lease;
  return kv;
}

/* Which worker ID to take from a listing: the smallest without a key (keys come in byte
 * order), passing over skipped IDs; but first one whose key already carries our lease:
 * a claim etcd applied though its reply was lost (a timeout, then a retry on another
 * endpoint that "lost the race" to ourselves). Claiming anew would hold two IDs. */
static void test_pick(void **state) {
  (void)state;
  idgen__etcd_kv kvs[4] = {kv_of("/idgen/n/workers/0", 7), kv_of("/idgen/n/workers/10", 8),
                           kv_of("/idgen/n/workers/2", 9), kv_of("/idgen/n/workers/x", 5)};
  int ours = -1;
  assert_int_equal(idgen__etcd_pick(kvs, 4, 0, 0, 1023, NULL, 0, &ours), 1);
  assert_int_equal(ours, 0);
  assert_int_equal(idgen__etcd_pick(kvs, 4, 5, 0, 1023, NULL, 0, &ours), 1);
  assert_int_equal(ours, 0);
  /* our lease 9 already holds worker 2: adopt it */
  assert_int_equal(idgen__etcd_pick(kvs, 4, 9, 0, 1023, NULL, 0, &ours), 2);
  assert_int_equal(ours, 1);
  /* ... unless it was skipped for an unreadable HWM; skipped free IDs are passed over */
  uint64_t skip[] = {2, 1};
  assert_int_equal(idgen__etcd_pick(kvs, 4, 9, 0, 1023, skip, 2, &ours), 3);
  assert_int_equal(ours, 0);
  /* full */
  assert_int_equal(idgen__etcd_pick(kvs, 3, 0, 0, 0, NULL, 0, &ours), -1);
  assert_int_equal(idgen__etcd_pick(kvs, 3, 0, 0, 2, skip, 1, &ours), 1);
  assert_int_equal(idgen__etcd_pick(kvs, 3, 0, 0, 2, skip, 2, &ours), -1);
  assert_int_equal(idgen__etcd_key_worker("/idgen/n/workers/17"), 17);
  assert_int_equal(idgen__etcd_key_worker("/idgen/n/workers/"), -1);
  assert_int_equal(idgen__etcd_key_worker("/idgen/n/workers/-1"), -1);
  assert_int_equal(idgen__etcd_key_worker("/idgen/n/workers/3a"), -1);
  /* a range: only its IDs are taken or adopted */
  assert_int_equal(idgen__etcd_pick(kvs, 4, 0, 2, 3, NULL, 0, &ours), 3);
  assert_int_equal(idgen__etcd_pick(kvs, 4, 9, 3, 9, NULL, 0, &ours), 3);
  assert_int_equal(ours, 0); /* our key at 2 lies outside 3-9 */
  assert_int_equal(idgen__etcd_pick(kvs, 3, 0, 2, 2, NULL, 0, &ours), -1);
  assert_int_equal(idgen__etcd_pick(kvs, 4, 0, 10, 11, NULL, 0, &ours), 11);
}

/* The keys of a namespace, after "/idgen/<ns>/". */
static void test_key_parse(void **state) {
  (void)state;
  int64_t dc = -5;
  int hwm = -1;
  uint64_t w = 0;
  assert_int_equal(idgen__etcd_key_parse("workers/17", &dc, &hwm, &w), 0);
  assert_true(dc == -1 && hwm == 0 && w == 17);
  assert_int_equal(idgen__etcd_key_parse("hwm/0", &dc, &hwm, &w), 0);
  assert_true(dc == -1 && hwm == 1 && w == 0);
  assert_int_equal(idgen__etcd_key_parse("dc/31/workers/5", &dc, &hwm, &w), 0);
  assert_true(dc == 31 && hwm == 0 && w == 5);
  assert_int_equal(idgen__etcd_key_parse("dc/2/hwm/30", &dc, &hwm, &w), 0);
  assert_true(dc == 2 && hwm == 1 && w == 30);
  static const char *const bad[] = {"workers/",
                                    "workers/x",
                                    "workers/1/2",
                                    "dc/1/workers/",
                                    "dc//workers/1",
                                    "dc/x/hwm/1",
                                    "dc/1/other/1",
                                    "seq/1",
                                    "dc/1",
                                    "workers/-1",
                                    ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(idgen__etcd_key_parse(bad[i], &dc, &hwm, &w), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_b64_rfc4648),
      cmocka_unit_test(test_b64_rejects),
      cmocka_unit_test(test_prefix_end),
      cmocka_unit_test(test_int64_strings),
      cmocka_unit_test(test_grant_and_keepalive),
      cmocka_unit_test(test_txn_replies),
      cmocka_unit_test(test_fenced_put_replies),
      cmocka_unit_test(test_range_reply),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_bodies),
      cmocka_unit_test(test_record_roundtrip),
      cmocka_unit_test(test_pick),
      cmocka_unit_test(test_key_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
