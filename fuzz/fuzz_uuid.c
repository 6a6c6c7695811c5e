/* fuzz_uuid.c: libFuzzer target: arbitrary bytes into the UUID and ULID text parsers;
 * what parses must format back to the same text (up to case) and parse again alike. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "idgen.h"
#include "idgen/uuid.h"

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond))                                                                           \
      __builtin_trap();                                                                    \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char out[64];
  idgen_uuid u, u2;
  if (idgen_uuid_parse(text, size, &u) == 0) {
    int n = idgen_uuid_format(u, out, sizeof out);
    CHECK(n > 0 && (size_t)n == size && strncasecmp(out, text, size) == 0);
    CHECK(idgen_uuid_parse(out, (size_t)n, &u2) == 0 && memcmp(&u, &u2, sizeof u) == 0);
  }
  idgen_ulid l, l2;
  if (idgen_ulid_parse(text, size, &l) == 0) {
    int n = idgen_ulid_format(l, out, sizeof out);
    CHECK(n > 0 && (size_t)n == size && strncasecmp(out, text, size) == 0);
    CHECK(idgen_ulid_parse(out, (size_t)n, &l2) == 0 && memcmp(&l, &l2, sizeof l) == 0);
  }
  return 0;
}
