/* etcd_http.h: the HTTP side of etcd's v3 JSON gateway, shared by the lease provider
 * and the segment backend: POST a body to one of several endpoints, failing over. */
#ifndef IDGEN_ETCD_HTTP_H
#define IDGEN_ETCD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "idgen/lease.h"

typedef struct idgen__etcd_http {
  CURL *curl;
  char eps[IDGEN_LEASE_ENDPOINTS_MAX][IDGEN_LEASE_PATH_MAX];
  int neps, cur; /* cur: the endpoint that answered last, tried first */
  int64_t timeout_ms;
  /* the last reply: body (NUL-terminated, owned), its length and HTTP status */
  char *body;
  size_t len, cap;
  long status;
  char why[IDGEN_LEASE_WHY_MAX]; /* the last transport failure, one line */
  /* Called with the duration of every request, answered or not (may be NULL). */
  void (*observe)(void *ctx, int64_t ns);
  void *observe_ctx;
} idgen__etcd_http;

/* Sets up a client for the endpoints (copied); no request is sent. IDGEN_ENOMEM. */
int idgen__etcd_http_init(idgen__etcd_http *h, const char eps[][IDGEN_LEASE_PATH_MAX],
                          int neps, int64_t timeout_ms);
void idgen__etcd_http_free(idgen__etcd_http *h);

/* POSTs body (JSON; NULL counts as out of memory) to path on the endpoint that answered
 * last, failing over to the others on transport errors and on 5xx replies (a member
 * without quorum). 0 with body, len and status set; IDGEN_EUNAVAIL with why set;
 * IDGEN_ENOMEM. One thread at a time. */
int idgen__etcd_http_post(idgen__etcd_http *h, const char *path, const char *body);

/* The endpoint tried first ("http://127.0.0.1:2379"). */
const char *idgen__etcd_http_endpoint(const idgen__etcd_http *h);

#endif
