/* metrics.c: per-thread counters and their Prometheus text rendering, with the
 * process_* families read from /proc. */
#include "server/metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *const route_names[ROUTE_COUNT] = {
    "/v1/id",   "/v1/ids",    "/v1/range",  "/v1/uuid7",   "/v1/uuid4",
    "/v1/ulid", "/v1/decode", "/v1/bounds", "/v1/info",    "/healthz",
    "/readyz",  "/metrics",   "/",          "/v1/callers", "other"};
static const char *const status_names[ST_COUNT] = {"200", "400", "401",  "403", "404",
                                                   "405", "413", "414",  "429", "431",
                                                   "500", "503", "other"};
static const char *const rcmd_names[RCMD_COUNT] = {
    "ping", "id",    "ids",  "range", "uuid7",  "uuid4",  "ulid",    "decode", "info", "quit",
    "auth", "hello", "echo", "client", "select", "command", "reset",  "other"};
static const char *const listener_names[LISTENER_COUNT] = {"http", "resp", "health"};
/* Upper bounds in microseconds; the last bucket is +Inf. */
static const uint64_t lat_bounds_us[IDGEN_LAT_BUCKETS - 1] = {25,   50,   100,   250,   500,
                                                              1000, 2500, 10000, 100000};

idgen__status_slot idgen__status_slot_of(int status) {
  switch (status) {
  case 200:
    return ST_200;
  case 400:
    return ST_400;
  case 401:
    return ST_401;
  case 403:
    return ST_403;
  case 404:
    return ST_404;
  case 405:
    return ST_405;
  case 413:
    return ST_413;
  case 414:
    return ST_414;
  case 429:
    return ST_429;
  case 431:
    return ST_431;
  case 500:
    return ST_500;
  case 503:
    return ST_503;
  default:
    return ST_OTHER;
  }
}

static void bump(_Atomic uint64_t *c, uint64_t n) {
  atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void latency(idgen__latency *lat, int64_t ns) {
  if (ns < 0)
    ns = 0;
  uint64_t us = (uint64_t)ns / 1000;
  size_t i = 0;
  while (i < IDGEN_LAT_BUCKETS - 1 && us > lat_bounds_us[i])
    i++;
  bump(&lat->buckets[i], 1);
  bump(&lat->sum_ns, (uint64_t)ns);
}

void idgen__metrics_http(idgen__metrics *m, idgen__route route, int status, int64_t ns) {
  bump(&m->http[route][idgen__status_slot_of(status)], 1);
  latency(&m->lat[LISTENER_HTTP], ns);
}

void idgen__metrics_resp(idgen__metrics *m, idgen__rcmd cmd, int error, int64_t ns) {
  bump(&m->resp[cmd][error ? 1 : 0], 1);
  latency(&m->lat[LISTENER_RESP], ns);
}

void idgen__metrics_auth_failed(idgen__metrics *m, idgen__listener listener) {
  bump(&m->auth_failures[listener], 1);
}

static uint64_t sum(const idgen__metrics *shards, size_t n, size_t offset) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    const _Atomic uint64_t *c =
        (const _Atomic uint64_t *)((const char *)&shards[i] + offset);
    total += atomic_load_explicit(c, memory_order_relaxed);
  }
  return total;
}

#define SUM(field) sum(shards, nshards, offsetof(idgen__metrics, field))

