/* decimal.c: IDs as plain decimal: 1..19 digits, no sign, no leading zero but "0". */
#include <string.h>

#include "codec/codec_internal.h"

/* "00" to "99": two digits a division, from the end (the hot path of every API that
 * answers decimal IDs). */
static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                               "25262728293031323334353637383940414243444546474849"
                               "50515253545556575859606162636465666768697071727374"
                               "75767778798081828384858687888990919293949596979899";

/* The digits of v (below 10^8) before end, two at a time in 32 bits. Returns where they
 * start. */
static char *digits32(uint32_t v, char *end) {
  char *p = end;
  while (v >= 100) {
    unsigned d = (v % 100) * 2;
    v /= 100;
    *--p = pairs[d + 1];
    *--p = pairs[d];
  }
  if (v >= 10) {
    *--p = pairs[v * 2 + 1];
    *--p = pairs[v * 2];
  } else {
    *--p = (char)('0' + v);
  }
  return p;
}

/* Exactly 8 digits of v (below 10^8) before end, zero-padded, without a loop. */
static char *digits8(uint32_t v, char *end) {
  uint32_t hi = v / 10000, lo = v % 10000;
  memcpy(end - 2, pairs + (lo % 100) * 2, 2);
  memcpy(end - 4, pairs + (lo / 100) * 2, 2);
  memcpy(end - 6, pairs + (hi % 100) * 2, 2);
  memcpy(end - 8, pairs + (hi / 100) * 2, 2);
  return end - 8;
}

int idgen__decimal_format(uint64_t id, char *out, size_t outlen) {
  char buf[24];
  char *end = buf + sizeof buf, *p;
  /* In chunks of 8 digits: 32-bit divisions are cheaper than 64-bit ones. */
  if (id < 100000000u) {
    p = digits32((uint32_t)id, end);
  } else {
    uint64_t hi = id / 100000000u;
    p = digits8((uint32_t)(id % 100000000u), end);
    if (hi < 100000000u) {
      p = digits32((uint32_t)hi, p);
    } else {
      p = digits8((uint32_t)(hi % 100000000u), p);
      p = digits32((uint32_t)(hi / 100000000u), p);
    }
  }
  size_t n = (size_t)(end - p);
  if (outlen < n + 1)
    return IDGEN_EBUFSIZE;
  /* Two fixed-size copies that overlap, not a call to memcpy with a variable length. */
  if (n >= 16) {
    memcpy(out, p, 16);
    memcpy(out + n - 16, p + n - 16, 16);
  } else if (n >= 8) {
    memcpy(out, p, 8);
    memcpy(out + n - 8, p + n - 8, 8);
  } else {
    for (size_t i = 0; i < n; i++)
      out[i] = p[i];
  }
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
