/* fuzz_etcd.c: libFuzzer target: arbitrary bytes as etcd gateway replies into every
 * reply parser and the holder-record parser: none may crash, leak or read past the end. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "etcd/client.h"
#include "lease/etcd_txn.h"
#include "lease/lease_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *body = (const char *)data;
  int code, succeeded, found;
  char msg[128];
  int64_t a, b;
  idgen__etcd_error(body, size, &code, msg, sizeof msg);
  idgen__etcd_parse_grant(body, size, &a, &b);
  idgen__etcd_parse_keepalive(body, size, &a);
  idgen__etcd_parse_ttl(body, size, &a);
  idgen__etcd_kv *kvs = NULL, kv;
  size_t n = 0;
  if (idgen__etcd_parse_range(body, size, &kvs, &n) == 0)
    free(kvs);
  idgen__etcd_parse_txn(body, size, &succeeded, 1, &kv, &found);
  idgen__etcd_hwm_put put;
  idgen__etcd_parse_fenced_put(body, size, 12, 41, &put, &a, &kv);
  idgen__record rec;
  idgen__record_parse(body, size, &rec);
  char out[256];
  idgen__b64_decode(body, size, out, sizeof out);
  return 0;
}
