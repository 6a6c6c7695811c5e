/* config.c: one table of options gives the flags, the IDGEN_* variables, --help and
 * --print-config, so the four cannot disagree. */
#include "server/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/clock.h"
#include "server/id_form.h"

typedef enum { OPT_STR, OPT_U64 } opt_kind;

typedef struct opt {
  const char *name; /* flag without "--"; env is IDGEN_ + upper case, '-' -> '_' */
  opt_kind kind;
  size_t off, size;
  uint64_t min, max;
  const char *def;
  const char *help;
} opt;

#define S(field)                                                                           \
  OPT_STR, offsetof(idgen__serve_config, field),                                           \
      sizeof(((idgen__serve_config *)0)->field), 0, 0
#define U(field, lo, hi) OPT_U64, offsetof(idgen__serve_config, field), 0, lo, hi

static const opt opts[] = {
    {"http", S(http), "127.0.0.1:8080", "HTTP listener ADDR:PORT; empty disables it"},
    {"resp", S(resp), "127.0.0.1:6380",
     "Redis-protocol listener ADDR:PORT; empty disables it"},
    {"layout", S(layout), "snowflake", "layout preset or spec (see `idgen layout`)"},
    {"policy", S(policy), "wait", "clock-back policy: fail, wait or logical"},
    {"clock", S(clock), "mono",
     "mono: monotonic, anchored to the wall clock at start (a step back does not reach "
     "it); wall: the wall clock as it is, so a step back meets --policy (for fault tests: "
     "lease deadlines then follow the wall clock too)"},
    {"auth-token-file", S(auth_token_file), "",
     "file holding a bearer token required by /v1/*, /metrics and RESP (AUTH)"},
    {"opaque-key-file", S(opaque_key_file), "",
     "key file (32 or 64 hex digits, `idgen opaque keygen`) of the default generator's "
     "opaque IDs: format=opaque-*, decode ?opaque=1 (docs/opaque.md); empty: none"},
    {"log-file", S(log_file), "", "event log file (SIGHUP reopens it); empty: stderr"},
    {"threads", U(threads, 0, 256), "0", "event-loop threads, 0: one per core"},
    {"max-conns", U(max_conns, 1, 1000000), "10000",
     "open connections at most, per listener (so a full RESP listener leaves HTTP, and "
     "its health checks, their own)"},
    {"max-header-bytes", U(max_header_bytes, 256, 65536), "8192",
     "request headers larger than this get 431"},
    {"max-request-line", U(max_request_line, 64, 65536), "2048",
     "request lines longer than this get 414"},
    {"header-timeout", U(header_timeout_ms, 100, 3600000), "10000",
     "ms an HTTP connection may take to send a complete request (also its keep-alive "
     "idle)"},
    {"idle-timeout", U(idle_timeout_ms, 100, 86400000), "300000",
     "ms a RESP connection may stay silent"},
    {"auth-timeout", U(auth_timeout_ms, 100, 86400000), "10000",
     "ms a RESP connection has, from its start, to send the right AUTH when a token is "
     "set (other commands do not extend it); at most --idle-timeout"},
    {"max-count", U(max_count, 1, IDGEN_SERVE_MAX_COUNT_LIMIT), "4096",
     "largest count per request (HTTP ?count=, RESP IDS n)"},
    {"shutdown-timeout", U(shutdown_timeout_ms, 0, 600000), "3000",
     "ms to finish in-flight work after SIGTERM/SIGINT"},
};
enum { NOPTS = sizeof opts / sizeof opts[0] };

/* Where each value came from, for --print-config. */
static const char *sources[NOPTS];
#define LEASE_OPT_BASE 2000
#define LEASE_OPTS_MAX 32
static const char *lease_sources[LEASE_OPTS_MAX];

