/* gen_snowflake.c: the snowflake kind: a generator armed by its own lease keeper (the
 * worker-ID provider is known only here), its readiness, info and metrics. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/etcd.h"
#include "idgen/redis.h"
#include "idgen/zookeeper.h"
#include "server/generator.h"
#include "server/log.h"

typedef struct snowflake {
  idgen__generator base;
  idgen_layout layout;
  idgen_policy policy;
  idgen_lease_config lease_cfg; /* the spec's: provider, namespace, region, ahead */
  idgen_gen *gen;
  idgen_lease *lease;      /* the provider */
  idgen_lease_space space; /* the worker IDs it may claim: datacenter, range */
  idgen_keeper *keeper;    /* renewal, HWM writes, arming, in its own thread */
  uint64_t seq_reset_threshold;
  int wall_clock;
  /* format PREFIX{base62}: PREFIX (heap), NULL for none; a reload publishes a new one
   * (release) and retires this one (server/grace.h): readers load it once (acquire). */
  _Atomic(char *) prefix;
  /* The main thread's watch: the last state and error logged. */
  int last_state;
  int64_t last_worker;
  char last_error[256];
} snowflake;

static snowflake *of(idgen__generator *g) {
  return (snowflake *)g;
}

static void sf_close(idgen__generator *g) {
  snowflake *s = of(g);
  if (s->keeper) {
    idgen_keeper_stats ks;
    idgen_keeper_stats_get(s->keeper, &ks);
    /* Disarms, writes the final HWM (the last ms issued) and releases the worker ID. */
    int rc = idgen_keeper_stop(s->keeper);
    int64_t last = idgen_gen_last_ms(s->gen);
    char when[40] = "none";
    if (last > 0)
      idgen_format_time(last, when, sizeof when);
    idgen__log(rc < 0 ? "error" : "info", "final_hwm",
               "provider=%s worker=%lld last_ms=%" PRId64 " (%s) release=%s generator=%s",
               idgen_lease_kind_name(s->lease_cfg.kind), (long long)ks.worker, last, when,
               rc < 0 ? idgen_strerror(rc) : "ok", g->name);
  }
  idgen_keeper_free(s->keeper);
  idgen_lease_free(s->lease);
  idgen_gen_free(s->gen);
  free(atomic_load(&s->prefix));
  free(s);
}

/* PREFIX + the ID's 11 base62 characters (docs/codecs.md), and back. */
static const char *prefix_of(const idgen__generator *g) {
  snowflake *s = (snowflake *)(uintptr_t)g; /* the atomic load reads, never writes */
  return atomic_load_explicit(&s->prefix, memory_order_acquire);
}

static int sf_text_of(const idgen__generator *g, uint64_t id, char *out, size_t outlen) {
  const char *prefix = prefix_of(g);
  size_t plen = strlen(prefix);
  if (outlen <= plen)
    return IDGEN_EBUFSIZE;
  memcpy(out, prefix, plen);
  int n = idgen_id_format(id, IDGEN_FORMAT_BASE62, g->layout, out + plen, outlen - plen);
  return n < 0 ? n : (int)plen + n;
}

static int sf_id_of(const idgen__generator *g, const char *text, size_t len, uint64_t *id) {
  const char *prefix = prefix_of(g);
  size_t plen = strlen(prefix);
  if (len <= plen || memcmp(text, prefix, plen))
    return IDGEN_EFORMAT;
  return idgen_id_parse(text + plen, len - plen, IDGEN_FORMAT_BASE62, g->layout, id);
}

