/* generator.c: what every kind of generator shares: opening one by kind with its
 * opaque key, the common part of its info, and the per-generator metric families. */
#include "server/generator.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/id_form.h"

static const idgen__gen_class *const classes[KIND_COUNT] = {
    [KIND_SNOWFLAKE] = &idgen__gen_snowflake_class, [KIND_UUID7] = &idgen__gen_uuid7_class,
    [KIND_UUID4] = &idgen__gen_uuid4_class,         [KIND_ULID] = &idgen__gen_ulid_class,
    [KIND_SEGMENT] = &idgen__gen_segment_class,
};

int idgen__generator_open(idgen__generator **out, const idgen__gen_spec *spec,
                          const idgen__gen_env *env, char *err, size_t errlen) {
  if ((unsigned)spec->kind >= KIND_COUNT) {
    snprintf(err, errlen, "generator %s: unknown kind", spec->name);
    return IDGEN_EINVAL;
  }
  idgen__generator *g = NULL;
  int rc = classes[spec->kind]->open(&g, spec, env, err, errlen);
  if (rc < 0)
    return rc;
  snprintf(g->name, sizeof g->name, "%s", spec->name);
  /* A generator's opaque tweak is its name: one key serves several generators, and
   * their opaque IDs still differ. */
  if (spec->opaque_key_file[0] &&
      (rc = idgen__opaque_open("opaque_key_file", spec->opaque_key_file, spec->name,
                               strlen(spec->name), &g->opaque, err, errlen)) < 0) {
    idgen__generator_close(g);
    return rc;
  }
  *out = g;
  return 0;
}

void idgen__generator_close(idgen__generator *g) {
  if (!g)
    return;
  idgen_opaque *opaque = g->opaque;
  g->vtable->close(g);
  idgen_opaque_free(opaque);
}

int idgen__generator_form_ok(const idgen__generator *g, idgen__id_form form, char *why,
                             size_t whylen) {
  const char *kind = idgen__kind_name(g->vtable->kind);
  if (!idgen__kind_numeric(g->vtable->kind))
    snprintf(why, whylen, "'%s' is a %s generator: its IDs are text, no format applies",
             g->name, kind);
  else if (form.format == IDGEN_FORMAT_FRIENDLY && !form.opaque && !g->layout)
    snprintf(why, whylen, "friendly needs a snowflake layout: '%s' is a %s generator",
             g->name, kind);
  else if (form.opaque && !g->opaque && !strcmp(g->name, IDGEN__DEFAULT_GENERATOR))
    snprintf(why, whylen,
             "opaque formats need a key: this server runs without --opaque-key-file");
  else if (form.opaque && !g->opaque)
    snprintf(why, whylen,
             "opaque formats need a key: generator '%s' has no opaque_key_file", g->name);
  else
    return 1;
  return 0;
}

void idgen__gen_add_time(idgen__buf *out, int64_t ms) {
  char when[40];
  if (ms > 0 && ms < INT64_MAX && idgen_format_time(ms, when, sizeof when) >= 0)
    idgen__buf_add_json_str(out, when, strlen(when));
  else
    idgen__buf_adds(out, "null");
}

void idgen__generator_info_json(idgen__generator *g, idgen__buf *out) {
  char reason[256] = "";
  int ready = g->vtable->ready(g, reason, sizeof reason);
  idgen__buf_addf(out, "\"kind\":\"%s\",\"ready\":%s", idgen__kind_name(g->vtable->kind),
                  ready ? "true" : "false");
  if (!ready) {
    idgen__buf_adds(out, ",\"not_ready_reason\":");
    idgen__buf_add_json_str(out, reason, strlen(reason));
  }
  idgen__buf_addf(out, ",\"issued\":%" PRIu64 ",\"opaque\":%s", g->vtable->issued(g),
                  g->opaque ? "true" : "false");
  g->vtable->info_json(g, out);
}

void idgen__generator_info_text(idgen__generator *g, idgen__buf *out) {
  char reason[256] = "";
  int ready = g->vtable->ready(g, reason, sizeof reason);
  idgen__buf_addf(out, "gen_%s:kind=%s,ready=%d,issued=%" PRIu64, g->name,
                  idgen__kind_name(g->vtable->kind), ready, g->vtable->issued(g));
  g->vtable->info_line(g, out);
  idgen__buf_adds(out, "\r\n");
}

