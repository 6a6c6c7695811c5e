/* netloop.h: the thin interface between the server and h2o. loop_h2o.c is the only file
 * that includes h2o; the rest of the server sees one event loop per thread that serves
 * HTTP through api.c and a byte-stream listener through resp.c. */
#ifndef IDGEN_SERVER_NETLOOP_H
#define IDGEN_SERVER_NETLOOP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/api.h"

typedef struct idgen__net idgen__net;

typedef struct idgen__net_config {
  idgen__tctx *tctx; /* this thread's context; outlives the loop */
  int http_fd;       /* listening socket for HTTP, or -1 */
  int resp_fd;       /* listening socket for RESP, or -1 */
  uint64_t
      header_timeout_ms; /* HTTP: time to send a complete request (and keep-alive idle) */
  uint64_t idle_timeout_ms; /* RESP: silence allowed */
  _Atomic uint64_t *conns;  /* open connections, shared by every thread */
  uint64_t max_conns;
} idgen__net_config;

/* Creates this thread's loop and starts listening on the given sockets (it takes them). */
int idgen__net_new(idgen__net **out, const idgen__net_config *cfg);
/* Runs the loop once, waiting at most max_wait_ms for an event. */
void idgen__net_run_once(idgen__net *net, int max_wait_ms);
/* Closes the listeners and every idle RESP connection; HTTP answers then close. */
void idgen__net_stop_accepting(idgen__net *net);
/* Connections this thread still has open. */
size_t idgen__net_open(const idgen__net *net);
/* Closes what is left and frees. NULL is fine. */
void idgen__net_free(idgen__net *net);

#endif
