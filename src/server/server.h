/* server.h: runs `idgen serve`: listeners, one event loop per thread, signals. */
#ifndef IDGEN_SERVER_SERVER_H
#define IDGEN_SERVER_SERVER_H

#include "server/config.h"

/* Runs until SIGTERM/SIGINT, then stops gracefully; cfg has passed
 * idgen__serve_config_check. Returns 0 after a clean stop, 1 if it could not start (the
 * reason is logged). */
int idgen__serve_run(idgen__serve_config *cfg);

#endif
