/* reload.c: SIGHUP's reload of --config: read and check as at start, compare each
 * generator's settings with those in force, apply the live ones all together or none. */
#include "server/reload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/error.h"
#include "server/config_table.h"
#include "server/log.h"

struct idgen__reload {
  idgen__svc *svc;
  int argc;
  char **argv;
  idgen__gen_spec *specs; /* the generators' settings in force (the default first) */
  size_t nspecs;
  idgen__grace *grace;
  int auth; /* clients present tokens (idgen__serve_config_auth) */
};

/* At most this many formats wait for their grace period: two reloads' worth. */
#define RETIRED_PER_GENERATOR 2
/* How long a reload waits for the threads to let go of the formats retired before. */
#define ROOM_WAIT_MS 2000

static int copy_specs(idgen__gen_spec **out, const idgen__gen_spec *from, size_t n) {
  idgen__gen_spec *s = malloc((n ? n : 1) * sizeof *s);
  if (!s)
    return IDGEN_ENOMEM;
  memcpy(s, from, n * sizeof *s);
  *out = s;
  return 0;
}

int idgen__reload_new(idgen__reload **out, const idgen__serve_config *cfg, idgen__svc *svc,
                      size_t nthreads) {
  idgen__reload *r = calloc(1, sizeof *r);
  if (!r)
    return IDGEN_ENOMEM;
  r->svc = svc;
  r->argc = cfg->argc;
  r->argv = cfg->argv;
  r->nspecs = cfg->ngens;
  r->auth = idgen__serve_config_auth(cfg);
  if (copy_specs(&r->specs, cfg->gens, cfg->ngens) < 0 ||
      idgen__grace_new(&r->grace, nthreads, RETIRED_PER_GENERATOR * (cfg->ngens + 1)) < 0) {
    idgen__reload_free(r);
    return IDGEN_ENOMEM;
  }
  *out = r;
  return 0;
}

void idgen__reload_free(idgen__reload *r) {
  if (!r)
    return;
  idgen__grace_free(r->grace);
  free(r->specs);
  free(r);
}

idgen__grace *idgen__reload_grace(idgen__reload *r) {
  return r->grace;
}

void idgen__reload_tick(idgen__reload *r) {
  idgen__grace_collect(r->grace);
}

/* ---- The comparison ---------------------------------------------------------------- */

static const idgen__gen_spec *spec_named(const idgen__gen_spec *specs, size_t n,
                                         const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(specs[i].name, name))
      return &specs[i];
  return NULL;
}

/* 1 if option k differs between a and b (of one kind). */
static int key_differs(const idgen__gen_key *k, const idgen__gen_spec *a,
                       const idgen__gen_spec *b) {
  const idgen_lease_config *la = &a->lease, *lb = &b->lease;
  switch (k->type) {
  case GK_KIND:
    return a->kind != b->kind;
  case GK_STR:
    return strcmp((const char *)a + k->off, (const char *)b + k->off) != 0;
  case GK_U64: {
    uint64_t va, vb;
    memcpy(&va, (const char *)a + k->off, sizeof va);
    memcpy(&vb, (const char *)b + k->off, sizeof vb);
    return va != vb;
  }
  case GK_LEASE:
    if (idgen__lease_key_text(la, k->flag))
      return strcmp(idgen__lease_key_text(la, k->flag), idgen__lease_key_text(lb, k->flag));
    if (!strcmp(k->name, "namespace"))
      return strcmp(la->ns, lb->ns) != 0;
    if (!strcmp(k->name, "datacenter"))
      return la->datacenter != lb->datacenter;
    if (!strcmp(k->name, "worker_id_range"))
      return la->range_lo != lb->range_lo || la->range_hi != lb->range_hi;
    if (!strcmp(k->name, "worker_id"))
      return la->worker_id != lb->worker_id;
    if (!strcmp(k->name, "worker_id_offset"))
      return la->worker_id_offset != lb->worker_id_offset;
    return memcmp(la, lb, sizeof *la) != 0; /* an option this file does not know yet */
  }
  return 1;
}

typedef struct tally {
  size_t changed, refused;
} tally;

static void refuse(tally *t, const char *gen, const char *setting, const char *what) {
  idgen__log("warn", "reload", "generator '%s': %s %s: needs a restart (refused)", gen,
             setting, what);
  t->refused++;
}

/* One generator present in both: its refused differences, and whether its format (the
 * live setting) changes. */
static void compare_one(const idgen__gen_spec *old, const idgen__gen_spec *new, tally *t,
                        int *format_changes) {
  *format_changes = 0;
  if (old->kind != new->kind) {
    char what[96];
    snprintf(what, sizeof what, "changed from %s to %s", idgen__kind_name(old->kind),
             idgen__kind_name(new->kind));
    refuse(t, old->name, "kind", what);
    return;
  }
  for (size_t i = 0; i < idgen__gen_nkeys; i++) {
    const idgen__gen_key *k = &idgen__gen_keys[i];
    if (!(k->kinds & KB(old->kind)) || !strcmp(k->name, "path") || k->type == GK_KIND ||
        !key_differs(k, old, new))
      continue; /* path is dsn's other name: one field */
    if (strcmp(k->name, "format")) {
      refuse(t, old->name, k->name, "changed");
    } else if (!old->format[0] || !new->format[0]) {
      refuse(t, old->name, "format",
             old->format[0] ? "removed (the IDs' text form)"
                            : "added (no text form before)");
    } else {
      *format_changes = 1;
      t->changed++;
    }
  }
}

/* Every difference of fresh from the settings in force; format[i] set for each
 * generator in force whose format changes live. */
