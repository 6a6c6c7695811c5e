/* time.c: ISO 8601 UTC text for Unix milliseconds, both ways, without the C library's
 * locale or time-zone state. */
#include <stdio.h>
#include <string.h>

#include "core/text_internal.h"
#include "idgen/layout.h"

#define MS_PER_DAY INT64_C(86400000)

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
int64_t idgen__days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void idgen__civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

int idgen_format_time(int64_t unix_ms, char *out, size_t outlen) {
  if (outlen < 25)
    return IDGEN_EBUFSIZE;
  int64_t days = unix_ms / MS_PER_DAY, ms_of_day = unix_ms % MS_PER_DAY;
  if (ms_of_day < 0) {
    ms_of_day += MS_PER_DAY;
    days--;
  }
  int64_t year, month, day;
  idgen__civil_from_days(days, &year, &month, &day);
  if (year < 0 || year > 9999)
    return IDGEN_ERANGE;
  int s = (int)(ms_of_day / 1000);
  snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)year, (int)month,
           (int)day, s / 3600, s / 60 % 60, s % 60, (int)(ms_of_day % 1000));
  return 24;
}

/* Reads exactly n digits at s; -1 if any is not a digit. */
static int64_t digits(const char *s, size_t n) {
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

int idgen__days_in_month(int64_t y, int64_t m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return days[m - 1] + (m == 2 && leap);
}

int idgen_parse_time(const char *s, size_t len, int64_t *unix_ms) {
  if (!s || len == 0)
    return IDGEN_EEMPTY;
  /* Accepted lengths: date (10), +THH:MM:SSZ (20), +THH:MM:SS.mmmZ (24). */
  if (len != 10 && len != 20 && len != 24)
    return IDGEN_ELENGTH;
  if (s[4] != '-' || s[7] != '-')
    return IDGEN_EFORMAT;
  int64_t y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
  int64_t h = 0, mi = 0, sec = 0, ms = 0;
  if (y < 0 || mo < 0 || d < 0)
    return IDGEN_ECHAR;
  if (len > 10) {
    if (s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len - 1] != 'Z')
      return IDGEN_EFORMAT;
    h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (len == 24) {
      if (s[19] != '.')
        return IDGEN_EFORMAT;
      ms = digits(s + 20, 3);
    }
    if (h < 0 || mi < 0 || sec < 0 || ms < 0)
      return IDGEN_ECHAR;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > idgen__days_in_month(y, mo) || h > 23 || mi > 59 ||
      sec > 59)
    return IDGEN_EOVERFLOW;
  *unix_ms = idgen__days_from_civil(y, mo, d) * MS_PER_DAY +
             ((h * 60 + mi) * 60 + sec) * 1000 + ms;
  return 0;
}
