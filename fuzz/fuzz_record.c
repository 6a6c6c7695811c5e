/* fuzz_record.c: the holder record's strict reader (src/lease/record.c), which libidgen
 * uses instead of a JSON library. Any bytes: never out of bounds; a record it accepts is
 * one jansson accepts too (when the bytes are ASCII: jansson also checks UTF-8) with the
 * same HWM, and it writes back into a record that reads the same. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "lease/lease_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  idgen__record r;
  if (idgen__record_parse(text, size, &r) != 0)
    return 0;
  assert(r.hwm_ms >= 0);
  int ascii = 1;
  for (size_t i = 0; i < size; i++)
    ascii &= data[i] < 0x80;
  size_t len = size;
  while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\0'))
    len--;
  if (ascii) {
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    assert(root && json_is_object(root));
    json_t *h = json_object_get(root, "hwm_ms");
    assert(h);
    long long hwm = json_is_integer(h) ? json_integer_value(h)
                                       : strtoll(json_string_value(h), NULL, 10);
    assert(hwm == r.hwm_ms);
    json_decref(root);
  }
  char out[512];
  int n = idgen__record_format(&r, out, sizeof out);
  assert(n > 0);
  idgen__record back;
  assert(idgen__record_parse(out, (size_t)n, &back) == 0);
  assert(back.hwm_ms == r.hwm_ms && back.pid == r.pid && back.wall_ms == r.wall_ms &&
         back.start_ms == r.start_ms &&
         back.datacenter == (r.datacenter >= 0 ? r.datacenter : -1));
  return 0;
}
