/* http1.h: the HTTP/1.x side of the server, sans I/O: request heads parsed by the
 * picohttpparser that libh2o carries, held to --max-request-line and --max-header-bytes
 * while their bytes arrive (so a connection never buffers more than the limits the user
 * set), routed by api.c, and the responses written out. Fuzzed by fuzz/fuzz_http.c. */
#ifndef IDGEN_SERVER_HTTP1_H
#define IDGEN_SERVER_HTTP1_H

#include <stddef.h>
#include <stdint.h>

#include "server/api.h"
#include "server/buf.h"
#include "server/config.h"

#define IDGEN_HTTP1_MAX_BODY 1024       /* no route takes a body; a small one is dropped */
#define IDGEN_HTTP1_MAX_HEADERS 100     /* header lines */
#define IDGEN_HTTP1_OUT_HIGH 16384      /* stop answering once this much waits to be sent */
#define IDGEN_HTTP1_MAX_AUTH_FAILURES 3 /* wrong tokens before the connection is closed */

typedef struct idgen__http1_session {
  idgen__tctx *t;
  size_t max_line, max_headers; /* --max-request-line, --max-header-bytes */
  size_t scanned;               /* bytes of the current head already searched for its end */
  size_t body_wait; /* a head is whole: its bytes and its body's, not all here yet */
  unsigned auth_failures;
  const struct idgen__cert_names *cert; /* the client certificate verified, or NULL */
  int health;                           /* --health-listen's: the health routes alone */
  int64_t date_s; /* the second `date` shows */
  char date[32];
  /* The last request's User-Agent (its first IDGEN_CALLER_NAME_MAX bytes, all a name
   * keeps) and its name as counted (server/callers.h); named: a request came. */
  int named;
  size_t ua_len;
  char ua[IDGEN_CALLER_NAME_MAX];
  idgen__caller_name caller;
  idgen__caller_ref caller_ref;
} idgen__http1_session;

void idgen__http1_session_init(idgen__http1_session *s, idgen__tctx *t);

/* Sets req's path and query from an origin-form request target ("/path?query"). */
void idgen__http1_target(idgen__http_req *req, const char *target, size_t len);

/* The most bytes one request can take before it is answered or refused: what a
 * connection must be able to buffer. */
size_t idgen__http1_max_input(const idgen__serve_config *cfg);

/* Answers every complete request in in[0..len), in order, appending responses to out;
 * counts each one under its User-Agent ("-" without one, and for a request refused by
 * its framing) in this thread's callers' table;
 * stops early once out holds IDGEN_HTTP1_OUT_HIGH bytes. Returns the bytes consumed; the
 * next call passes what was not consumed first, with any new bytes after it. A request
 * line or header section past its limit is refused (414, 431) as soon as the bytes show
 * it, complete or not. Sets *close when the connection should be closed once out is sent
 * (Connection: close, HTTP/1.0 without keep-alive, a refused request,
 * IDGEN_HTTP1_MAX_AUTH_FAILURES wrong tokens, shutting down). */
size_t idgen__http1_feed(idgen__http1_session *s, const char *in, size_t len,
                         idgen__buf *out, int *close);

#endif
