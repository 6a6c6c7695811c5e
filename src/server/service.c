/* service.c: the generators by name, built from the configuration, and what the
 * listeners ask of them together: readiness, info, metrics, and issuing (one path that
 * HTTP and RESP only format). */
#include "server/service.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen/random.h"
#include "common/id_form.h"
#include "server/log.h"
#include "server/tokens.h"

#ifndef IDGEN_VERSION
#define IDGEN_VERSION "unknown"
#endif

struct idgen__svc {
  idgen__serve_config cfg; /* without gens: the generators keep what they need */
  idgen_clock_mono mono;
  idgen_clock_wall wall;
  idgen_random *random;
  idgen__gen_env env;
  idgen__generator **gens; /* the default first */
  size_t ngens;
  idgen__generator *builtin[KIND_COUNT]; /* /v1/uuid7, /v1/uuid4, /v1/ulid */
  int64_t started_ms;
  _Atomic int stopping;
  _Atomic uint64_t conns[LISTENER_COUNT];
  _Atomic uint64_t clients; /* RESP connections so far: CLIENT ID */
  size_t nshards;
  idgen__metrics *shards;
  idgen__callers *callers; /* one Space-Saving table per shard's thread */
  /* The tokens in force; a reload swaps in a new set that keeps the old ones alive
   * (chained), as a connection's grant may point into them. NULL: no token. */
  _Atomic(idgen__token_set *) tokens;
};

static void close_all(idgen__svc *svc) {
  /* The named ones first, the default last, in the reverse of the order they opened. */
  for (size_t i = svc->ngens; i-- > 0;)
    idgen__generator_close(svc->gens[i]);
  for (size_t k = 0; k < KIND_COUNT; k++)
    idgen__generator_close(svc->builtin[k]);
  idgen_random_system_free(svc->random);
  idgen__token_set_free(atomic_load(&svc->tokens));
  free(svc->gens);
  free(svc->shards);
  idgen__callers_free(svc->callers);
  free(svc);
}

int idgen__svc_new(idgen__svc **out, const idgen__serve_config *cfg, size_t nshards,
                   char *err, size_t errlen) {
  idgen__svc *svc = calloc(1, sizeof *svc);
  if (!svc) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  svc->cfg = *cfg;
  svc->cfg.gens = NULL;
  svc->cfg.ngens = 0;
  svc->cfg.tokens = NULL; /* the token set holds its own copy; ntokens still counts */
  svc->started_ms = idgen_wall_ns() / 1000000;
  svc->nshards = nshards ? nshards : 1;
  svc->shards = calloc(svc->nshards, sizeof *svc->shards);
  svc->gens = calloc(cfg->ngens ? cfg->ngens : 1, sizeof *svc->gens);
  int rc = IDGEN_ENOMEM;
  if (!svc->shards || !svc->gens || idgen__callers_new(&svc->callers, svc->nshards) < 0) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (cfg->ngens == 0 || strcmp(cfg->gens[0].name, IDGEN__DEFAULT_GENERATOR)) {
    snprintf(err, errlen, "no default generator (a bug: load the configuration first)");
    rc = IDGEN_EINVAL;
    goto fail;
  }
  svc->env.wall_clock = idgen__serve_wall_clock(cfg);
  if (svc->env.wall_clock) {
    idgen_clock_wall_init(&svc->wall);
    svc->env.clock = &svc->wall.base;
  } else {
    idgen_clock_mono_init(&svc->mono);
    svc->env.clock = &svc->mono.base;
  }
  rc = idgen_random_system_new(&svc->random);
  if (rc < 0) {
    snprintf(err, errlen, "random source: %s", idgen_strerror(rc));
    goto fail;
  }
  svc->env.random = svc->random;
  idgen__token_set *tokens = NULL;
  if (idgen__token_set_load(cfg, &tokens, err, errlen) < 0) {
    rc = IDGEN_EINVAL;
    goto fail;
  }
  atomic_store(&svc->tokens, tokens);
  for (unsigned k = KIND_UUID7; k <= KIND_ULID; k++) {
    idgen__gen_spec spec = {.kind = (idgen__kind)k};
    snprintf(spec.name, sizeof spec.name, "%s", idgen__kind_name((idgen__kind)k));
    if ((rc = idgen__generator_open(&svc->builtin[k], &spec, &svc->env, err, errlen)) < 0)
      goto fail;
  }
  for (size_t i = 0; i < cfg->ngens; i++) {
    if ((rc = idgen__generator_open(&svc->gens[i], &cfg->gens[i], &svc->env, err, errlen)) <
        0)
      goto fail;
    svc->ngens++;
  }
  *out = svc;
  return 0;
fail:
  close_all(svc);
  return rc;
}

