/* collide.c: birthday-bound collision chances for UUIDv4, UUIDv7, ULID and Snowflake. */
#include <math.h>
#include <string.h>

#include "idgen/collide.h"

static const char *const names[] = {"uuidv4", "uuidv7", "ulid", "snowflake"};
static const int random_bits[] = {122, 74, 80, 0};
#define NSCHEMES (sizeof names / sizeof names[0])

int idgen_scheme_parse(const char *name, idgen_scheme *out) {
  if (!name || !out)
    return IDGEN_EINVAL;
  for (size_t i = 0; i < NSCHEMES; i++)
    if (!strcmp(name, names[i])) {
      *out = (idgen_scheme)i;
      return 0;
    }
  return IDGEN_EINVAL;
}

const char *idgen_scheme_name(idgen_scheme scheme) {
  return (unsigned)scheme < NSCHEMES ? names[scheme] : "unknown";
}

int idgen_scheme_random_bits(idgen_scheme scheme) {
  return (unsigned)scheme < NSCHEMES ? random_bits[scheme] : -1;
}

double idgen_birthday(double n, int bits) {
  if (!(n >= 0) || isinf(n) || bits < 1 || bits > 1023)
    return NAN;
  /* n^2 / 2^(bits+1) without forming n^2 when it would overflow. */
  double x = ldexp(n, -(bits + 1) / 2) * ldexp(n, -((bits + 1) - (bits + 1) / 2));
  return -expm1(-x);
}

int idgen_collide(idgen_scheme scheme, double rate_per_s, double seconds,
                  idgen_collide_result *out) {
  if (!out || (unsigned)scheme >= NSCHEMES || !(rate_per_s >= 0) || !(seconds >= 0) ||
      isinf(rate_per_s) || isinf(seconds))
    return IDGEN_EINVAL;
  idgen_collide_result r;
  memset(&r, 0, sizeof r);
  r.random_bits = random_bits[scheme];
  r.ids = rate_per_s * seconds;
  switch (scheme) {
  case IDGEN_SCHEME_UUIDV4:
    r.windows = 1;
    r.ids_per_window = r.ids;
    r.p_window = idgen_birthday(r.ids, r.random_bits);
    r.probability = r.p_window;
    break;
  case IDGEN_SCHEME_UUIDV7:
  case IDGEN_SCHEME_ULID:
    r.windows = seconds * 1000.0;
    r.ids_per_window = rate_per_s / 1000.0;
    r.p_window = idgen_birthday(r.ids_per_window, r.random_bits);
    /* 1 - (1 - p)^windows, exact for tiny p: log1p keeps them. */
    r.probability = r.p_window >= 1 ? 1 : -expm1(r.windows * log1p(-r.p_window));
    break;
  case IDGEN_SCHEME_SNOWFLAKE:
    r.windows = seconds * 1000.0;
    r.ids_per_window = rate_per_s / 1000.0;
    r.p_window = 0;
    r.probability = 0;
    break;
  }
  r.one_in = r.probability > 0 ? 1.0 / r.probability : INFINITY;
  *out = r;
  return 0;
}
