/* netloop.h: the thin interface between the server and h2o. loop_h2o.c is the only file
 * that includes h2o; the rest of the server sees one event loop per thread whose
 * listeners hand bytes to http1.c and resp.c, each listener with its own --max-conns. */
#ifndef IDGEN_SERVER_NETLOOP_H
#define IDGEN_SERVER_NETLOOP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/api.h"
#include "server/tls.h"

typedef struct idgen__net idgen__net;

typedef struct idgen__net_config {
  idgen__tctx *tctx; /* this thread's context, and through it the service and its
                        configuration; outlives the loop */
  int http_fd;       /* listening socket for HTTP, or -1 */
  int resp_fd;       /* listening socket for RESP, or -1 */
  int health_fd;     /* --health-listen's (plain text always), or -1 */
  idgen__tls *tls;   /* both listeners' TLS (server/tls.h), or NULL: plain text */
} idgen__net_config;

/* The info callback idgen__tls_new sets on its contexts: at a handshake's end it tells
 * the connection which SSL is its own (h2o keeps it private), so that the client
 * certificate can be read (idgen__tls_peer_names). Any serving thread. */
void idgen__net_tls_info(const SSL *ssl, int where, int ret);

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