void idgen__svc_free(idgen__svc *svc) {
  if (svc)
    close_all(svc);
}

const idgen__serve_config *idgen__svc_config(const idgen__svc *svc) {
  return &svc->cfg;
}
idgen__metrics *idgen__svc_shard(idgen__svc *svc, size_t i) {
  return &svc->shards[i < svc->nshards ? i : svc->nshards - 1];
}
idgen__callers *idgen__svc_callers(idgen__svc *svc) {
  return svc->callers;
}

_Atomic uint64_t *idgen__svc_conns(idgen__svc *svc, idgen__listener listener) {
  return &svc->conns[listener];
}

idgen__generator *idgen__svc_generator(idgen__svc *svc, const char *name, size_t len) {
  for (size_t i = 0; i < svc->ngens; i++)
    if (strlen(svc->gens[i]->name) == len && !memcmp(svc->gens[i]->name, name, len))
      return svc->gens[i];
  return NULL;
}

idgen__generator *idgen__svc_default(idgen__svc *svc) {
  return svc->gens[0];
}

idgen__generator *const *idgen__svc_generators(idgen__svc *svc, size_t *n) {
  *n = svc->ngens;
  return svc->gens;
}

uint64_t idgen__svc_client_id(idgen__svc *svc) {
  return atomic_fetch_add_explicit(&svc->clients, 1, memory_order_relaxed) + 1;
}

const idgen_layout *idgen__svc_layout(const idgen__svc *svc) {
  return svc->gens[0]->layout;
}

idgen__generator *idgen__svc_builtin(idgen__svc *svc, idgen__kind kind) {
  return kind >= KIND_UUID7 && kind <= KIND_ULID ? svc->builtin[kind] : NULL;
}

int idgen__svc_ready(idgen__svc *svc, char *reason, size_t reasonlen) {
  if (atomic_load(&svc->stopping)) {
    snprintf(reason, reasonlen, "shutting down");
    return 0;
  }
  idgen__generator *g = svc->gens[0];
  return g->vtable->ready(g, reason, reasonlen);
}

void idgen__svc_begin_shutdown(idgen__svc *svc) {
  atomic_store(&svc->stopping, 1);
}
int idgen__svc_stopping(const idgen__svc *svc) {
  return atomic_load(&svc->stopping);
}

void idgen__svc_watch(idgen__svc *svc) {
  for (size_t i = 0; i < svc->ngens; i++)
    if (svc->gens[i]->vtable->watch)
      svc->gens[i]->vtable->watch(svc->gens[i]);
}

int idgen__svc_auth_required(const idgen__svc *svc) {
  return idgen__serve_config_auth(&svc->cfg);
}

int idgen__svc_auth(idgen__svc *svc, const char *tok, size_t len, idgen__grant *g) {
  const idgen__token_set *set = atomic_load_explicit(&svc->tokens, memory_order_acquire);
  if (!set) {
    *g = (idgen__grant){NULL, -1};
    return 1;
  }
  long i = idgen__token_set_find(set, tok, len);
  if (i < 0)
    return 0;
  *g = (idgen__grant){set, i};
  return 1;
}

int idgen__svc_grant_renew(idgen__svc *svc, idgen__grant *g) {
  const idgen__token_set *set = atomic_load_explicit(&svc->tokens, memory_order_acquire);
  if (g->set == set)
    return 1;
  if (!g->set || g->index < 0)
    return 0;
  long i = idgen__token_set_same(set, g->set, (size_t)g->index);
  if (i < 0)
    return 0;
  *g = (idgen__grant){set, i};
  return 1;
}

int idgen__svc_grant_covers(const idgen__grant *g, const idgen__generator *gen) {
  return !g->set || idgen__token_covers(idgen__token_set_spec(g->set, (size_t)g->index),
                                        gen->name);
}

int idgen__svc_grant_decode(const idgen__grant *g) {
  return !g->set || idgen__token_set_spec(g->set, (size_t)g->index)->decode;
}

const char *idgen__svc_grant_name(const idgen__grant *g) {
  return g->set ? idgen__token_set_spec(g->set, (size_t)g->index)->name : "";
}

