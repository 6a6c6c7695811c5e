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
  /* The tokens in force (NULL: no token). A reload swaps in a new set and retires the
   * old one, freed by the main thread once no thread's hazard slot holds it. */
  _Atomic(idgen__token_set *) tokens;
  _Atomic(const idgen__token_set *) *hazards; /* nshards */
  idgen__token_set **retired;                 /* main thread; nshards + 2 at most */
  size_t nretired;
  _Atomic uint64_t sets_alive;
  idgen__token_reg *reg; /* names, buckets */
};

/* Frees the retired sets no thread holds. Main thread. */
static void collect(idgen__svc *svc) {
  size_t keep = 0;
  for (size_t i = 0; i < svc->nretired; i++) {
    int held = 0;
    for (size_t k = 0; k < svc->nshards && !held; k++)
      held = atomic_load(&svc->hazards[k]) == svc->retired[i];
    if (held) {
      svc->retired[keep++] = svc->retired[i];
    } else {
      idgen__token_set_free(svc->retired[i]);
      atomic_fetch_sub(&svc->sets_alive, 1);
    }
  }
  svc->nretired = keep;
}

static void close_all(idgen__svc *svc) {
  /* The named ones first, the default last, in the reverse of the order they opened. */
  for (size_t i = svc->ngens; i-- > 0;)
    idgen__generator_close(svc->gens[i]);
  for (size_t k = 0; k < KIND_COUNT; k++)
    idgen__generator_close(svc->builtin[k]);
  idgen_random_system_free(svc->random);
  idgen__token_set_free(atomic_load(&svc->tokens));
  for (size_t i = 0; i < svc->nretired; i++)
    idgen__token_set_free(svc->retired[i]);
  free(svc->retired);
  free((void *)svc->hazards);
  idgen__token_reg_free(svc->reg);
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
  svc->hazards = calloc(svc->nshards, sizeof *svc->hazards);
  svc->retired = calloc(svc->nshards + 2, sizeof *svc->retired);
  int rc = IDGEN_ENOMEM;
  if (!svc->shards || !svc->gens || !svc->hazards || !svc->retired ||
      idgen__token_reg_new(&svc->reg) < 0 ||
      idgen__callers_new(&svc->callers, svc->nshards) < 0) {
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
  if (idgen__token_set_load(cfg, svc->reg, NULL, (uint64_t)idgen_monotonic_ns(), &tokens,
                            err, errlen) < 0) {
    rc = IDGEN_EINVAL;
    goto fail;
  }
  atomic_store(&svc->tokens, tokens);
  atomic_store(&svc->sets_alive, tokens ? 1 : 0);
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
  collect(svc);
  for (size_t i = 0; i < svc->ngens; i++)
    if (svc->gens[i]->vtable->watch)
      svc->gens[i]->vtable->watch(svc->gens[i]);
}

int idgen__svc_auth_required(const idgen__svc *svc) {
  return atomic_load_explicit(&svc->tokens, memory_order_relaxed) != NULL;
}

/* h on the set in force: published in its hazard slot, then checked still in force (a
 * reload between the load and the publication retries), as hazard pointers are. */
static const idgen__token_set *hold(idgen__svc *svc, idgen__token_hold *h) {
  const idgen__token_set *set = atomic_load(&svc->tokens);
  if (set == h->set)
    return set; /* already published: it cannot have been freed */
  size_t slot = h->slot < svc->nshards ? h->slot : svc->nshards - 1;
  for (;;) {
    atomic_store(&svc->hazards[slot], set);
    const idgen__token_set *again = atomic_load(&svc->tokens);
    if (again == set)
      break;
    set = again;
  }
  h->set = set;
  h->serial = set ? idgen__token_set_serial(set) : 0;
  return set;
}

void idgen__svc_tokens_unhold(idgen__svc *svc, idgen__token_hold *h) {
  size_t slot = h->slot < svc->nshards ? h->slot : svc->nshards - 1;
  atomic_store(&svc->hazards[slot], NULL);
  h->set = NULL;
  h->serial = 0;
}

static void grant_of(const idgen__token_set *set, long i, uint64_t serial,
                     idgen__grant *g) {
  idgen__token_ref r;
  idgen__token_set_ref(set, (size_t)i, &r);
  *g = (idgen__grant){set, i, serial, r.ident, r.quota, r.bucket, r.slot};
}

int idgen__svc_auth(idgen__svc *svc, idgen__token_hold *h, const char *tok, size_t len,
                    idgen__grant *g) {
  const idgen__token_set *set = h->set;
  if (atomic_load(&svc->tokens) != set)
    set = hold(svc, h);
  if (!set) {
    *g = IDGEN__GRANT_ALL;
    return 1;
  }
  long i = idgen__token_set_find(set, tok, len);
  if (i < 0)
    return 0;
  grant_of(set, i, h->serial, g);
  return 1;
}

int idgen__svc_auth_cert(idgen__svc *svc, idgen__token_hold *h,
                         const idgen__cert_names *names, idgen__grant *g) {
  const idgen__token_set *set = h->set;
  if (atomic_load(&svc->tokens) != set)
    set = hold(svc, h);
  if (!set) {
    *g = IDGEN__GRANT_ALL;
    return 1;
  }
  long i = idgen__token_set_find_cert(set, names);
  if (i < 0)
    return 0;
  grant_of(set, i, h->serial, g);
  return 1;
}

int idgen__svc_grant_renew(idgen__svc *svc, idgen__token_hold *h, idgen__grant *g) {
  /* Nothing reloaded since this thread's last look, and g from that set: in force. */
  if (atomic_load(&svc->tokens) == h->set && g->serial == h->serial && g->set)
    return 1;
  const idgen__token_set *set = hold(svc, h);
  if (!set) {
    if (g->set)
      *g = IDGEN__GRANT_ALL; /* a reload removed every token */
    return 1;
  }
  if (!g->set)
    return 0; /* granted without a token; one is required now */
  /* g->set may be freed: only its serial and the token's identity are read. */
  if (g->serial == h->serial)
    return 1; /* the same set, so g->set is set */
  long i = idgen__token_set_by_ident(set, g->ident);
  if (i < 0)
    return 0;
  grant_of(set, i, h->serial, g);
  return 1;
}

int idgen__svc_grant_covers(const idgen__grant *g, const idgen__generator *gen) {
  return !g->set ||
         idgen__token_covers(idgen__token_set_spec(g->set, (size_t)g->index), gen->name);
}

int idgen__svc_grant_decode(const idgen__grant *g) {
  return !g->set || idgen__token_set_spec(g->set, (size_t)g->index)->decode;
}

const char *idgen__svc_grant_name(const idgen__grant *g) {
  return g->set ? idgen__token_set_spec(g->set, (size_t)g->index)->name : "";
}

idgen__quota_verdict idgen__svc_charge_quota(const idgen__grant *g, uint64_t n,
                                             idgen__metrics *m, uint64_t *retry_after_s) {
  uint64_t retry_ns = 0;
  idgen__quota_verdict v =
      idgen__quota_take(g->quota, g->bucket, (uint64_t)idgen_monotonic_ns(), n, &retry_ns);
  if (v != IDGEN__QUOTA_OK) {
    idgen__svc_grant_count(m, g, TOKEN_QUOTA, 1);
    *retry_after_s = idgen__quota_retry_after_s(retry_ns);
  }
  return v;
}

void idgen__svc_tokens_reload(idgen__svc *svc, const idgen__serve_config *cfg) {
  idgen__token_set *old = atomic_load(&svc->tokens), *fresh = NULL;
  if (!old && !cfg)
    return; /* no token: nothing to read */
  char why[IDGEN_CFG_PATH * 2 + 200];
  uint64_t now = (uint64_t)idgen_monotonic_ns();
  int rc = cfg ? idgen__token_set_load(cfg, svc->reg, old, now, &fresh, why, sizeof why)
               : idgen__token_set_reload(old, svc->reg, now, &fresh, why, sizeof why);
  if (rc < 0) {
    idgen__log("warn", "tokens_reload", "kept the tokens in force: %s", why);
    return;
  }
  if (fresh)
    atomic_fetch_add(&svc->sets_alive, 1);
  atomic_store(&svc->tokens, fresh);
  if (old)
    svc->retired[svc->nretired++] = old;
  collect(svc);
  idgen__log("info", "tokens_reload", "%zu token(s) %s", idgen__token_set_count(fresh),
             cfg ? "loaded from the new configuration" : "read again on SIGHUP");
}

uint64_t idgen__svc_token_sets_alive(const idgen__svc *svc) {
  return atomic_load(&svc->sets_alive);
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
  idgen__buf_addf(
      out,
      "# HELP idgen_token_sets_alive Token sets in memory: the one in force and "
      "replaced ones a serving thread still holds (threads + 1 at most).\n"
      "# TYPE idgen_token_sets_alive gauge\n"
      "idgen_token_sets_alive %llu\n",
      (unsigned long long)atomic_load(&svc->sets_alive));
  const char *names[IDGEN__TOKEN_SLOTS];
  size_t ntok = idgen__token_reg_count(svc->reg);
  for (size_t i = 0; i < ntok; i++)
    names[i] = idgen__token_reg_name(svc->reg, i);
  idgen__metrics_render_tokens(svc->shards, svc->nshards, names, ntok, out);
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
  case IDGEN_EPERIOD:
    return "period_unavailable";
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