void idgen__metrics_render(const idgen__metrics *shards, size_t nshards, idgen__buf *out) {
  idgen__buf_adds(out, "# HELP idgen_ids_issued_total IDs handed out, by kind.\n"
                       "# TYPE idgen_ids_issued_total counter\n");
  for (size_t k = 0; k < KIND_COUNT; k++)
    idgen__buf_addf(out, "idgen_ids_issued_total{kind=\"%s\"} %llu\n",
                    idgen__kind_name((idgen__kind)k), (unsigned long long)SUM(issued[k]));

  idgen__buf_adds(out,
                  "# HELP idgen_http_requests_total HTTP requests, by route and status.\n"
                  "# TYPE idgen_http_requests_total counter\n");
  for (size_t r = 0; r < ROUTE_COUNT; r++)
    for (size_t s = 0; s < ST_COUNT; s++) {
      uint64_t v = SUM(http[r][s]);
      if (v || s == ST_200)
        idgen__buf_addf(out, "idgen_http_requests_total{route=\"%s\",status=\"%s\"} %llu\n",
                        route_names[r], status_names[s], (unsigned long long)v);
    }

  idgen__buf_adds(
      out, "# HELP idgen_resp_commands_total RESP commands, by command and outcome.\n"
           "# TYPE idgen_resp_commands_total counter\n");
  for (size_t c = 0; c < RCMD_COUNT; c++)
    for (size_t e = 0; e < 2; e++)
      idgen__buf_addf(
          out, "idgen_resp_commands_total{command=\"%s\",outcome=\"%s\"} %llu\n",
          rcmd_names[c], e ? "error" : "ok", (unsigned long long)SUM(resp[c][e]));

  /* One histogram per protocol: an HTTP request and a RESP command differ in cost. */
  static const struct {
    const char *name, *help;
  } histograms[LISTENER_RESP + 1] = {
      {"idgen_http_request_duration_seconds",
       "Time to handle one HTTP request, from parsed to answered."},
      {"idgen_resp_command_duration_seconds",
       "Time to handle one RESP command, from parsed to answered."},
  };
  for (size_t l = 0; l <= LISTENER_RESP; l++) {
    const char *name = histograms[l].name;
    idgen__buf_addf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, histograms[l].help,
                    name);
    uint64_t cum = 0;
    for (size_t i = 0; i < IDGEN_LAT_BUCKETS; i++) {
      cum += SUM(lat[l].buckets[i]);
      if (i < IDGEN_LAT_BUCKETS - 1)
        idgen__buf_addf(out, "%s_bucket{le=\"%g\"} %llu\n", name,
                        (double)lat_bounds_us[i] / 1e6, (unsigned long long)cum);
      else
        idgen__buf_addf(out, "%s_bucket{le=\"+Inf\"} %llu\n", name,
                        (unsigned long long)cum);
    }
    idgen__buf_addf(out, "%s_sum %.9f\n%s_count %llu\n", name,
                    (double)SUM(lat[l].sum_ns) / 1e9, name, (unsigned long long)cum);
  }

  /* One family per counter, one sample per listener. */
  static const struct {
    const char *name, *help;
    size_t offset;
  } per_listener[] = {
      {"idgen_connections_accepted_total", "Connections accepted, by listener.",
       offsetof(idgen__metrics, conns_accepted)},
      {"idgen_connections_refused_total",
       "Connections closed at once: the listener's --max-conns reached.",
       offsetof(idgen__metrics, conns_refused)},
      {"idgen_auth_failures_total",
       "Wrong tokens presented (RESP AUTH, HTTP Authorization), by listener; a connection "
       "that presents a few is closed.",
       offsetof(idgen__metrics, auth_failures)},
      {"idgen_tls_handshakes_failed_total",
       "TLS handshakes that failed (plain text on a TLS port, an untrusted or missing "
       "client certificate, no common version or cipher), by listener.",
       offsetof(idgen__metrics, tls_handshakes_failed)},
  };
  for (size_t f = 0; f < sizeof per_listener / sizeof per_listener[0]; f++) {
    idgen__buf_addf(out, "# HELP %s %s\n# TYPE %s counter\n", per_listener[f].name,
                    per_listener[f].help, per_listener[f].name);
    for (size_t l = 0; l < LISTENER_COUNT; l++)
      idgen__buf_addf(
          out, "%s{listener=\"%s\"} %llu\n", per_listener[f].name, listener_names[l],
          (unsigned long long)sum(shards, nshards,
                                  per_listener[f].offset + l * sizeof(_Atomic uint64_t)));
  }
  idgen__buf_addf(out,
                  "# HELP idgen_resp_protocol_errors_total RESP connections closed for a "
                  "protocol error.\n"
                  "# TYPE idgen_resp_protocol_errors_total counter\n"
                  "idgen_resp_protocol_errors_total %llu\n"
                  "# HELP idgen_resp_cross_protocol_total RESP connections closed without "
                  "a reply because a line looked like HTTP (a web page posting to the "
                  "port).\n"
                  "# TYPE idgen_resp_cross_protocol_total counter\n"
                  "idgen_resp_cross_protocol_total %llu\n",
                  (unsigned long long)SUM(resp_protocol_errors),
                  (unsigned long long)SUM(resp_cross_protocol));
}

void idgen__metrics_render_open(const _Atomic uint64_t open[LISTENER_COUNT],
                                idgen__buf *out) {
  idgen__buf_adds(out, "# HELP idgen_connections_open Connections open now, by listener.\n"
                       "# TYPE idgen_connections_open gauge\n");
  for (size_t l = 0; l < LISTENER_COUNT; l++)
    idgen__buf_addf(out, "idgen_connections_open{listener=\"%s\"} %llu\n",
                    listener_names[l], (unsigned long long)atomic_load(&open[l]));
}

