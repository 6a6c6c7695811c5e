/* gen_segment.c: the segment kind: dense integers from blocks leased from a backend
 * (src/segment/), the next block fetched by the generator's own thread; its readiness,
 * info and metrics. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "host/host.h"
#include "server/generator.h"
#include "server/log.h"

typedef struct segment {
  idgen__generator base;
  idgen__segment_backend *backend;
  idgen__segment *seg;
  idgen__tz *tz; /* a period's timezone, or NULL */
  char period[16];
  int has_format;
  /* Its text form, compiled; a reload publishes a new one (release) and retires this
   * one (server/grace.h), so a reader loads it once per use (acquire). */
  _Atomic(idgen__seg_format *) format;
  /* Every format it has served, and its file (segment/format.h): read at start, a new
   * format recorded before its first text. The main thread's (open, reload). */
  idgen__seg_history *history;
  char history_path[IDGEN_LEASE_PATH_MAX + 96];
  char backend_name[16];
  char dsn[IDGEN_CFG_DSN]; /* masked: fit to show */
  uint64_t min_step, max_step, prefetch_pct;
  /* The main thread's watch: what was logged last. */
  int last_ok, last_ready;
  char last_error[IDGEN_SEGMENT_WHY_MAX];
  char last_warning[IDGEN_SEGMENT_WHY_MAX]; /* the backend's, as logged last */
} segment;

static segment *of(idgen__generator *g) {
  return (segment *)g;
}

static void seg_close(idgen__generator *g) {
  segment *s = of(g);
  if (s->seg) {
    idgen__segment_stats st;
    idgen__segment_stats_get(s->seg, &st);
    idgen__log("info", "segment_stop",
               "generator=%s backend=%s issued=%" PRIu64 " last_leased=%" PRIu64
               " left_unused=%" PRIu64,
               g->name, s->backend_name, st.issued, st.last_max,
               st.current_left + st.next_left);
  }
  idgen__segment_free(s->seg); /* stops the fetcher first */
  idgen__segment_backend_free(s->backend);
  idgen__tz_free(s->tz);
  free(atomic_load(&s->format));
  free(s->history);
  free(s);
}

static const idgen__seg_format *format_of(const idgen__generator *g) {
  segment *s = (segment *)(uintptr_t)g; /* the atomic load reads, never writes */
  return atomic_load_explicit(&s->format, memory_order_acquire);
}

static int seg_text_of(const idgen__generator *g, uint64_t id, char *out, size_t outlen) {
  return idgen__seg_format_text(format_of(g), id, out, outlen);
}

static int seg_id_of(const idgen__generator *g, const char *text, size_t len,
                     uint64_t *id) {
  uint64_t period, n;
  return idgen__seg_format_parse(format_of(g), text, len, id, &period, &n);
}

/* Issue 35: a text a format once made must never be the text of another number, across
 * restarts too. f is refused, with one line naming both formats, when its texts can be
 * those of any format the generator has served; else it is recorded (durably) first. */
static int format_admit(segment *s, const char *name, const idgen__seg_format *f,
                        char *err, size_t errlen) {
  const idgen__seg_format *old = idgen__seg_history_conflict(s->history, f);
  if (old) {
    snprintf(err, errlen,
             "generator '%s': format '%s' refused: its texts can be those of '%s', "
             "served before (%s; make them distinct: another literal, or another length)",
             name, f->template_text, old->template_text, s->history_path);
    return IDGEN_EINVAL;
  }
  char dir[sizeof s->history_path];
  snprintf(dir, sizeof dir, "%s", s->history_path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  char why[IDGEN_LEASE_PATH_MAX + 300];
  int rc = idgen__state_dir_ready(dir, why, sizeof why);
  if (rc == 0)
    rc = idgen__seg_history_add(s->history, f, s->history_path, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "generator '%s': %s", name, why);
    return rc;
  }
  if (rc == 1)
    idgen__log("info", "segment_format", "generator=%s recorded format '%s' in %s (%zu)",
               name, f->template_text, s->history_path, s->history->n);
  return 0;
}

