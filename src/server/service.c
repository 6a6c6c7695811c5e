/* service.c: builds the generator and its worker-ID provider from the configuration;
 * the one place that knows which provider runs. */
#include "server/service.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen/lease.h"
#include "idgen/random.h"
#include "idgen/uuid.h"
#include "server/id_form.h"
#include "server/log.h"

#ifndef IDGEN_VERSION
#define IDGEN_VERSION "unknown"
#endif

struct idgen__svc {
  idgen__serve_config cfg;
  idgen_layout layout;
  idgen_policy policy;
  idgen_clock_mono mono;
  idgen_clock_wall wall;
  idgen_clock *clock; /* one of the two, by --clock */
  idgen_gen *gen;
  idgen_lease *lease;      /* the provider: which one is known only here */
  idgen_lease_space space; /* the worker IDs it may claim: datacenter, range */
  idgen_keeper *keeper;    /* owns renewal, HWM writes, arming, in its own thread */
  idgen_random *random;
  idgen_uuid7_gen *uuid7;
  idgen_ulid_gen *ulid;
  idgen_opaque *opaque; /* NULL without a key file */
  char provider[80];
  int64_t started_ms;
  _Atomic int stopping;
  _Atomic uint64_t conns[LISTENER_COUNT];
  _Atomic uint64_t clients; /* RESP connections so far: CLIENT ID */
  size_t nshards;
  idgen__metrics *shards;
};

int idgen__svc_new(idgen__svc **out, const idgen__serve_config *cfg, size_t nshards,
                   char *err, size_t errlen) {
  idgen__svc *svc = calloc(1, sizeof *svc);
  if (!svc) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  svc->cfg = *cfg;
  svc->started_ms = idgen_wall_ns() / 1000000;
  svc->nshards = nshards ? nshards : 1;
  svc->shards = calloc(svc->nshards, sizeof *svc->shards);
  if (!svc->shards) {
    free(svc);
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  idgen__serve_choices choices;
  int rc = IDGEN_EINVAL;
  if (idgen__serve_config_parse(cfg, &choices, err, errlen) < 0)
    goto fail;
  svc->layout = choices.layout;
  svc->policy = choices.policy;
  /* A generator's opaque tweak is its name: one key serves several generators, and
   * their opaque IDs still differ. */
  if (cfg->opaque_key_file[0] &&
      (rc = idgen__opaque_open("--opaque-key-file", cfg->opaque_key_file,
                               IDGEN__DEFAULT_GENERATOR, strlen(IDGEN__DEFAULT_GENERATOR),
                               &svc->opaque, err, errlen)) < 0)
    goto fail;
  if (choices.wall_clock) {
    idgen_clock_wall_init(&svc->wall);
    svc->clock = &svc->wall.base;
  } else {
    idgen_clock_mono_init(&svc->mono);
    svc->clock = &svc->mono.base;
  }

  idgen_gen_config gc;
  idgen_gen_config_init(&gc, svc->clock);
  gc.layout = svc->layout;
  gc.policy = svc->policy;
  gc.armed = 0; /* the keeper arms it once a worker ID is held and past its HWM */
  rc = idgen_gen_new(&svc->gen, &gc);
  if (rc < 0) {
    snprintf(err, errlen, "generator: %s", idgen_strerror(rc));
    goto fail;
  }
  rc = idgen_lease_open(&svc->lease, &cfg->lease, &svc->layout, err, errlen);
  if (rc < 0)
    goto fail;
  idgen_lease_space_of(&cfg->lease, &svc->layout, &svc->space, NULL, 0); /* checked */
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &cfg->lease);
  kc.lease = svc->lease;
  kc.gen = svc->gen;
  rc = idgen_keeper_new(&svc->keeper, &kc);
  if (rc < 0) {
    snprintf(err, errlen, "lease %s: %s", idgen_lease_kind_name(cfg->lease.kind),
             idgen_lease_why(svc->lease)[0] ? idgen_lease_why(svc->lease)
                                            : idgen_strerror(rc));
    goto fail;
  }
  snprintf(svc->provider, sizeof svc->provider, "%s",
           idgen_lease_kind_name(cfg->lease.kind));
  rc = idgen_random_system_new(&svc->random);
  if (rc < 0) {
    snprintf(err, errlen, "random source: %s", idgen_strerror(rc));
    goto fail;
  }
  idgen_uuid7_config uc = {.clock = svc->clock, .random = svc->random};
  idgen_ulid_config lc = {.clock = svc->clock, .random = svc->random, .monotonic = 1};
  if ((rc = idgen_uuid7_new(&svc->uuid7, &uc)) < 0 ||
      (rc = idgen_ulid_new(&svc->ulid, &lc)) < 0) {
    snprintf(err, errlen, "uuid: %s", idgen_strerror(rc));
    goto fail;
  }
  *out = svc;
  return 0;
fail:
  idgen_opaque_free(svc->opaque);
  idgen_ulid_free(svc->ulid);
  idgen_uuid7_free(svc->uuid7);
  idgen_random_system_free(svc->random);
  idgen_keeper_free(svc->keeper); /* stops and releases the ID */
  idgen_lease_free(svc->lease);
  idgen_gen_free(svc->gen);
  free(svc->shards);
  free(svc);
  return rc;
}

