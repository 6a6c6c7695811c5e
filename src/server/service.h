/* service.h: what the listeners serve, built from the configuration: the generators by
 * name (server/generator.h), issuing, readiness, info, metrics. Nothing here touches a
 * socket or knows a protocol. */
#ifndef IDGEN_SERVER_SERVICE_H
#define IDGEN_SERVER_SERVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "idgen.h"
#include "server/buf.h"
#include "server/callers.h"
#include "server/config.h"
#include "server/generator.h"
#include "server/metrics.h"
#include "server/quota.h"

typedef struct idgen__svc idgen__svc;

/* Builds every generator of cfg (copied; cfg->gens is read, not kept). nshards: metric
 * shards, one per thread that serves. On failure writes a one-line reason into err. */
int idgen__svc_new(idgen__svc **out, const idgen__serve_config *cfg, size_t nshards,
                   char *err, size_t errlen);
/* Closes every generator (snowflake: final HWM, worker ID released; segment: the
 * fetcher stopped), then frees. NULL is fine. Call after every thread stopped serving. */
void idgen__svc_free(idgen__svc *svc);

const idgen__serve_config *idgen__svc_config(const idgen__svc *svc);
idgen__metrics *idgen__svc_shard(idgen__svc *svc, size_t i);
/* The callers' names, one table per shard (server/callers.h). */
idgen__callers *idgen__svc_callers(idgen__svc *svc);

/* Open connections of one listener, every thread together (held under --max-conns). */
_Atomic uint64_t *idgen__svc_conns(idgen__svc *svc, idgen__listener listener);

/* A new RESP connection's number (CLIENT ID): 1, 2, 3, ... Thread-safe. */
uint64_t idgen__svc_client_id(idgen__svc *svc);

/* The generator named name[0..len), or NULL; the default one for the default name. */
idgen__generator *idgen__svc_generator(idgen__svc *svc, const char *name, size_t len);
idgen__generator *idgen__svc_default(idgen__svc *svc);
/* Every generator, the default first. */
idgen__generator *const *idgen__svc_generators(idgen__svc *svc, size_t *n);

/* The default generator's layout; NULL if it is not a snowflake one. */
const idgen_layout *idgen__svc_layout(const idgen__svc *svc);
/* The generator behind the built-in /v1/uuid7, /v1/uuid4, /v1/ulid (kind KIND_UUID7,
 * KIND_UUID4 or KIND_ULID; NULL for another kind). */
idgen__generator *idgen__svc_builtin(idgen__svc *svc, idgen__kind kind);

/* 1 if the service should get traffic: not stopping and its default generator ready;
 * else 0 with the reason (one line). Named generators do not count (see
 * docs/generators.md: /readyz?name=N asks for one). Thread-safe. */
int idgen__svc_ready(idgen__svc *svc, char *reason, size_t reasonlen);
/* Marks the service as stopping: /readyz turns 503, HTTP answers close connections. */
void idgen__svc_begin_shutdown(idgen__svc *svc);
int idgen__svc_stopping(const idgen__svc *svc);
/* The main thread's periodic look at the generators: logs their changes of state; frees
 * the replaced token sets no thread holds any more. */
void idgen__svc_watch(idgen__svc *svc);

/* 1 if clients must present a token (--auth-token-file, the config file's tokens:, as
 * the last reload left them). */
int idgen__svc_auth_required(const idgen__svc *svc);

/* A serving thread's hold on the token set in force: a hazard pointer, published in
 * the service's slot `slot` (one per thread: idgen__svc_new's nshards). A replaced set is
 * freed once no slot holds it, so at most threads + 1 sets are alive however many
 * reloads come. idgen__svc_auth and idgen__svc_grant_renew move the hold to the set in
 * force (one load and compare when it has not changed). */
