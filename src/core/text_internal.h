/* text_internal.h: the alphabets and calendar arithmetic every text form shares. */
#ifndef IDGEN_TEXT_INTERNAL_H
#define IDGEN_TEXT_INTERNAL_H

#include <stdint.h>

/* Crockford's base32 alphabet, upper case; 32 symbols and a NUL. */
extern const char idgen__crockford_alphabet[33];
/* Character -> 5-bit value + 1, either case; 0 for anything else (I, L, O, U map to
 * nothing: no aliases). */
extern const int8_t idgen__crockford_plus1[256];

static inline int idgen__crockford_value(unsigned char c) {
  return idgen__crockford_plus1[c] - 1;
}

/* A hex digit's value in either case, or -1. */
static inline int idgen__hex_value(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant). */
int64_t idgen__days_from_civil(int64_t y, int64_t m, int64_t d);
void idgen__civil_from_days(int64_t days, int64_t *y, int64_t *m, int64_t *d);
/* Days in month m (1-12) of year y. */
int idgen__days_in_month(int64_t y, int64_t m);

#endif
