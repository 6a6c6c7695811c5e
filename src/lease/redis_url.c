/* redis_url.c: the --redis URL, redis[s]://[user:pass@]HOST:PORT[/db], parsed in libidgen
 * (the option is checked whether or not libidgen-redis is linked; its client and the
 * segment backend read it from here). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "idgen/error.h"
#include "redis/url.h"

static int url_fail(char *err, size_t errlen, const char *text, const char *why) {
  if (err && errlen)
    snprintf(err, errlen, "'%.120s': %s (redis[s]://[user:pass@]HOST:PORT[/db])", text,
             why);
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
  static const char plain[] = "redis://", tls[] = "rediss://";
  idgen__redis_url u;
  memset(&u, 0, sizeof u);
  const char *p;
  if (text && !strncmp(text, plain, sizeof plain - 1))
    p = text + sizeof plain - 1;
  else if (text && !strncmp(text, tls, sizeof tls - 1))
    p = text + sizeof tls - 1, u.tls = 1;
  else
    return url_fail(err, errlen, text ? text : "", "not a redis:// or rediss:// URL");
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
    u.bare = !colon;
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

static int auth_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int auth_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return IDGEN_EINVAL;
}

int idgen__redis_url_auth(idgen__redis_url *url, const char *user, const char *password,
                          const char *password_from, char *err, size_t errlen) {
  int has_user = user && *user, has_pw = password && *password;
  if (!password_from)
    password_from = "the password";
  if (has_pw && url->pass[0] && !url->bare)
    return auth_fail(err, errlen, "%s: the URL has a password too (give one)",
                     password_from);
  if (has_pw && url->bare) { /* "NAME@": the user, the password coming from elsewhere */
    snprintf(url->user, sizeof url->user, "%.*s", (int)sizeof url->user - 1, url->pass);
    url->pass[0] = '\0';
    url->bare = 0;
  }
  if (has_user && strlen(user) >= sizeof url->user)
    return auth_fail(err, errlen, "--redis-user: too long (%zu bytes at most)",
                     sizeof url->user - 1);
  if (has_user && url->user[0] && strcmp(url->user, user))
    return auth_fail(err, errlen,
                     "--redis-user %.100s: the URL names user '%.100s' (give one)", user,
                     url->user);
  if (has_pw && strlen(password) >= sizeof url->pass)
    return auth_fail(err, errlen, "%s: password too long (%zu bytes at most)",
                     password_from, sizeof url->pass - 1);
  if (has_user)
    snprintf(url->user, sizeof url->user, "%s", user);
  if (has_pw)
    snprintf(url->pass, sizeof url->pass, "%s", password);
  if (url->user[0] && !url->pass[0])
    return auth_fail(err, errlen,
                     "redis user '%.100s': no password (--redis-password-file FILE or "
                     "IDGEN_REDIS_PASSWORD)",
                     url->user);
  return 0;
}