typedef struct idgen__token_hold {
  size_t slot;
  const struct idgen__token_set *set;
  uint64_t serial; /* set's (tokens.h), read once when the hold moves */
} idgen__token_hold;
/* The thread is done with tokens (it stops serving): its slot holds nothing. */
void idgen__svc_tokens_unhold(idgen__svc *svc, idgen__token_hold *h);

/* What a client's token lets it do: a token of one set (server/tokens.h). With no
 * token required, set is NULL and everything is allowed. A grant kept across requests
 * (RESP) may outlive its set: renewing it reads only serial and ident, never set. */
typedef struct idgen__grant {
  const struct idgen__token_set *set;
  long index;
  uint64_t serial, ident;    /* the set's number and the token's identity (tokens.h) */
  const idgen__quota *quota; /* NULL: no quota */
  _Atomic uint64_t *bucket;
  size_t slot; /* its name's slot: the per-token metrics */
} idgen__grant;
#define IDGEN__GRANT_ALL ((idgen__grant){NULL, -1, 0, 0, NULL, NULL, 0})
/* Finds the token tok[0..len) in the set in force (h moved to it), in constant time
 * (tokens.h): 1 and *g, or 0 (g untouched). Without a token required: 1, everything.
 * Thread-safe, h the calling thread's. */
int idgen__svc_auth(idgen__svc *svc, idgen__token_hold *h, const char *tok, size_t len,
                    idgen__grant *g);
/* The team a verified client certificate stands for (tokens.h's
 * idgen__token_set_find_cert) in the set in force (h moved to it): 1 and *g, or 0 (g
 * untouched: no team, or two). Without a token required: 1, everything. names NULL:
 * no certificate, 0 when a token is required. Thread-safe, h the calling thread's. */
struct idgen__cert_names;
int idgen__svc_auth_cert(idgen__svc *svc, idgen__token_hold *h,
                         const struct idgen__cert_names *names, idgen__grant *g);
/* A grant kept across requests (a RESP connection's): 1 if its token is still in force,
 * *g moved to the set in force (h moved to it); 0 if a reload removed or changed it.
 * Thread-safe, h the calling thread's. */
int idgen__svc_grant_renew(idgen__svc *svc, idgen__token_hold *h, idgen__grant *g);
/* 1 if g may use generator gen (issue from it); 1 if it may decode opaque IDs. */
int idgen__svc_grant_covers(const idgen__grant *g, const idgen__generator *gen);
int idgen__svc_grant_decode(const idgen__grant *g);
/* The token's name ("" without a token), never its value: for messages. */
const char *idgen__svc_grant_name(const idgen__grant *g);
/* Charges n IDs to g's quota before they are issued (server/quota.h): IDGEN__QUOTA_OK,
 * or a refusal counted in m's per-token quota hits, with *retry_after_s for
 * IDGEN__QUOTA_OVER. A token without quota: one test, nothing else. Thread-safe. */
idgen__quota_verdict idgen__svc_charge_quota(const idgen__grant *g, uint64_t n,
                                             idgen__metrics *m, uint64_t *retry_after_s);
static inline idgen__quota_verdict idgen__svc_charge(const idgen__grant *g, uint64_t n,
                                                     idgen__metrics *m,
                                                     uint64_t *retry_after_s) {
  if (!g->quota)
    return IDGEN__QUOTA_OK;
  return idgen__svc_charge_quota(g, n, m, retry_after_s);
}
/* Adds to g's per-token counter (nothing without a token). */
static inline void idgen__svc_grant_count(idgen__metrics *m, const idgen__grant *g,
                                          idgen__token_stat stat, uint64_t n) {
  if (g->set)
    atomic_fetch_add_explicit(&m->token[g->slot][stat], n, memory_order_relaxed);
}
/* Builds a new token set and puts it in force for the next request: cfg NULL reads the
 * files of the set in force again (SIGHUP); else from cfg (its --auth-token-file and
 * tokens: section: tokens added and removed, generators, decode, rate and burst). A
 * token of the same name keeps its bucket (rescaled to a new rate or burst). On failure
 * the set in force stays. Logs one line either way. Main thread only. */
