/* format_history.c: every format a segment generator has served, kept in a file of the
 * state directory across restarts, so that a new format is checked against all of them
 * (issue 35: a text one format made must never be the text of another number). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"
#include "idgen/error.h"
#include "segment/format.h"

#define REFUSE(code, ...)                                                                  \
  do {                                                                                     \
    if (err && errlen)                                                                     \
      snprintf(err, errlen, __VA_ARGS__);                                                  \
    return (code);                                                                         \
  } while (0)

static unsigned digits_of(const idgen__seg_format *f) {
  unsigned d = 0;
  for (uint64_t m = f->mult; m > 1; m /= 10)
    d++;
  return d;
}

/* One line "PERIOD DIGITS TEMPLATE" (without its '\n') into *out. */
static int parse_line(idgen__seg_format *out, const char *line, size_t len, size_t lineno,
                      const char *name, char *err, size_t errlen) {
  char text[IDGEN_SEG_FORMAT_MAX + 32];
  if (len >= sizeof text)
    REFUSE(IDGEN_EFORMAT, "line %zu: longer than %zu bytes", lineno, sizeof text - 1);
  memcpy(text, line, len);
  text[len] = '\0';
  if (memchr(line, '\0', len))
    REFUSE(IDGEN_EFORMAT, "line %zu: a NUL byte", lineno);
  char *sp1 = strchr(text, ' ');
  char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
  if (!sp2 || sp2[1] == '\0')
    REFUSE(IDGEN_EFORMAT, "line %zu: not 'PERIOD DIGITS TEMPLATE'", lineno);
  *sp1 = *sp2 = '\0';
  idgen__period_kind period;
  if (idgen__period_parse(text, &period) < 0 || period == IDGEN__PERIOD_NONE)
    REFUSE(IDGEN_EFORMAT, "line %zu: '%s' is not a period (day, month, year)", lineno, text);
  const char *d = sp1 + 1;
  size_t dl = strlen(d);
  if (dl == 0 || dl > 2 || strspn(d, "0123456789") != dl || (dl == 2 && d[0] == '0'))
    REFUSE(IDGEN_EFORMAT, "line %zu: digits '%s' is not a number 1 to 18", lineno, d);
  unsigned digits = (unsigned)atoi(d);
  if (digits < 1 || digits > 18)
    REFUSE(IDGEN_EFORMAT, "line %zu: digits '%s' is not a number 1 to 18", lineno, d);
  char why[256];
  if (idgen__seg_format_compile(out, sp2 + 1, name, period, digits, why, sizeof why) < 0)
    REFUSE(IDGEN_EFORMAT, "line %zu: %s", lineno, why);
  return 0;
}

static int parse_lines(idgen__seg_history *h, const char *text, size_t len,
                       const char *name, char *err, size_t errlen) {
  size_t hl = strlen(IDGEN_SEG_HISTORY_HEADER);
  if (len < hl || memcmp(text, IDGEN_SEG_HISTORY_HEADER, hl))
    REFUSE(IDGEN_EFORMAT, "line 1: not '%.*s'", (int)hl - 1, IDGEN_SEG_HISTORY_HEADER);
  size_t lineno = 1;
  for (size_t at = hl; at < len;) {
    lineno++;
    const char *nl = memchr(text + at, '\n', len - at);
    if (!nl)
      REFUSE(IDGEN_EFORMAT, "line %zu: no end of line (a write cut short)", lineno);
    if (h->n >= IDGEN_SEG_HISTORY_MAX)
      REFUSE(IDGEN_EFORMAT, "line %zu: more than %d formats", lineno, IDGEN_SEG_HISTORY_MAX);
    int rc = parse_line(&h->formats[h->n], text + at, (size_t)(nl - (text + at)), lineno,
                        name, err, errlen);
    if (rc < 0)
      return rc;
    h->n++;
    at = (size_t)(nl - text) + 1;
  }
  if (h->n == 0)
    REFUSE(IDGEN_EFORMAT, "no format after the header");
  return 0;
}

