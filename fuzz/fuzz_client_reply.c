/* fuzz_client_reply.c: libidgen-client's reading of replies (src/client/client_reply.c)
 * on whatever its bounded hiredis reader makes of any bytes (no reply's arrays announce
 * more than IDGEN__CLIENT_REPLY_ELEMENTS_MAX elements): RANGE, IDS, ECHO and INFO checks
 * never read out of bounds, and what they accept holds what they promise. */
#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "client/client_reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  redisReader *reader = idgen__client_reader_create();
  if (!reader)
    return 0;
  redisReaderFeed(reader, (const char *)data, size);
  static _Atomic uint64_t ids[4096];
  for (int k = 0; k < 16; k++) {
    void *r = NULL;
    if (redisReaderGetReply(reader, &r) != REDIS_OK || !r)
      break;
    const redisReply *reply = r;
    uint64_t asked[] = {1, 7, 256, 4096};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
      uint64_t first = 0, last = 0, stride = 0;
      if (idgen__client_parse_range(reply, asked[i], &first, &last, &stride) == 0)
        assert(stride > 0 && first <= last && (last - first) % stride == 0 &&
               (last - first) / stride < asked[i]);
      if (idgen__client_parse_ids(reply, asked[i], ids) == 0)
        for (uint64_t j = 1; j < asked[i]; j++)
          assert(atomic_load(&ids[j - 1]) < atomic_load(&ids[j]));
    }
    (void)idgen__client_reply_is_tag(reply, "idgen-client-1");
    (void)idgen__client_info_ready(reply);
    freeReplyObject(r);
  }
  idgen__client_reader_free(reader);
  return 0;
}
