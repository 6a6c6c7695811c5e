/* bounds.c: GET /v1/bounds: the ID range of a time range under a generator's scheme
 * (common/time_arg.c, the same as `idgen at`). */
#include "server/bounds.h"

#include <stdio.h>
#include <string.h>

#include "common/time_arg.h"

/* Query values come percent-encoded (%2B for '+'); a literal '+' is kept, since an RFC
 * 3339 offset is the only '+' a time has. */
static int unescape(const char *s, size_t n, char *out, size_t outlen) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      unsigned v = 0;
      for (size_t k = 1; k <= 2; k++) {
        char h = i + k < n ? s[i + k] : 0;
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
          return -1;
        v = v * 16 + (unsigned)d;
      }
      c = (char)v;
      i += 2;
    }
    if ((unsigned char)c < 0x20 || o + 1 >= outlen)
      return -1;
    out[o++] = c;
  }
  out[o] = 0;
  return (int)o;
}

static int time_of(const char *key, const char *s, size_t n, int64_t now_ms, int64_t *ms,
                   char *why, size_t whylen) {
  char text[64];
  int len = unescape(s, n, text, sizeof text);
  int rc = len < 0 ? IDGEN_EFORMAT : idgen__time_arg_parse(text, (size_t)len, now_ms, ms);
  if (rc < 0)
    snprintf(why, whylen, "%s is not a time (RFC 3339, Unix ms, or now-1d): %s", key,
             idgen_strerror(rc));
  return rc;
}

int idgen__bounds_json(const idgen__generator *g, const char *from, size_t from_len,
                       const char *to, size_t to_len, int64_t now_ms, idgen__buf *out,
                       char *why, size_t whylen) {
  idgen__bound_scheme scheme;
  switch (idgen__generator_kind(g)) {
  case KIND_SNOWFLAKE:
    scheme = IDGEN__BOUND_LAYOUT;
    break;
  case KIND_UUID7:
    scheme = IDGEN__BOUND_UUIDV7;
    break;
  case KIND_ULID:
    scheme = IDGEN__BOUND_ULID;
    break;
  default:
    snprintf(why, whylen, "'%s' is a %s generator: its IDs carry no time", g->name,
             idgen__kind_name(idgen__generator_kind(g)));
    return -1;
  }
  if (!from || !to) {
    snprintf(why, whylen, "bounds needs from= and to= (RFC 3339, Unix ms, or now-1d)");
    return -1;
  }
  int64_t from_ms, to_ms;
  if (time_of("from", from, from_len, now_ms, &from_ms, why, whylen) < 0 ||
      time_of("to", to, to_len, now_ms, &to_ms, why, whylen) < 0)
    return -1;
  if (from_ms > to_ms) {
    snprintf(why, whylen, "from is after to");
    return -1;
  }
  char first[48], last[48];
  if (idgen__bound_text(scheme, g->layout, from_ms, 0, first, sizeof first, why, whylen) <
          0 ||
      idgen__bound_text(scheme, g->layout, to_ms, 1, last, sizeof last, why, whylen) < 0)
    return -1;
  char from_iso[32], to_iso[32];
  if (idgen_format_time(from_ms, from_iso, sizeof from_iso) < 0)
    snprintf(from_iso, sizeof from_iso, "?");
  if (idgen_format_time(to_ms, to_iso, sizeof to_iso) < 0)
    snprintf(to_iso, sizeof to_iso, "?");
  idgen__buf_reset(out);
  idgen__buf_addf(out, "{\"first\":\"%s\",\"last\":\"%s\",\"from\":\"%s\",\"to\":\"%s\"}\n",
                  first, last, from_iso, to_iso);
  return 0;
}