/* A reload's new prefix; adding or removing a format is refused by the reload. */
static int sf_live_make(idgen__generator *g, const idgen__gen_spec *spec, void **out,
                        char *err, size_t errlen) {
  *out = NULL;
  char prefix[IDGEN__SNOWFLAKE_PREFIX_MAX + 1];
  if (!g->text_of || !spec->format[0])
    return 0;
  if (idgen__snowflake_prefix(spec, prefix, sizeof prefix, err, errlen) < 0)
    return -1;
  if (!strcmp(prefix, prefix_of(g)))
    return 0;
  if (!(*out = strdup(prefix))) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

static void *sf_live_swap(idgen__generator *g, void *made) {
  return atomic_exchange_explicit(&of(g)->prefix, (char *)made, memory_order_acq_rel);
}

static int sf_open(idgen__generator **out, const idgen__gen_spec *spec,
                   const idgen__gen_env *env, char *err, size_t errlen) {
  snowflake *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  s->base.vtable = &idgen__gen_snowflake_class;
  s->base.layout = &s->layout;
  s->lease_cfg = spec->lease;
  s->wall_clock = env->wall_clock;
  s->seq_reset_threshold = spec->seq_reset_threshold;
  s->last_state = -1;
  s->last_worker = -2;
  idgen__snowflake_choices choices;
  int rc = IDGEN_EINVAL;
  if (idgen__gen_spec_parse(spec, &choices, err, errlen) < 0)
    goto fail;
  if (spec->format[0]) {
    char prefix[IDGEN__SNOWFLAKE_PREFIX_MAX + 1];
    if (idgen__snowflake_prefix(spec, prefix, sizeof prefix, err, errlen) < 0)
      goto fail;
    char *p = strdup(prefix);
    if (!p) {
      snprintf(err, errlen, "out of memory");
      rc = IDGEN_ENOMEM;
      goto fail;
    }
    atomic_store_explicit(&s->prefix, p, memory_order_release);
    s->base.text_of = sf_text_of;
    s->base.id_of = sf_id_of;
  }
  s->layout = choices.layout;
  s->policy = choices.policy;
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, env->clock);
  gc.layout = s->layout;
  gc.policy = s->policy;
  gc.seq_reset_threshold = spec->seq_reset_threshold;
  gc.armed = 0; /* the keeper arms it once a worker ID is held and past its HWM */
  rc = idgen_gen_new(&s->gen, &gc);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: %s", spec->name, idgen_strerror(rc));
    goto fail;
  }
  char why[256];
  /* The server links every provider. */
  static const idgen_lease_provider *const providers[] = {&idgen_lease_etcd,
                                                         &idgen_lease_redis,
                                                         &idgen_lease_zookeeper, NULL};
  idgen_lease_config lc = spec->lease;
  lc.providers = providers;
  rc = idgen_lease_open(&s->lease, &lc, &s->layout, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: %s", spec->name, why);
    goto fail;
  }
  /* A provider may open with a warning (redis: what its server can lose). */
  if (idgen_lease_why(s->lease)[0])
    idgen__log("warn", "lease", "generator=%s %s", spec->name, idgen_lease_why(s->lease));
  idgen_lease_space_of(&spec->lease, &s->layout, &s->space, NULL, 0); /* checked */
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &spec->lease);
  kc.lease = s->lease;
  kc.gen = s->gen;
  rc = idgen_keeper_new(&s->keeper, &kc);
  if (rc < 0) {
    snprintf(err, errlen, "generator %s: lease %s: %s", spec->name,
             idgen_lease_kind_name(spec->lease.kind),
             idgen_lease_why(s->lease)[0] ? idgen_lease_why(s->lease) : idgen_strerror(rc));
    goto fail;
  }
  *out = &s->base;
  return 0;
fail:
  sf_close(&s->base);
  return rc;
}

static int64_t sf_next_batch(idgen__generator *g, uint64_t *ids, size_t n) {
  return idgen_gen_next_batch(of(g)->gen, ids, n);
}

