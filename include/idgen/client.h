/* idgen/client.h: libidgen-client, IDs of `idgen serve` in the caller's process, from a
 * local buffer per generator name, refilled in the background (RESP, hiredis; plain or
 * TLS, see idgen_client_new_tls).
 *
 *   idgen_client *c;
 *   idgen_client_options o;
 *   idgen_client_options_init(&o);
 *   if (idgen_client_new(&c, "10.0.0.1:6380,10.0.0.2:6380", &o) < 0) ...
 *   uint64_t id;
 *   int rc = idgen_client_next(c, "orders", &id); // 0, or a negative IDGEN_E*
 *   idgen_client_free(c);
 *
 * Where the IDs come from. A segment generator's name is served by ranges (RANGE name
 * count); any other numeric one (snowflake) by arrays (IDS name count). The first
 * refill of a name asks for a range; a server that answers "no ranges" makes the name an
 * array name. A range is used by one atomic add per thread-local chunk; an array by one
 * atomic index. No system call on the hot path (a Snowflake name reads the clock, a vDSO
 * call, to apply max_age_ms).
 *
 * Guarantees. No ID is handed out twice by one client (nor by two clients, as the
 * servers guarantee it): an ID received is handed out at most once; buffered IDs that
 * go unused (max_age_ms passed, fork, _free, a thread's chunk left at its exit) are
 * burnt, never reissued. A reply that comes after its request timed out is discarded:
 * every request goes with an ECHO of a fresh tag, and the replies read before that
 * tag's ECHO are dropped unread. No call waits longer than max_wait_ms for a refill
 * (measured on the real monotonic clock; a loaded machine may add its own delays).
 *
 * Order. One thread's IDs of a name rise within one range or one array (IDS answers in
 * increasing order). Nothing more: IDs of different refills (different servers, or one
 * server's refills finishing out of order) interleave, and different threads' IDs
 * interleave. Do not sort by a segment number or a Snowflake ID across threads.
 *
 * Threads. idgen_client_next, idgen_client_next_n and idgen_client_stats are
 * thread-safe and lock-free while the buffer lasts. idgen_client_new and
 * idgen_client_free are not: no other call may run on the client during _free.
 *
 * Fork. A child process drops every buffer its parent held (none of the parent's IDs is
 * returned by the child) and starts its own refill threads at its first call.
 */
#ifndef IDGEN_CLIENT_H
#define IDGEN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/clock.h"
#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idgen_client idgen_client;

typedef struct idgen_client_options {
  const char *auth_token;   /* AUTH token, or NULL; copied */
  int64_t max_wait_ms;      /* longest a call waits on an empty buffer; default 50 */
  int64_t max_age_ms;       /* array (Snowflake) IDs older than this are burnt; default
                               1000; 0: no bound. Age counts from the request's sending */
  int64_t refill_period_ms; /* a refill should cover about this much demand; default 1000 */
  int64_t timeout_ms;       /* connect and per-request timeout; default 200 */
  int64_t backoff_ms;       /* first pause before a failed server's health check, doubled
                               to 8x; default 100 */
  uint64_t min_batch;       /* smallest refill; default 256 */
  uint64_t max_batch;       /* largest range refill; default 1048576 */
  uint64_t max_array; /* largest IDS refill (the server's --max-count); default 4096 */
  int low_water_pct;  /* refill when less than this % of a batch is buffered;
                         default 80 (Leaf's 20 % used) */
  idgen_clock *clock; /* ages of buffered IDs (a fake one in tests); NULL: monotonic.
                         Waits use the real monotonic clock whatever this is */
} idgen_client_options;

/* The defaults above. */
IDGEN_API void idgen_client_options_init(idgen_client_options *o);

/* TLS to the servers (`idgen serve --tls-cert/--tls-key`, see docs/server.md "TLS"):
 * TLS 1.2 at least, the server's certificate always verified, against ca_file's CAs
 * (NULL or "": the system's store), and its name against the host of the address (an
 * address against its IP SANs, a name against its DNS SANs, SNI carrying a name), or
 * against server_name if set. cert_file and key_file (PEM; both or neither) show a
 * client certificate to a server started with --tls-client-cert require. The strings
 * are read during idgen_client_new_tls and not kept.
 *
 * A struct that may grow: set it up with idgen_client_tls_init (inline, so that it
 * records the size this program was built with) and set the fields you need. */
