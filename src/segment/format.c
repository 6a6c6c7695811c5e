/* format.c: a period generator's text form, and its strict parse back. */
#include "segment/format.h"

#include <stdio.h>
#include <string.h>

#include "core/text_internal.h"
#include "idgen/error.h"

static int add_part(idgen__seg_format *f, char kind, size_t at, size_t len) {
  if (f->nparts >= IDGEN_SEG_FORMAT_PARTS)
    return -1;
  f->parts[f->nparts].kind = kind;
  f->parts[f->nparts].at = at;
  f->parts[f->nparts].len = len;
  f->nparts++;
  return 0;
}

#define REFUSE(...)                                                                        \
  do {                                                                                     \
    if (err)                                                                               \
      snprintf(err, errlen, __VA_ARGS__);                                                  \
    return IDGEN_EINVAL;                                                                   \
  } while (0)

/* The date pattern PAT of {date:PAT}, at t[at..end). */
static int compile_date(idgen__seg_format *f, size_t at, size_t end, unsigned *seen,
                        char *err, size_t errlen) {
  const char *t = f->template_text;
  for (size_t i = at; i < end; i++) {
    if (t[i] != '%') {
      if (add_part(f, 'L', i, 1) < 0)
        REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
      continue;
    }
    char c = i + 1 < end ? t[i + 1] : 0;
    i++;
    static const char fields[] = "Ymdj";
    const char *p = c ? strchr(fields, c) : NULL;
    if (c == '%') {
      if (add_part(f, 'L', i, 1) < 0)
        REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
      continue;
    }
    if (!p)
      REFUSE("format: %%%c cannot be read back to a date (%%Y, %%m, %%d, %%j, %%%%)",
             c ? c : '?');
    *seen |= 1u << (p - fields);
    if (add_part(f, c, 0, c == 'Y' ? 4 : c == 'j' ? 3 : 2) < 0)
      REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
  }
  return 0;
}

int idgen__seg_format_compile(idgen__seg_format *f, const char *template_text,
                              const char *name, idgen__period_kind period, unsigned digits,
                              char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  if (strlen(template_text) >= sizeof f->template_text)
    REFUSE("format: longer than %d bytes", IDGEN_SEG_FORMAT_MAX - 1);
  if (!period)
    REFUSE("format: a text form needs a period (period: day, month or year)");
  snprintf(f->template_text, sizeof f->template_text, "%s", template_text);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->period = period;
  f->mult = 1;
  for (unsigned i = 0; i < digits; i++)
    f->mult *= 10;
  const char *t = f->template_text;
  size_t len = strlen(t);
  unsigned seen = 0, seqs = 0;
  for (size_t i = 0; i < len;) {
    if (t[i] == '}')
      REFUSE("format: '}' without '{' at byte %zu", i + 1);
    if (t[i] != '{') {
      size_t n = strcspn(t + i, "{}");
      if (add_part(f, 'L', i, n) < 0)
        REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
      i += n;
      continue;
    }
    const char *close = strchr(t + i, '}');
    if (!close)
      REFUSE("format: '{' without '}' at byte %zu", i + 1);
    size_t end = (size_t)(close - t), flen = end - i - 1;
    const char *field = t + i + 1;
    if (memchr(field, '{', flen))
      REFUSE("format: '{' inside a field at byte %zu", i + 1);
    if (flen > 5 && !strncmp(field, "date:", 5)) {
      int rc = compile_date(f, i + 6, end, &seen, err, errlen);
      if (rc < 0)
        return rc;
    } else if (flen >= 6 && !strncmp(field, "seq:0", 5)) {
      unsigned width = 0;
      for (size_t k = 5; k < flen; k++) {
        if (field[k] < '0' || field[k] > '9' || width > 2)
          REFUSE("format: {seq:0N} takes N from 1 to 19, not '%.*s'", (int)flen, field);
        width = width * 10 + (unsigned)(field[k] - '0');
      }
      if (width < 1 || width > 19)
        REFUSE("format: {seq:0N} takes N from 1 to 19");
      if (width < digits)
        REFUSE("format: {seq:0%u} cannot hold the largest number of a period, %llu "
               "(digits: %u)",
               width, (unsigned long long)(f->mult - 1), digits);
      seqs++;
      if (add_part(f, 'S', 0, width) < 0)
        REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
    } else if (flen == 4 && !strncmp(field, "name", 4)) {
      size_t n = strlen(f->name);
      /* The name as a literal: copy it in place of the field would move offsets; keep
       * it apart. */
      if (add_part(f, 'N', 0, n) < 0)
        REFUSE("format: too many parts (%d at most)", IDGEN_SEG_FORMAT_PARTS);
    } else {
      REFUSE("format: unknown field {%.*s} ({date:PAT}, {seq:0N}, {name})", (int)flen,
             field);
    }
    i = end + 1;
  }
  if (seqs != 1)
    REFUSE("format: needs exactly one {seq:0N} (has %u)", seqs);
  /* seen: Y=1 m=2 d=4 j=8 */
  int names = period == IDGEN__PERIOD_YEAR    ? (int)(seen & 1)
              : period == IDGEN__PERIOD_MONTH ? (seen & 3) == 3
                                              : (seen & 7) == 7 || (seen & 9) == 9;
  if (!names)
    REFUSE("format: its date cannot be read back to a %s (%s)", idgen__period_name(period),
           period == IDGEN__PERIOD_YEAR    ? "needs %Y"
           : period == IDGEN__PERIOD_MONTH ? "needs %Y and %m"
                                           : "needs %Y with %m and %d, or %Y with %j");
  return 0;
}

static int day_of_year(int y, int m, int d) {
  return (int)(idgen__days_from_civil(y, m, d) - idgen__days_from_civil(y, 1, 1)) + 1;
}

