/* idgen/collide.h: the chance that a scheme of random or time-prefixed IDs collides. */
#ifndef IDGEN_COLLIDE_H
#define IDGEN_COLLIDE_H

#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum idgen_scheme {
  IDGEN_SCHEME_UUIDV4 = 0,    /* 122 random bits, no time prefix */
  IDGEN_SCHEME_UUIDV7 = 1,    /* 48-bit ms time + 74 random bits (rand_a + rand_b) */
  IDGEN_SCHEME_ULID = 2,      /* 48-bit ms time + 80 random bits */
  IDGEN_SCHEME_SNOWFLAKE = 3, /* time + worker + sequence: nothing random */
} idgen_scheme;

/* "uuidv4", "uuidv7", "ulid", "snowflake" -> scheme; IDGEN_EINVAL otherwise. */
IDGEN_API int idgen_scheme_parse(const char *name, idgen_scheme *out);
IDGEN_API const char *idgen_scheme_name(idgen_scheme scheme);
/* Random bits per ID (122, 74, 80, 0), or -1 for an unknown scheme. */
IDGEN_API int idgen_scheme_random_bits(idgen_scheme scheme);

/* Seconds in a year as idgen collide counts them: 365.25 days. */
#define IDGEN_SECONDS_PER_YEAR 31557600.0

/* The birthday bound: the chance that n values drawn uniformly from 2^bits collide,
 * 1 - exp(-n^2 / 2^(bits+1)), computed as -expm1(...) so tiny results keep their
 * digits. n >= 0, bits in [1, 1023]; returns NAN otherwise. Thread-safe. */
IDGEN_API double idgen_birthday(double n, int bits);

typedef struct idgen_collide_result {
  double ids;            /* IDs made in the period: rate * seconds */
  double windows;        /* independent collision windows: ms in the period for
                            time-prefixed schemes, 1 for UUIDv4 */
  double ids_per_window; /* IDs that can collide with each other */
  double p_window;       /* chance of a collision inside one window */
  double probability;    /* chance of any collision in the period */
  double one_in;         /* 1 / probability (INFINITY when it is 0) */
  int random_bits;
} idgen_collide_result;

/* Chance of at least one collision among IDs of scheme made at rate_per_s for
 * seconds. UUIDv4: the birthday bound over all IDs. UUIDv7 and ULID: IDs of different
 * milliseconds never collide, so with k = rate/1000 IDs per ms, each ms collides with
 * p = k^2 / 2^(b+1) and the period with 1 - (1 - p)^ms. Snowflake: 0, as long as every
 * live generator holds a distinct worker ID (a generator never repeats a (ms, seq)
 * pair). IDGEN_EINVAL for a negative, NaN or infinite rate or seconds, or an unknown
 * scheme; *out untouched then. Thread-safe. */
IDGEN_API int idgen_collide(idgen_scheme scheme, double rate_per_s, double seconds,
                            idgen_collide_result *out);

#ifdef __cplusplus
}
#endif
#endif
