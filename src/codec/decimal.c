/* decimal.c: IDs as plain decimal: 1..19 digits, no sign, no leading zero but "0". */
#include <string.h>

#include "codec/codec_internal.h"

int idgen__decimal_format(uint64_t id, char *out, size_t outlen) {
  char buf[24];
  size_t n = 0;
  do {
    buf[n++] = (char)('0' + id % 10);
    id /= 10;
  } while (id);
  if (outlen < n + 1)
    return IDGEN_EBUFSIZE;
  for (size_t i = 0; i < n; i++)
    out[i] = buf[n - 1 - i];
  out[n] = '\0';
  return (int)n;
}

/* Checks, in this order: sign, characters, leading zero, value. */
static int parse_digits(const char *s, size_t len, uint64_t max, uint64_t *out) {
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return IDGEN_ECHAR;
  if (len > 1 && s[0] == '0')
    return IDGEN_EFORMAT;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (max - d) / 10)
      return IDGEN_EOVERFLOW;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int idgen__decimal_parse(const char *s, size_t len, uint64_t *id) {
  return parse_digits(s, len, IDGEN__ID_MAX, id);
}

int idgen__decimal_field(const char *s, size_t len, uint64_t max, uint64_t *out) {
  return parse_digits(s, len, max, out);
}