static void env_name(const opt *o, char *out, size_t outlen) {
  size_t j = 0;
  const char *prefix = "IDGEN_";
  for (size_t i = 0; prefix[i] && j + 1 < outlen; i++)
    out[j++] = prefix[i];
  for (size_t i = 0; o->name[i] && j + 1 < outlen; i++) {
    char c = o->name[i];
    out[j++] = c == '-' ? '_' : (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
  }
  out[j] = 0;
}

static int set_value(idgen__serve_config *cfg, const opt *o, const char *value, char *err,
                     size_t errlen, const char *from) {
  char *field = (char *)cfg + o->off;
  if (o->kind == OPT_STR) {
    if (strlen(value) >= o->size) {
      snprintf(err, errlen, "%s --%s: value too long (%zu bytes at most)", from, o->name,
               o->size - 1);
      return -1;
    }
    strcpy(field, value);
    return 0;
  }
  const char *p = value;
  if (*p < '0' || *p > '9') {
    snprintf(err, errlen, "%s --%s: '%s' is not a number", from, o->name, value);
    return -1;
  }
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno || *end || v < o->min || v > o->max) {
    snprintf(err, errlen, "%s --%s: '%s' is not a number from %llu to %llu", from, o->name,
             value, (unsigned long long)o->min, (unsigned long long)o->max);
    return -1;
  }
  memcpy(field, &(uint64_t){v}, sizeof(uint64_t));
  return 0;
}

static void usage(FILE *out) {
  fprintf(out, "usage: idgen serve [options]\n\n"
               "Runs the ID service: HTTP/JSON and the Redis protocol (RESP2) on one event "
               "loop per\n"
               "thread. Every option can also be set by the environment variable shown; "
               "flags win.\n\n");
  for (size_t i = 0; i < NOPTS; i++) {
    char env[64];
    env_name(&opts[i], env, sizeof env);
    fprintf(out, "  --%s=%s\n      %s (default \"%s\"; %s)\n", opts[i].name,
            opts[i].kind == OPT_STR ? "TEXT" : "N", opts[i].help, opts[i].def, env);
  }
  fprintf(out, "\nWorker-ID lease (see docs/leases.md; default: the file provider):\n");
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; lo[i].name; i++)
    fprintf(out, "  --%s%s%s\n      %s%s%s%s\n", lo[i].name, lo[i].has_arg ? "=" : "",
            lo[i].has_arg ? lo[i].arg : "", lo[i].help, lo[i].env ? " (" : "",
            lo[i].env ? lo[i].env : "", lo[i].env ? ")" : "");
  fprintf(out,
          "\n  --print-config\n      print the effective configuration and exit\n"
          "  --help\n      this text\n\n"
          "Signals: SIGTERM/SIGINT stop gracefully (exit 0), SIGHUP reopens the log file.\n"
          "See docs/server.md for the routes and commands.\n");
}