void idgen__svc_free(idgen__svc *svc) {
  if (!svc)
    return;
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(svc->keeper, &ks);
  /* Disarms, writes the final HWM (the last ms issued) and releases the worker ID. */
  int rc = idgen_keeper_stop(svc->keeper);
  int64_t last = idgen_gen_last_ms(svc->gen);
  char when[40] = "none";
  if (last > 0)
    idgen_format_time(last, when, sizeof when);
  idgen__log(rc < 0 ? "error" : "info", "final_hwm",
             "provider=%s worker=%lld last_ms=%" PRId64 " (%s) release=%s", svc->provider,
             (long long)ks.worker, last, when, rc < 0 ? idgen_strerror(rc) : "ok");
  idgen_keeper_free(svc->keeper);
  idgen_lease_free(svc->lease);
  idgen_ulid_free(svc->ulid);
  idgen_uuid7_free(svc->uuid7);
  idgen_random_system_free(svc->random);
  idgen_gen_free(svc->gen);
  idgen_opaque_free(svc->opaque);
  free(svc->shards);
  free(svc);
}

const idgen__serve_config *idgen__svc_config(const idgen__svc *svc) {
  return &svc->cfg;
}
const idgen_layout *idgen__svc_layout(const idgen__svc *svc) {
  return &svc->layout;
}
idgen__metrics *idgen__svc_shard(idgen__svc *svc, size_t i) {
  return &svc->shards[i < svc->nshards ? i : svc->nshards - 1];
}

const idgen_opaque *idgen__svc_opaque(const idgen__svc *svc) {
  return svc->opaque;
}

_Atomic uint64_t *idgen__svc_conns(idgen__svc *svc, idgen__listener listener) {
  return &svc->conns[listener];
}

uint64_t idgen__svc_client_id(idgen__svc *svc) {
  return atomic_fetch_add_explicit(&svc->clients, 1, memory_order_relaxed) + 1;
}

int idgen__svc_next(idgen__svc *svc, uint64_t *id) {
  return idgen_gen_next(svc->gen, id);
}

int64_t idgen__svc_next_batch(idgen__svc *svc, uint64_t *ids, size_t n) {
  return idgen_gen_next_batch(svc->gen, ids, n);
}

int idgen__svc_text_id(idgen__svc *svc, idgen__kind kind, char *out, size_t outlen) {
  int rc;
  if (kind == KIND_ULID) {
    idgen_ulid u;
    rc = idgen_ulid_next(svc->ulid, &u);
    return rc < 0 ? rc : idgen_ulid_format(u, out, outlen);
  }
  idgen_uuid u;
  if (kind == KIND_UUID7)
    rc = idgen_uuid7_next(svc->uuid7, &u);
  else if (kind == KIND_UUID4)
    rc = idgen_uuid4(svc->random, &u);
  else
    return IDGEN_EINVAL;
  return rc < 0 ? rc : idgen_uuid_format(u, out, outlen);
}

idgen_keeper_state idgen__svc_lease_state(idgen__svc *svc) {
  return idgen_keeper_state_get(svc->keeper);
}

void idgen__svc_lease_error(idgen__svc *svc, char *out, size_t outlen) {
  idgen_keeper_last_error(svc->keeper, out, outlen);
}