int idgen__seg_history_parse(idgen__seg_history *h, const char *text, size_t len,
                             const char *name, char *err, size_t errlen) {
  h->n = 0;
  int rc = parse_lines(h, text, len, name, err, errlen);
  if (rc < 0)
    h->n = 0; /* never a part of the history taken for all of it */
  return rc;
}

int idgen__seg_history_load(idgen__seg_history *h, const char *path, const char *name,
                            char *err, size_t errlen) {
  h->n = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    REFUSE(-errno, "format history %s: %s", path, strerror(errno));
  /* The largest file that parses, and a byte more to tell one that is too long. */
  size_t cap = strlen(IDGEN_SEG_HISTORY_HEADER) + IDGEN_SEG_HISTORY_MAX * (IDGEN_SEG_FORMAT_MAX + 32) + 1;
  char *buf = malloc(cap);
  if (!buf) {
    close(fd);
    REFUSE(IDGEN_ENOMEM, "format history %s: out of memory", path);
  }
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, buf + len, cap - len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      close(fd);
      REFUSE(-e, "format history %s: %s", path, strerror(e));
    }
    if (r == 0 || (len += (size_t)r) == cap)
      break;
  }
  close(fd);
  char why[300];
  int rc = len == cap ? IDGEN_EFORMAT
                      : idgen__seg_history_parse(h, buf, len, name, why, sizeof why);
  free(buf);
  if (len == cap)
    REFUSE(IDGEN_EFORMAT, "format history %s: too long to be one", path);
  if (rc < 0)
    REFUSE(rc, "format history %s: %s", path, why);
  return 1;
}

static int same_format(const idgen__seg_format *a, const idgen__seg_format *b) {
  return a->period == b->period && a->mult == b->mult &&
         !strcmp(a->template_text, b->template_text);
}

int idgen__seg_history_has(const idgen__seg_history *h, const idgen__seg_format *f) {
  for (size_t i = 0; i < h->n; i++)
    if (same_format(&h->formats[i], f))
      return 1;
  return 0;
}

const idgen__seg_format *idgen__seg_history_conflict(const idgen__seg_history *h,
                                                     const idgen__seg_format *f) {
  for (size_t i = 0; i < h->n; i++)
    if (!same_format(&h->formats[i], f) && idgen__seg_format_overlap(&h->formats[i], f))
      return &h->formats[i];
  return NULL;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int idgen__seg_history_add(idgen__seg_history *h, const idgen__seg_format *f,
                           const char *path, char *err, size_t errlen) {
  if (idgen__seg_history_has(h, f))
    return 0;
  if (h->n >= IDGEN_SEG_HISTORY_MAX)
    REFUSE(IDGEN_EINVAL, "format history %s: holds %d formats, the most it takes", path,
           IDGEN_SEG_HISTORY_MAX);
  size_t cap = strlen(IDGEN_SEG_HISTORY_HEADER) + (h->n + 1) * (IDGEN_SEG_FORMAT_MAX + 32);
  char *text = malloc(cap);
  if (!text)
    REFUSE(IDGEN_ENOMEM, "format history %s: out of memory", path);
  size_t len = (size_t)snprintf(text, cap, "%s", IDGEN_SEG_HISTORY_HEADER);
  for (size_t i = 0; i <= h->n; i++) {
    const idgen__seg_format *g = i < h->n ? &h->formats[i] : f;
    len += (size_t)snprintf(text + len, cap - len, "%s %u %s\n",
                            idgen__period_name(g->period), digits_of(g), g->template_text);
  }
  char tmp[IDGEN_SEG_FORMAT_MAX + 4096];
  snprintf(tmp, sizeof tmp, "%s.new", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int rc = fd < 0 ? -errno : write_all(fd, text, len);
  if (rc == 0 && fsync(fd))
    rc = -errno;
  if (fd >= 0 && close(fd) && rc == 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, path))
    rc = -errno;
  if (rc == 0)
    rc = idgen__fsync_parent(path); /* the new entry survives a crash */
  free(text);
  if (rc < 0) {
    unlink(tmp);
    REFUSE(rc, "format history %s: not written: %s", path, strerror(-rc));
  }
  h->formats[h->n++] = *f;
  return 1;
}
