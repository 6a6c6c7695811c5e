/* redis/url.h: the Redis URL (src/lease/redis_url.c, in libidgen). */
#ifndef IDGEN_REDIS_URL_H
#define IDGEN_REDIS_URL_H

#include <stddef.h>

#include "core/core_internal.h"

/* redis://[user:pass@]HOST:PORT[/db] (":pass@" without a user: AUTH pass). */
typedef struct idgen__redis_url {
  char host[256];
  int port;
  char user[128]; /* "" none */
  char pass[256]; /* "" none: no AUTH */
  int db;         /* SELECT db; 0 by default */
} idgen__redis_url;

/* Parses a URL. IDGEN_EINVAL with one line in err (no "--redis: " prefix). */
IDGEN__EXPORT int idgen__redis_url_parse(const char *text, idgen__redis_url *out, char *err,
                                         size_t errlen);

#endif
