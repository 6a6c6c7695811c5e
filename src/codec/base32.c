/* base32.c: IDs as 13 chars of Crockford base32, fixed width, order-preserving.
 * Strict: the decoder takes either case but no aliases (I, L, O, U), no hyphens and no
 * check symbol; see docs/codecs.md. */
#include "codec/codec_internal.h"
#include "core/text_internal.h"

int idgen__base32_format(uint64_t id, char *out, size_t outlen) {
  (void)outlen;
  for (int i = IDGEN__BASE32_WIDTH - 1; i >= 0; i--) {
    out[i] = idgen__crockford_alphabet[id & 31];
    id >>= 5;
  }
  out[IDGEN__BASE32_WIDTH] = '\0';
  return IDGEN__BASE32_WIDTH;
}

int idgen__base32_parse(const char *s, size_t len, uint64_t *id) {
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  if (len != IDGEN__BASE32_WIDTH)
    return IDGEN_ELENGTH;
  for (size_t i = 0; i < len; i++)
    if (idgen__crockford_value((unsigned char)s[i]) < 0)
      return IDGEN_ECHAR;
  /* 13 chars carry 65 bits; the first holds bits 60..64, and 63 is the sign bit. */
  if (idgen__crockford_value((unsigned char)s[0]) > 7)
    return IDGEN_EOVERFLOW;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    v = v << 5 | (uint64_t)idgen__crockford_value((unsigned char)s[i]);
  *id = v;
  return 0;
}
