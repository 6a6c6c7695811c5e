/* period.c: periods (day, month, year) in a timezone read from its TZif file. */
#include "segment/period.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text_internal.h"
#include "idgen/error.h"

#define MS_PER_DAY INT64_C(86400000)

struct idgen__tz {
  char name[64];
  size_t n;     /* transitions */
  int64_t *at;  /* Unix s of each transition, rising */
  int32_t *off; /* the offset in force from at[i] */
  int32_t off0; /* before the first transition */
};

int idgen__period_parse(const char *s, idgen__period_kind *out) {
  static const char *const names[] = {"none", "day", "month", "year"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) {
      *out = (idgen__period_kind)i;
      return 0;
    }
  return IDGEN_EINVAL;
}

const char *idgen__period_name(idgen__period_kind kind) {
  static const char *const names[] = {"none", "day", "month", "year"};
  return (unsigned)kind < 4 ? names[kind] : "?";
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static int64_t be64(const unsigned char *p) {
  return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* The TZif v2+ data block (64-bit times) after the v1 one; v1 files use the v1 block. */
static int tz_parse(idgen__tz *tz, const unsigned char *b, size_t len) {
  if (len < 44 || memcmp(b, "TZif", 4))
    return -1;
  int v2 = b[4] >= '2';
  size_t tsize = 4;
  for (int pass = 0; pass < 2; pass++) {
    if (len < 44)
      return -1;
    uint32_t isut = be32(b + 20), isstd = be32(b + 24), leap = be32(b + 28),
             timecnt = be32(b + 32), typecnt = be32(b + 36), charcnt = be32(b + 40);
    size_t body = (size_t)timecnt * tsize + timecnt + (size_t)typecnt * 6 + charcnt +
                  (size_t)leap * (tsize + 4) + isstd + isut;
    if (typecnt == 0 || 44 + body > len)
      return -1;
    if (pass == 0 && v2) {
      b += 44 + body;
      len -= 44 + body;
      tsize = 8;
      continue;
    }
    const unsigned char *times = b + 44, *idx = times + (size_t)timecnt * tsize,
                        *types = idx + timecnt;
    tz->at = calloc(timecnt ? timecnt : 1, sizeof *tz->at);
    tz->off = calloc(timecnt ? timecnt : 1, sizeof *tz->off);
    if (!tz->at || !tz->off)
      return -1;
    for (uint32_t i = 0; i < timecnt; i++) {
      if (idx[i] >= typecnt)
        return -1;
      tz->at[i] = tsize == 8 ? be64(times + 8 * i) : (int32_t)be32(times + 4 * i);
      tz->off[i] = (int32_t)be32(types + 6 * idx[i]);
    }
    tz->n = timecnt;
    tz->off0 = (int32_t)be32(types); /* type 0: the time before the first transition */
    return 0;
  }
  return -1;
}

int idgen__tz_load(const char *name, idgen__tz **out, char *err, size_t errlen) {
  idgen__tz *tz = calloc(1, sizeof *tz);
  if (!tz)
    return IDGEN_ENOMEM;
  snprintf(tz->name, sizeof tz->name, "%s", name);
  if (!strcmp(name, "UTC")) {
    *out = tz;
    return 0;
  }
  int ok = name[0] && name[0] != '/' && !strstr(name, "..") && strlen(name) < 64;
  const char *dir = getenv("TZDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
  FILE *f = ok ? fopen(path, "rb") : NULL;
  unsigned char *buf = NULL;
  size_t len = 0;
  if (f) {
    buf = malloc(1 << 17);
    len = buf ? fread(buf, 1, 1 << 17, f) : 0;
    fclose(f);
  }
  if (!buf || tz_parse(tz, buf, len) < 0) {
    free(buf);
    idgen__tz_free(tz);
    if (err)
      snprintf(err, errlen, "timezone '%s': %s", name,
               !ok  ? "not a tz database name (Europe/Berlin, UTC)"
               : !f ? "no such zone in the tz database (/usr/share/zoneinfo)"
                    : "not a TZif file");
    return IDGEN_EINVAL;
  }
  free(buf);
  *out = tz;
  return 0;
}

void idgen__tz_free(idgen__tz *tz) {
  if (!tz)
    return;
  free(tz->at);
  free(tz->off);
  free(tz);
}

const char *idgen__tz_name(const idgen__tz *tz) {
  return tz->name;
}

int32_t idgen__tz_offset_s(const idgen__tz *tz, int64_t unix_ms) {
  int64_t s = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  if (tz->n == 0 || s < tz->at[0])
    return tz->off0;
  size_t lo = 0, hi = tz->n; /* the last transition at or before s */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (tz->at[mid] <= s)
      lo = mid;
    else
      hi = mid;
  }
  return tz->off[lo];
}

/* The instant whose local time in tz is local_ms: the offset there, found from a guess
 * (the offset before it) and checked once more across a transition. */
static int64_t utc_of_local(const idgen__tz *tz, int64_t local_ms) {
  int64_t guess = local_ms - (int64_t)idgen__tz_offset_s(tz, local_ms) * 1000;
  int64_t utc = local_ms - (int64_t)idgen__tz_offset_s(tz, guess) * 1000;
  return utc;
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                     uint64_t *number, int64_t *start_ms, int64_t *end_ms) {
  int64_t local = unix_ms + (int64_t)idgen__tz_offset_s(tz, unix_ms) * 1000;
  int64_t y, m, d;
  idgen__civil_from_days(floor_div(local, MS_PER_DAY), &y, &m, &d);
  if (y < 1970 || y > 9999)
    return IDGEN_EOVERFLOW;
  int64_t ny = y, nm = m, nd = d;
  switch (kind) {
  case IDGEN__PERIOD_DAY:
    *number = (uint64_t)(y * 10000 + m * 100 + d);
    nd = d + 1;
    if (nd > idgen__days_in_month(y, m)) {
      nd = 1;
      nm = m + 1;
    }
    break;
  case IDGEN__PERIOD_MONTH:
    *number = (uint64_t)(y * 100 + m);
    d = nd = 1;
    nm = m + 1;
    break;
  case IDGEN__PERIOD_YEAR:
    *number = (uint64_t)y;
    d = nd = 1;
    m = nm = 1;
    ny = y + 1;
    break;
  default:
    return IDGEN_EINVAL;
  }
  if (nm > 12) {
    nm = 1;
    ny++;
  }
  *start_ms = utc_of_local(tz, idgen__days_from_civil(y, m, d) * MS_PER_DAY);
  *end_ms = utc_of_local(tz, idgen__days_from_civil(ny, nm, nd) * MS_PER_DAY);
  return 0;
}

int idgen__period_date(idgen__period_kind kind, uint64_t number, int *y, int *m, int *d) {
  uint64_t yy = number, mm = 1, dd = 1;
  if (kind == IDGEN__PERIOD_DAY) {
    yy = number / 10000;
    mm = number / 100 % 100;
    dd = number % 100;
  } else if (kind == IDGEN__PERIOD_MONTH) {
    yy = number / 100;
    mm = number % 100;
  } else if (kind != IDGEN__PERIOD_YEAR) {
    return IDGEN_EFORMAT;
  }
  if (yy < 1970 || yy > 9999 || mm < 1 || mm > 12 || dd < 1 ||
      dd > (uint64_t)idgen__days_in_month((int64_t)yy, (int64_t)mm))
    return IDGEN_EFORMAT;
  *y = (int)yy;
  *m = (int)mm;
  *d = (int)dd;
  return 0;
}