void idgen__gen_label(const idgen__generator *g, idgen__buf *out) {
  idgen__buf_addf(out, "generator=\"%s\"", g->name);
}

void idgen__gen_sample(idgen__generator *g, const idgen__gen_family *f, const char *labels,
                       double v, idgen__buf *out) {
  idgen__buf_addf(out, "%s{", f->name);
  idgen__gen_label(g, out);
  idgen__buf_addf(out, "%s} %.15g\n", labels, v);
}

void idgen__gen_sample_u64(idgen__generator *g, const idgen__gen_family *f,
                           const void *stats, idgen__buf *out) {
  uint64_t v;
  memcpy(&v, (const char *)stats + f->offset, sizeof v);
  idgen__gen_sample(g, f, "", (double)v, out);
}

void idgen__gen_add_histogram(idgen__generator *g, const char *name, const char *labels,
                              const idgen_lease_latency *lat, idgen__buf *out) {
  static const int64_t bounds_ms[] = IDGEN_LEASE_LATENCY_BOUNDS_MS;
  uint64_t cum = 0;
  for (size_t i = 0; i < IDGEN_LEASE_LATENCY_BUCKETS; i++) {
    cum += lat->buckets[i];
    idgen__buf_addf(out, "%s_bucket{", name);
    idgen__gen_label(g, out);
    if (i < IDGEN_LEASE_LATENCY_BUCKETS - 1)
      idgen__buf_addf(out, "%s,le=\"%g\"} %" PRIu64 "\n", labels,
                      (double)bounds_ms[i] / 1e3, cum);
    else
      idgen__buf_addf(out, "%s,le=\"+Inf\"} %" PRIu64 "\n", labels, cum);
  }
  idgen__buf_addf(out, "%s_sum{", name);
  idgen__gen_label(g, out);
  idgen__buf_addf(out, "%s} %.6f\n%s_count{", labels, (double)lat->sum_us / 1e6, name);
  idgen__gen_label(g, out);
  idgen__buf_addf(out, "%s} %" PRIu64 "\n", labels, lat->count);
}

static void family_header(const char *name, const char *type, const char *help,
                          idgen__buf *out) {
  idgen__buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void idgen__generators_metrics(idgen__generator *const *gens, size_t n, idgen__buf *out) {
  family_header("idgen_generator_info", "gauge",
                "The generators this server hosts, by name and kind; always 1.", out);
  for (size_t i = 0; i < n; i++) {
    idgen__buf_adds(out, "idgen_generator_info{");
    idgen__gen_label(gens[i], out);
    idgen__buf_addf(out, ",kind=\"%s\"} 1\n", idgen__kind_name(gens[i]->vtable->kind));
  }
  family_header("idgen_generator_ready", "gauge",
                "1 while the generator hands out IDs (GET /readyz?name=NAME answers 200).",
                out);
  for (size_t i = 0; i < n; i++) {
    char reason[256];
    idgen__buf_adds(out, "idgen_generator_ready{");
    idgen__gen_label(gens[i], out);
    idgen__buf_addf(out, "} %d\n", gens[i]->vtable->ready(gens[i], reason, sizeof reason));
  }
  family_header("idgen_generator_ids_issued_total", "counter",
                "IDs the generator handed out (a batch refused midway counts those made "
                "before the refusal).",
                out);
  for (size_t i = 0; i < n; i++) {
    idgen__buf_adds(out, "idgen_generator_ids_issued_total{");
    idgen__gen_label(gens[i], out);
    idgen__buf_addf(out, "} %" PRIu64 "\n", gens[i]->vtable->issued(gens[i]));
  }
  /* Each class's families, with the samples of every generator of that class. */
  for (unsigned k = 0; k < KIND_COUNT; k++) {
    const idgen__gen_class *c = classes[k];
    size_t have = 0;
    for (size_t i = 0; i < n; i++)
      have += gens[i]->vtable == c;
    for (size_t f = 0; have && f < c->nfamilies; f++) {
      const idgen__gen_family *fam = &c->families[f];
      family_header(fam->name, fam->type, fam->help, out);
      for (size_t i = 0; i < n; i++)
        if (gens[i]->vtable == c)
          fam->sample(gens[i], fam, out);
    }
  }
}