static int sf_ready(idgen__generator *g, char *reason, size_t reasonlen) {
  static const char *const not_ready[] = {
      [IDGEN_KEEPER_ACQUIRING] = "lease: trying to win a worker ID",
      [IDGEN_KEEPER_WAITING_HWM] = "lease: waiting for the clock to pass the HWM",
      [IDGEN_KEEPER_LOST] = "lease: lost, trying to win a worker ID again",
      [IDGEN_KEEPER_STOPPED] = "lease: released"};
  snowflake *s = of(g);
  idgen_keeper_state state = idgen_keeper_state_get(s->keeper);
  if (state != IDGEN_KEEPER_HELD) {
    snprintf(reason, reasonlen, "%s",
             (unsigned)state < sizeof not_ready / sizeof not_ready[0] && not_ready[state]
                 ? not_ready[state]
                 : "lease: unknown state");
    return 0;
  }
  idgen_gen_stats st;
  idgen_gen_stats_get(s->gen, &st);
  if (st.armed)
    return 1;
  snprintf(reason, reasonlen, "%s",
           st.refused_lease ? "worker lease expired: not issuing"
           : st.refused_cap ? "high-water mark cap reached: not issuing"
                            : "no worker ID held");
  return 0;
}

static uint64_t sf_issued(idgen__generator *g) {
  idgen_gen_stats st;
  idgen_gen_stats_get(of(g)->gen, &st);
  return st.issued;
}

/* "datacenter":N|null,"region":"..","worker_range":{"field":..,"lo":..,"hi":..} */
static void add_space_json(snowflake *s, idgen__buf *out) {
  const idgen_lease_space *sp = &s->space;
  if (sp->datacenter >= 0)
    idgen__buf_addf(out, ",\"datacenter\":%lld", (long long)sp->datacenter);
  else
    idgen__buf_adds(out, ",\"datacenter\":null");
  idgen__buf_adds(out, ",\"region\":");
  idgen__buf_add_json_str(out, s->lease_cfg.region, strlen(s->lease_cfg.region));
  idgen__buf_adds(out, ",\"worker_range\":{\"field\":");
  idgen__buf_add_json_str(out, sp->field, strlen(sp->field));
  idgen__buf_addf(out, ",\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 "}", sp->lo, sp->hi);
}

static void sf_info_json(idgen__generator *g, idgen__buf *out) {
  snowflake *s = of(g);
  idgen_gen_stats st;
  idgen_gen_stats_get(s->gen, &st);
  char spec[256];
  if (idgen_layout_format(&s->layout, spec, sizeof spec) < 0)
    spec[0] = 0;
  idgen__buf_adds(out, ",\"layout\":{\"name\":");
  idgen__buf_add_json_str(out, s->layout.name, strlen(s->layout.name));
  idgen__buf_adds(out, ",\"spec\":");
  idgen__buf_add_json_str(out, spec, strlen(spec));
  idgen__buf_adds(out, ",\"epoch\":");
  idgen__gen_add_time(out, s->layout.epoch_ms);
  idgen__buf_addf(out,
                  ",\"epoch_ms\":%" PRId64
                  ",\"unit_ms\":%u,\"time_bits\":%u,\"node_bits\":%u,"
                  "\"seq_bits\":%u,\"end\":",
                  s->layout.epoch_ms, s->layout.unit_ms, s->layout.time_bits,
                  s->layout.node_bits, s->layout.seq_bits);
  idgen__gen_add_time(out, idgen_layout_end_ms(&s->layout));
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(s->keeper, &ks);
  idgen__buf_addf(out, "},\"worker_id\":%lld", (long long)ks.worker);
  add_space_json(s, out);
  const char *provider = idgen_lease_kind_name(s->lease_cfg.kind);
  idgen__buf_addf(out, ",\"provider\":\"%s\",\"provider_detail\":\"%s\",\"namespace\":",
                  provider, provider);
  idgen__buf_add_json_str(out, s->lease_cfg.ns, strlen(s->lease_cfg.ns));
  const char *prefix = g->text_of ? prefix_of(g) : NULL;
  if (prefix) /* its text form: PREFIX{base62} */
    idgen__buf_addf(out, ",\"format\":\"%s{base62}\"", prefix);
  idgen__buf_addf(out,
                  ",\"lease\":{\"state\":\"%s\",\"renewals\":%" PRIu64
                  ",\"losses\":%" PRIu64 ",\"floor\":",
                  idgen_keeper_state_name(ks.state), ks.renewals, ks.lease_lost);
  idgen__gen_add_time(out, ks.floor_ms);
  idgen__buf_adds(out, ",\"deadline\":");
  if (st.deadline_ns == IDGEN_NO_DEADLINE)
    idgen__buf_adds(out, "null");
  else
    idgen__gen_add_time(out, st.deadline_ns / 1000000);
  idgen__buf_adds(out, ",\"cap\":");
  idgen__gen_add_time(out, st.cap_ms == IDGEN_NO_CAP ? 0 : st.cap_ms);
  char lease_error[256];
  idgen_keeper_last_error(s->keeper, lease_error, sizeof lease_error);
  idgen__buf_adds(out, ",\"last_error\":");
  idgen__buf_add_json_str(out, lease_error, strlen(lease_error));
  idgen__buf_adds(out, "},\"hwm\":");
  idgen__gen_add_time(out, ks.hwm_ms);
  idgen__buf_addf(
      out,
      ",\"hwm_ms\":%" PRId64 ",\"hwm_ahead_ms\":%" PRId64 ",\"last_ms\":%" PRId64
      ",\"seq_reset_threshold\":%" PRIu64 ",\"clock\":{\"source\":\"%s\","
      "\"policy\":\"%s\"}",
      ks.hwm_ms, s->lease_cfg.ahead_ms, st.last_ms, s->seq_reset_threshold,
      s->wall_clock ? "wall" : "monotonic anchored to wall", idgen_policy_name(s->policy));
}

