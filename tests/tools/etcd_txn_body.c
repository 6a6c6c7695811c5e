/* etcd_txn_body.c: prints the transaction bodies the etcd provider sends, so a test can
 * post them to a real etcd and see what its compares decide.
 *   etcd_txn_body claim WORKER_KEY VALUE LEASE_ID HWM_KEY [OTHER_WORKER_KEY OTHER_HWM_KEY]
 *   etcd_txn_body fenced WORKER_KEY LEASE_ID HWM_KEY VALUE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/etcd_json.h"

int main(int argc, char **argv) {
  char *body = NULL;
  if ((argc == 6 || argc == 8) && !strcmp(argv[1], "claim"))
    body = idgen__etcd_claim_body(argv[2], argv[3], atoll(argv[4]), argv[5],
                                  argc == 8 ? argv[6] : NULL, argc == 8 ? argv[7] : NULL);
  else if (argc == 6 && !strcmp(argv[1], "fenced"))
    body = idgen__etcd_fenced_put_body(argv[2], atoll(argv[3]), argv[4], argv[5]);
  else {
    fprintf(stderr, "usage: etcd_txn_body claim WORKER_KEY VALUE LEASE_ID HWM_KEY "
                    "[OTHER_WORKER_KEY OTHER_HWM_KEY] | fenced WORKER_KEY LEASE_ID HWM_KEY "
                    "VALUE\n");
    return 2;
  }
  if (!body)
    return 1;
  puts(body);
  free(body);
  return 0;
}
