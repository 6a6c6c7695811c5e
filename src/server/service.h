/* service.h: what the listeners serve, built from the configuration: the generator, the
 * worker-ID provider (the only place that knows which one), readiness, info, metrics.
 * Nothing here touches a socket. */
#ifndef IDGEN_SERVER_SERVICE_H
#define IDGEN_SERVER_SERVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "idgen.h"
#include "server/buf.h"
#include "server/config.h"
#include "server/metrics.h"

typedef struct idgen__svc idgen__svc;

/* Builds the generator and the provider from cfg (copied). nshards: metric shards, one
 * per thread that serves. On failure writes a one-line reason into err. */
int idgen__svc_new(idgen__svc **out, const idgen__serve_config *cfg, size_t nshards,
                   char *err, size_t errlen);
/* Writes the final HWM and releases the worker ID (through the provider), then frees.
 * NULL is fine. Call after every thread stopped serving. */
void idgen__svc_free(idgen__svc *svc);

const idgen__serve_config *idgen__svc_config(const idgen__svc *svc);
const idgen_layout *idgen__svc_layout(const idgen__svc *svc);
idgen__metrics *idgen__svc_shard(idgen__svc *svc, size_t i);

/* Open connections of one listener, every thread together (held under --max-conns). */
_Atomic uint64_t *idgen__svc_conns(idgen__svc *svc, idgen__listener listener);

/* A new RESP connection's number (CLIENT ID): 1, 2, 3, ... Thread-safe. */
uint64_t idgen__svc_client_id(idgen__svc *svc);

/* IDs: as idgen_gen_next / idgen_gen_next_batch. Thread-safe. */
int idgen__svc_next(idgen__svc *svc, uint64_t *id);
int64_t idgen__svc_next_batch(idgen__svc *svc, uint64_t *ids, size_t n);
/* One UUIDv7, UUIDv4 (36-char text) or ULID (26 chars) into out (NUL-terminated).
 * Returns the length or a negative error; IDGEN_EINVAL if this build has none. */
int idgen__svc_text_id(idgen__svc *svc, idgen__kind kind, char *out, size_t outlen);

/* The keeper's state (idgen_keeper_state_name for its name). Thread-safe. */
idgen_keeper_state idgen__svc_lease_state(idgen__svc *svc);
/* The keeper's last error, one line ("" if none). */
void idgen__svc_lease_error(idgen__svc *svc, char *out, size_t outlen);
/* Writes the worker ID held (-1: none). */
int64_t idgen__svc_worker(idgen__svc *svc);

/* 1 if the service should get traffic; else 0 and *reason says why. Thread-safe. */
int idgen__svc_ready(idgen__svc *svc, const char **reason);
/* Marks the service as stopping: /readyz turns 503, HTTP answers close connections. */
void idgen__svc_begin_shutdown(idgen__svc *svc);
int idgen__svc_stopping(const idgen__svc *svc);

/* The default generator's opaque permutation (tweak "default"), NULL without
 * --opaque-key-file. Thread-safe to use (idgen/opaque.h). */
const idgen_opaque *idgen__svc_opaque(const idgen__svc *svc);

/* The token required from clients ("" when none) and a constant-time check. */
int idgen__svc_auth_required(const idgen__svc *svc);
int idgen__svc_auth_ok(const idgen__svc *svc, const char *token, size_t len);

/* GET /v1/info's JSON object; RESP INFO's "key:value\r\n" text. */
void idgen__svc_info_json(idgen__svc *svc, idgen__buf *out);
void idgen__svc_info_text(idgen__svc *svc, idgen__buf *out);
/* The whole /metrics page. */
void idgen__svc_metrics(idgen__svc *svc, idgen__buf *out);

/* How an issuing error should reach a client: a short code ("lease_lost", ...) and
 * whether it is temporary (503 + Retry-After) or a server fault (500). */
const char *idgen__svc_error_code(int err, int *temporary);

#endif
