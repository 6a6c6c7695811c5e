/* fuzz_segment.c: libFuzzer target: arbitrary bytes as a segment backend's DSN (the
 * first byte picks the backend) and as a sequence name: opening parses the DSN without
 * contacting anything, and none may crash, leak or read past the end. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "segment/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const kinds[] = {"file", "postgres", "etcd", "mariadb"};
  if (size == 0)
    return 0;
  char *text = malloc(size);
  if (!text)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  idgen__segment_name_check(text);
  idgen__segment_backend *b = NULL;
  char err[IDGEN_SEGMENT_WHY_MAX];
  if (idgen__segment_backend_open(&b, kinds[data[0] % 4], text, 0, err, sizeof err) == 0)
    idgen__segment_backend_free(b);
  free(text);
  return 0;
}