idgen__config_status idgen__serve_config_load(idgen__serve_config *cfg, int argc,
                                              char **argv, FILE *out, char *err,
                                              size_t errlen) {
  memset(cfg, 0, sizeof *cfg);
  for (size_t i = 0; i < NOPTS; i++) {
    sources[i] = "default";
    if (set_value(cfg, &opts[i], opts[i].def, err, errlen, "built-in default:") < 0)
      return IDGEN_CONFIG_INTERNAL;
  }
  idgen_lease_config_init(&cfg->lease);
  const idgen_lease_option *lo = idgen_lease_options();
  size_t nlease = 0;
  while (lo[nlease].name && nlease < LEASE_OPTS_MAX) {
    lease_sources[nlease] = lo[nlease].env && getenv(lo[nlease].env) ? "env" : "default";
    nlease++;
  }
  if (idgen_lease_config_env(&cfg->lease, err, errlen) < 0)
    return IDGEN_CONFIG_USAGE;
  for (size_t i = 0; i < NOPTS; i++) {
    char env[64];
    env_name(&opts[i], env, sizeof env);
    const char *v = getenv(env);
    if (!v)
      continue;
    char from[80];
    snprintf(from, sizeof from, "%s:", env);
    if (set_value(cfg, &opts[i], v, err, errlen, from) < 0)
      return IDGEN_CONFIG_USAGE;
    sources[i] = "env";
  }

  struct option lopts[NOPTS + LEASE_OPTS_MAX + 3];
  size_t nl = 0;
  for (size_t i = 0; i < NOPTS; i++)
    lopts[nl++] = (struct option){opts[i].name, required_argument, NULL, (int)(1000 + i)};
  for (size_t i = 0; i < nlease; i++)
    lopts[nl++] =
        (struct option){lo[i].name, lo[i].has_arg ? required_argument : no_argument, NULL,
                        (int)(LEASE_OPT_BASE + i)};
  lopts[nl++] = (struct option){"print-config", no_argument, NULL, 'p'};
  lopts[nl++] = (struct option){"help", no_argument, NULL, 'h'};
  lopts[nl] = (struct option){NULL, 0, NULL, 0};
  int print = 0;
  optind = 1;
  opterr = 0;
  for (;;) {
    int c = getopt_long(argc, argv, ":h", lopts, NULL);
    if (c == -1)
      break;
    if (c == 'h') {
      usage(out);
      return IDGEN_CONFIG_DONE;
    }
    if (c == 'p') {
      print = 1;
      continue;
    }
    if (c >= 1000 && c < 1000 + (int)NOPTS) {
      size_t i = (size_t)(c - 1000);
      if (set_value(cfg, &opts[i], optarg, err, errlen, "") < 0) {
        memmove(err, err + 1, strlen(err)); /* drop the empty source's space */
        return IDGEN_CONFIG_USAGE;
      }
      sources[i] = "flag";
      continue;
    }
    if (c >= LEASE_OPT_BASE && c < LEASE_OPT_BASE + (int)nlease) {
      size_t i = (size_t)(c - LEASE_OPT_BASE);
      if (idgen_lease_config_set(&cfg->lease, lo[i].name, optarg, err, errlen) < 0)
        return IDGEN_CONFIG_USAGE;
      lease_sources[i] = "flag";
      continue;
    }
    if (c == ':')
      snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
    else
      snprintf(err, errlen, "unknown option '%s' (try --help)", argv[optind - 1]);
    return IDGEN_CONFIG_USAGE;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
    return IDGEN_CONFIG_USAGE;
  }
  if (print) {
    idgen__serve_config_print(cfg, out);
    return IDGEN_CONFIG_DONE;
  }
  return IDGEN_CONFIG_SERVE;
}

/* Reads the token file into cfg->auth_token. */
static int load_token(idgen__serve_config *cfg, char *err, size_t errlen) {
  FILE *f = fopen(cfg->auth_token_file, "r");
  if (!f) {
    snprintf(err, errlen, "--auth-token-file %s: %s", cfg->auth_token_file,
             strerror(errno));
    return -1;
  }
  size_t n = fread(cfg->auth_token, 1, sizeof cfg->auth_token - 1, f);
  int more = fgetc(f) != EOF;
  fclose(f);
  cfg->auth_token[n] = 0;
  while (n && (cfg->auth_token[n - 1] == '\n' || cfg->auth_token[n - 1] == '\r' ||
               cfg->auth_token[n - 1] == ' ' || cfg->auth_token[n - 1] == '\t'))
    cfg->auth_token[--n] = 0;
  int bad = more || n == 0 || strlen(cfg->auth_token) != n;
  for (size_t i = 0; !bad && i < n; i++)
    bad = (unsigned char)cfg->auth_token[i] <= ' ' ||
          (unsigned char)cfg->auth_token[i] >= 0x7f;
  if (bad)
    snprintf(err, errlen,
             "--auth-token-file %s: want one token of %d..%zu printable "
             "characters",
             cfg->auth_token_file, IDGEN_SERVE_TOKEN_MIN, sizeof cfg->auth_token - 1);
  else if (n < IDGEN_SERVE_TOKEN_MIN)
    snprintf(err, errlen,
             "--auth-token-file %s: the token has %zu characters, %d at least are needed "
             "(one way: head -c 24 /dev/urandom | base64)",
             cfg->auth_token_file, n, IDGEN_SERVE_TOKEN_MIN);
  if (bad || n < IDGEN_SERVE_TOKEN_MIN) {
    memset(cfg->auth_token, 0, sizeof cfg->auth_token);
    return -1;
  }
  return 0;
}

