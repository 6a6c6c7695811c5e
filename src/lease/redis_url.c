/* redis_url.c: the --redis URL, redis://[user:pass@]HOST:PORT[/db], parsed in libidgen
 * (the option is checked whether or not libidgen-redis is linked; its client and the
 * segment backend read it from here). */
#include <stdio.h>
#include <string.h>

#include "idgen/error.h"
#include "redis/url.h"

static int url_fail(char *err, size_t errlen, const char *text, const char *why) {
  if (err && errlen)
    snprintf(err, errlen, "'%.120s': %s (redis://[user:pass@]HOST:PORT[/db])", text, why);
  return IDGEN_EINVAL;
}

static int parse_uint(const char *s, size_t len, long max, long *out) {
  if (len == 0 || len > 10)
    return -1;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v > max)
    return -1;
  *out = v;
  return 0;
}

int idgen__redis_url_parse(const char *text, idgen__redis_url *out, char *err,
                           size_t errlen) {
  static const char scheme[] = "redis://";
  if (!text || strncmp(text, scheme, sizeof scheme - 1))
    return url_fail(err, errlen, text ? text : "", "not a redis:// URL");
  idgen__redis_url u;
  memset(&u, 0, sizeof u);
  const char *p = text + sizeof scheme - 1;
  const char *at = strrchr(p, '@');
  if (at) { /* user:pass@ or :pass@ or pass@ */
    const char *colon = memchr(p, ':', (size_t)(at - p));
    const char *pass = colon ? colon + 1 : p;
    size_t ulen = colon ? (size_t)(colon - p) : 0, plen = (size_t)(at - pass);
    if (ulen >= sizeof u.user || plen >= sizeof u.pass)
      return url_fail(err, errlen, text, "user or password too long");
    if (plen == 0)
      return url_fail(err, errlen, text, "empty password");
    memcpy(u.user, p, ulen);
    memcpy(u.pass, pass, plen);
    p = at + 1;
  }
  const char *slash = strchr(p, '/');
  const char *hostend = slash ? slash : p + strlen(p);
  const char *colon = NULL;
  for (const char *q = p; q < hostend; q++)
    if (*q == ':')
      colon = q;
  size_t hlen = (size_t)((colon ? colon : hostend) - p);
  if (hlen == 0)
    return url_fail(err, errlen, text, "no host");
  if (hlen >= sizeof u.host)
    return url_fail(err, errlen, text, "host too long");
  memcpy(u.host, p, hlen);
  long v = 6379;
  if (colon && (parse_uint(colon + 1, (size_t)(hostend - colon - 1), 65535, &v) || v == 0))
    return url_fail(err, errlen, text, "bad port");
  u.port = (int)v;
  v = 0;
  if (slash && slash[1] && parse_uint(slash + 1, strlen(slash + 1), 1000000, &v))
    return url_fail(err, errlen, text, "bad database number");
  u.db = (int)v;
  *out = u;
  return 0;
}
