/* util.h: generic text parsing shared by the server and the CLI (common/util.c). */
#ifndef IDGEN_COMMON_UTIL_H
#define IDGEN_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Splits "ADDR:PORT" ("[v6]:PORT" too). Returns 0 or -1. */
int idgen__parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);
/* A DSN fit to print: the value of every password=... and sslpassword=... (in a URI's
 * query too, and a URI's :password@) replaced by "***". */
void idgen__dsn_masked(const char *dsn, char *out, size_t outlen);

#endif