int64_t idgen__svc_worker(idgen__svc *svc) {
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(svc->keeper, &ks);
  return ks.worker;
}

int idgen__svc_ready(idgen__svc *svc, const char **reason) {
  if (atomic_load(&svc->stopping)) {
    *reason = "shutting down";
    return 0;
  }
  static const char *const not_ready[] = {
      [IDGEN_KEEPER_ACQUIRING] = "lease: trying to win a worker ID",
      [IDGEN_KEEPER_WAITING_HWM] = "lease: waiting for the clock to pass the HWM",
      [IDGEN_KEEPER_LOST] = "lease: lost, trying to win a worker ID again",
      [IDGEN_KEEPER_STOPPED] = "lease: released"};
  idgen_keeper_state state = idgen_keeper_state_get(svc->keeper);
  if (state != IDGEN_KEEPER_HELD) {
    *reason = (unsigned)state < sizeof not_ready / sizeof not_ready[0] && not_ready[state]
                  ? not_ready[state]
                  : "lease: unknown state";
    return 0;
  }
  idgen_gen_stats st;
  idgen_gen_stats_get(svc->gen, &st);
  if (!st.armed) {
    if (st.refused_lease)
      *reason = "worker lease expired: not issuing";
    else if (st.refused_cap)
      *reason = "high-water mark cap reached: not issuing";
    else
      *reason = "no worker ID held";
    return 0;
  }
  return 1;
}

void idgen__svc_begin_shutdown(idgen__svc *svc) {
  atomic_store(&svc->stopping, 1);
}
int idgen__svc_stopping(const idgen__svc *svc) {
  return atomic_load(&svc->stopping);
}

int idgen__svc_auth_required(const idgen__svc *svc) {
  return svc->cfg.auth_token[0] != 0;
}

int idgen__svc_auth_ok(const idgen__svc *svc, const char *token, size_t len) {
  const char *want = svc->cfg.auth_token;
  size_t wl = strlen(want);
  /* Constant time in the token's content; the length is not secret enough to hide. */
  unsigned diff = (unsigned)(len != wl);
  for (size_t i = 0; i < wl; i++)
    diff |= (unsigned)(unsigned char)want[i] ^
            (unsigned)(unsigned char)(i < len ? token[i] : 0);
  return wl > 0 && diff == 0;
}

static void add_time(idgen__buf *out, int64_t ms) {
  char when[40];
  if (ms > 0 && ms < INT64_MAX && idgen_format_time(ms, when, sizeof when) >= 0)
    idgen__buf_add_json_str(out, when, strlen(when));
  else
    idgen__buf_adds(out, "null");
}

/* "datacenter":N|null,"region":"..","worker_range":{"field":..,"lo":..,"hi":..} */
static void add_space_json(idgen__svc *svc, idgen__buf *out) {
  const idgen_lease_space *sp = &svc->space;
  if (sp->datacenter >= 0)
    idgen__buf_addf(out, "\"datacenter\":%lld", (long long)sp->datacenter);
  else
    idgen__buf_adds(out, "\"datacenter\":null");
  idgen__buf_adds(out, ",\"region\":");
  idgen__buf_add_json_str(out, svc->cfg.lease.region, strlen(svc->cfg.lease.region));
  idgen__buf_adds(out, ",\"worker_range\":{\"field\":");
  idgen__buf_add_json_str(out, sp->field, strlen(sp->field));
  idgen__buf_addf(out, ",\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 "}", sp->lo, sp->hi);
}

