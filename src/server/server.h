/* server.h: runs `idgen serve`: listeners, one event loop per thread, signals. */
#ifndef IDGEN_SERVER_SERVER_H
#define IDGEN_SERVER_SERVER_H

#include <sys/socket.h>

#include "server/config.h"
#include "server/tls.h"

/* Runs until SIGTERM/SIGINT, then stops gracefully; cfg has passed
 * idgen__serve_config_check, and tls (taken, NULL: plain text) was made from it. Returns
 * 0 after a clean stop, 1 if it could not start (the reason is logged). */
int idgen__serve_run(idgen__serve_config *cfg, idgen__tls *tls);

/* 1 if the address is this machine's own (127.0.0.0/8, ::1, ::ffff:127.x.y.z): a
 * listener elsewhere without a token is warned about at start. */
int idgen__sockaddr_is_loopback(const struct sockaddr *sa);

#endif