void idgen__svc_tokens_reload(idgen__svc *svc) {
  idgen__token_set *old = atomic_load(&svc->tokens), *fresh = NULL;
  if (!old)
    return; /* no token: nothing to read */
  char why[IDGEN_CFG_PATH * 2 + 200];
  if (idgen__token_set_reload(old, &fresh, why, sizeof why) < 0) {
    idgen__log("warn", "tokens_reload", "kept the tokens in force: %s", why);
    return;
  }
  idgen__token_set_chain(fresh, old);
  atomic_store_explicit(&svc->tokens, fresh, memory_order_release);
  idgen__log("info", "tokens_reload", "%zu token(s) read again on SIGHUP",
             idgen__token_set_count(fresh));
}

/* The top level holds the default generator's fields (as before there were named
 * ones), the service's, and every generator under "generators". */
void idgen__svc_info_json(idgen__svc *svc, idgen__buf *out) {
  idgen__generator *def = svc->gens[0];
  char reason[256] = "";
  int ready = idgen__svc_ready(svc, reason, sizeof reason);
  idgen__buf_addf(out, "{\"version\":\"" IDGEN_VERSION "\",\"kind\":\"%s\"",
                  idgen__kind_name(idgen__generator_kind(def)));
  def->vtable->info_json(def, out);
  idgen__buf_addf(out, ",\"now_ms\":%" PRId64 ",\"ready\":%s", idgen_wall_ns() / 1000000,
                  ready ? "true" : "false");
  if (!ready) {
    idgen__buf_adds(out, ",\"not_ready_reason\":");
    idgen__buf_add_json_str(out, reason, strlen(reason));
  }
  idgen__buf_addf(out, ",\"max_count\":%" PRIu64 ",\"started\":", svc->cfg.max_count);
  idgen__gen_add_time(out, svc->started_ms);
  idgen__buf_adds(out, ",\"generators\":{");
  for (size_t i = 0; i < svc->ngens; i++) {
    idgen__buf_adds(out, i ? ",\"" : "\"");
    idgen__buf_adds(out, svc->gens[i]->name);
    idgen__buf_adds(out, "\":{");
    idgen__generator_info_json(svc->gens[i], out);
    idgen__buf_addc(out, '}');
  }
  idgen__buf_adds(out, "}}");
}

void idgen__svc_info_text(idgen__svc *svc, idgen__buf *out) {
  idgen__generator *def = svc->gens[0];
  char reason[256] = "";
  int ready = idgen__svc_ready(svc, reason, sizeof reason);
  idgen__buf_addf(out,
                  "# Server\r\nidgen_version:" IDGEN_VERSION
                  "\r\nuptime_in_seconds:%" PRId64 "\r\n# Generator\r\nkind:%s\r\n",
                  (idgen_wall_ns() / 1000000 - svc->started_ms) / 1000,
                  idgen__kind_name(idgen__generator_kind(def)));
  def->vtable->info_text(def, out);
  idgen__buf_addf(out, "ready:%d\r\n", ready);
  if (!ready)
    idgen__buf_addf(out, "not_ready_reason:%s\r\n", reason);
  idgen__buf_addf(out, "ids_issued:%" PRIu64 "\r\n# Generators\r\n",
                  def->vtable->issued(def));
  for (size_t i = 0; i < svc->ngens; i++)
    idgen__generator_info_text(svc->gens[i], out);
}

void idgen__svc_ready_json(idgen__svc *svc, idgen__buf *out) {
  idgen__buf_addc(out, '{');
  for (size_t i = 0; i < svc->ngens; i++) {
    idgen__generator *g = svc->gens[i];
    char reason[256] = "";
    int ready = g->vtable->ready(g, reason, sizeof reason);
    idgen__buf_addf(out, "%s\"%s\":{\"ready\":%s", i ? "," : "", g->name,
                    ready ? "true" : "false");
    if (!ready) {
      idgen__buf_adds(out, ",\"reason\":");
      idgen__buf_add_json_str(out, reason, strlen(reason));
    }
    idgen__buf_addc(out, '}');
  }
  idgen__buf_addc(out, '}');
}