int idgen__serve_config_parse(const idgen__serve_config *cfg, idgen__serve_choices *out,
                              char *err, size_t errlen) {
  char why[160] = "";
  int rc = idgen_layout_parse(cfg->layout, strlen(cfg->layout), idgen_wall_ns() / 1000000,
                              &out->layout, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "--layout '%s': %s", cfg->layout,
             why[0] ? why : idgen_strerror(rc));
    return -1;
  }
  if (idgen_policy_parse(cfg->policy, &out->policy) < 0) {
    snprintf(err, errlen, "--policy '%s': expected fail, wait or logical", cfg->policy);
    return -1;
  }
  out->wall_clock = !strcmp(cfg->clock, "wall");
  if (!out->wall_clock && strcmp(cfg->clock, "mono")) {
    snprintf(err, errlen, "--clock '%s': expected mono or wall", cfg->clock);
    return -1;
  }
  return 0;
}

int idgen__serve_config_check(idgen__serve_config *cfg, char *err, size_t errlen) {
  char host[256];
  uint16_t port;
  if (cfg->http[0] && idgen__parse_hostport(cfg->http, host, sizeof host, &port) < 0) {
    snprintf(err, errlen, "--http '%s': expected ADDR:PORT", cfg->http);
    return -1;
  }
  if (cfg->resp[0] && idgen__parse_hostport(cfg->resp, host, sizeof host, &port) < 0) {
    snprintf(err, errlen, "--resp '%s': expected ADDR:PORT", cfg->resp);
    return -1;
  }
  if (!cfg->http[0] && !cfg->resp[0]) {
    snprintf(err, errlen, "both --http and --resp are empty: nothing to serve");
    return -1;
  }
  idgen__serve_choices choices;
  if (idgen__serve_config_parse(cfg, &choices, err, errlen) < 0 ||
      idgen_lease_config_check(&cfg->lease, &choices.layout, err, errlen) < 0)
    return -1;
  if (cfg->opaque_key_file[0]) {
    idgen_opaque *opaque = NULL;
    if (idgen__opaque_open("--opaque-key-file", cfg->opaque_key_file, "", 0, &opaque, err,
                           errlen) < 0)
      return -1;
    idgen_opaque_free(opaque);
  }
  memset(cfg->auth_token, 0, sizeof cfg->auth_token);
  return cfg->auth_token_file[0] ? load_token(cfg, err, errlen) : 0;
}

static const char *lease_source(const char *name) {
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; lo[i].name && i < LEASE_OPTS_MAX; i++)
    if (!strcmp(lo[i].name, name))
      return lease_sources[i] ? lease_sources[i] : "default";
  return "default";
}