void idgen__svc_info_json(idgen__svc *svc, idgen__buf *out) {
  idgen_gen_stats st;
  idgen_gen_stats_get(svc->gen, &st);
  char spec[256];
  if (idgen_layout_format(&svc->layout, spec, sizeof spec) < 0)
    spec[0] = 0;
  const char *reason = "";
  int ready = idgen__svc_ready(svc, &reason);
  idgen__buf_adds(out, "{\"version\":\"" IDGEN_VERSION "\",\"layout\":{\"name\":");
  idgen__buf_add_json_str(out, svc->layout.name, strlen(svc->layout.name));
  idgen__buf_adds(out, ",\"spec\":");
  idgen__buf_add_json_str(out, spec, strlen(spec));
  idgen__buf_adds(out, ",\"epoch\":");
  add_time(out, svc->layout.epoch_ms);
  idgen__buf_addf(out,
                  ",\"epoch_ms\":%" PRId64
                  ",\"unit_ms\":%u,\"time_bits\":%u,\"node_bits\":%u,"
                  "\"seq_bits\":%u,\"end\":",
                  svc->layout.epoch_ms, svc->layout.unit_ms, svc->layout.time_bits,
                  svc->layout.node_bits, svc->layout.seq_bits);
  add_time(out, idgen_layout_end_ms(&svc->layout));
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(svc->keeper, &ks);
  idgen__buf_addf(out, "},\"worker_id\":%lld,", (long long)ks.worker);
  add_space_json(svc, out);
  idgen__buf_addf(out, ",\"provider\":\"%s\",\"provider_detail\":",
                  idgen_lease_kind_name(svc->cfg.lease.kind));
  idgen__buf_add_json_str(out, svc->provider, strlen(svc->provider));
  idgen__buf_addf(out,
                  ",\"lease\":{\"state\":\"%s\",\"renewals\":%" PRIu64
                  ",\"losses\":%" PRIu64 ",\"floor\":",
                  idgen_keeper_state_name(ks.state), ks.renewals, ks.lease_lost);
  add_time(out, ks.floor_ms);
  idgen__buf_adds(out, ",\"deadline\":");
  if (st.deadline_ns == IDGEN_NO_DEADLINE)
    idgen__buf_adds(out, "null");
  else
    add_time(out, st.deadline_ns / 1000000);
  idgen__buf_adds(out, ",\"cap\":");
  add_time(out, st.cap_ms == IDGEN_NO_CAP ? 0 : st.cap_ms);
  char lease_error[256];
  idgen_keeper_last_error(svc->keeper, lease_error, sizeof lease_error);
  idgen__buf_adds(out, ",\"last_error\":");
  idgen__buf_add_json_str(out, lease_error, strlen(lease_error));
  idgen__buf_adds(out, "},\"hwm\":");
  add_time(out, ks.hwm_ms);
  idgen__buf_addf(out,
                  ",\"hwm_ms\":%" PRId64 ",\"hwm_ahead_ms\":%" PRId64 ",\"now_ms\":%" PRId64
                  ",\"last_ms\":%" PRId64 ",\"clock\":{\"source\":\"%s\","
                  "\"policy\":\"%s\"},\"ready\":%s",
                  ks.hwm_ms, svc->cfg.lease.ahead_ms, idgen_wall_ns() / 1000000, st.last_ms,
                  svc->clock == &svc->mono.base ? "monotonic anchored to wall" : "wall",
                  idgen_policy_name(svc->policy), ready ? "true" : "false");
  if (!ready) {
    idgen__buf_adds(out, ",\"not_ready_reason\":");
    idgen__buf_add_json_str(out, reason, strlen(reason));
  }
  idgen__buf_addf(out, ",\"max_count\":%" PRIu64 ",\"started\":", svc->cfg.max_count);
  add_time(out, svc->started_ms);
  idgen__buf_adds(out, "}");
}

void idgen__svc_info_text(idgen__svc *svc, idgen__buf *out) {
  idgen_gen_stats st;
  idgen_gen_stats_get(svc->gen, &st);
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(svc->keeper, &ks);
  const char *reason = "";
  int ready = idgen__svc_ready(svc, &reason);
  char spec[256];
  if (idgen_layout_format(&svc->layout, spec, sizeof spec) < 0)
    spec[0] = 0;
  idgen__buf_addf(
      out,
      "# Server\r\nidgen_version:" IDGEN_VERSION "\r\nuptime_in_seconds:%" PRId64
      "\r\n# Generator\r\nlayout:%s\r\nlayout_spec:%s\r\nepoch_ms:%" PRId64
      "\r\nworker_id:%lld\r\nprovider:%s\r\nlease_state:%s\r\nhwm_ms:%" PRId64
      "\r\npolicy:%s\r\nready:%d\r\n",
      (idgen_wall_ns() / 1000000 - svc->started_ms) / 1000, svc->layout.name, spec,
      svc->layout.epoch_ms, (long long)ks.worker,
      idgen_lease_kind_name(svc->cfg.lease.kind), idgen_keeper_state_name(ks.state),
      ks.hwm_ms, idgen_policy_name(svc->policy), ready);
  if (!ready)
    idgen__buf_addf(out, "not_ready_reason:%s\r\n", reason);
  idgen__buf_addf(
      out, "datacenter:%lld\r\nregion:%s\r\nworker_range:%" PRIu64 "-%" PRIu64 "\r\n",
      (long long)svc->space.datacenter, svc->cfg.lease.region, svc->space.lo,
      svc->space.hi);
  idgen__buf_addf(out,
                  "ids_issued:%" PRIu64 "\r\nsequence_waits:%" PRIu64
                  "\r\nclock_back:%" PRIu64 "\r\n",
                  st.issued, st.seq_waits, st.clock_back);
}

