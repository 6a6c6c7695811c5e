/* time_arg.c: a time as a user writes it, and the ID bounds of each scheme at a time. */
#include "common/time_arg.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/text_internal.h"
#include "idgen.h"

#define MS_PER_DAY INT64_C(86400000)

/* n digits at s as a number, or -1 if one is not a digit. */
static int64_t digits(const char *s, size_t n) {
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* Digits only, at most 15 (year 33658): Unix ms. */
static int parse_unix_ms(const char *s, size_t len, int64_t *out) {
  if (len > 15)
    return IDGEN_EOVERFLOW;
  int64_t v = digits(s, len);
  if (v < 0)
    return IDGEN_ECHAR;
  *out = v;
  return 0;
}

/* now[(+|-)N(ms|s|m|h|d|w)] */
static int parse_relative(const char *s, size_t len, int64_t now_ms, int64_t *out) {
  static const struct {
    const char *unit;
    int64_t ms;
  } units[] = {{"ms", 1},      {"s", 1000},       {"m", 60000},
               {"h", 3600000}, {"d", MS_PER_DAY}, {"w", 7 * MS_PER_DAY}};
  if (len == 3) {
    *out = now_ms;
    return 0;
  }
  if (s[3] != '-' && s[3] != '+')
    return IDGEN_EFORMAT;
  size_t at = 4, n = 0;
  while (at + n < len && s[at + n] >= '0' && s[at + n] <= '9')
    n++;
  if (n == 0 || n > 12)
    return n ? IDGEN_EOVERFLOW : IDGEN_EFORMAT;
  int64_t count = digits(s + at, n);
  const char *unit = s + at + n;
  size_t unit_len = len - at - n;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (unit_len == strlen(units[i].unit) && !memcmp(unit, units[i].unit, unit_len)) {
      if (count > INT64_MAX / 4 / units[i].ms)
        return IDGEN_EOVERFLOW;
      *out = s[3] == '-' ? now_ms - count * units[i].ms : now_ms + count * units[i].ms;
      return 0;
    }
  return IDGEN_EFORMAT;
}

/* YYYY-MM-DD[(T|t| )HH:MM:SS[.f+](Z|z|(+|-)HH:MM)] */
static int parse_rfc3339(const char *s, size_t len, int64_t *out) {
  if (len < 10 || s[4] != '-' || s[7] != '-')
    return IDGEN_EFORMAT;
  int64_t y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
  int64_t h = 0, mi = 0, sec = 0, ms = 0, offset_min = 0;
  if (y < 0 || mo < 0 || d < 0)
    return IDGEN_ECHAR;
  if (len > 10) {
    if (len < 20 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' ||
        s[16] != ':')
      return IDGEN_EFORMAT;
    h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (h < 0 || mi < 0 || sec < 0)
      return IDGEN_ECHAR;
    size_t at = 19;
    if (s[at] == '.') {
      size_t n = 0;
      while (at + 1 + n < len && s[at + 1 + n] >= '0' && s[at + 1 + n] <= '9')
        n++;
      if (n == 0)
        return IDGEN_EFORMAT;
      for (size_t i = 0; i < 3; i++)
        ms = ms * 10 + (i < n ? s[at + 1 + i] - '0' : 0);
      at += 1 + n;
    }
    if (at + 1 == len && (s[at] == 'Z' || s[at] == 'z')) {
      offset_min = 0;
    } else if (at + 6 == len && (s[at] == '+' || s[at] == '-') && s[at + 3] == ':') {
      int64_t oh = digits(s + at + 1, 2), om = digits(s + at + 4, 2);
      if (oh < 0 || om < 0)
        return IDGEN_ECHAR;
      if (oh > 23 || om > 59)
        return IDGEN_EOVERFLOW;
      offset_min = (s[at] == '-' ? -1 : 1) * (oh * 60 + om);
    } else {
      return IDGEN_EFORMAT; /* RFC 3339 needs the offset */
    }
  }
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > idgen__days_in_month(y, mo) || h > 23 ||
      mi > 59 || sec > 59)
    return IDGEN_EOVERFLOW;
  int64_t ms_total = idgen__days_from_civil(y, mo, d) * MS_PER_DAY +
                     ((h * 60 + mi - offset_min) * 60 + sec) * 1000 + ms;
  if (ms_total < 0)
    return IDGEN_EOVERFLOW;
  *out = ms_total;
  return 0;
}

