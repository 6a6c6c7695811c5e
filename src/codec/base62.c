/* base62.c: IDs as 11 chars of 0-9A-Za-z, fixed width, so text order = number order. */
#include "codec/codec_internal.h"

static const char alphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int idgen__base62_format(uint64_t id, char *out, size_t outlen) {
  (void)outlen;
  for (int i = IDGEN__BASE62_WIDTH - 1; i >= 0; i--) {
    out[i] = alphabet[id % 62];
    id /= 62;
  }
  out[IDGEN__BASE62_WIDTH] = '\0';
  return IDGEN__BASE62_WIDTH;
}

static int digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'Z')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 36;
  return -1;
}

int idgen__base62_parse(const char *s, size_t len, uint64_t *id) {
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  if (len != IDGEN__BASE62_WIDTH)
    return IDGEN_ELENGTH;
  for (size_t i = 0; i < len; i++)
    if (digit(s[i]) < 0)
      return IDGEN_ECHAR;
  /* 62^11 > 2^64: check before each step that the value stays <= 2^63 - 1. */
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned d = (unsigned)digit(s[i]);
    if (v > (IDGEN__ID_MAX - d) / 62)
      return IDGEN_EOVERFLOW;
    v = v * 62 + d;
  }
  *id = v;
  return 0;
}
