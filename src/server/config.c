/* config.c: one table of options gives the flags, the IDGEN_* variables, --help and
 * --print-config, so the four cannot disagree. */
#include "server/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OPT_STR, OPT_U64 } opt_kind;

typedef struct opt {
  const char *name; /* flag without "--"; env is IDGEN_ + upper case, '-' -> '_' */
  opt_kind kind;
  size_t off, size;
  uint64_t min, max;
  const char *def;
  const char *help;
} opt;

#define S(field) OPT_STR, offsetof(idgen__serve_config, field), \
  sizeof(((idgen__serve_config *)0)->field), 0, 0
#define U(field, lo, hi) OPT_U64, offsetof(idgen__serve_config, field), 0, lo, hi

static const opt opts[] = {
    {"http", S(http), "127.0.0.1:8080", "HTTP listener ADDR:PORT; empty disables it"},
    {"resp", S(resp), "127.0.0.1:6380", "Redis-protocol listener ADDR:PORT; empty disables it"},
    {"layout", S(layout), "snowflake", "layout preset or spec (see `idgen layout`)"},
    {"policy", S(policy), "wait", "clock-back policy: fail, wait or logical"},
    {"lease", S(lease), "static", "worker ID provider (this build: static)"},
    {"worker-id", U(worker_id, 0, UINT64_MAX), "0", "worker ID for the static provider"},
    {"state-dir", S(state_dir), "./idgen-state", "directory for lease and HWM files"},
    {"etcd", S(etcd), "http://127.0.0.1:2379", "etcd endpoints, comma-separated (etcd provider)"},
    {"auth-token-file", S(auth_token_file), "",
     "file holding a bearer token required by /v1/*, /metrics and RESP (AUTH)"},
    {"log-file", S(log_file), "", "event log file (SIGHUP reopens it); empty: stderr"},
    {"threads", U(threads, 0, 256), "0", "event-loop threads, 0: one per core"},
    {"max-conns", U(max_conns, 1, 1000000), "10000", "open connections at most (both listeners)"},
    {"max-header-bytes", U(max_header_bytes, 256, 65536), "8192",
     "request headers larger than this get 431"},
    {"max-request-line", U(max_request_line, 64, 65536), "2048",
     "request lines longer than this get 414"},
    {"header-timeout", U(header_timeout_ms, 100, 3600000), "10000",
     "ms an HTTP connection may take to send a complete request (also its keep-alive idle)"},
    {"idle-timeout", U(idle_timeout_ms, 100, 86400000), "300000",
     "ms a RESP connection may stay silent"},
    {"max-count", U(max_count, 1, IDGEN_SERVE_MAX_COUNT_LIMIT), "4096",
     "largest count per request (HTTP ?count=, RESP IDS n)"},
    {"shutdown-timeout", U(shutdown_timeout_ms, 0, 600000), "3000",
     "ms to finish in-flight work after SIGTERM/SIGINT"},
};
enum { NOPTS = sizeof opts / sizeof opts[0] };

/* Where each value came from, for --print-config. */
static const char *sources[NOPTS];

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
  fprintf(out,
          "usage: idgen serve [options]\n\n"
          "Runs the ID service: HTTP/JSON and the Redis protocol (RESP2) on one event loop per\n"
          "thread. Every option can also be set by the environment variable shown; flags win.\n\n");
  for (size_t i = 0; i < NOPTS; i++) {
    char env[64];
    env_name(&opts[i], env, sizeof env);
    fprintf(out, "  --%s=%s\n      %s (default \"%s\"; %s)\n", opts[i].name,
            opts[i].kind == OPT_STR ? "TEXT" : "N", opts[i].help, opts[i].def, env);
  }
  fprintf(out, "  --print-config\n      print the effective configuration and exit\n"
               "  --help\n      this text\n\n"
               "Signals: SIGTERM/SIGINT stop gracefully (exit 0), SIGHUP reopens the log file.\n"
               "See docs/server.md for the routes and commands.\n");
}

int idgen__serve_config_load(idgen__serve_config *cfg, int argc, char **argv, FILE *out,
                             char *err, size_t errlen) {
  memset(cfg, 0, sizeof *cfg);
  for (size_t i = 0; i < NOPTS; i++) {
    sources[i] = "default";
    if (set_value(cfg, &opts[i], opts[i].def, err, errlen, "default") < 0)
      return 1; /* cannot happen: the table's defaults are valid */
  }
  for (size_t i = 0; i < NOPTS; i++) {
    char env[64];
    env_name(&opts[i], env, sizeof env);
    const char *v = getenv(env);
    if (!v)
      continue;
    char from[80];
    snprintf(from, sizeof from, "%s:", env);
    if (set_value(cfg, &opts[i], v, err, errlen, from) < 0)
      return 2;
    sources[i] = "env";
  }

  struct option lopts[NOPTS + 3];
  for (size_t i = 0; i < NOPTS; i++)
    lopts[i] = (struct option){opts[i].name, required_argument, NULL, (int)(1000 + i)};
  lopts[NOPTS] = (struct option){"print-config", no_argument, NULL, 'p'};
  lopts[NOPTS + 1] = (struct option){"help", no_argument, NULL, 'h'};
  lopts[NOPTS + 2] = (struct option){NULL, 0, NULL, 0};
  int print = 0;
  optind = 1;
  opterr = 0;
  for (;;) {
    int c = getopt_long(argc, argv, ":h", lopts, NULL);
    if (c == -1)
      break;
    if (c == 'h') {
      usage(out);
      return 1;
    }
    if (c == 'p') {
      print = 1;
      continue;
    }
    if (c >= 1000 && c < 1000 + (int)NOPTS) {
      size_t i = (size_t)(c - 1000);
      if (set_value(cfg, &opts[i], optarg, err, errlen, "") < 0) {
        memmove(err, err + 1, strlen(err)); /* drop the empty source's space */
        return 2;
      }
      sources[i] = "flag";
      continue;
    }
    if (c == ':')
      snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
    else
      snprintf(err, errlen, "unknown option '%s' (try --help)", argv[optind - 1]);
    return 2;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
    return 2;
  }
  if (print) {
    idgen__serve_config_print(cfg, out);
    return 1;
  }
  return 0;
}

void idgen__serve_config_print(const idgen__serve_config *cfg, FILE *out) {
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