/* The history at start: its file read (none: a new one, the loss of an old one is the
 * operator's, docs/segment.md), one that does not read refused. */
static int format_history_open(segment *s, const idgen__gen_spec *spec, char *err,
                               size_t errlen) {
  s->history = calloc(1, sizeof *s->history);
  if (!s->history) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  idgen__gen_spec_format_history(spec, s->history_path, sizeof s->history_path);
  char why[IDGEN_LEASE_PATH_MAX + 400];
  int rc = idgen__seg_history_load(s->history, s->history_path, spec->name, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen,
             "generator '%s': %s (refused: the formats it served are not known; repair "
             "the file or see docs/segment.md)",
             spec->name, why);
    return rc;
  }
  return 0;
}

static int seg_open(idgen__generator **out, const idgen__gen_spec *spec,
                    const idgen__gen_env *env, char *err, size_t errlen) {
  segment *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  s->base.vtable = &idgen__gen_segment_class;
  s->last_ok = s->last_ready = -1;
  snprintf(s->backend_name, sizeof s->backend_name, "%s", spec->backend);
  s->min_step = spec->step;
  s->max_step = spec->max_step;
  s->prefetch_pct = spec->prefetch_pct;
  char dsn[IDGEN_CFG_DSN + 64], why[IDGEN_SEGMENT_WHY_MAX];
  idgen__gen_spec_dsn(spec, dsn, sizeof dsn);
  idgen__dsn_masked(dsn, s->dsn, sizeof s->dsn);
  int rc = idgen__segment_backend_open_with(&s->backend, spec->backend, dsn,
                                            (int64_t)spec->timeout_ms, &spec->lease, why,
                                            sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: %s", spec->name, why);
    goto fail;
  }
  /* The file backend: the name is claimed host-wide (one file per name on a host), and
   * its file must hold a record. The embedded default, a file in the state directory,
   * is made at the first start in that directory; one the directory made and lost, a
   * file the generator names, and the other backends' rows and keys, only by `idgen
   * segment init` (a fetch never makes them, so a removed file stops the sequence
   * instead of starting it again at 1). */
  idgen__segment_config c;
  idgen__gen_spec_segment_config(spec, s->backend, env->clock, &c);
  if (idgen__gen_spec_period(spec, &c, &s->tz, err, errlen) < 0) {
    rc = IDGEN_EINVAL;
    goto fail;
  }
  snprintf(s->period, sizeof s->period, "%s", spec->period);
  if (spec->format[0]) {
    idgen__seg_format *f = malloc(sizeof *f);
    if (!f || idgen__gen_spec_format(spec, f, err, errlen) < 0) {
      if (!f)
        snprintf(err, errlen, "out of memory");
      free(f);
      rc = f ? IDGEN_EINVAL : IDGEN_ENOMEM;
      goto fail;
    }
    atomic_store_explicit(&s->format, f, memory_order_release);
    s->has_format = 1;
    rc = format_history_open(s, spec, err, errlen);
    if (rc == 0)
      rc = format_admit(s, spec->name, f, err, errlen);
    if (rc < 0)
      goto fail;
    s->base.text_of = seg_text_of;
    s->base.id_of = seg_id_of;
  }
  /* A period generator claims its name host-wide here; each period's key is started
   * (its file made, or refused when lost) at its first fetch. */
  rc = c.period ? idgen__segment_file_claim(s->backend, spec->lease.ns, spec->name)
                : idgen__segment_file_start(s->backend, spec->lease.ns, spec->name,
                                            !spec->dsn[0]);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: %s", spec->name, s->backend->why);
    goto fail;
  }
  if (rc == 0 && !c.period)
    idgen__log("info", "segment_init", "generator=%s created %ssegment-%s", spec->name, dsn,
               spec->name);
  rc = idgen__segment_new(&s->seg, &c, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: %s", spec->name, why);
    goto fail;
  }
  *out = &s->base;
  return 0;