int idgen__time_arg_parse(const char *s, size_t len, int64_t now_ms, int64_t *unix_ms) {
  if (!s || len == 0)
    return IDGEN_EEMPTY;
  int64_t v = 0;
  int rc;
  if (len >= 3 && !memcmp(s, "now", 3))
    rc = parse_relative(s, len, now_ms, &v);
  else if (len > 4 && s[4] == '-')
    rc = parse_rfc3339(s, len, &v);
  else
    rc = parse_unix_ms(s, len, &v);
  if (rc < 0)
    return rc;
  if (v < 0)
    return IDGEN_EOVERFLOW;
  *unix_ms = v;
  return 0;
}

int idgen__bound_scheme_parse(const char *name, idgen__bound_scheme *out) {
  if (!strcmp(name, "uuidv7") || !strcmp(name, "uuid7")) {
    *out = IDGEN__BOUND_UUIDV7;
    return 1;
  }
  if (!strcmp(name, "ulid")) {
    *out = IDGEN__BOUND_ULID;
    return 1;
  }
  return 0;
}

/* "<time> is before <what>'s range <from> .. <to>" */
static void range_error(int rc, int64_t unix_ms, const char *what, int64_t from_ms,
                        int64_t end_ms, char *err, size_t errlen) {
  char when[32], from[32], to[32];
  if (idgen_format_time(unix_ms, when, sizeof when) < 0)
    snprintf(when, sizeof when, "%" PRId64 " ms", unix_ms);
  if (idgen_format_time(from_ms, from, sizeof from) < 0)
    snprintf(from, sizeof from, "%" PRId64, from_ms);
  if (idgen_format_time(end_ms, to, sizeof to) < 0)
    snprintf(to, sizeof to, "%" PRId64 " ms", end_ms);
  if (err)
    snprintf(err, errlen, "%s is %s %s's range: %s to %s (excluded)", when,
             rc == IDGEN_EBEFOREEPOCH ? "before" : "past", what, from, to);
}

int idgen__bound_text(idgen__bound_scheme scheme, const idgen_layout *layout,
                      int64_t unix_ms, int last, char *out, size_t outlen, char *err,
                      size_t errlen) {
  int rc;
  if (scheme == IDGEN__BOUND_LAYOUT) {
    uint64_t id = 0;
    rc = last ? idgen_layout_last_id(layout, unix_ms, &id)
              : idgen_layout_first_id(layout, unix_ms, &id);
    if (rc < 0) {
      range_error(rc, unix_ms, layout->name[0] ? layout->name : "the layout",
                  layout->epoch_ms, idgen_layout_end_ms(layout), err, errlen);
      return rc;
    }
    int n = snprintf(out, outlen, "%" PRIu64, id);
    return n < 0 || (size_t)n >= outlen ? IDGEN_EBUFSIZE : n;
  }
  if (scheme == IDGEN__BOUND_UUIDV7) {
    idgen_uuid u;
    if ((rc = idgen_uuid7_bound(unix_ms, last, &u)) < 0) {
      range_error(rc, unix_ms, "uuidv7", 0, IDGEN_UUID_MAX_MS + 1, err, errlen);
      return rc;
    }
    return idgen_uuid_format(u, out, outlen);
  }
  idgen_ulid u;
  if ((rc = idgen_ulid_bound(unix_ms, last, &u)) < 0) {
    range_error(rc, unix_ms, "ulid", 0, IDGEN_UUID_MAX_MS + 1, err, errlen);
    return rc;
  }
  return idgen_ulid_format(u, out, outlen);
}
