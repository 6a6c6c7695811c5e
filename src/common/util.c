/* util.c: generic text parsing that the server and the CLI share, as Redis keeps its
 * in util.c: listener addresses, DSNs fit to print. */
#include "common/util.h"

#include <string.h>
#include <strings.h>

/* The length of a secret's key at p ("password=", libpq's "sslpassword=": a client
 * key's passphrase), where a key starts: the DSN's start, after a space, or in a URI's
 * query after '?' or '&'. 0 elsewhere. */
static size_t secret_key_at(const char *dsn, const char *p) {
  static const char *const keys[] = {"password=", "sslpassword="};
  if (p != dsn && p[-1] != ' ' && p[-1] != '?' && p[-1] != '&')
    return 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!strncasecmp(p, keys[i], strlen(keys[i])))
      return strlen(keys[i]);
  return 0;
}

void idgen__dsn_masked(const char *dsn, char *out, size_t outlen) {
  static const char mask[] = "***";
  size_t n = 0;
  const char *scheme = strstr(dsn, "://");
  const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
  const char *slash = scheme ? strchr(scheme + 3, '/') : NULL;
  const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
  if (at && slash && slash < at)
    colon = NULL; /* an '@' past the host is not userinfo */
  for (const char *p = dsn; *p && n + sizeof mask < outlen;) {
    if (colon && p == colon + 1) { /* scheme://user:PASSWORD@host */
      memcpy(out + n, mask, sizeof mask - 1);
      n += sizeof mask - 1;
      p = at;
      continue;
    }
    size_t key = secret_key_at(dsn, p);
    if (key && n + key + sizeof mask >= outlen)
      break; /* no room for the key and its mask: cut before it, never through it */
    if (key) {
      int query = p != dsn && (p[-1] == '?' || p[-1] == '&');
      memcpy(out + n, p, key);
      memcpy(out + n + key, mask, sizeof mask - 1);
      n += key + sizeof mask - 1;
      p += key;
      char end = query ? '&' : *p == '\'' ? '\'' : ' ';
      p += end == '\'';
      while (*p && *p != end)
        p += *p == '\\' && p[1] ? 2 : 1;
      p += end == '\'' && *p;
      continue;
    }
    out[n++] = *p++;
  }
  out[n] = '\0';
}

int idgen__parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port) {
  const char *colon;
  const char *h = s;
  size_t hl;
  if (*s == '[') {
    const char *close = strchr(s, ']');
    if (!close || close[1] != ':')
      return -1;
    h = s + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(s, ':');
    if (!colon)
      return -1;
    hl = (size_t)(colon - s);
  }
  if (hl == 0 || hl >= hostlen)
    return -1;
  const char *p = colon + 1;
  if (!*p)
    return -1;
  unsigned long v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    v = v * 10 + (unsigned long)(*p - '0');
    if (v > 65535)
      return -1;
  }
  memcpy(host, h, hl);
  host[hl] = 0;
  *port = (uint16_t)v;
  return 0;
}