static void sf_info_text(idgen__generator *g, idgen__buf *out) {
  snowflake *s = of(g);
  idgen_gen_stats st;
  idgen_gen_stats_get(s->gen, &st);
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(s->keeper, &ks);
  char spec[256];
  if (idgen_layout_format(&s->layout, spec, sizeof spec) < 0)
    spec[0] = 0;
  idgen__buf_addf(out,
                  "layout:%s\r\nlayout_spec:%s\r\nepoch_ms:%" PRId64
                  "\r\nworker_id:%lld\r\nprovider:%s\r\nnamespace:%s\r\nlease_state:%s"
                  "\r\nhwm_ms:%" PRId64 "\r\npolicy:%s\r\ndatacenter:%lld\r\nregion:%s"
                  "\r\nworker_range:%" PRIu64 "-%" PRIu64 "\r\nsequence_waits:%" PRIu64
                  "\r\nclock_back:%" PRIu64 "\r\n",
                  s->layout.name, spec, s->layout.epoch_ms, (long long)ks.worker,
                  idgen_lease_kind_name(s->lease_cfg.kind), s->lease_cfg.ns,
                  idgen_keeper_state_name(ks.state), ks.hwm_ms,
                  idgen_policy_name(s->policy), (long long)s->space.datacenter,
                  s->lease_cfg.region, s->space.lo, s->space.hi, st.seq_waits,
                  st.clock_back);
}

static void sf_info_line(idgen__generator *g, idgen__buf *out) {
  snowflake *s = of(g);
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(s->keeper, &ks);
  idgen__buf_addf(out, ",layout=%s,worker_id=%lld,lease_state=%s,namespace=%s",
                  s->layout.name, (long long)ks.worker, idgen_keeper_state_name(ks.state),
                  s->lease_cfg.ns);
}

