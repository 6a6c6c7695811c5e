/* redis/conn.h: the Redis client's socket, plain or TLS over OpenSSL, with a deadline on
 * every step (src/redis/conn.c; internal to libidgen-redis).
 *
 * Why the client owns its socket: Debian bookworm's hiredis is 0.14, which has no TLS
 * (hiredis_ssl came with 1.0) and no hook to put one under redisContext's own read and
 * write. So the connection is ours: a non-blocking socket, OpenSSL 3 on it for
 * rediss://, poll() against one deadline per step; hiredis stays the protocol half,
 * redisFormatCommandArgv for requests and a redisReader for replies. Plain redis:// goes
 * the same way, so both the lease provider and the segment backend have one path.
 *
 * libidgen-client (src/client/) compiles this file too, for TLS to `idgen serve`: it
 * names its own options in the messages (idgen__conn_names), brings its bounded reply
 * reader, and pipelines (an ECHO tag before each request) with _send and _read, keeping
 * a connection whose read timed out. */
#ifndef IDGEN_REDIS_CONN_H
#define IDGEN_REDIS_CONN_H

#include <stddef.h>
#include <stdint.h>

struct redisReply;
struct ssl_ctx_st;
typedef struct idgen__redis_conn idgen__redis_conn;

struct redisReader;

/* What the messages call the options and the scheme (string literals: kept, not copied). */
typedef struct idgen__conn_names {
  const char *cacert, *cert, *key; /* "--redis-cacert", ... */
  const char *tls_hint;            /* after "(a TLS port?": " then rediss://" */
} idgen__conn_names;
extern const idgen__conn_names idgen__redis_names;

/* A client TLS context: TLS 1.2 at least, the peer verified against cacert's CAs (NULL
 * or "": the system's default paths), the client certificate cert with key (NULL or "":
 * none). NULL with one line in err naming the option and file. The context keeps names
 * for the connections' messages. idgen__redis_tls_new: with idgen__redis_names. */
struct ssl_ctx_st *idgen__conn_tls_new(const idgen__conn_names *names, const char *cacert,
                                       const char *cert, const char *key, char *err,
                                       size_t errlen);
struct ssl_ctx_st *idgen__redis_tls_new(const char *cacert, const char *cert,
                                        const char *key, char *err, size_t errlen);
void idgen__redis_tls_free(struct ssl_ctx_st *tls);

/* Connects to host:port (a name or an address), then, with tls, the handshake: SNI for
 * a name, the certificate checked against the host (name or IP address). has_cert says
 * whether tls shows a client certificate (for the reason of a refusal). 0, or -1 with
 * one line in err (no "where" prefix). deadline_ns: idgen_monotonic_ns() clock. */
int idgen__redis_conn_open(idgen__redis_conn **out, const char *host, int port,
                           struct ssl_ctx_st *tls, int has_cert, int64_t deadline_ns,
                           char *err, size_t errlen);

/* The same, as libidgen-client opens it: server_name (NULL or "": host) is what the
 * certificate is checked against and SNI carries; reader_new (NULL: hiredis's own
 * redisReaderCreate) makes the reply reader, reader_free frees it; names (NULL:
 * idgen__redis_names) for a plain connection's messages. */
typedef struct idgen__conn_how {
  const char *server_name;
  struct redisReader *(*reader_new)(void);
  void (*reader_free)(struct redisReader *);
  const idgen__conn_names *names;
} idgen__conn_how;
int idgen__conn_open(idgen__redis_conn **out, const char *host, int port,
                     struct ssl_ctx_st *tls, int has_cert, const idgen__conn_how *how,
                     int64_t deadline_ns, char *err, size_t errlen);
/* Sends a formatted command and reads its one reply, by deadline_ns. The reply is the
 * caller's (freeReplyObject); NULL on a transport or protocol failure, with the reason
 * in idgen__redis_conn_error (the connection is then unusable). */
struct redisReply *idgen__redis_conn_call(idgen__redis_conn *c, const char *cmd, size_t len,
                                          int64_t deadline_ns);
const char *idgen__redis_conn_error(const idgen__redis_conn *c);

/* The halves of _call, for a caller that pipelines: _send writes all of cmd (0, or -1:
 * the connection is unusable, a half-written command in it); _read returns the next
 * reply, or NULL with the reason in _error. After a NULL of _read,
 * idgen__redis_conn_timed_out says whether only the deadline passed (the connection is
 * still whole: the reply may come later) or the connection failed. */
int idgen__redis_conn_send(idgen__redis_conn *c, const char *cmd, size_t len,
                           int64_t deadline_ns);
struct redisReply *idgen__redis_conn_read(idgen__redis_conn *c, int64_t deadline_ns);
int idgen__redis_conn_timed_out(const idgen__redis_conn *c);
/* The socket (a forked child closes its copy after _close(c, 1)). */
int idgen__redis_conn_fd(const idgen__redis_conn *c);
/* Closes c (only_drop: a forked child's copy, freed but its socket neither shut down
 * nor closed, as the parent still uses it). NULL is fine. */
void idgen__redis_conn_close(idgen__redis_conn *c, int only_drop);

#endif
