/* metrics.h: the server's counters, one shard per thread (no sharing on the hot path),
 * summed when /metrics is rendered in the Prometheus text format. */
#ifndef IDGEN_SERVER_METRICS_H
#define IDGEN_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "server/buf.h"
#include "server/config.h"
#include "server/kind.h"

typedef enum idgen__route {
  ROUTE_ID,
  ROUTE_IDS,
  ROUTE_RANGE,
  ROUTE_UUID7,
  ROUTE_UUID4,
  ROUTE_ULID,
  ROUTE_DECODE,
  ROUTE_BOUNDS,
  ROUTE_INFO,
  ROUTE_HEALTHZ,
  ROUTE_READYZ,
  ROUTE_METRICS,
  ROUTE_STATUS,  /* GET /: the status page */
  ROUTE_CALLERS, /* GET /v1/callers: the top callers (server/callers.h) */
  ROUTE_OTHER,
  ROUTE_COUNT
} idgen__route;

typedef enum idgen__status_slot {
  ST_200,
  ST_400,
  ST_401,
  ST_403,
  ST_404,
  ST_405,
  ST_413,
  ST_414,
  ST_429,
  ST_431,
  ST_500,
  ST_503,
  ST_OTHER,
  ST_COUNT
} idgen__status_slot;

typedef enum idgen__rcmd {
  RCMD_PING,
  RCMD_ID,
  RCMD_IDS,
  RCMD_RANGE,
  RCMD_UUID7,
  RCMD_UUID4,
  RCMD_ULID,
  RCMD_DECODE,
  RCMD_INFO,
  RCMD_QUIT,
  RCMD_AUTH,
  RCMD_HELLO,
  RCMD_ECHO,
  RCMD_CLIENT,
  RCMD_SELECT,
  RCMD_COMMAND,
  RCMD_RESET,
  RCMD_OTHER,
  RCMD_COUNT
} idgen__rcmd;

typedef enum idgen__listener {
  LISTENER_HTTP,
  LISTENER_RESP,
  LISTENER_HEALTH, /* --health-listen: plain /healthz and /readyz, HTTP's histogram */
  LISTENER_COUNT
} idgen__listener;

/* Latency buckets, upper bounds in microseconds (the last is +Inf). */
#define IDGEN_LAT_BUCKETS 10

/* One latency histogram: counts non-cumulative here, cumulative on output. */
typedef struct idgen__latency {
  _Atomic uint64_t buckets[IDGEN_LAT_BUCKETS];
  _Atomic uint64_t sum_ns;
} idgen__latency;

/* Per token (its name's slot, server/tokens.h): requests it made, IDs it was issued, 403s
 * (a generator it may not use) and quota refusals (429, over_burst). */
typedef enum idgen__token_stat {
  TOKEN_REQUESTS,
  TOKEN_IDS,
  TOKEN_REFUSED,
  TOKEN_QUOTA,
  TOKEN_STAT_COUNT
} idgen__token_stat;

typedef struct idgen__metrics {
  _Atomic uint64_t issued[KIND_COUNT];
  _Atomic uint64_t http[ROUTE_COUNT][ST_COUNT];
  _Atomic uint64_t resp[RCMD_COUNT][2]; /* [ok, error] */
  idgen__latency lat[LISTENER_COUNT];   /* HTTP requests; RESP commands */
  _Atomic uint64_t conns_accepted[LISTENER_COUNT], conns_refused[LISTENER_COUNT];
  _Atomic uint64_t auth_failures[LISTENER_COUNT]; /* a wrong token presented */
  _Atomic uint64_t tls_handshakes_failed[LISTENER_COUNT];
  _Atomic uint64_t resp_protocol_errors, resp_cross_protocol;
  _Atomic uint64_t token[IDGEN__TOKEN_SLOTS][TOKEN_STAT_COUNT];
} idgen__metrics;

idgen__status_slot idgen__status_slot_of(int status);
/* Adds to this thread's shard (relaxed atomics: only this thread writes it). */
void idgen__metrics_http(idgen__metrics *m, idgen__route route, int status, int64_t ns);
void idgen__metrics_resp(idgen__metrics *m, idgen__rcmd cmd, int error, int64_t ns);
/* Inline: it runs on every issue. */
static inline void idgen__metrics_issued(idgen__metrics *m, idgen__kind kind, uint64_t n) {
  atomic_fetch_add_explicit(&m->issued[kind], n, memory_order_relaxed);
}
void idgen__metrics_auth_failed(idgen__metrics *m, idgen__listener listener);

/* Appends the summed shards in Prometheus text format 0.0.4. */
void idgen__metrics_render(const idgen__metrics *shards, size_t nshards, idgen__buf *out);
/* Appends the idgen_token_*_total families, one series per name of names[0..n). */
void idgen__metrics_render_tokens(const idgen__metrics *shards, size_t nshards,
                                  const char *const *names, size_t n, idgen__buf *out);
/* Appends idgen_build_info{version,layout,provider} 1. */
void idgen__metrics_render_build_info(const char *layout, const char *provider,
                                      idgen__buf *out);
/* Appends the process_* families every Prometheus client exports (resident and virtual
 * memory, CPU seconds, open and maximum file descriptors, start time), from /proc;
 * a family /proc cannot give is left out. */
void idgen__metrics_render_process(idgen__buf *out);
/* Appends idgen_connections_open{listener}, from the open counts of each listener. */
void idgen__metrics_render_open(const _Atomic uint64_t open[LISTENER_COUNT],
                                idgen__buf *out);

#endif