typedef struct idgen_client_tls {
  size_t struct_size; /* sizeof of the caller's struct; idgen_client_tls_init sets it */
  const char *ca_file;
  const char *cert_file;
  const char *key_file;
  const char *server_name;
} idgen_client_tls;

static inline void idgen_client_tls_init(idgen_client_tls *t) {
  idgen_client_tls zero = {sizeof(idgen_client_tls), NULL, NULL, NULL, NULL};
  *t = zero;
}

/* Opens a client for servers "host:port[,host:port...]" (at most 16), tried in turn.
 * Connects lazily: a server down at start is no error. IDGEN_EINVAL for a bad address
 * or option (the reason in idgen_client_error_text's sense: see errbuf), IDGEN_ENOMEM.
 * errbuf (may be NULL) gets one line on failure. *out untouched on failure. */
IDGEN_API int idgen_client_new(idgen_client **out, const char *servers,
                               const idgen_client_options *o, char *errbuf, size_t errlen);
/* The same over TLS (tls NULL: plain, as idgen_client_new). A CA, certificate or key
 * file that cannot be read or used is IDGEN_EINVAL at once, errbuf naming the field and
 * the file ("tls.ca_file /x: No such file or directory"). A server that refuses the
 * handshake (a CA that does not sign its certificate, an expired one, a name that does
 * not match, no client certificate where it requires one, a plain port) is a server
 * down like any other: failed over, retried after the backoff, and the reason readable
 * with idgen_client_server_error. */
IDGEN_API int idgen_client_new_tls(idgen_client **out, const char *servers,
                                   const idgen_client_options *o,
                                   const idgen_client_tls *tls, char *errbuf,
                                   size_t errlen);

/* Why server i (0-based, in the order of servers) last failed: one line ("" if it has
 * not failed since it last answered, or i is out of range), e.g.
 * "127.0.0.1:6380: TLS handshake: certificate verify failed: ...". Thread-safe. */
IDGEN_API void idgen_client_server_error(idgen_client *c, size_t i, char *out,
                                         size_t outlen);

/* One ID of generator name (at most 64 bytes, [A-Za-z0-9_.-]). 0, or:
 *   IDGEN_EUNAVAIL  no ID within max_wait_ms (every server down or slow);
 *   IDGEN_EINVAL    a bad name, or the servers' answer for it is an error that is not
 *                   temporary (an unknown name, a text kind): sticky for that name,
 *                   see idgen_client_name_error;
 * Thread-safe. */
IDGEN_API int idgen_client_next(idgen_client *c, const char *name, uint64_t *id);
/* n IDs into ids[0..n): 0 with all n, or an error with none handed out (the ones taken
 * before the error are burnt). Thread-safe. */
IDGEN_API int idgen_client_next_n(idgen_client *c, const char *name, uint64_t *ids,
                                  size_t n);

/* The servers' last error for name (one line, "" if none) into out. Thread-safe. */
IDGEN_API void idgen_client_name_error(idgen_client *c, const char *name, char *out,
                                       size_t outlen);

typedef struct idgen_client_stats {
  uint64_t refills;        /* replies that filled a buffer */
  uint64_t refill_errors;  /* requests that failed (error, timeout, closed) */
  uint64_t late_discarded; /* requests timed out: their replies, if any, discarded */
  uint64_t burnt;          /* IDs dropped unused: aged, forked, cut short */
  uint64_t waits;          /* calls that found the buffer empty and waited */
  uint64_t unavailable;    /* calls that returned IDGEN_EUNAVAIL */
  uint64_t failovers;      /* servers marked down */
} idgen_client_stats;
IDGEN_API void idgen_client_stats_get(idgen_client *c, idgen_client_stats *out);

/* Stops and joins the refill threads, closes the connections, frees. NULL is fine. */
IDGEN_API void idgen_client_free(idgen_client *c);

#ifdef __cplusplus
}
#endif
#endif