/* Logs each change of the keeper's state or worker ID, and each new lease error. */
static void sf_watch(idgen__generator *g) {
  snowflake *s = of(g);
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(s->keeper, &ks);
  if ((int)ks.state != s->last_state || ks.worker != s->last_worker) {
    char reason[160] = "";
    int ready = sf_ready(g, reason, sizeof reason);
    idgen__log(ks.state == IDGEN_KEEPER_LOST ? "error" : "info", "lease",
               "state=%s worker_id=%lld ready=%d generator=%s%s%s",
               idgen_keeper_state_name(ks.state), (long long)ks.worker, ready, g->name,
               ready ? "" : " reason=", ready ? "" : reason);
    s->last_state = (int)ks.state;
    s->last_worker = ks.worker;
  }
  char lease_err[256];
  idgen_keeper_last_error(s->keeper, lease_err, sizeof lease_err);
  if (strcmp(lease_err, s->last_error) != 0) {
    if (lease_err[0])
      idgen__log("warn", "lease_error", "%s generator=%s", lease_err, g->name);
    snprintf(s->last_error, sizeof s->last_error, "%s", lease_err);
  }
}

/* ---- Metrics --------------------------------------------------------------------- */

#define GEN_STATS(g)                                                                       \
  idgen_gen_stats st;                                                                      \
  idgen_gen_stats_get(of(g)->gen, &st)
#define KEEPER_STATS(g)                                                                    \
  idgen_keeper_stats ks;                                                                   \
  idgen_keeper_stats_get(of(g)->keeper, &ks)

/* Families that show one uint64_t field of the generator's or the keeper's stats. */
static void m_gen(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  GEN_STATS(g);
  idgen__gen_sample_u64(g, f, &st, out);
}
static void m_keeper(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  KEEPER_STATS(g);
  idgen__gen_sample_u64(g, f, &ks, out);
}
static void m_clock_back(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  GEN_STATS(g);
  idgen__gen_sample(g, f, ",outcome=\"waited\"", (double)st.clock_back_waited, out);
  idgen__gen_sample(g, f, ",outcome=\"logical\"", (double)st.clock_back_logical, out);
  idgen__gen_sample(g, f, ",outcome=\"failed\"", (double)st.clock_back_failed, out);
}
static void m_refused(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  GEN_STATS(g);
  idgen__gen_sample(g, f, ",reason=\"lease\"", (double)st.refused_lease, out);
  idgen__gen_sample(g, f, ",reason=\"cap\"", (double)st.refused_cap, out);
  idgen__gen_sample(g, f, ",reason=\"unarmed\"", (double)st.refused_unarmed, out);
}
static void m_last_issued(idgen__generator *g, const idgen__gen_family *f,
                          idgen__buf *out) {
  GEN_STATS(g);
  idgen__gen_sample(g, f, "", (double)st.last_ms / 1e3, out);
}
static void m_cap(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  GEN_STATS(g);
  idgen__gen_sample(g, f, "", st.cap_ms == IDGEN_NO_CAP ? 0.0 : (double)st.cap_ms / 1e3,
                    out);
}
static void m_renewals(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  KEEPER_STATS(g);
  idgen__gen_sample(g, f, ",outcome=\"ok\"", (double)ks.renewals, out);
  idgen__gen_sample(g, f, ",outcome=\"failed\"", (double)ks.renewal_failures, out);
}
static void m_hwm(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  KEEPER_STATS(g);
  idgen__gen_sample(g, f, "", (double)ks.hwm_ms / 1e3, out);
}
static void m_lease_state(idgen__generator *g, const idgen__gen_family *f,
                          idgen__buf *out) {
  KEEPER_STATS(g);
  for (unsigned i = IDGEN_KEEPER_ACQUIRING; i <= IDGEN_KEEPER_STOPPED; i++) {
    char labels[64];
    snprintf(labels, sizeof labels, ",state=\"%s\"",
             idgen_keeper_state_name((idgen_keeper_state)i));
    idgen__gen_sample(g, f, labels, (unsigned)ks.state == i, out);
  }
}
static void m_lease_latency(idgen__generator *g, const idgen__gen_family *f,
                            idgen__buf *out) {
  idgen_lease_latency lat;
  idgen_lease_latency_get(of(g)->lease, &lat);
  char labels[64];
  snprintf(labels, sizeof labels, ",provider=\"%s\"",
           idgen_lease_kind_name(of(g)->lease_cfg.kind));
  idgen__gen_add_histogram(g, f->name, labels, &lat, out);
}
static void m_datacenter(idgen__generator *g, const idgen__gen_family *f, idgen__buf *out) {
  char labels[IDGEN_LEASE_NAME_MAX + 16];
  snprintf(labels, sizeof labels, ",region=\"%s\"", of(g)->lease_cfg.region);
  idgen__gen_sample(g, f, labels, (double)of(g)->space.datacenter, out);
}
static void m_worker_range(idgen__generator *g, const idgen__gen_family *f,
                           idgen__buf *out) {
  idgen__gen_sample(g, f, ",bound=\"lo\"", (double)of(g)->space.lo, out);
  idgen__gen_sample(g, f, ",bound=\"hi\"", (double)of(g)->space.hi, out);
}

