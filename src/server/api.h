/* api.h: the HTTP routes as a function of a parsed request: no sockets, no h2o, so the
 * fuzzer and the tests can call it directly. */
#ifndef IDGEN_SERVER_API_H
#define IDGEN_SERVER_API_H

#include <stddef.h>
#include <stdint.h>

#include "server/buf.h"
#include "server/metrics.h"
#include "server/service.h"

/* What one serving thread owns: its metric shard, scratch space and token hold. One per
 * thread: shard is also its token hazard slot. */
typedef struct idgen__tctx {
  idgen__svc *svc;
  idgen__metrics *m;
  idgen__callers_table *callers; /* this thread's callers' names (server/callers.h) */
  idgen__buf out;                /* the response body being built */
  idgen__issued issued;          /* room for max_count IDs (idgen__svc_issue) */
  idgen__token_hold hold;        /* the token set this thread reads (service.h) */
} idgen__tctx;

int idgen__tctx_init(idgen__tctx *t, idgen__svc *svc, size_t shard);
void idgen__tctx_free(idgen__tctx *t);

typedef struct idgen__http_req {
  const char *method;
  size_t method_len;
  const char *path; /* up to '?' */
  size_t path_len;
  const char *query; /* after '?'; NULL when there is none */
  size_t query_len;
  const char *authorization; /* the Authorization header's value, or NULL */
  size_t authorization_len;
  /* The connection's verified client certificate (a team's, maybe: tokens.h), or NULL. */
  const struct idgen__cert_names *cert;
  int health; /* on --health-listen: only /healthz and /readyz are routed */
} idgen__http_req;

typedef struct idgen__http_res {
  int status;
  const char *reason;
  const char *content_type;
  int retry_after_s;    /* > 0: send Retry-After */
  int allow;            /* 405: send "Allow: GET, HEAD" */
  int www_authenticate; /* 401: send "WWW-Authenticate: Bearer" */
  int auth_failed;      /* 401 for a wrong token (not a missing one) */
  int close;            /* close the connection after this response */
  const char *body;     /* the body: t->out's bytes, valid until the next request */
  size_t body_len;
} idgen__http_res;

/* Handles one request: fills res, its body built in t->out. Never fails: errors are
 * responses ({"error":{"code":"…","message":"…"}}). */
void idgen__api_http(idgen__tctx *t, const idgen__http_req *req, idgen__http_res *res);

/* Answers a request the HTTP framing refused before it could be routed: 400 (not
 * HTTP/1.x), 413 (a body), 414 (--max-request-line), 431 (--max-header-bytes). The same
 * JSON errors, counted like any answer; res->close is set. */
void idgen__api_refuse(idgen__tctx *t, int status, idgen__http_res *res);

#endif
