/* hex.c: IDs as 16 hex digits, lower case out, either case in, no "0x". */
#include "codec/codec_internal.h"
#include "core/text_internal.h"

int idgen__hex_format(uint64_t id, char *out, size_t outlen) {
  static const char digits[] = "0123456789abcdef";
  (void)outlen;
  for (int i = IDGEN__HEX_WIDTH - 1; i >= 0; i--) {
    out[i] = digits[id & 15];
    id >>= 4;
  }
  out[IDGEN__HEX_WIDTH] = '\0';
  return IDGEN__HEX_WIDTH;
}

int idgen__hex_parse(const char *s, size_t len, uint64_t *id) {
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  if (len != IDGEN__HEX_WIDTH)
    return IDGEN_ELENGTH;
  for (size_t i = 0; i < len; i++)
    if (idgen__hex_value((unsigned char)s[i]) < 0)
      return IDGEN_ECHAR;
  if (idgen__hex_value((unsigned char)s[0]) > 7)
    return IDGEN_EOVERFLOW;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    v = v << 4 | (uint64_t)idgen__hex_value((unsigned char)s[i]);
  *id = v;
  return 0;
}