int idgen__seg_format_text(const idgen__seg_format *f, uint64_t v, char *out,
                           size_t outlen) {
  uint64_t period = v / f->mult, n = v % f->mult;
  int y, m, d;
  if (n == 0 || idgen__period_date(f->period, period, &y, &m, &d) < 0)
    return IDGEN_EFORMAT;
  size_t o = 0;
  for (size_t i = 0; i < f->nparts; i++) {
    char buf[32];
    const char *s = buf;
    size_t len;
    switch (f->parts[i].kind) {
    case 'L':
      s = f->template_text + f->parts[i].at;
      len = f->parts[i].len;
      break;
    case 'N':
      s = f->name;
      len = strlen(f->name);
      break;
    case 'S':
      len = (size_t)snprintf(buf, sizeof buf, "%0*llu", (int)f->parts[i].len,
                             (unsigned long long)n);
      break;
    default: {
      int value = f->parts[i].kind == 'Y'   ? y
                  : f->parts[i].kind == 'm' ? m
                  : f->parts[i].kind == 'd' ? d
                                            : day_of_year(y, m, d);
      len = (size_t)snprintf(buf, sizeof buf, "%0*d", (int)f->parts[i].len, value);
    }
    }
    if (o + len >= outlen)
      return IDGEN_EBUFSIZE;
    memcpy(out + o, s, len);
    o += len;
  }
  out[o] = 0;
  return (int)o;
}

int idgen__seg_format_parse(const idgen__seg_format *f, const char *text, size_t len,
                            uint64_t *v, uint64_t *period_out, uint64_t *n_out) {
  size_t at = 0;
  int y = -1, m = -1, d = -1, j = -1;
  uint64_t n = 0;
  for (size_t i = 0; i < f->nparts; i++) {
    size_t w = f->parts[i].len;
    char kind = f->parts[i].kind;
    if (at + w > len)
      return IDGEN_EFORMAT;
    if (kind == 'L' || kind == 'N') {
      const char *lit = kind == 'L' ? f->template_text + f->parts[i].at : f->name;
      if (memcmp(text + at, lit, w))
        return IDGEN_EFORMAT;
      at += w;
      continue;
    }
    uint64_t value = 0;
    for (size_t k = 0; k < w; k++) {
      char c = text[at + k];
      if (c < '0' || c > '9')
        return IDGEN_EFORMAT;
      value = value * 10 + (uint64_t)(c - '0');
    }
    at += w;
    if (kind == 'S')
      n = value;
    else if (kind == 'Y')
      y = (int)value;
    else if (kind == 'm')
      m = (int)value;
    else if (kind == 'd')
      d = (int)value;
    else
      j = (int)value;
  }
  if (at != len || n == 0 || n >= f->mult || y < 1970 || y > 9999)
    return IDGEN_EFORMAT;
  if (j >= 0 && (m < 0 || d < 0)) { /* %j: the day of the year to a month and a day */
    if (j < 1 || j > 365 + (idgen__days_in_month(y, 2) == 29))
      return IDGEN_EFORMAT;
    int64_t y2, m2, d2;
    idgen__civil_from_days(idgen__days_from_civil(y, 1, 1) + j - 1, &y2, &m2, &d2);
    m = (int)m2;
    d = (int)d2;
  }
  uint64_t period = f->period == IDGEN__PERIOD_YEAR ? (uint64_t)y
                    : f->period == IDGEN__PERIOD_MONTH
                        ? (uint64_t)(y * 100 + m)
                        : (uint64_t)(y * 10000 + m * 100 + d);
  int yy, mm, dd;
  if (idgen__period_date(f->period, period, &yy, &mm, &dd) < 0)
    return IDGEN_EFORMAT;
  /* Strict: the text made from what was read must be the text (a %m twice with two
   * values, a %j that disagrees with %m and %d, a day field under a month period). */
  char again[IDGEN_SEG_FORMAT_MAX + 64];
  uint64_t value = period * f->mult + n;
  int back = idgen__seg_format_text(f, value, again, sizeof again);
  if (back < 0 || (size_t)back != len || memcmp(again, text, len))
    return IDGEN_EFORMAT;
  *v = value;
  *period_out = period;
  *n_out = n;
  return 0;
}

/* A format's texts as one byte class per position: a literal byte, or 0 for a digit (a
 * date or sequence field). The length, or -1 if it does not fit. */
static int format_classes(const idgen__seg_format *f, char *out, size_t outlen) {
  size_t o = 0;
  for (size_t i = 0; i < f->nparts; i++) {
    char kind = f->parts[i].kind;
    size_t len = f->parts[i].len;
    if (o + len > outlen)
      return -1;
    if (kind == 'L')
      memcpy(out + o, f->template_text + f->parts[i].at, len);
    else if (kind == 'N')
      memcpy(out + o, f->name, len);
    else
      memset(out + o, 0, len);
    o += len;
  }
  return (int)o;
}

static int is_digit_class(char c) {
  return c == 0 || (c >= '0' && c <= '9');
}

int idgen__seg_format_overlap(const idgen__seg_format *a, const idgen__seg_format *b) {
  char ca[IDGEN_SEG_FORMAT_MAX + 96], cb[IDGEN_SEG_FORMAT_MAX + 96];
  int la = format_classes(a, ca, sizeof ca), lb = format_classes(b, cb, sizeof cb);
  if (la < 0 || lb < 0)
    return 1; /* cannot tell: coinciding, to be safe */
  if (la != lb)
    return 0;
  for (int i = 0; i < la; i++) {
    char x = ca[i], y = cb[i];
    if (x && y ? x != y : !is_digit_class(x ? x : y))
      return 0;
  }
  return 1;
}