void idgen__svc_metrics(idgen__svc *svc, idgen__buf *out) {
  idgen__metrics_render_build_info(svc->layout.name, svc->provider, out);
  idgen__metrics_render(svc->shards, svc->nshards, out);
  idgen_gen_stats st;
  idgen_gen_stats_get(svc->gen, &st);
  const char *reason;
  int ready = idgen__svc_ready(svc, &reason);
  idgen__buf_addf(
      out,
      "# HELP idgen_sequence_exhausted_waits_total Times a time unit's sequence ran out "
      "and "
      "the generator waited for the next unit.\n"
      "# TYPE idgen_sequence_exhausted_waits_total counter\n"
      "idgen_sequence_exhausted_waits_total %" PRIu64 "\n"
      "# HELP idgen_clock_back_total Calls that found the clock behind the last ID, by "
      "outcome.\n"
      "# TYPE idgen_clock_back_total counter\n"
      "idgen_clock_back_total{outcome=\"waited\"} %" PRIu64 "\n"
      "idgen_clock_back_total{outcome=\"logical\"} %" PRIu64 "\n"
      "idgen_clock_back_total{outcome=\"failed\"} %" PRIu64 "\n"
      "# HELP idgen_cap_waits_total Times the generator waited at the high-water cap.\n"
      "# TYPE idgen_cap_waits_total counter\n"
      "idgen_cap_waits_total %" PRIu64 "\n"
      "# HELP idgen_refused_total Calls refused, by reason.\n"
      "# TYPE idgen_refused_total counter\n"
      "idgen_refused_total{reason=\"lease\"} %" PRIu64 "\n"
      "idgen_refused_total{reason=\"cap\"} %" PRIu64 "\n"
      "idgen_refused_total{reason=\"unarmed\"} %" PRIu64 "\n"
      "# HELP idgen_worker_id The worker ID held.\n"
      "# TYPE idgen_worker_id gauge\n"
      "idgen_worker_id %" PRIu64 "\n"
      "# HELP idgen_last_issued_timestamp_seconds The newest time field issued, Unix "
      "seconds.\n"
      "# TYPE idgen_last_issued_timestamp_seconds gauge\n"
      "idgen_last_issued_timestamp_seconds %.3f\n"
      "# HELP idgen_cap_timestamp_seconds The time above which nothing is issued, Unix "
      "seconds (0: no cap).\n"
      "# TYPE idgen_cap_timestamp_seconds gauge\n"
      "idgen_cap_timestamp_seconds %.3f\n"
      "# HELP idgen_ready 1 while /readyz answers 200.\n"
      "# TYPE idgen_ready gauge\n"
      "idgen_ready %d\n",
      st.seq_waits, st.clock_back_waited, st.clock_back_logical, st.clock_back_failed,
      st.cap_waits, st.refused_lease, st.refused_cap, st.refused_unarmed, st.worker,
      (double)st.last_ms / 1e3, st.cap_ms == IDGEN_NO_CAP ? 0.0 : (double)st.cap_ms / 1e3,
      ready);
  idgen__metrics_render_open(svc->conns, out);
  idgen__metrics_render_process(out);
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(svc->keeper, &ks);
  idgen__buf_addf(
      out,
      "# HELP idgen_lease_renewals_total Lease keepalives, by outcome.\n"
      "# TYPE idgen_lease_renewals_total counter\n"
      "idgen_lease_renewals_total{outcome=\"ok\"} %" PRIu64 "\n"
      "idgen_lease_renewals_total{outcome=\"failed\"} %" PRIu64 "\n"
      "# HELP idgen_lease_losses_total Leases lost (deadline or fence).\n"
      "# TYPE idgen_lease_losses_total counter\n"
      "idgen_lease_losses_total %" PRIu64 "\n"
      "# HELP idgen_lease_acquisitions_total Worker IDs won.\n"
      "# TYPE idgen_lease_acquisitions_total counter\n"
      "idgen_lease_acquisitions_total %" PRIu64 "\n"
      "# HELP idgen_lease_skipped_total Free worker IDs passed over for an unreadable "
      "HWM record.\n"
      "# TYPE idgen_lease_skipped_total counter\n"
      "idgen_lease_skipped_total %" PRIu64 "\n"
      "# HELP idgen_hwm_writes_total High-water marks persisted.\n"
      "# TYPE idgen_hwm_writes_total counter\n"
      "idgen_hwm_writes_total %" PRIu64 "\n"
      "# HELP idgen_hwm_persisted_timestamp_seconds The last HWM persisted (the cap), "
      "Unix seconds.\n"
      "# TYPE idgen_hwm_persisted_timestamp_seconds gauge\n"
      "idgen_hwm_persisted_timestamp_seconds %.3f\n",
      ks.renewals, ks.renewal_failures, ks.lease_lost, ks.acquisitions, ks.skipped,
      ks.hwm_writes, (double)ks.hwm_ms / 1e3);
  idgen__buf_adds(out, "# HELP idgen_lease_state The lease keeper's state: 1 for the one "
                       "it is in.\n"
                       "# TYPE idgen_lease_state gauge\n");
  for (unsigned i = IDGEN_KEEPER_ACQUIRING; i <= IDGEN_KEEPER_STOPPED; i++)
    idgen__buf_addf(out, "idgen_lease_state{state=\"%s\"} %d\n",
                    idgen_keeper_state_name((idgen_keeper_state)i),
                    (unsigned)ks.state == i);
  idgen_lease_latency lat;
  idgen_lease_latency_get(svc->lease, &lat);
  static const int64_t bounds_ms[] = IDGEN_LEASE_LATENCY_BOUNDS_MS;
  idgen__buf_addf(
      out, "# HELP idgen_lease_request_duration_seconds Requests to the coordination "
           "service (etcd), by provider; none for local providers.\n"
           "# TYPE idgen_lease_request_duration_seconds histogram\n");
  uint64_t cum = 0;
  for (size_t i = 0; i < IDGEN_LEASE_LATENCY_BUCKETS; i++) {
    cum += lat.buckets[i];
    if (i < IDGEN_LEASE_LATENCY_BUCKETS - 1)
      idgen__buf_addf(
          out,
          "idgen_lease_request_duration_seconds_bucket{provider=\"%s\",le=\"%g\"} "
          "%" PRIu64 "\n",
          svc->provider, (double)bounds_ms[i] / 1e3, cum);
    else
      idgen__buf_addf(
          out,
          "idgen_lease_request_duration_seconds_bucket{provider=\"%s\",le=\"+Inf\"} "
          "%" PRIu64 "\n",
          svc->provider, cum);
  }
  idgen__buf_addf(out,
                  "idgen_lease_request_duration_seconds_sum{provider=\"%s\"} %.6f\n"
                  "idgen_lease_request_duration_seconds_count{provider=\"%s\"} %" PRIu64
                  "\n",
                  svc->provider, (double)lat.sum_us / 1e6, svc->provider, lat.count);
  idgen__buf_addf(out,
                  "# HELP idgen_lease_datacenter The datacenter (the layout's high node "
                  "field, --datacenter) this process issues in, by region; -1: none.\n"
                  "# TYPE idgen_lease_datacenter gauge\n"
                  "idgen_lease_datacenter{region=\"%s\"} %lld\n"
                  "# HELP idgen_lease_worker_range The values of the claimed field the "
                  "provider may take (--worker-id-range), by bound.\n"
                  "# TYPE idgen_lease_worker_range gauge\n"
                  "idgen_lease_worker_range{bound=\"lo\"} %" PRIu64 "\n"
                  "idgen_lease_worker_range{bound=\"hi\"} %" PRIu64 "\n",
                  svc->cfg.lease.region, (long long)svc->space.datacenter, svc->space.lo,
                  svc->space.hi);
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
  default:
    *temporary = 0;
    return "internal";
  }
}
