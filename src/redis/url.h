/* redis/url.h: the Redis URL (src/lease/redis_url.c, in libidgen). */
#ifndef IDGEN_REDIS_URL_H
#define IDGEN_REDIS_URL_H

#include <stddef.h>

#include "core/core_internal.h"

/* redis://[user:pass@]HOST:PORT[/db] (":pass@" or "pass@" without a user: AUTH pass, as
 * redis-cli reads it); rediss:// the same over TLS. */
typedef struct idgen__redis_url {
  char host[256];
  int port;
  char user[128]; /* "" none */
  char pass[256]; /* "" none: no AUTH */
  int db;         /* SELECT db; 0 by default */
  int tls;        /* rediss:// */
  int bare;       /* the user info had no ':' ("NAME@"): pass holds NAME */
} idgen__redis_url;

/* Parses a URL. IDGEN_EINVAL with one line in err (no "--redis: " prefix). */
IDGEN__EXPORT int idgen__redis_url_parse(const char *text, idgen__redis_url *out, char *err,
                                         size_t errlen);

/* Applies the user and password given apart from the URL (--redis-user; a password
 * read from --redis-password-file or IDGEN_REDIS_PASSWORD, named by password_from) to
 * url. With such a password a bare "NAME@" of the URL is the user, not a password, so
 * that the URL holds no secret. user and password may be NULL or "". IDGEN_EINVAL with
 * one line in err for two users, two passwords or a user with no password. */
IDGEN__EXPORT int idgen__redis_url_auth(idgen__redis_url *url, const char *user,
                                        const char *password, const char *password_from,
                                        char *err, size_t errlen);

#endif
