/* reload.h: SIGHUP's reload of `idgen serve --config`. The file is read and checked
 * again by the code that read it at start (idgen__serve_config_load, then _check), with
 * the command line and the IDGEN_* variables as they were; then every generator's
 * settings are compared with those in force:
 *
 * - live: a segment or snowflake generator's `format` (one it had at start: adding or
 *   removing a text form changes what clients get by default). The new compiled
 *   format is published with an atomic pointer (release; readers acquire) and the old
 *   one freed only once every serving thread has passed a quiescent point
 *   (server/grace.h).
 * - everything else (a generator added or removed, its kind, layout, policy, worker
 *   IDs and the lease's options, backend, DSN, step, period, digits, timezone, the
 *   opaque key file, ...) is refused: one warn line each, naming the generator and the
 *   setting and saying it needs a restart.
 *
 * All or nothing: one refused difference, or a live change that cannot be made, holds
 * back the whole reload (nothing of it applies, the settings in force stay, and a next
 * SIGHUP compares with them again). A file that fails to read or check keeps everything
 * too, with one warn line saying why. Each reload that read the file ends with one line,
 * "N changed, M refused: applied" (or "nothing applied"). No held worker ID, lease,
 * backend connection or client connection is touched. */
#ifndef IDGEN_SERVER_RELOAD_H
#define IDGEN_SERVER_RELOAD_H

#include <stddef.h>

#include "server/config.h"
#include "server/grace.h"
#include "server/service.h"

typedef struct idgen__reload idgen__reload;

/* What one reload did. */
typedef enum idgen__reload_status {
  IDGEN__RELOAD_APPLIED, /* every live change in force (maybe none) */
  IDGEN__RELOAD_REFUSED, /* a change needs a restart: nothing applied */
  IDGEN__RELOAD_FAILED   /* the file did not read or check, or out of memory */
} idgen__reload_status;

/* For svc built from cfg (its generators' settings are copied; cfg->argc and argv are
 * kept), served by nthreads threads, each of which marks the grace (idgen__reload_grace)
 * as server/grace.h says. 0 or IDGEN_ENOMEM. */
int idgen__reload_new(idgen__reload **out, const idgen__serve_config *cfg, idgen__svc *svc,
                      size_t nthreads);
/* Frees the retired objects and the whole; call after the serving threads ended.
 * NULL is fine. */
void idgen__reload_free(idgen__reload *r);
idgen__grace *idgen__reload_grace(idgen__reload *r);

/* One reload (SIGHUP), main thread. The configuration read again goes to *fresh (freed
 * by the caller with idgen__serve_config_free; empty when it failed to read), for what
 * else reloads from it (the tokens). */
idgen__reload_status idgen__reload_run(idgen__reload *r, idgen__serve_config *fresh);
/* The main thread's periodic call: frees the retired objects no thread can hold. */
void idgen__reload_tick(idgen__reload *r);

#endif