#define GEN(f) m_gen, offsetof(idgen_gen_stats, f)
#define KEEPER(f) m_keeper, offsetof(idgen_keeper_stats, f)

static const idgen__gen_family families[] = {
    {"idgen_sequence_exhausted_waits_total", "counter",
     "Times a time unit's sequence ran out and the generator waited for the next unit.",
     GEN(seq_waits)},
    {"idgen_clock_back_total", "counter",
     "Calls that found the clock behind the last ID, by outcome.", m_clock_back, 0},
    {"idgen_cap_waits_total", "counter",
     "Times the generator waited at the high-water cap.", GEN(cap_waits)},
    {"idgen_refused_total", "counter", "Calls refused, by reason.", m_refused, 0},
    {"idgen_worker_id", "gauge", "The worker ID held.", GEN(worker)},
    {"idgen_last_issued_timestamp_seconds", "gauge",
     "The newest time field issued, Unix seconds.", m_last_issued, 0},
    {"idgen_cap_timestamp_seconds", "gauge",
     "The time above which nothing is issued, Unix seconds (0: no cap).", m_cap, 0},
    {"idgen_lease_renewals_total", "counter", "Lease keepalives, by outcome.", m_renewals,
     0},
    {"idgen_lease_losses_total", "counter", "Leases lost (deadline or fence).",
     KEEPER(lease_lost)},
    {"idgen_lease_acquisitions_total", "counter", "Worker IDs won.", KEEPER(acquisitions)},
    {"idgen_lease_skipped_total", "counter",
     "Free worker IDs passed over for an unreadable HWM record.", KEEPER(skipped)},
    {"idgen_hwm_writes_total", "counter", "High-water marks persisted.",
     KEEPER(hwm_writes)},
    {"idgen_hwm_persisted_timestamp_seconds", "gauge",
     "The last HWM persisted (the cap), Unix seconds.", m_hwm, 0},
    {"idgen_lease_state", "gauge", "The lease keeper's state: 1 for the one it is in.",
     m_lease_state, 0},
    {"idgen_lease_request_duration_seconds", "histogram",
     "Requests to the coordination service (etcd, zookeeper), by provider; none for local providers.",
     m_lease_latency, 0},
    {"idgen_lease_datacenter", "gauge",
     "The datacenter (the layout's high node field, --datacenter) this generator issues "
     "in, "
     "by region; -1: none.",
     m_datacenter, 0},
    {"idgen_lease_worker_range", "gauge",
     "The values of the claimed field the provider may take (--worker-id-range), by "
     "bound.",
     m_worker_range, 0},
};

const idgen__gen_class idgen__gen_snowflake_class = {
    .kind = KIND_SNOWFLAKE,
    .open = sf_open,
    .next_batch = sf_next_batch,
    .ready = sf_ready,
    .issued = sf_issued,
    .info_json = sf_info_json,
    .info_text = sf_info_text,
    .info_line = sf_info_line,
    .watch = sf_watch,
    .live_make = sf_live_make,
    .live_swap = sf_live_swap,
    .close = sf_close,
    .families = families,
    .nfamilies = sizeof families / sizeof families[0],
};
