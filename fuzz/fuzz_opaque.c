/* fuzz_opaque.c: libFuzzer target: the opaque decode path. Arbitrary bytes as an opaque
 * ID's text (any codec form), as a raw 64-bit value, as key text, and as an FF1
 * numeral string of any radix and length: decode must give a 63-bit ID that encodes
 * back to the same value, key text must parse only when it is exactly a key, and FF1
 * must undo itself. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "idgen.h"
#include "idgen/opaque.h"
#include "opaque/ff1.h"

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond))                                                                           \
      __builtin_trap();                                                                    \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static idgen_opaque *opaque;
static const uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* value read as an opaque ID: decode, then encode back. */
static void check_value(uint64_t value) {
  uint64_t id = 77, again = 78;
  int rc = idgen_opaque_decode(opaque, value, &id);
  if (value > INT64_MAX) {
    CHECK(rc == IDGEN_EOVERFLOW && id == 77);
    return;
  }
  CHECK(rc == 0 && id <= INT64_MAX);
  CHECK(idgen_opaque_encode(opaque, id, &again) == 0 && again == value);
}

static void check_key_text(const uint8_t *data, size_t size) {
  uint8_t k[IDGEN_OPAQUE_KEY_MAX];
  size_t len = 0;
  if (idgen_opaque_key_parse((const char *)data, size, k, &len) != 0) {
    CHECK(len == 0);
    return;
  }
  CHECK(len == 16 || len == 32);
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < 2 * len; i++) {
    char c = (char)data[i];
    c = c >= 'A' && c <= 'F' ? (char)(c - 'A' + 'a') : c;
    CHECK(c == hex[(k[i / 2] >> (i % 2 ? 0 : 4)) & 15]);
  }
}

/* data[0] picks the radix, data[1] the length, the rest are digits (mod radix). */
static void check_ff1(const uint8_t *data, size_t size) {
  if (size < 2)
    return;
  unsigned radix = 2 + data[0] % 61, n = data[1] % 130;
  idgen__ff1 f;
  if (idgen__ff1_init(&f, key, 16 + 8 * (data[0] % 3), radix, n, data + 2,
                      size - 2 > 64 ? 64 : size - 2) != 0)
    return;
  uint8_t in[130] = {0}, out[130], back[130];
  for (unsigned i = 0; i < n; i++)
    in[i] = (uint8_t)(2 + i < size ? data[2 + i] % radix : 0);
  CHECK(idgen__ff1_encrypt(&f, in, out) == 0);
  for (unsigned i = 0; i < n; i++)
    CHECK(out[i] < radix);
  CHECK(idgen__ff1_decrypt(&f, out, back) == 0);
  CHECK(memcmp(in, back, n) == 0);
  idgen__ff1_clear(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!opaque && idgen_opaque_new(&opaque, key, sizeof key, (const uint8_t *)"default", 7))
    __builtin_trap();
  uint64_t value;
  if (idgen_id_parse_any((const char *)data, size, NULL, &value, NULL) == 0)
    check_value(value);
  value = 0;
  memcpy(&value, data, size < sizeof value ? size : sizeof value);
  check_value(value);
  check_value(value & INT64_MAX);
  check_key_text(data, size);
  check_ff1(data, size);
  return 0;
}
