/* period.c: periods (day, month, year) in a timezone read from its TZif file. */
#include "segment/period.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text_internal.h"
#include "idgen/error.h"

#define MS_PER_DAY INT64_C(86400000)
#define AT_LIMIT_S (INT64_C(1) << 40)

struct idgen__tz {
  char name[64];
  size_t n;     /* transitions */
  int64_t *at;  /* Unix s of each transition, rising */
  int32_t *off; /* the offset in force from at[i] */
  int32_t off0; /* before the first transition */
  int32_t max_off_s; /* the largest |offset| of any transition: local time lies within it */
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
    /* RFC 8536 3.2: an offset lies in -89999..93599 (within 26 h); a rising list */
    for (uint32_t i = 0; i <= timecnt; i++) {
      int32_t off = i < timecnt ? tz->off[i] : tz->off0;
      if (off < -89999 || off > 93599 || (i && i < timecnt && tz->at[i] <= tz->at[i - 1]))
        return -1;
      if ((off < 0 ? -off : off) > tz->max_off_s)
        tz->max_off_s = off < 0 ? -off : off;
    }
    /* Kept within ±2^40 s (34,000 years), so that at * 1000 fits: the files' "big
     * bang" transition at -2^59 s only says the first offset from then on. */
    for (uint32_t i = 0; i < timecnt; i++)
      tz->at[i] = tz->at[i] < -AT_LIMIT_S ? -AT_LIMIT_S
                  : tz->at[i] > AT_LIMIT_S ? AT_LIMIT_S
                                           : tz->at[i];
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

int64_t idgen__tz_next_transition_s(const idgen__tz *tz, int64_t after_s) {
  size_t lo = 0, hi = tz->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (tz->at[mid] <= after_s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < tz->n ? tz->at[lo] : INT64_MAX;
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

/* The first instant whose local time in tz is at or past local_ms: where the local clock
 * reaches it, or the transition that jumps over it (a day of Santiago's that starts at
 * 01:00). Between transitions the local time rises with the instant, so in each span
 * [at[i], at[i+1]) the instants at or past local_ms are [max(at[i], local_ms - off), ..);
 * the first span that has any holds the answer. Spans ending before local_ms - max_off
 * have none: the scan starts at the one holding that instant. */
static int64_t first_local_at_or_past(const idgen__tz *tz, int64_t local_ms) {
  int64_t low = local_ms - (int64_t)tz->max_off_s * 1000 - 1000;
  size_t i = 0, hi = tz->n; /* span i: [at[i-1], at[i]) with off[i-1]; 0: before at[0] */
  while (i < hi) { /* the first transition after low */
    size_t mid = i + (hi - i) / 2;
    if (tz->at[mid] * 1000 <= low)
      i = mid + 1;
    else
      hi = mid;
  }
  for (;; i++) {
    int32_t off = i == 0 ? tz->off0 : tz->off[i - 1];
    int64_t from = i == 0 ? INT64_MIN : tz->at[i - 1] * 1000;
    int64_t t = local_ms - (int64_t)off * 1000;
    if (t < from)
      t = from;
    if (i == tz->n || t < tz->at[i] * 1000)
      return t;
  }
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* A period's number and first day, y-m-d (d 1 unless a day; m 1 if a year). */
static uint64_t number_of(idgen__period_kind kind, int64_t y, int64_t m, int64_t d) {
  return kind == IDGEN__PERIOD_DAY     ? (uint64_t)(y * 10000 + m * 100 + d)
         : kind == IDGEN__PERIOD_MONTH ? (uint64_t)(y * 100 + m)
                                       : (uint64_t)y;
}

/* The first day of the period after the one starting y-m-d. */
static void next_first_day(idgen__period_kind kind, int64_t *y, int64_t *m, int64_t *d) {
  if (kind == IDGEN__PERIOD_DAY && *d < idgen__days_in_month(*y, *m)) {
    ++*d;
    return;
  }
  *d = 1;
  if (kind != IDGEN__PERIOD_YEAR && *m < 12) {
    ++*m;
    return;
  }
  *m = 1;
  ++*y;
}

static int64_t start_of(const idgen__tz *tz, int64_t y, int64_t m, int64_t d) {
  return first_local_at_or_past(tz, idgen__days_from_civil(y, m, d) * MS_PER_DAY);
}

/* start(P) = the first instant whose local date is at or past P's first day; end(P) =
 * start(the next P). The instant's local date names a period P whose start is at or
 * before it (that local date was reached); where the local date went back (a fall back
 * across midnight) a later period may have started already: the period is then the
 * latest one started. So start <= unix_ms < end always, and end > start. */
int idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                     uint64_t *number, int64_t *start_ms, int64_t *end_ms) {
  if (kind != IDGEN__PERIOD_DAY && kind != IDGEN__PERIOD_MONTH && kind != IDGEN__PERIOD_YEAR)
    return IDGEN_EINVAL;
  int64_t local = unix_ms + (int64_t)idgen__tz_offset_s(tz, unix_ms) * 1000;
  int64_t y, m, d;
  idgen__civil_from_days(floor_div(local, MS_PER_DAY), &y, &m, &d);
  if (kind != IDGEN__PERIOD_DAY)
    d = 1;
  if (kind == IDGEN__PERIOD_YEAR)
    m = 1;
  int64_t start = start_of(tz, y, m, d);
  /* Local time goes back at most a day or so (max_off_s and its opposite), so a few
   * periods at most lie between the local date and the period started last. */
  for (int turns = 0; turns < 8; turns++) {
    if (y < 1970 || y > 9999)
      return IDGEN_EOVERFLOW;
    int64_t ny = y, nm = m, nd = d;
    next_first_day(kind, &ny, &nm, &nd);
    int64_t end = start_of(tz, ny, nm, nd);
    if (end > unix_ms) {
      if (start > unix_ms || end <= start)
        return IDGEN_ERANGE; /* never: the instant is not in its own period */
      *number = number_of(kind, y, m, d);
      *start_ms = start;
      *end_ms = end;
      return 0;
    }
    y = ny, m = nm, d = nd, start = end;
  }
  return IDGEN_ERANGE;
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