static void compare(const idgen__reload *r, const idgen__serve_config *fresh, tally *t,
                    int *format) {
  for (size_t i = 0; i < r->nspecs; i++) {
    const idgen__gen_spec *new = spec_named(fresh->gens, fresh->ngens, r->specs[i].name);
    format[i] = 0;
    if (!new)
      refuse(t, r->specs[i].name, "the generator", "removed");
    else
      compare_one(&r->specs[i], new, t, &format[i]);
  }
  for (size_t i = 0; i < fresh->ngens; i++)
    if (!spec_named(r->specs, r->nspecs, fresh->gens[i].name))
      refuse(t, fresh->gens[i].name, "the generator", "added (a new generator)");
  /* Whether a client must authenticate is fixed by the connections' state at accept: a
   * tokens: section that appears or goes (with no --auth-token-file) would open a
   * server or lock its open connections out. Its contents change live (the tokens). */
  if (idgen__serve_config_auth(fresh) != r->auth) {
    idgen__log("warn", "reload", "tokens: %s: needs a restart (refused)",
               r->auth ? "removed (clients would no longer need a token)"
                       : "added (clients would need a token)");
    t->refused++;
  }
}

/* ---- Applying ---------------------------------------------------------------------- */

/* Makes every live change first (nothing is published if one fails), then publishes
 * them all and retires what they replace. 0, or -1 with the reason logged. */
static int apply(idgen__reload *r, const idgen__serve_config *fresh, const int *format) {
  size_t n = r->nspecs, need = 0;
  void **made = calloc(n ? n : 1, sizeof *made);
  idgen__generator **gens = calloc(n ? n : 1, sizeof *gens);
  int rc = -1;
  char err[512] = "out of memory";
  if (!made || !gens)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    if (!format[i])
      continue;
    const char *name = r->specs[i].name;
    gens[i] = idgen__svc_generator(r->svc, name, strlen(name));
    const idgen__gen_spec *new = spec_named(fresh->gens, fresh->ngens, name);
    if (!gens[i] || !gens[i]->vtable->live_make) {
      snprintf(err, sizeof err, "generator '%s': its format cannot change live", name);
      goto fail;
    }
    if (gens[i]->vtable->live_make(gens[i], new, &made[i], err, sizeof err) < 0)
      goto fail;
    need += made[i] != NULL;
  }
  if (idgen__grace_wait_room(r->grace, need, ROOM_WAIT_MS) < 0) {
    snprintf(err, sizeof err,
             "%zu old format(s) still held by a serving thread after %d ms: try again",
             RETIRED_PER_GENERATOR * (n + 1) - idgen__grace_room(r->grace), ROOM_WAIT_MS);
    goto fail;
  }
  for (size_t i = 0; i < n; i++) {
    if (!made[i])
      continue;
    void *old = gens[i]->vtable->live_swap(gens[i], made[i]);
    made[i] = NULL;
    idgen__grace_retire(r->grace, old); /* room was made above */
    const idgen__gen_spec *new = spec_named(fresh->gens, fresh->ngens, r->specs[i].name);
    idgen__log("info", "reload", "generator '%s': format '%s' -> '%s'", r->specs[i].name,
               r->specs[i].format, new->format);
  }
  rc = 0;
fail:
  if (rc < 0)
    idgen__log("warn", "reload", "%s", err);
  for (size_t i = 0; made && i < n; i++)
    free(made[i]);
  free(made);
  free(gens);
  return rc;
}

idgen__reload_status idgen__reload_run(idgen__reload *r, idgen__serve_config *fresh) {
  char err[1024];
  memset(fresh, 0, sizeof *fresh);
  idgen__config_status st =
      idgen__serve_config_load(fresh, r->argc, r->argv, stderr, err, sizeof err);
  if (st != IDGEN_CONFIG_SERVE || idgen__serve_config_check(fresh, err, sizeof err) < 0) {
    if (st == IDGEN_CONFIG_DONE)
      snprintf(err, sizeof err, "the command line asks for no server");
    idgen__log("warn", "reload", "kept the configuration in force: %s", err);
    idgen__serve_config_free(fresh);
    memset(fresh, 0, sizeof *fresh);
    return IDGEN__RELOAD_FAILED;
  }
  tally t = {0, 0};
  int *format = calloc(r->nspecs ? r->nspecs : 1, sizeof *format);
  idgen__gen_spec *specs = NULL;
  if (!format || copy_specs(&specs, fresh->gens, fresh->ngens) < 0) {
    free(format);
    idgen__log("warn", "reload", "kept the configuration in force: out of memory");
    return IDGEN__RELOAD_FAILED;
  }
  compare(r, fresh, &t, format);
  idgen__reload_status status = IDGEN__RELOAD_REFUSED;
  if (t.refused == 0)
    status = apply(r, fresh, format) == 0 ? IDGEN__RELOAD_APPLIED : IDGEN__RELOAD_FAILED;
  if (status == IDGEN__RELOAD_APPLIED) {
    free(r->specs); /* the settings in force now, for the next comparison */
    r->specs = specs;
    r->nspecs = fresh->ngens;
  } else {
    free(specs);
  }
  free(format);
  idgen__log(status == IDGEN__RELOAD_APPLIED ? "info" : "warn", "reload",
             "%zu changed, %zu refused: %s", t.changed, t.refused,
             status == IDGEN__RELOAD_APPLIED ? "applied"
             : t.refused ? "nothing applied (a change that needs a restart holds back the "
                           "whole reload)"
                         : "nothing applied");
  return status;
}
