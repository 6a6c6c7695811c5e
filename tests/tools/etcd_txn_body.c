/* etcd_txn_body.c: prints the transaction bodies the etcd provider sends, so a test can
 * post them to a real etcd and see what its compares decide; and reads a fenced HWM
 * write's reply (on stdin) as the provider does.
 *   etcd_txn_body claim WORKER_KEY VALUE LEASE_ID HWM_KEY [OTHER_WORKER_KEY OTHER_HWM_KEY]
 *   etcd_txn_body fenced WORKER_KEY LEASE_ID HWM_KEY HWM_REVISION VALUE
 *   etcd_txn_body outcome LEASE_ID HWM_REVISION < REPLY
 *     prints "written|not-ours|moved REVISION" (the HWM key's revision after the txn) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"
#include "lease/etcd_txn.h"

static int outcome(const char *lease_id, const char *hwm_revision) {
  static char reply[1 << 16];
  size_t len = fread(reply, 1, sizeof reply, stdin);
  idgen__etcd_hwm_put put;
  int64_t revision;
  idgen__etcd_kv stored;
  if (idgen__etcd_parse_fenced_put(reply, len, atoll(lease_id), atoll(hwm_revision), &put,
                                   &revision, &stored)) {
    fprintf(stderr, "etcd_txn_body: not a fenced write's reply: %.*s\n", (int)len, reply);
    return 1;
  }
  static const char *const names[] = {[IDGEN__HWM_WRITTEN] = "written",
                                      [IDGEN__HWM_NOT_OURS] = "not-ours",
                                      [IDGEN__HWM_MOVED] = "moved"};
  printf("%s %lld\n", names[put], (long long)revision);
  return 0;
}

int main(int argc, char **argv) {
  char *body = NULL;
  if ((argc == 6 || argc == 8) && !strcmp(argv[1], "claim"))
    body = idgen__etcd_claim_body(argv[2], argv[3], atoll(argv[4]), argv[5],
                                  argc == 8 ? argv[6] : NULL, argc == 8 ? argv[7] : NULL);
  else if (argc == 7 && !strcmp(argv[1], "fenced"))
    body = idgen__etcd_fenced_put_body(argv[2], atoll(argv[3]), argv[4], atoll(argv[5]),
                                       argv[6]);
  else if (argc == 4 && !strcmp(argv[1], "outcome"))
    return outcome(argv[2], argv[3]);
  else {
    fprintf(stderr, "usage: etcd_txn_body claim WORKER_KEY VALUE LEASE_ID HWM_KEY "
                    "[OTHER_WORKER_KEY OTHER_HWM_KEY] | fenced WORKER_KEY LEASE_ID HWM_KEY "
                    "HWM_REVISION VALUE | outcome LEASE_ID HWM_REVISION < REPLY\n");
    return 2;
  }
  if (!body)
    return 1;
  puts(body);
  free(body);
  return 0;
}