void idgen__svc_tokens_reload(idgen__svc *svc, const idgen__serve_config *cfg);
/* Token sets alive: the one in force and replaced ones a thread still holds. */
uint64_t idgen__svc_token_sets_alive(const idgen__svc *svc);

/* GET /v1/info's JSON object; RESP INFO's "key:value\r\n" text. */
void idgen__svc_info_json(idgen__svc *svc, idgen__buf *out);
void idgen__svc_info_text(idgen__svc *svc, idgen__buf *out);
/* GET /readyz's per-generator object: {"NAME":{"ready":true|false[,"reason":".."]},..}. */
void idgen__svc_ready_json(idgen__svc *svc, idgen__buf *out);
/* The whole /metrics page. */
void idgen__svc_metrics(idgen__svc *svc, idgen__buf *out);

/* Room for what one request issues: max_count numeric IDs, or as many text IDs (UUIDs,
 * ULIDs), each in a slot of IDGEN__TEXT_ID_SLOT bytes (its length, then its text). One per
 * serving thread; grown once, never per request. */
#define IDGEN__TEXT_ID_SLOT 64
typedef struct idgen__issued {
  uint64_t *ids; /* numeric kinds: n IDs, ready for idgen_id_format(id, form.format) */
  char *text;    /* text kinds: n slots */
  size_t cap;    /* max_count */
  size_t n;
  int is_text; /* the generator's IDs are text (it has no next_batch) */
} idgen__issued;

int idgen__issued_init(idgen__issued *r, size_t cap);
void idgen__issued_free(idgen__issued *r);
/* Text ID i of the last issue, and its length. */
static inline const char *idgen__issued_text(const idgen__issued *r, size_t i,
                                             size_t *len) {
  const char *slot = r->text + i * IDGEN__TEXT_ID_SLOT;
  *len = (unsigned char)slot[0];
  return slot + 1;
}

/* The one way to issue, for every protocol: n (1..r->cap) IDs of g in form (checked by
 * idgen__generator_form_ok; text kinds take the decimal default), all of them into r, or
 * a negative error and none. A batch the generator cuts short is refused with the error
 * that stopped it (IDGEN_EEXHAUSTED if it gives none): its IDs are burnt, never repeated
 * nor handed out as a short list. Issued IDs are counted in m, burnt ones included; a
 * text ID that fails leaves the earlier ones of the request uncounted (each text ID is
 * its own call). Opaque forms are applied here, so the protocols only write text. */
int idgen__svc_issue(idgen__generator *g, size_t n, idgen__id_form form, idgen__metrics *m,
                     idgen__issued *r);

/* A range of a segment generator: first, first + stride, ... up to last (count
 * numbers; stride 1 but for a backend that interleaves, MariaDB's). */
typedef struct idgen__range {
  uint64_t first, last, count, stride;
} idgen__range;

/* The maximum count of one RANGE: a range never crosses a block, so a block's size. */
#define IDGEN__RANGE_MAX_COUNT (UINT64_C(1) << 30)

/* RANGE: up to n (1..IDGEN__RANGE_MAX_COUNT) numbers of g taken from its blocks as
 * idgen__svc_issue takes IDS's, so none is handed out again, counted in m. The range
 * is shorter than n when the current block has fewer left. IDGEN_EINVAL for a kind
 * without contiguous numbers (idgen__svc_range_refusal says so to the client). */
int idgen__svc_range(idgen__generator *g, uint64_t n, idgen__metrics *m, idgen__range *r);

/* NULL if g hands out ranges, else why not (one line, for the client): a snowflake
 * generator's IDs are not contiguous, clients use IDS. */
const char *idgen__svc_range_refusal(const idgen__generator *g);

/* How an issuing error should reach a client: a short code ("lease_lost",
 * "backend_unavailable", ...) and whether it is temporary (503 + Retry-After) or a
 * server fault (500). */
const char *idgen__svc_error_code(int err, int *temporary);

#endif