/* A label value as the text format wants it: backslash, quote and newline escaped. */
static void add_label(idgen__buf *out, const char *value) {
  for (const char *p = value; *p; p++) {
    if (*p == '\\' || *p == '"')
      idgen__buf_addf(out, "\\%c", *p);
    else if (*p == '\n')
      idgen__buf_adds(out, "\\n");
    else
      idgen__buf_addf(out, "%c", *p);
  }
}

void idgen__metrics_render_build_info(const char *layout, const char *provider,
                                      idgen__buf *out) {
  idgen__buf_adds(out, "# HELP idgen_build_info The version, layout and lease provider "
                       "running; always 1.\n"
                       "# TYPE idgen_build_info gauge\n"
                       "idgen_build_info{version=\"" IDGEN_VERSION "\",layout=\"");
  add_label(out, layout);
  idgen__buf_adds(out, "\",provider=\"");
  add_label(out, provider);
  idgen__buf_adds(out, "\"} 1\n");
}

/* From /proc/self/stat (proc(5)): after the ")" that ends the command name, field 3 is
 * the state; utime and stime are fields 14 and 15 (clock ticks), starttime 22 (ticks
 * after boot), vsize 23 (bytes), rss 24 (pages). */
typedef struct proc_stat {
  unsigned long long utime, stime, starttime, vsize, rss;
} proc_stat;

static int read_proc_stat(proc_stat *ps) {
  char line[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f)
    return -1;
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  const char *p = strrchr(line, ')');
  if (!p)
    return -1;
  int got = sscanf(p + 2,
                   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
                   "%*d %*d %llu %llu %llu",
                   &ps->utime, &ps->stime, &ps->starttime, &ps->vsize, &ps->rss);
  return got == 5 ? 0 : -1;
}

/* The boot time, Unix seconds: the btime line of /proc/stat. */
static long long boot_time_s(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f)
    return -1;
  char line[256];
  long long btime = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "btime %lld", &btime) == 1)
      break;
  fclose(f);
  return btime;
}

static long long open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  long long n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; /* the descriptor reading the directory */
}

static void family(idgen__buf *out, const char *name, const char *type, const char *help,
                   double value) {
  idgen__buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n", name, help, name, type,
                  name, value);
}

void idgen__metrics_render_process(idgen__buf *out) {
  long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
  proc_stat ps;
  if (ticks > 0 && page > 0 && read_proc_stat(&ps) == 0) {
    family(out, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.",
           (double)(ps.utime + ps.stime) / (double)ticks);
    family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
           (double)ps.rss * (double)page);
    family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
           (double)ps.vsize);
    long long boot = boot_time_s();
    if (boot >= 0)
      family(out, "process_start_time_seconds", "gauge",
             "Start time of the process since unix epoch in seconds.",
             (double)boot + (double)ps.starttime / (double)ticks);
  }
  long long fds = open_fds();
  if (fds >= 0)
    family(out, "process_open_fds", "gauge", "Number of open file descriptors.",
           (double)fds);
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
           (double)rl.rlim_cur);
}

void idgen__metrics_render_tokens(const idgen__metrics *shards, size_t nshards,
                                  const char *const *names, size_t n, idgen__buf *out) {
  static const struct {
    const char *name, *help;
  } families[TOKEN_STAT_COUNT] = {
      {"idgen_token_requests_total",
       "Requests (HTTP) and commands (RESP) made with a token."},
      {"idgen_token_ids_total", "IDs issued to a token's requests."},
      {"idgen_token_refused_total",
       "Requests refused as the token may not use the generator (HTTP 403, RESP NOPERM)."},
      {"idgen_token_quota_total",
       "Requests refused by the token's quota (HTTP 429 and 400 over_burst, RESP BUSY)."},
  };
  if (n == 0)
    return;
  for (size_t f = 0; f < TOKEN_STAT_COUNT; f++) {
    idgen__buf_addf(out, "# HELP %s %s\n# TYPE %s counter\n", families[f].name,
                    families[f].help, families[f].name);
    for (size_t t = 0; t < n; t++) {
      uint64_t v = 0;
      for (size_t i = 0; i < nshards; i++)
        v += atomic_load_explicit(&shards[i].token[t][f], memory_order_relaxed);
      idgen__buf_addf(out, "%s{token=\"%s\"} %llu\n", families[f].name, names[t],
                      (unsigned long long)v);
    }
  }
}