static void print_lease(const idgen_lease_config *l, FILE *out) {
  fprintf(out, "lease = \"%s\"  # %s\n", idgen_lease_kind_name(l->kind),
          lease_source("lease"));
  fprintf(out, "state-dir = \"%s\"  # %s\n", l->state_dir[0] ? l->state_dir : "(default)",
          lease_source("state-dir"));
  if (l->worker_id >= 0)
    fprintf(out, "worker-id = %lld  # %s\n", (long long)l->worker_id,
            lease_source("worker-id"));
  else
    fprintf(out, "worker-id = unset  # %s\n", lease_source("worker-id"));
  fprintf(out, "worker-id-offset = %lld  # %s\n", (long long)l->worker_id_offset,
          lease_source("worker-id-offset"));
  fprintf(out, "pod-index = %lld  # %s\n", (long long)l->pod_index,
          lease_source("pod-index"));
  fprintf(out, "etcd = \"");
  for (int i = 0; i < l->nendpoints; i++)
    fprintf(out, "%s%s", i ? "," : "", l->endpoints[i]);
  fprintf(out, "\"  # %s\n", lease_source("etcd"));
  fprintf(out, "namespace = \"%s\"  # %s\n", l->ns, lease_source("namespace"));
  fprintf(out, "lease-ttl = %lld  # seconds; %s\n", (long long)(l->ttl_ms / 1000),
          lease_source("lease-ttl"));
  idgen_keeper_config effective; /* what 0 means: min(2000, TTL/3) */
  idgen_keeper_config_from(&effective, l);
  fprintf(out, "lease-margin = %lld  # %s%s\n", (long long)effective.margin_ms,
          lease_source("lease-margin"), l->margin_ms ? "" : ": min(2000, TTL/3)");
  fprintf(out, "hwm-ahead = %lld  # %s\n", (long long)l->ahead_ms,
          lease_source("hwm-ahead"));
  fprintf(out, "hwm-interval = %lld  # %s\n", (long long)l->hwm_interval_ms,
          lease_source("hwm-interval"));
  fprintf(out, "hwm-wait-max = %lld  # %s\n", (long long)l->hwm_wait_max_ms,
          lease_source("hwm-wait-max"));
  fprintf(out, "etcd-timeout = %lld  # %s\n", (long long)l->request_timeout_ms,
          lease_source("etcd-timeout"));
  fprintf(out, "max-clock-skew = %lld  # %s\n", (long long)l->max_skew_ms,
          lease_source("max-clock-skew"));
  fprintf(out, "require-ntp-sync = %s  # %s\n", l->require_ntp_sync ? "true" : "false",
          lease_source("require-ntp-sync"));
  if (l->datacenter >= 0)
    fprintf(out, "datacenter = %lld  # %s\n", (long long)l->datacenter,
            lease_source("datacenter"));
  else
    fprintf(out, "datacenter = unset  # %s\n", lease_source("datacenter"));
  if (l->range_lo >= 0)
    fprintf(out, "worker-id-range = \"%lld-%lld\"  # %s\n", (long long)l->range_lo,
            (long long)l->range_hi, lease_source("worker-id-range"));
  else
    fprintf(out, "worker-id-range = unset  # %s\n", lease_source("worker-id-range"));
  fprintf(out, "region = \"%s\"  # %s\n", l->region, lease_source("region"));
}

void idgen__serve_config_print(const idgen__serve_config *cfg, FILE *out) {
  print_lease(&cfg->lease, out);
  for (size_t i = 0; i < NOPTS; i++) {
    const char *field = (const char *)cfg + opts[i].off;
    if (opts[i].kind == OPT_STR) {
      fprintf(out, "%s = \"%s\"  # %s\n", opts[i].name, field, sources[i]);
    } else {
      uint64_t v;
      memcpy(&v, field, sizeof v);
      fprintf(out, "%s = %llu  # %s\n", opts[i].name, (unsigned long long)v, sources[i]);
    }
  }
}

int idgen__parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port) {
  const char *colon;
  const char *h = s;
  size_t hl;
  if (*s == '[') {
    const char *close = strchr(s, ']');
    if (!close || close[1] != ':')
      return -1;
    h = s + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(s, ':');
    if (!colon)
      return -1;
    hl = (size_t)(colon - s);
  }
  if (hl == 0 || hl >= hostlen)
    return -1;
  const char *p = colon + 1;
  if (!*p)
    return -1;
  unsigned long v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    v = v * 10 + (unsigned long)(*p - '0');
    if (v > 65535)
      return -1;
  }
  memcpy(host, h, hl);
  host[hl] = 0;
  *port = (uint16_t)v;
  return 0;
}