fail:
  seg_close(&s->base);
  return rc;
}

static int64_t seg_next_batch(idgen__generator *g, uint64_t *ids, size_t n) {
  return idgen__segment_next_batch(of(g)->seg, ids, n);
}

static int seg_next_range(idgen__generator *g, uint64_t n, uint64_t *first,
                          uint64_t *count, uint64_t *stride) {
  return idgen__segment_next_range(of(g)->seg, n, first, count, stride);
}

static int seg_ready(idgen__generator *g, char *reason, size_t reasonlen) {
  segment *s = of(g);
  idgen__segment_stats st;
  idgen__segment_stats_get(s->seg, &st);
  if (st.ready)
    return 1;
  char why[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_last_error(s->seg, why, sizeof why);
  if (st.blocks_fetched == 0)
    snprintf(reason, reasonlen, "segment: no block from %s yet%s%s", s->backend_name,
             why[0] ? ": " : "", why);
  else
    snprintf(reason, reasonlen, "segment backend unavailable, no buffered numbers left: %s",
             why[0] ? why : "?");
  return 0;
}

static uint64_t seg_issued(idgen__generator *g) {
  idgen__segment_stats st;
  idgen__segment_stats_get(of(g)->seg, &st);
  return st.issued;
}

static void seg_info_json(idgen__generator *g, idgen__buf *out) {
  segment *s = of(g);
  if (s->backend->vtable->warning) { /* what its server can lose (redis), once a change */
    char warning[IDGEN_SEGMENT_WHY_MAX];
    s->backend->vtable->warning(s->backend, warning, sizeof warning);
    if (strcmp(warning, s->last_warning)) {
      if (warning[0])
        idgen__log("warn", "segment", "generator=%s backend=%s %s", g->name, s->backend_name,
                   warning);
      snprintf(s->last_warning, sizeof s->last_warning, "%s", warning);
    }
  }
  idgen__segment_stats st;
  idgen__segment_stats_get(s->seg, &st);
  char why[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_last_error(s->seg, why, sizeof why);
  idgen__buf_addf(out, ",\"backend\":\"%s\",\"dsn\":", s->backend_name);
  idgen__buf_add_json_str(out, s->dsn, strlen(s->dsn));
  idgen__buf_addf(out,
                  ",\"step\":%" PRIu64 ",\"min_step\":%" PRIu64 ",\"max_step\":%" PRIu64
                  ",\"prefetch_pct\":%" PRIu64 ",\"current_left\":%" PRIu64
                  ",\"next_left\":%" PRIu64 ",\"last_leased\":%" PRIu64
                  ",\"blocks_fetched\":%" PRIu64 ",\"backend_errors\":%" PRIu64
                  ",\"refused\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"backend_ok\":%s",
                  st.step, s->min_step, s->max_step, s->prefetch_pct, st.current_left,
                  st.next_left, st.last_max, st.blocks_fetched, st.backend_errors,
                  st.refused, st.waits, st.backend_ok ? "true" : "false");
  if (s->tz)
    idgen__buf_addf(out,
                    ",\"period\":\"%s\",\"timezone\":\"%s\",\"current_period\":%" PRIu64
                    ",\"period_dropped\":%" PRIu64 ",\"period_burnt\":%" PRIu64,
                    s->period, idgen__tz_name(s->tz), st.period, st.period_dropped,
                    st.period_burnt);
  if (s->has_format) {
    const idgen__seg_format *f = format_of(g);
    idgen__buf_adds(out, ",\"format\":");
    idgen__buf_add_json_str(out, f->template_text, strlen(f->template_text));
  }
  idgen__buf_adds(out, ",\"last_error\":");
  idgen__buf_add_json_str(out, why, strlen(why));
}

static void seg_info_text(idgen__generator *g, idgen__buf *out) {
  segment *s = of(g);
  if (s->backend->vtable->warning) { /* what its server can lose (redis), once a change */
    char warning[IDGEN_SEGMENT_WHY_MAX];
    s->backend->vtable->warning(s->backend, warning, sizeof warning);
    if (strcmp(warning, s->last_warning)) {
      if (warning[0])
        idgen__log("warn", "segment", "generator=%s backend=%s %s", g->name, s->backend_name,
                   warning);
      snprintf(s->last_warning, sizeof s->last_warning, "%s", warning);
    }
  }
  idgen__segment_stats st;
  idgen__segment_stats_get(s->seg, &st);
  char why[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_last_error(s->seg, why, sizeof why);
  for (char *c = why; *c; c++)
    if (*c == '\r' || *c == '\n')
      *c = ' ';
  idgen__buf_addf(out,
                  "backend:%s\r\nstep:%" PRIu64 "\r\ncurrent_left:%" PRIu64
                  "\r\nnext_left:%" PRIu64 "\r\nlast_leased:%" PRIu64
                  "\r\nblocks_fetched:%" PRIu64 "\r\nbackend_errors:%" PRIu64
                  "\r\nrefused:%" PRIu64 "\r\nbackend_ok:%d\r\nlast_error:%s\r\n",
                  s->backend_name, st.step, st.current_left, st.next_left, st.last_max,
                  st.blocks_fetched, st.backend_errors, st.refused, st.backend_ok, why);
}

static void seg_info_line(idgen__generator *g, idgen__buf *out) {
  segment *s = of(g);
  idgen__segment_stats st;
  idgen__segment_stats_get(s->seg, &st);
  idgen__buf_addf(out,
                  ",backend=%s,step=%" PRIu64 ",current_left=%" PRIu64 ",next_left=%" PRIu64
                  ",last_leased=%" PRIu64 ",blocks_fetched=%" PRIu64
                  ",backend_errors=%" PRIu64 ",backend_ok=%d",
                  s->backend_name, st.step, st.current_left, st.next_left, st.last_max,
                  st.blocks_fetched, st.backend_errors, st.backend_ok);
}

/* Logs each change of the backend's health and of readiness. */
static void seg_watch(idgen__generator *g) {
  segment *s = of(g);
  if (s->backend->vtable->warning) { /* what its server can lose (redis), once a change */
    char warning[IDGEN_SEGMENT_WHY_MAX];
    s->backend->vtable->warning(s->backend, warning, sizeof warning);
    if (strcmp(warning, s->last_warning)) {
      if (warning[0])
        idgen__log("warn", "segment", "generator=%s backend=%s %s", g->name, s->backend_name,
                   warning);
      snprintf(s->last_warning, sizeof s->last_warning, "%s", warning);
    }
  }
  idgen__segment_stats st;
  idgen__segment_stats_get(s->seg, &st);
  char why[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_last_error(s->seg, why, sizeof why);
  if (st.backend_ok == s->last_ok && st.ready == s->last_ready &&
      !strcmp(why, s->last_error))
    return;
  if (st.blocks_fetched > 0 || why[0])
    idgen__log(st.backend_ok ? "info"
               : st.ready    ? "warn"
                             : "error",
               "segment",
               "generator=%s backend=%s state=%s ready=%d step=%" PRIu64 " left=%" PRIu64
               "%s%s",
               g->name, s->backend_name, st.backend_ok ? "ok" : "failing", st.ready,
               st.step, st.current_left + st.next_left, why[0] ? " error=" : "", why);
  s->last_ok = st.backend_ok;
  s->last_ready = st.ready;
  snprintf(s->last_error, sizeof s->last_error, "%s", why);
}

/* A new format compiled for the reload; the reload refuses adding or removing one (the
 * text form is what clients get by default). */
static int seg_live_make(idgen__generator *g, const idgen__gen_spec *spec, void **out,
                         char *err, size_t errlen) {
  segment *s = of(g);
  *out = NULL;
  if (!s->has_format || !spec->format[0] ||
      !strcmp(spec->format, format_of(g)->template_text))
    return 0;
  idgen__seg_format *f = malloc(sizeof *f);
  if (!f) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (idgen__gen_spec_format(spec, f, err, errlen) < 0) {
    free(f);
    return -1;
  }
  if (format_admit(s, spec->name, f, err, errlen) < 0) {
    free(f);
    return -1;
  }
  *out = f;
  return 0;
}

static void *seg_live_swap(idgen__generator *g, void *made) {
  return atomic_exchange_explicit(&of(g)->format, (idgen__seg_format *)made,
                                  memory_order_acq_rel);
}

/* ---- Metrics --------------------------------------------------------------------- */

#define STATS(g)                                                                           \
  idgen__segment_stats st;                                                                 \
  idgen__segment_stats_get(of(g)->seg, &st)

/* A family that shows one uint64_t field of the stats as it is. */
static void m_field(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  STATS(g);
  idgen__gen_sample_u64(g, f, &st, out);
}
static void m_fetch_latency(idgen__generator *g, const idgen__gen_family *f,
                            idgen__buf *out) {
  STATS(g);
  char labels[48];
  snprintf(labels, sizeof labels, ",backend=\"%s\"", of(g)->backend_name);
  idgen__gen_add_histogram(g, f->name, labels, &st.fetch_latency, out);
}
static void m_left(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  STATS(g);
  idgen__gen_sample(g, f, ",block=\"current\"", (double)st.current_left, out);
  idgen__gen_sample(g, f, ",block=\"next\"", (double)st.next_left, out);
}
static void m_up(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  STATS(g);
  idgen__gen_sample(g, f, "", st.backend_ok, out);
}

#define FIELD(f) m_field, offsetof(idgen__segment_stats, f)

static const idgen__gen_family families[] = {
    {"idgen_segment_blocks_fetched_total", "counter",
     "Blocks of numbers leased from the backend.", FIELD(blocks_fetched)},
    {"idgen_segment_fetch_duration_seconds", "histogram",
     "Time to lease one block from the backend, failed attempts included.", m_fetch_latency,
     0},
    {"idgen_segment_numbers_left", "gauge",
     "Numbers not yet handed out, in the current block and in the buffered next one.",
     m_left, 0},
    {"idgen_segment_step", "gauge",
     "The size of the last block leased (it adapts to demand).", FIELD(step)},
    {"idgen_segment_backend_errors_total", "counter", "Failed attempts to lease a block.",
     FIELD(backend_errors)},
    {"idgen_segment_refused_total", "counter",
     "Calls refused: the backend down and no buffered number left.", FIELD(refused)},
    {"idgen_segment_waits_total", "counter",
     "Calls that found both blocks used up and waited for a fetch.", FIELD(waits)},
    {"idgen_segment_backend_up", "gauge", "1 if the backend's last answer was a block.",
     m_up, 0},
    {"idgen_segment_leased_max", "gauge",
     "The highest number leased so far: numbers handed out lie at or below it.",
     FIELD(last_max)},
};

const idgen__gen_class idgen__gen_segment_class = {
    .kind = KIND_SEGMENT,
    .open = seg_open,
    .next_batch = seg_next_batch,
    .next_range = seg_next_range,
    .ready = seg_ready,
    .issued = seg_issued,
    .info_json = seg_info_json,
    .info_text = seg_info_text,
    .info_line = seg_info_line,
    .watch = seg_watch,
    .live_make = seg_live_make,
    .live_swap = seg_live_swap,
    .close = seg_close,
    .families = families,
    .nfamilies = sizeof families / sizeof families[0],
};
