/* redis/client.h: the Redis client the lease provider and the segment backend share
 * (libidgen-redis, on Debian's hiredis; internal, nothing exported): the URL, one
 * connection with AUTH and SELECT,
 * and the start checks on INFO (a replica and idgen's own RESP port are refused; a
 * server that can lose acknowledged writes on restart is named in a warning). */
#ifndef IDGEN_REDIS_CLIENT_H
#define IDGEN_REDIS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/core_internal.h"
#include "redis/url.h"

struct redisContext;
struct redisReply;

#define IDGEN__REDIS_WHY_MAX 512

/* What INFO told at the last (re)connect. */
typedef struct idgen__redis_info {
  int aof_enabled;  /* aof_enabled:1 */
  int fsync_always; /* CONFIG GET appendfsync is "always"; -1: not readable */
  int64_t replicas; /* connected_slaves */
  char version[32]; /* redis_version */
} idgen__redis_info;

typedef struct idgen__redis {
  struct redisContext *c; /* NULL: not connected (the next command connects) */
  idgen__redis_url url;
  int64_t timeout_ms;
  idgen__redis_info info;
  char why[IDGEN__REDIS_WHY_MAX];     /* the last failure, one line */
  char warning[IDGEN__REDIS_WHY_MAX]; /* what this server can lose ("" none), for logs */
  int refused; /* the last connect was refused for what the server is (a replica,
                  idgen): the caller must not go on as if it were unreachable only */
  void (*observe)(void *ctx, int64_t ns); /* each command's latency; may be NULL */
  void *observe_ctx;
} idgen__redis;

/* Sets up r for url (not connecting). */
void idgen__redis_init(idgen__redis *r, const idgen__redis_url *url, int64_t timeout_ms);
/* Connects (if not connected): TCP, AUTH, SELECT, then the checks on INFO. 0;
 * IDGEN_EUNAVAIL (cannot reach, or AUTH/SELECT failed; why says which); IDGEN_EINVAL
 * with refused set when the address is a replica or idgen's own RESP port, or answers
 * INFO as no Redis does. */
int idgen__redis_connect(idgen__redis *r);
/* Runs one command (argv form, binary-safe), connecting first if needed. The reply is
 * the caller's (freeReplyObject); a reply of type error comes back as a reply, and a
 * transport failure as NULL with *rc = IDGEN_EUNAVAIL and why set (the connection is
 * dropped: the next command connects again and re-checks INFO). */
struct redisReply *idgen__redis_argv(idgen__redis *r, int argc, const char **argv, int *rc);
/* Closes the connection (a forked child passes only_drop 1: the socket is its parent's,
 * so it is not closed, only forgotten). */
void idgen__redis_close(idgen__redis *r, int only_drop);
/* "127.0.0.1:6379/0": where r talks to, for messages (no password). */
const char *idgen__redis_where(const idgen__redis *r);

/* Parses "field:value" out of an INFO text into out (""; -1 when missing). */
int idgen__redis_info_field(const char *info, const char *field, char *out, size_t outlen);

#endif