void idgen__svc_metrics(idgen__svc *svc, idgen__buf *out) {
  idgen__generator *def = svc->gens[0];
  idgen__metrics_render_build_info(
      def->layout ? def->layout->name : idgen__kind_name(idgen__generator_kind(def)),
      idgen_lease_kind_name(svc->cfg.lease.kind), out);
  idgen__metrics_render(svc->shards, svc->nshards, out);
  char reason[256];
  idgen__buf_addf(out,
                  "# HELP idgen_ready 1 while /readyz answers 200 (the default generator "
                  "ready, not stopping).\n"
                  "# TYPE idgen_ready gauge\n"
                  "idgen_ready %d\n",
                  idgen__svc_ready(svc, reason, sizeof reason));
  idgen__metrics_render_open(svc->conns, out);
  idgen__metrics_render_process(out);
  idgen__generators_metrics(svc->gens, svc->ngens, out);
  idgen__callers_render_metrics(svc->callers, out);
}

const char *idgen__svc_error_code(int err, int *temporary) {
  *temporary = 1;
  switch (err) {
  case IDGEN_ECLOCKBACK:
    return "clock_back";
  case IDGEN_ELEASE:
    return "lease_lost";
  case IDGEN_ECAP:
    return "cap_reached";
  case IDGEN_ENOTARMED:
    return "not_armed";
  case IDGEN_ETIMEEND:
    return "time_exhausted";
  case IDGEN_EEXHAUSTED:
    return "sequence_exhausted";
  case IDGEN_EBACKEND:
    return "backend_unavailable";
  default:
    *temporary = 0;
    return "internal";
  }
}

int idgen__issued_init(idgen__issued *r, size_t cap) {
  memset(r, 0, sizeof *r);
  r->cap = cap;
  r->ids = malloc(cap * sizeof *r->ids);
  r->text = malloc(cap * IDGEN__TEXT_ID_SLOT);
  if (r->ids && r->text)
    return 0;
  idgen__issued_free(r);
  return IDGEN_ENOMEM;
}

void idgen__issued_free(idgen__issued *r) {
  free(r->ids);
  free(r->text);
  memset(r, 0, sizeof *r);
}

/* Text kinds: one call per ID; the first error refuses the request. */
static int issue_text(idgen__generator *g, size_t n, idgen__metrics *m, idgen__issued *r) {
  for (size_t i = 0; i < n; i++) {
    char *slot = r->text + i * IDGEN__TEXT_ID_SLOT;
    int len = g->vtable->next_text(g, slot + 1, IDGEN__TEXT_ID_SLOT - 1);
    if (len < 0)
      return len;
    slot[0] = (char)len;
  }
  idgen__metrics_issued(m, idgen__generator_kind(g), n);
  return 0;
}

int idgen__svc_issue(idgen__generator *g, size_t n, idgen__id_form form, idgen__metrics *m,
                     idgen__issued *r) {
  r->n = 0;
  r->is_text = g->vtable->next_batch == NULL;
  if (n == 0 || n > r->cap)
    return IDGEN_EINVAL;
  if (r->is_text) {
    int rc = issue_text(g, n, m, r);
    if (rc == 0)
      r->n = n;
    return rc;
  }
  int64_t got = g->vtable->next_batch(g, r->ids, n);
  if (got < 0)
    return (int)got;
  idgen__metrics_issued(m, idgen__generator_kind(g), (uint64_t)got);
  if ((size_t)got < n) {
    /* Some were issued, then the generator refused: the error that stopped it, not a
     * short list (the issued ones are burnt, never repeated). */
    int64_t again = g->vtable->next_batch(g, r->ids, 1);
    return again < 0 ? (int)again : IDGEN_EEXHAUSTED;
  }
  if (form.opaque) {
    int rc = idgen__id_form_prepare(form, g->opaque, r->ids, n);
    if (rc < 0)
      return rc;
  }
  r->n = n;
  return 0;
}

int idgen__svc_range(idgen__generator *g, uint64_t n, idgen__metrics *m, idgen__range *r) {
  if (!g->vtable->next_range)
    return IDGEN_EINVAL;
  if (n == 0 || n > IDGEN__RANGE_MAX_COUNT)
    return IDGEN_EINVAL;
  uint64_t first, count, stride;
  int rc = g->vtable->next_range(g, n, &first, &count, &stride);
  if (rc < 0)
    return rc;
  idgen__metrics_issued(m, idgen__generator_kind(g), count);
  r->first = first;
  r->count = count;
  r->stride = stride;
  r->last = first + (count - 1) * stride;
  return 0;
}

const char *idgen__svc_range_refusal(const idgen__generator *g) {
  if (g->vtable->next_range)
    return NULL;
  return idgen__generator_kind(g) == KIND_SNOWFLAKE
             ? "a snowflake generator has no ranges: its IDs are not contiguous (use IDS)"
             : "only a segment generator has ranges (use IDS)";
}
