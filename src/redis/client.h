/* redis/client.h: the Redis client the lease provider and the segment backend share
 * (libidgen-redis; internal, nothing exported): the URL, one connection, plain or TLS
 * (rediss://, over OpenSSL), with AUTH and SELECT, and the start checks on INFO (a
 * replica and idgen's own RESP port are refused; a server that can lose acknowledged
 * writes on restart is named in a warning). hiredis (Debian's 0.14, which has no TLS)
 * formats the commands and parses the replies; the socket is this client's own. */
#ifndef IDGEN_REDIS_CLIENT_H
#define IDGEN_REDIS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/core_internal.h"
#include "redis/url.h"

struct redisReply;
struct idgen__redis_conn;
struct ssl_ctx_st;
struct idgen_lease_config;

#define IDGEN__REDIS_WHY_MAX 512

/* What INFO told at the last (re)connect. */
typedef struct idgen__redis_info {
  int aof_enabled;  /* aof_enabled:1 */
  int fsync_always; /* CONFIG GET appendfsync is "always"; -1: not readable */
  int64_t replicas; /* connected_slaves */
  char version[32]; /* redis_version */
} idgen__redis_info;

typedef struct idgen__redis {
  struct idgen__redis_conn *c; /* NULL: not connected (the next command connects) */
  struct ssl_ctx_st *tls;      /* rediss://: CA, client certificate; NULL: plain */
  int has_cert;                /* tls with a client certificate */
  idgen__redis_url url;        /* with the user and password of access applied */
  int64_t timeout_ms;
  idgen__redis_info info;
  char why[IDGEN__REDIS_WHY_MAX];     /* the last failure, one line */
  char warning[IDGEN__REDIS_WHY_MAX]; /* what this server can lose ("" none), for logs */
  int refused; /* the last connect was refused for what the server is (a replica,
                  idgen): the caller must not go on as if it were unreachable only */
  void (*observe)(void *ctx, int64_t ns); /* each command's latency; may be NULL */
  void *observe_ctx;
} idgen__redis;

/* Sets up r for url (not connecting): with access (NULL: none), its redis_user and the
 * password of redis_password_file (read now) or redis_password; for rediss:// a TLS
 * context of TLS 1.2 at least that verifies the server's certificate and its name
 * against the URL's host, with the CAs of redis_cacert (none: the system's default
 * paths) and the client certificate redis_cert with redis_key. 0, or IDGEN_EINVAL with
 * one line in err (a file unreadable or not PEM, a key not the certificate's, two
 * users or passwords: idgen__redis_url_auth); IDGEN_ENOMEM. Either way r is then
 * idgen__redis_free's. */
int idgen__redis_init(idgen__redis *r, const idgen__redis_url *url,
                      const struct idgen_lease_config *access, int64_t timeout_ms,
                      char *err, size_t errlen);
/* Closes the connection and frees the TLS context, wiping the password (only_drop: as
 * idgen__redis_close). */
void idgen__redis_free(idgen__redis *r, int only_drop);
/* Connects (if not connected): TCP, the TLS handshake, AUTH, SELECT, then the checks on
 * INFO, all within timeout_ms. 0; IDGEN_EUNAVAIL (cannot reach, a TLS refusal with
 * OpenSSL's reason, or AUTH/SELECT failed; why says which); IDGEN_EINVAL
 * with refused set when the address is a replica or idgen's own RESP port, or answers
 * INFO as no Redis does. */
int idgen__redis_connect(idgen__redis *r);
/* Runs one command (argv form, binary-safe), connecting first if needed. The reply is
 * the caller's (freeReplyObject); a reply of type error comes back as a reply, and a
 * transport failure as NULL with *rc = IDGEN_EUNAVAIL and why set (the connection is
 * dropped: the next command connects again and re-checks INFO). The command, sent and
 * answered, takes timeout_ms at most. */
struct redisReply *idgen__redis_argv(idgen__redis *r, int argc, const char **argv, int *rc);
/* Closes the connection (a forked child passes only_drop 1: the socket is its parent's,
 * so it is not closed, only forgotten). */
void idgen__redis_close(idgen__redis *r, int only_drop);
/* "redis 127.0.0.1:6379/0" ("rediss ..." over TLS): where r talks to, for messages (no
 * password). */
const char *idgen__redis_where(const idgen__redis *r);

/* Parses "field:value" out of an INFO text into out (""; -1 when missing). */
int idgen__redis_info_field(const char *info, const char *field, char *out, size_t outlen);

#endif
