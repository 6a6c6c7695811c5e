/* config.c: one table of options gives the flags, the IDGEN_* variables, --help and
 * --print-config (the last two printed by config_print.c), so the four cannot disagree;
 * a second table gives the options of a generator in the config file (--config), the
 * default generator's through the first table's flags. */
#include "server/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/id_form.h"
#include "common/util.h"
#include "idgen/clock.h"
#include "lease/lease_internal.h"
#include "segment/segment.h"
#include "server/config_file.h"
#include "server/config_table.h"
#include "server/quota.h"
#include "server/tokens.h"

#define S(field)                                                                           \
  OPT_STR, offsetof(idgen__serve_config, field),                                           \
      sizeof(((idgen__serve_config *)0)->field), 0, 0
#define U(field, lo, hi) OPT_U64, offsetof(idgen__serve_config, field), 0, lo, hi

const idgen__serve_opt idgen__serve_opts[] = {
    {"http", S(http), "127.0.0.1:8080", "HTTP listener ADDR:PORT; empty disables it"},
    {"resp", S(resp), "127.0.0.1:6380",
     "Redis-protocol listener ADDR:PORT; empty disables it"},
    {"config", S(config_file), "",
     "YAML file naming generators by kind (snowflake, segment, uuid7, uuid4, ulid), "
     "served as /v1/id?name=N and ID N (docs/generators.md); flags and IDGEN_* "
     "variables configure its 'default' and win over the file's; SIGHUP reads it again "
     "(a generator's format changes live, any other change is refused: docs/server.md, "
     "Reload)"},
    {"layout", S(layout), "snowflake", "layout preset or spec (see `idgen layout`)"},
    {"policy", S(policy), "wait", "clock-back policy: fail, wait or logical"},
    {"seq-reset-threshold", U(seq_reset_threshold, 0, UINT32_MAX), "0",
     "keep counting the sequence across time units until it passes this, then reset (so "
     "id % n spreads at low traffic); 0: reset every unit; below 2^seq_bits"},
    {"clock", S(clock), "mono",
     "mono: monotonic, anchored to the wall clock at start (a step back does not reach "
     "it); wall: the wall clock as it is, so a step back meets --policy (for fault tests: "
     "lease deadlines then follow the wall clock too)"},
    {"auth-token-file", S(auth_token_file), "",
     "file holding a bearer token required by /v1/*, /metrics and RESP (AUTH), good for "
     "every generator (--config's tokens: gives tokens per generator, each with an "
     "optional quota: rate IDs/s, burst); SIGHUP reads it again"},
    {"opaque-key-file", S(opaque_key_file), "",
     "key file (32 or 64 hex digits, `idgen opaque keygen`) of the default generator's "
     "opaque IDs: format=opaque-*, decode ?opaque=1 (docs/opaque.md); empty: none"},
    {"tls-cert", S(tls_cert), "",
     "PEM certificate chain: HTTPS on --http and RESP over TLS on --resp (TLS 1.2 at "
     "least), with --tls-key; SIGHUP reads both again (docs/server.md, TLS); empty: "
     "plain text"},
    {"tls-key", S(tls_key), "", "PEM private key of --tls-cert"},
    {"tls-ca", S(tls_ca), "",
     "PEM CA certificates that sign client certificates (with --tls-client-cert)"},
    {"tls-client-cert", S(tls_client_cert), "none",
     "none, optional (verified against --tls-ca when sent) or require (a handshake "
     "without one fails)"},
    {"health-listen", S(health_listen), "",
     "loopback ADDR:PORT answering GET /healthz and /readyz in plain text, whatever "
     "--tls-cert says (for probes on the host); any other path 404; empty: none"},
    {"log-file", S(log_file), "", "event log file (SIGHUP reopens it); empty: stderr"},
    {"log-level", S(log_level), "info",
     "lowest level logged: debug (adds a line per caller's name: RESP CLIENT SETNAME, "
     "HTTP User-Agent at a connection's first request), info or warn"},
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
enum { NOPTS = sizeof idgen__serve_opts / sizeof idgen__serve_opts[0] };
const size_t idgen__serve_nopts = NOPTS;

/* Where each value came from, for --print-config and messages: "default", "env",
 * "flag", or "file" (then *_lines holds its line in the config file). */
static const char *sources[NOPTS];
static int source_lines[NOPTS];
#define LEASE_OPT_BASE 2000
#define LEASE_OPTS_MAX IDGEN_LEASE_OPTIONS_MAX
static const char *lease_sources[LEASE_OPTS_MAX];
static int lease_lines[LEASE_OPTS_MAX];
static char loaded_file[IDGEN_CFG_PATH]; /* --config as last loaded, for messages */

void idgen__serve_env_name(const idgen__serve_opt *o, char *out, size_t outlen) {
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

/* A whole number in [min, max], strictly; what names the value in the message. */
static int parse_u64(const char *value, uint64_t min, uint64_t max, uint64_t *out,
                     const char *what, char *err, size_t errlen) {
  if (*value < '0' || *value > '9') {
    snprintf(err, errlen, "%s: '%s' is not a number", what, value);
    return -1;
  }
  errno = 0;
  char *end;
  unsigned long long v = strtoull(value, &end, 10);
  if (errno || *end || v < min || v > max) {
    snprintf(err, errlen, "%s: '%s' is not a number from %llu to %llu", what, value,
             (unsigned long long)min, (unsigned long long)max);
    return -1;
  }
  *out = v;
  return 0;
}

/* Sets one option; what names where the value came from in a message ("--max-count",
 * "IDGEN_MAX_COUNT: --max-count", "FILE:LINE: generators.default.layout"). */
static int set_value(idgen__serve_config *cfg, const idgen__serve_opt *o, const char *value,
                     const char *what, char *err, size_t errlen) {
  char *field = (char *)cfg + o->off;
  if (o->kind == OPT_STR) {
    if (strlen(value) >= o->size) {
      snprintf(err, errlen, "%s: value too long (%zu bytes at most)", what, o->size - 1);
      return -1;
    }
    strcpy(field, value);
    return 0;
  }
  uint64_t v;
  if (parse_u64(value, o->min, o->max, &v, what, err, errlen) < 0)
    return -1;
  memcpy(field, &v, sizeof v);
  return 0;
}

/* ---- Generators: the options of the config file's entries ----------------------- */

#define SNOW KB(KIND_SNOWFLAKE)
#define SEG KB(KIND_SEGMENT)
#define GS(f) GK_STR, offsetof(idgen__gen_spec, f), sizeof(((idgen__gen_spec *)0)->f), 0, 0
#define GU(f, lo, hi) GK_U64, offsetof(idgen__gen_spec, f), 0, lo, hi
#define GL GK_LEASE, 0, 0, 0, 0

const idgen__gen_key idgen__gen_keys[] = {
    {"kind", (1u << KIND_COUNT) - 1, GK_KIND, 0, 0, 0, 0, NULL},
    {"layout", SNOW, GS(layout), "layout"},
    {"policy", SNOW, GS(policy), "policy"},
    {"seq_reset_threshold", SNOW, GU(seq_reset_threshold, 0, UINT32_MAX),
     "seq-reset-threshold"},
    {"namespace", SNOW, GL, "namespace"},
    {"datacenter", SNOW, GL, "datacenter"},
    {"worker_id_range", SNOW, GL, "worker-id-range"},
    {"worker_id", SNOW, GL, "worker-id"},
    {"worker_id_offset", SNOW, GL, "worker-id-offset"},
    {"backend", SEG, GS(backend), NULL},
    {"dsn", SEG, GS(dsn), NULL},
    {"path", SEG, GS(dsn), NULL}, /* the file backend's dsn, as the issue names it */
    {"step", SEG, GU(step, 1, IDGEN_SEGMENT_STEP_MAX), NULL},
    {"max_step", SEG, GU(max_step, 1, IDGEN_SEGMENT_STEP_MAX), NULL},
    {"prefetch_pct", SEG, GU(prefetch_pct, 0, 100), NULL},
    {"period_s", SEG, GU(period_s, 1, 7 * 86400), NULL},
    {"retry_ms", SEG, GU(retry_ms, 10, 600000), NULL},
    {"timeout_ms", SEG, GU(timeout_ms, 100, 600000), NULL},
    /* the etcd backend's TLS files and user, as the lease's flags (inherited from them) */
    {"etcd_cacert", SEG, GL, "etcd-cacert"},
    {"etcd_cert", SEG, GL, "etcd-cert"},
    {"etcd_key", SEG, GL, "etcd-key"},
    {"etcd_user", SEG, GL, "etcd-user"},
    {"etcd_password_file", SEG, GL, "etcd-password-file"},
    /* the redis backend's TLS files and user, likewise */
    {"redis_cacert", SEG, GL, "redis-cacert"},
    {"redis_cert", SEG, GL, "redis-cert"},
    {"redis_key", SEG, GL, "redis-key"},
    {"redis_user", SEG, GL, "redis-user"},
    {"redis_password_file", SEG, GL, "redis-password-file"},
    {"period", SEG, GS(period), NULL},
    {"timezone", SEG, GS(timezone), NULL},
    {"digits", SEG, GU(digits, 1, 10), NULL},
    {"format", SNOW | SEG, GS(format), NULL},
    {"opaque_key_file", SNOW | SEG, GS(opaque_key_file), "opaque-key-file"},
};
enum { NKEYS = sizeof idgen__gen_keys / sizeof idgen__gen_keys[0] };
const size_t idgen__gen_nkeys = NKEYS;
_Static_assert(NKEYS <= IDGEN__GEN_KEYS_MAX, "spec->lines holds every key");

static const idgen__gen_key *key_named(const char *name) {
  for (size_t i = 0; i < NKEYS; i++)
    if (!strcmp(idgen__gen_keys[i].name, name))
      return &idgen__gen_keys[i];
  return NULL;
}

size_t idgen__gen_key_index(const char *name) {
  return (size_t)(key_named(name) - idgen__gen_keys);
}

/* "kind, layout, ..." for one kind. */
void idgen__gen_keys_of(idgen__kind kind, char *out, size_t outlen) {
  size_t n = 0;
  out[0] = '\0';
  for (size_t i = 0; i < NKEYS && n < outlen; i++)
    if (idgen__gen_keys[i].kinds & KB(kind))
      n += (size_t)snprintf(out + n, outlen - n, "%s%s", n ? ", " : "",
                            idgen__gen_keys[i].name);
}

const char *idgen__lease_key_text(const idgen_lease_config *l, const char *flag) {
  return !strcmp(flag, "etcd-cacert")           ? l->etcd_cacert
         : !strcmp(flag, "etcd-cert")           ? l->etcd_cert
         : !strcmp(flag, "etcd-key")            ? l->etcd_key
         : !strcmp(flag, "etcd-user")           ? l->etcd_user
         : !strcmp(flag, "etcd-password-file")  ? l->etcd_password_file
         : !strcmp(flag, "redis-cacert")        ? l->redis_cacert
         : !strcmp(flag, "redis-cert")          ? l->redis_cert
         : !strcmp(flag, "redis-key")           ? l->redis_key
         : !strcmp(flag, "redis-user")          ? l->redis_user
         : !strcmp(flag, "redis-password-file") ? l->redis_password_file
                                                : NULL;
}

static int serve_opt(const char *name) {
  for (size_t i = 0; i < NOPTS; i++)
    if (!strcmp(idgen__serve_opts[i].name, name))
      return (int)i;
  return -1;
}

static int lease_opt(const char *name) {
  const idgen_lease_option *lo = idgen_lease_options();
  for (int i = 0; lo[i].name && i < LEASE_OPTS_MAX; i++)
    if (!strcmp(lo[i].name, name))
      return i;
  return -1;
}

const char *idgen__serve_opt_source(size_t i, int *line) {
  *line = source_lines[i];
  return sources[i];
}

const char *idgen__lease_opt_source(const char *name, int *line) {
  int i = lease_opt(name);
  *line = i < 0 ? 0 : lease_lines[i];
  return i < 0 || !lease_sources[i] ? "default" : lease_sources[i];
}

/* Sets a lease option; on failure err is "what: <why>", the library's "--name: " or
 * "--name " dropped from <why>. */
static int lease_set(idgen_lease_config *l, const char *flag, const char *value,
                     const char *what, char *err, size_t errlen) {
  char why[256];
  if (idgen_lease_config_set(l, flag, value, why, sizeof why) == 0)
    return 0;
  const char *w = why;
  size_t fl = strlen(flag);
  if (w[0] == '-' && w[1] == '-' && !strncmp(w + 2, flag, fl))
    w += 2 + fl + (w[2 + fl] == ':') + (w[2 + fl] != '\0');
  while (*w == ' ')
    w++;
  snprintf(err, errlen, "%s: %s", what, w);
  return -1;
}

int idgen__serve_wall_clock(const idgen__serve_config *cfg) {
  return !strcmp(cfg->clock, "wall");
}

/* The built-in values of a generator of this kind; its lease options are the
 * process's (provider, state directory, etcd, timings, namespace, region) without the
 * ones that belong to one generator's layout (worker ID, offset, datacenter, range). */
static void spec_defaults(const idgen__serve_config *cfg, idgen__gen_spec *s,
                          const char *name, idgen__kind kind) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->kind = kind;
  snprintf(s->layout, sizeof s->layout, "snowflake");
  snprintf(s->policy, sizeof s->policy, "wait");
  s->lease = cfg->lease;
  s->lease.worker_id = -1;
  s->lease.worker_id_offset = 0;
  s->lease.datacenter = -1;
  s->lease.range_lo = s->lease.range_hi = -1;
  s->lines[idgen__gen_key_index("namespace")] = IDGEN__KEY_INHERITED;
  snprintf(s->backend, sizeof s->backend, "file");
  idgen__segment_config sc;
  idgen__segment_config_init(&sc, NULL, NULL, NULL);
  s->step = sc.step;
  s->max_step = sc.max_step;
  s->prefetch_pct = (uint64_t)sc.prefetch_pct;
  s->period_s = (uint64_t)(sc.period_ns / 1000000000);
  s->retry_ms = (uint64_t)(sc.retry_ns / 1000000);
  s->timeout_ms = 5000; /* the backends' own default */
  snprintf(s->period, sizeof s->period, "none");
  snprintf(s->timezone, sizeof s->timezone, "UTC");
  s->digits = 6;
}

/* 0 if name may name a generator; else -1 with the reason. Names are the segment
 * names' (a segment generator's name is its sequence's), and never read as a RESP
 * count (all digits) or format (decimal, hex, ...): see docs/generators.md. */
static int gen_name_check(const char *name, const char **why) {
  idgen__id_form form;
  size_t digits = strspn(name, "0123456789");
  if (idgen__segment_name_check(name) || strchr(name, ':')) {
    *why = "use 1-64 of A-Z a-z 0-9 _ . - (not starting with '.')";
    return -1;
  }
  if (name[digits] == '\0') {
    *why = "all digits: RESP's IDS would read it as a count";
    return -1;
  }
  if (idgen__id_form_parse(name, strlen(name), &form) == 0) {
    *why = "a format's name: RESP's ID would read it as the format";
    return -1;
  }
  return 0;
}

/* The option o of entry name, written "FILE:LINE: generators.NAME.KEY". */
static void where_option(const idgen__serve_config *cfg, const char *name, const char *key,
                         int line, char *out, size_t outlen) {
  snprintf(out, outlen, "%s:%d: generators.%s.%s", cfg->config_file, line, name, key);
}

/* Applies one option of the default entry through its flag, unless an IDGEN_*
 * variable or a flag set it (they win). */
static int apply_default_flag(idgen__serve_config *cfg, const idgen__gen_key *k,
                              const idgen__config_option *o, const char *what, char *err,
                              size_t errlen) {
  int i = serve_opt(k->flag);
  if (i >= 0) {
    if (strcmp(sources[i], "default"))
      return 0;
    if (set_value(cfg, &idgen__serve_opts[i], o->value, what, err, errlen) < 0)
      return -1;
    sources[i] = "file";
    source_lines[i] = o->line;
    return 0;
  }
  i = lease_opt(k->flag);
  if (strcmp(lease_sources[i], "default"))
    return 0;
  if (lease_set(&cfg->lease, k->flag, o->value, what, err, errlen) < 0)
    return -1;
  lease_sources[i] = "file";
  lease_lines[i] = o->line;
  return 0;
}

static int apply_option(idgen__serve_config *cfg, idgen__gen_spec *s, int is_default,
                        const idgen__config_option *o, char *err, size_t errlen) {
  char what[IDGEN_CFG_PATH + 160], keys[512];
  where_option(cfg, s->name, o->key, o->line, what, sizeof what);
  const idgen__gen_key *k = key_named(o->key);
  if (!k || !(k->kinds & KB(s->kind))) {
    idgen__gen_keys_of(s->kind, keys, sizeof keys);
    snprintf(err, errlen, "%s: %s option of a %s generator (it takes: %s)", what,
             k ? "not an" : "unknown", idgen__kind_name(s->kind), keys);
    return -1;
  }
  if (k->type == GK_KIND)
    return 0; /* read first, by apply_entry */
  if (is_default && k->flag)
    return apply_default_flag(cfg, k, o, what, err, errlen);
  size_t i = (size_t)(k - idgen__gen_keys);
  if (k->type == GK_STR) {
    if (strlen(o->value) >= k->size) {
      snprintf(err, errlen, "%s: value too long (%zu bytes at most)", what, k->size - 1);
      return -1;
    }
    snprintf((char *)s + k->off, k->size, "%s", o->value);
  } else if (k->type == GK_U64) {
    uint64_t v;
    if (parse_u64(o->value, k->min, k->max, &v, what, err, errlen) < 0)
      return -1;
    memcpy((char *)s + k->off, &v, sizeof v);
  } else if (lease_set(&s->lease, k->flag, o->value, what, err, errlen) < 0) {
    return -1;
  }
  size_t dsn = idgen__gen_key_index("dsn"), path = idgen__gen_key_index("path");
  if ((i == dsn && s->lines[path] > 0) || (i == path && s->lines[dsn] > 0)) {
    snprintf(err, errlen, "%s: give dsn or path, not both", what);
    return -1;
  }
  s->lines[i] = o->line;
  return 0;
}

/* Reads one entry of the file into s (the default entry: into cfg through the flags,
 * and its other options into s). */
static int apply_entry(idgen__serve_config *cfg, const idgen__config_entry *e,
                       idgen__gen_spec *s, char *err, size_t errlen) {
  const char *why;
  if (gen_name_check(e->name, &why) < 0) {
    snprintf(err, errlen, "%s:%d: generators.%.64s: not a generator name: %s",
             cfg->config_file, e->line, e->name, why);
    return -1;
  }
  int is_default = !strcmp(e->name, IDGEN__DEFAULT_GENERATOR);
  const idgen__config_option *kind_opt = NULL;
  for (size_t i = 0; i < e->noptions; i++)
    if (!strcmp(e->options[i].key, "kind"))
      kind_opt = &e->options[i];
  idgen__kind kind = KIND_SNOWFLAKE;
  if (!kind_opt && !is_default) {
    snprintf(err, errlen, "%s:%d: generators.%s: no kind (" IDGEN__KINDS ")",
             cfg->config_file, e->line, e->name);
    return -1;
  }
  if (kind_opt && idgen__kind_parse(kind_opt->value, &kind) < 0) {
    snprintf(err, errlen,
             "%s:%d: generators.%s.kind: '%s' is not a kind (" IDGEN__KINDS ")",
             cfg->config_file, kind_opt->line, e->name, kind_opt->value);
    return -1;
  }
  spec_defaults(cfg, s, e->name, kind);
  s->line = e->line;
  s->lines[idgen__gen_key_index("kind")] = kind_opt ? kind_opt->line : 0;
  for (size_t i = 0; i < e->noptions; i++)
    if (apply_option(cfg, s, is_default, &e->options[i], err, errlen) < 0)
      return -1;
  return 0;
}

/* The default generator from the flags (and what the file's default entry set through
 * them): only a snowflake default takes --layout, --policy and --seq-reset-threshold,
 * only a numeric one --opaque-key-file. */
static int default_from_flags(idgen__serve_config *cfg, idgen__gen_spec *s, char *err,
                              size_t errlen) {
  static const char *const snowflake_only[] = {"layout", "policy", "seq-reset-threshold"};
  for (size_t j = 0; s->kind != KIND_SNOWFLAKE && j < 3; j++) {
    int i = serve_opt(snowflake_only[j]);
    if (strcmp(sources[i], "default")) {
      snprintf(err, errlen,
               "--%s: the default generator is a %s generator (%s:%d), which has none",
               snowflake_only[j], idgen__kind_name(s->kind), cfg->config_file, s->line);
      return -1;
    }
  }
  if (cfg->opaque_key_file[0] && !idgen__kind_numeric(s->kind)) {
    snprintf(err, errlen,
             "--opaque-key-file: the default generator is a %s generator (%s:%d): its IDs "
             "have no opaque form",
             idgen__kind_name(s->kind), cfg->config_file, s->line);
    return -1;
  }
  snprintf(s->opaque_key_file, sizeof s->opaque_key_file, "%s", cfg->opaque_key_file);
  if (s->kind == KIND_SNOWFLAKE) {
    snprintf(s->layout, sizeof s->layout, "%s", cfg->layout);
    snprintf(s->policy, sizeof s->policy, "%s", cfg->policy);
    s->seq_reset_threshold = cfg->seq_reset_threshold;
    s->lease = cfg->lease;
  } else {
    idgen__segment_access_copy(&s->lease, &cfg->lease); /* the file's default entry set them there */
  }
  return 0;
}

/* ---- Tokens: the file's tokens: section ------------------------------------------- */

/* "true"/"false" (YAML 1.1's yes/no and on/off too) into *out; -1 otherwise. */
static int parse_bool(const char *v, int *out) {
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "on"}, *const no[] = {
                                                                              "false",
                                                                              "False",
                                                                              "FALSE", "no",
                                                                              "off"};
  for (size_t i = 0; i < 5; i++) {
    if (!strcmp(v, yes[i]))
      return *out = 1, 0;
    if (!strcmp(v, no[i]))
      return *out = 0, 0;
  }
  return -1;
}

/* tokens.NAME.generators: a list of configured generators' names, or ["*"] (or "*"). */
static int token_generators(const idgen__serve_config *cfg, idgen__token_spec *t,
                            const idgen__config_option *o, const char *what, char *err,
                            size_t errlen) {
  const char *one = o->value;
  char *const *items = o->items ? o->items : (char *const *)&one;
  size_t n = o->items ? o->nitems : 1;
  if (n == 0) {
    snprintf(err, errlen, "%s: an empty list (omit it or write [\"*\"] for every one)",
             what);
    return -1;
  }
  if (n == 1 && !strcmp(items[0], "*")) {
    t->all_generators = 1;
    return 0;
  }
  t->generators = calloc(n, sizeof *t->generators);
  if (!t->generators) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (!idgen__serve_config_gen(cfg, items[i], strlen(items[i]))) {
      char names[512];
      size_t len = 0;
      names[0] = '\0';
      for (size_t g = 0; g < cfg->ngens && len < sizeof names; g++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", g ? ", " : "",
                                cfg->gens[g].name);
      snprintf(err, errlen, "%s: '%.64s' is not a generator of this server (%s%s)", what,
               items[i], names, !strcmp(items[i], "*") ? "; \"*\" stands alone" : "");
      return -1;
    }
    snprintf(t->generators[t->ngenerators++], sizeof *t->generators, "%s", items[i]);
  }
  return 0;
}

/* tokens.NAME.cert_subject (an RFC 2253 subject, "CN=team-a,O=corp") or cert_san ("DNS:",
 * "URI:" or "email:" and the name): matched exactly (tokens.c), so only its form is
 * checked here. */
static int token_cert(idgen__token_spec *t, const idgen__config_option *o, const char *what,
                      char *err, size_t errlen) {
  static const char *const kinds[] = {"DNS:", "URI:", "email:"};
  int is_san = !strcmp(o->key, "cert_san");
  char *field = is_san ? t->cert_san : t->cert_subject;
  if (!o->value[0] || strlen(o->value) >= IDGEN_CFG_STR) {
    snprintf(err, errlen, "%s: want %s of 1 to %d characters", what,
             is_san ? "a SAN entry" : "a subject", IDGEN_CFG_STR - 1);
    return -1;
  }
  int known = !is_san;
  for (size_t i = 0; is_san && i < sizeof kinds / sizeof kinds[0]; i++)
    known |=
        !strncmp(o->value, kinds[i], strlen(kinds[i])) && o->value[strlen(kinds[i])] != 0;
  if (!known) {
    snprintf(err, errlen, "%s: '%.64s' is not DNS:NAME, URI:URI or email:ADDRESS", what,
             o->value);
    return -1;
  }
  if (!is_san && !strchr(o->value, '=')) {
    snprintf(err, errlen,
             "%s: '%.64s' is not a subject in RFC 2253 form (\"CN=team-a,O=corp\": "
             "openssl x509 -noout -subject -nameopt RFC2253 prints it)",
             what, o->value);
    return -1;
  }
  snprintf(field, IDGEN_CFG_STR, "%s", o->value);
  return 0;
}

static int apply_token(const idgen__serve_config *cfg, const idgen__config_entry *e,
                       idgen__token_spec *t, char *err, size_t errlen) {
  const char *why;
  memset(t, 0, sizeof *t);
  t->all_generators = 1;
  t->line = e->line;
  if (idgen__segment_name_check(e->name) || !strcmp(e->name, IDGEN__AUTH_TOKEN_NAME)) {
    why =
        "use 1-64 of A-Z a-z 0-9 _ . - (not starting with '.'; not " IDGEN__AUTH_TOKEN_NAME
        ")";
    snprintf(err, errlen, "%s:%d: tokens.%.64s: not a token name: %s", cfg->config_file,
             e->line, e->name, why);
    return -1;
  }
  snprintf(t->name, sizeof t->name, "%s", e->name);
  for (size_t i = 0; i < e->noptions; i++) {
    const idgen__config_option *o = &e->options[i];
    char what[IDGEN_CFG_PATH + 160];
    snprintf(what, sizeof what, "%s:%d: tokens.%s.%s", cfg->config_file, o->line, e->name,
             o->key);
    if (!strcmp(o->key, "generators")) {
      t->all_generators = 0;
      if (token_generators(cfg, t, o, what, err, errlen) < 0)
        return -1;
      continue;
    }
    if (o->items) {
      snprintf(err, errlen, "%s: want a single value, not a list", what);
      return -1;
    }
    if (!strcmp(o->key, "file")) {
      if (!o->value[0] || strlen(o->value) >= sizeof t->file) {
        snprintf(err, errlen, "%s: want a path", what);
        return -1;
      }
      snprintf(t->file, sizeof t->file, "%s", o->value);
    } else if (!strcmp(o->key, "cert_subject") || !strcmp(o->key, "cert_san")) {
      if (token_cert(t, o, what, err, errlen) < 0)
        return -1;
    } else if (!strcmp(o->key, "decode")) {
      if (parse_bool(o->value, &t->decode) < 0) {
        snprintf(err, errlen, "%s: '%s' is not true or false", what, o->value);
        return -1;
      }
    } else if (!strcmp(o->key, "rate") || !strcmp(o->key, "burst")) {
      int is_rate = o->key[0] == 'r';
      uint64_t max = is_rate ? IDGEN__QUOTA_RATE_MAX : IDGEN__QUOTA_BURST_MAX;
      if (parse_u64(o->value, 1, max, is_rate ? &t->rate : &t->burst, what, err, errlen) <
          0)
        return -1;
    } else {
      snprintf(err, errlen,
               "%s: unknown option of a token (it takes: file, cert_subject, "
               "cert_san, generators, decode, rate, burst)",
               what);
      return -1;
    }
  }
  if (t->burst && !t->rate) {
    snprintf(err, errlen, "%s:%d: tokens.%s.burst: a burst needs a rate (IDs per second)",
             cfg->config_file, e->line, e->name);
    return -1;
  }
  if (!t->file[0] && !t->cert_subject[0] && !t->cert_san[0]) {
    snprintf(err, errlen,
             "%s:%d: tokens.%s: no file (the token's file, as "
             "--auth-token-file's), cert_subject or cert_san",
             cfg->config_file, e->line, e->name);
    return -1;
  }
  return 0;
}

static int load_tokens(idgen__serve_config *cfg, const idgen__config_file *file, char *err,
                       size_t errlen) {
  if (file->ntokens > IDGEN__TOKENS_MAX) {
    snprintf(err, errlen, "%s: %zu tokens, %d at most", cfg->config_file, file->ntokens,
             IDGEN__TOKENS_MAX);
    return -1;
  }
  cfg->tokens = calloc(file->ntokens ? file->ntokens : 1, sizeof *cfg->tokens);
  if (!cfg->tokens) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < file->ntokens; i++) {
    cfg->ntokens++;
    if (apply_token(cfg, &file->tokens[i], &cfg->tokens[i], err, errlen) < 0)
      return -1;
  }
  return 0;
}

int idgen__serve_config_auth(const idgen__serve_config *cfg) {
  return cfg->auth_token_file[0] != 0 || cfg->auth_token[0] != 0 || cfg->ntokens > 0;
}

/* Reads --config and makes cfg->gens: the default first, then the file's others. */
static int load_generators(idgen__serve_config *cfg, char *err, size_t errlen) {
  idgen__config_file file = {0};
  snprintf(loaded_file, sizeof loaded_file, "%s", cfg->config_file);
  if (cfg->config_file[0] && idgen__config_file_read(cfg->config_file, &file, err, errlen))
    return -1;
  int rc = -1;
  if (file.nentries + 1 > IDGEN_SERVE_GENERATORS_MAX) {
    snprintf(err, errlen, "%s: %zu generators, %d at most", cfg->config_file, file.nentries,
             IDGEN_SERVE_GENERATORS_MAX);
    goto done;
  }
  cfg->gens = calloc(file.nentries + 1, sizeof *cfg->gens);
  if (!cfg->gens) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  cfg->ngens = 1;
  spec_defaults(cfg, &cfg->gens[0], IDGEN__DEFAULT_GENERATOR, KIND_SNOWFLAKE);
  for (size_t i = 0; i < file.nentries; i++) {
    const idgen__config_entry *e = &file.entries[i];
    int is_default = !strcmp(e->name, IDGEN__DEFAULT_GENERATOR);
    if (apply_entry(cfg, e, is_default ? &cfg->gens[0] : &cfg->gens[cfg->ngens], err,
                    errlen) < 0)
      goto done;
    cfg->ngens += !is_default;
  }
  /* The named ones took the lease options before the default entry set its own:
   * namespace (inherited) is the default's as the flags and the file leave it. */
  for (size_t i = 1; i < cfg->ngens; i++)
    if (cfg->gens[i].lines[idgen__gen_key_index("namespace")] == IDGEN__KEY_INHERITED)
      snprintf(cfg->gens[i].lease.ns, sizeof cfg->gens[i].lease.ns, "%s", cfg->lease.ns);
  rc = default_from_flags(cfg, &cfg->gens[0], err, errlen);
  if (rc == 0)
    rc = load_tokens(cfg, &file, err, errlen);
done:
  idgen__config_file_free(&file);
  return rc;
}

void idgen__serve_config_free(idgen__serve_config *cfg) {
  free(cfg->gens);
  cfg->gens = NULL;
  cfg->ngens = 0;
  for (size_t i = 0; i < cfg->ntokens; i++)
    free(cfg->tokens[i].generators);
  free(cfg->tokens);
  cfg->tokens = NULL;
  cfg->ntokens = 0;
}

idgen__config_status idgen__serve_config_load(idgen__serve_config *cfg, int argc,
                                              char **argv, FILE *out, char *err,
                                              size_t errlen) {
  idgen__serve_config_free(cfg);
  memset(cfg, 0, sizeof *cfg);
  cfg->argc = argc;
  cfg->argv = argv;
  for (size_t i = 0; i < NOPTS; i++) {
    sources[i] = "default";
    if (set_value(cfg, &idgen__serve_opts[i], idgen__serve_opts[i].def, "built-in default",
                  err, errlen) < 0)
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
    idgen__serve_env_name(&idgen__serve_opts[i], env, sizeof env);
    const char *v = getenv(env);
    if (!v)
      continue;
    char what[80];
    snprintf(what, sizeof what, "%s: --%s", env, idgen__serve_opts[i].name);
    if (set_value(cfg, &idgen__serve_opts[i], v, what, err, errlen) < 0)
      return IDGEN_CONFIG_USAGE;
    sources[i] = "env";
  }

  struct option lopts[NOPTS + LEASE_OPTS_MAX + 3];
  size_t nl = 0;
  for (size_t i = 0; i < NOPTS; i++)
    lopts[nl++] = (struct option){idgen__serve_opts[i].name, required_argument, NULL,
                                  (int)(1000 + i)};
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
      idgen__serve_config_usage(out);
      return IDGEN_CONFIG_DONE;
    }
    if (c == 'p') {
      print = 1;
      continue;
    }
    if (c >= 1000 && c < 1000 + (int)NOPTS) {
      size_t i = (size_t)(c - 1000);
      char what[80];
      snprintf(what, sizeof what, "--%s", idgen__serve_opts[i].name);
      if (set_value(cfg, &idgen__serve_opts[i], optarg, what, err, errlen) < 0)
        return IDGEN_CONFIG_USAGE;
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
  if (load_generators(cfg, err, errlen) < 0)
    return IDGEN_CONFIG_USAGE;
  if (print) {
    idgen__serve_config_print(cfg, out);
    return IDGEN_CONFIG_DONE;
  }
  return IDGEN_CONFIG_SERVE;
}

/* Reads the token files: --auth-token-file into cfg->auth_token, and every token's
 * (tokens.c, which the server reads them with again). */
static int load_token(idgen__serve_config *cfg, char *err, size_t errlen) {
  if (cfg->auth_token_file[0] &&
      idgen__token_read("--auth-token-file", cfg->auth_token_file, cfg->auth_token,
                        sizeof cfg->auth_token, err, errlen) < 0)
    return -1;
  idgen__token_set *set = NULL;
  char why[IDGEN_CFG_PATH * 2 + 200];
  if (idgen__token_set_load(cfg, NULL, NULL, 0, &set, why, sizeof why) < 0) {
    /* A tokens: entry's message gets its place in the file. */
    int line = 0;
    for (size_t i = 0; i < cfg->ntokens && !line; i++) {
      size_t l = strlen(cfg->tokens[i].name);
      if (!strncmp(why, "tokens.", 7) && !strncmp(why + 7, cfg->tokens[i].name, l) &&
          why[7 + l] == '.')
        line = cfg->tokens[i].line;
    }
    if (line)
      snprintf(err, errlen, "%s:%d: %s", cfg->config_file, line, why);
    else
      snprintf(err, errlen, "%s", why);
    return -1;
  }
  idgen__token_set_free(set);
  return 0;
}

const idgen__gen_spec *idgen__serve_config_gen(const idgen__serve_config *cfg,
                                               const char *name, size_t len) {
  for (size_t i = 0; i < cfg->ngens; i++)
    if (strlen(cfg->gens[i].name) == len && !memcmp(cfg->gens[i].name, name, len))
      return &cfg->gens[i];
  return NULL;
}

void idgen__gen_spec_dsn(const idgen__gen_spec *s, char *out, size_t outlen) {
  if (s->dsn[0] || strcmp(s->backend, "file")) {
    snprintf(out, outlen, "%s", s->dsn);
    return;
  }
  char dir[IDGEN_LEASE_PATH_MAX];
  if (s->lease.state_dir[0])
    snprintf(dir, sizeof dir, "%s", s->lease.state_dir);
  else
    idgen__default_state_dir(dir, sizeof dir);
  snprintf(out, outlen, "%s/", dir); /* a directory, even before it exists */
}

void idgen__gen_spec_format_history(const idgen__gen_spec *s, char *out, size_t outlen) {
  char dir[IDGEN_LEASE_PATH_MAX];
  if (s->lease.state_dir[0])
    snprintf(dir, sizeof dir, "%s", s->lease.state_dir);
  else
    idgen__default_state_dir(dir, sizeof dir);
  snprintf(out, outlen, "%s/formats-%s", dir, s->name);
}

/* Where the value of a generator's option came from, for messages: the file
 * ("FILE:LINE: generators.NAME.KEY"), or for the default generator's flag-backed
 * options the flag or variable ("--layout", "IDGEN_LAYOUT"). */
static void origin(const idgen__gen_spec *s, const char *key, char *out, size_t outlen) {
  const idgen__gen_key *k = key_named(key);
  int line = s->lines[k - idgen__gen_keys];
  if (!strcmp(s->name, IDGEN__DEFAULT_GENERATOR) && k->flag) {
    int i = serve_opt(k->flag), l = i < 0 ? lease_opt(k->flag) : -1;
    const char *src = i >= 0 ? sources[i] : lease_sources[l];
    line = i >= 0 ? source_lines[i] : lease_lines[l];
    if (!strcmp(src, "env") && i >= 0) {
      idgen__serve_env_name(&idgen__serve_opts[i], out, outlen);
      return;
    }
    if (!strcmp(src, "env")) {
      snprintf(out, outlen, "%s", idgen_lease_options()[l].env);
      return;
    }
    if (strcmp(src, "file")) {
      snprintf(out, outlen, "--%s", k->flag);
      return;
    }
  }
  if (line > 0)
    snprintf(out, outlen, "%s:%d: generators.%s.%s", loaded_file, line, s->name, key);
  else
    snprintf(out, outlen, "generators.%s.%s", s->name, key);
}

/* "FILE:LINE: generators.NAME: " for a generator of the file; "" for the default made
 * from the flags alone. */
static void entry_prefix(const idgen__gen_spec *s, char *out, size_t outlen) {
  if (s->line > 0)
    snprintf(out, outlen, "%s:%d: generators.%s: ", loaded_file, s->line, s->name);
  else
    out[0] = '\0';
}

int idgen__gen_spec_parse(const idgen__gen_spec *s, idgen__snowflake_choices *out,
                          char *err, size_t errlen) {
  char what[IDGEN_CFG_PATH + 160], why[160] = "";
  int rc = idgen_layout_parse(s->layout, strlen(s->layout), idgen_wall_ns() / 1000000,
                              &out->layout, why, sizeof why);
  if (rc < 0) {
    origin(s, "layout", what, sizeof what);
    snprintf(err, errlen, "%s '%s': %s", what, s->layout,
             why[0] ? why : idgen_strerror(rc));
    return -1;
  }
  if (idgen_policy_parse(s->policy, &out->policy) < 0) {
    origin(s, "policy", what, sizeof what);
    snprintf(err, errlen, "%s '%s': expected fail, wait or logical", what, s->policy);
    return -1;
  }
  if (s->seq_reset_threshold >> out->layout.seq_bits) {
    origin(s, "seq_reset_threshold", what, sizeof what);
    snprintf(err, errlen, "%s %llu: must be below 2^%u, the layout's sequence field", what,
             (unsigned long long)s->seq_reset_threshold, out->layout.seq_bits);
    return -1;
  }
  return 0;
}

/* A snowflake generator: layout, policy, threshold, the lease against the layout. */
int idgen__snowflake_prefix(const idgen__gen_spec *s, char *prefix, size_t prefixlen,
                            char *err, size_t errlen) {
  static const char tail[] = "{base62}";
  size_t len = strlen(s->format), tl = sizeof tail - 1, plen = len - tl;
  int ok = len > tl && len - tl <= IDGEN__SNOWFLAKE_PREFIX_MAX &&
           !strcmp(s->format + plen, tail);
  for (size_t i = 0; ok && i < plen; i++) {
    char c = s->format[i];
    ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-';
  }
  if (!ok) {
    char what[IDGEN_CFG_PATH + 160];
    origin(s, "format", what, sizeof what);
    snprintf(err, errlen,
             "%s: a snowflake generator's format is PREFIX{base62}, PREFIX 1-%d of A-Z "
             "a-z 0-9 _ - (ord_{base62}), not '%s'",
             what, IDGEN__SNOWFLAKE_PREFIX_MAX, s->format);
    return -1;
  }
  snprintf(prefix, prefixlen, "%.*s", (int)plen, s->format);
  return 0;
}

static int check_snowflake(const idgen__gen_spec *s, char *err, size_t errlen) {
  idgen__snowflake_choices choices;
  if (idgen__gen_spec_parse(s, &choices, err, errlen) < 0)
    return -1;
  char fixed[IDGEN__SNOWFLAKE_PREFIX_MAX + 1];
  if (s->format[0] && idgen__snowflake_prefix(s, fixed, sizeof fixed, err, errlen) < 0)
    return -1;
  char why[512], prefix[IDGEN_CFG_PATH + 100];
  if (idgen_lease_config_check(&s->lease, &choices.layout, why, sizeof why) < 0) {
    entry_prefix(s, prefix, sizeof prefix);
    snprintf(err, errlen, "%s%s", prefix, why);
    return -1;
  }
  return 0;
}

/* A segment generator: its backend and DSN (syntax only: nothing is contacted) and its
 * steps, through the generator's own checks (manual mode: no thread). */
static int check_segment(const idgen__gen_spec *s, char *err, size_t errlen) {
  char why[IDGEN_SEGMENT_WHY_MAX], prefix[IDGEN_CFG_PATH + 100], dsn[IDGEN_CFG_DSN + 64];
  entry_prefix(s, prefix, sizeof prefix);
  if (s->lines[idgen__gen_key_index("path")] > 0 && strcmp(s->backend, "file")) {
    origin(s, "path", prefix, sizeof prefix);
    snprintf(err, errlen, "%s: the %s backend takes a dsn, not a path", prefix, s->backend);
    return -1;
  }
  idgen__gen_spec_dsn(s, dsn, sizeof dsn);
  idgen__segment_backend *b = NULL;
  if (idgen__segment_backend_open_with(&b, s->backend, dsn, (int64_t)s->timeout_ms,
                                       &s->lease, why, sizeof why) < 0) {
    snprintf(err, errlen, "%s%s", prefix, why);
    return -1;
  }
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__gen_spec_segment_config(s, b, &clock.base, &c);
  c.manual = 1;
  idgen__tz *tz = NULL;
  if (idgen__gen_spec_period(s, &c, &tz, err, errlen) < 0) {
    idgen__segment_backend_free(b);
    return -1;
  }
  if (c.period && idgen__segment_period_check(b, s->name, c.period) < 0) {
    origin(s, "period", prefix, sizeof prefix);
    snprintf(err, errlen, "%s: %s", prefix, b->why);
    idgen__segment_backend_free(b);
    idgen__tz_free(tz);
    return -1;
  }
  idgen__seg_format fmt;
  if (s->format[0] && idgen__gen_spec_format(s, &fmt, err, errlen) < 0) {
    idgen__segment_backend_free(b);
    idgen__tz_free(tz);
    return -1;
  }
  idgen__segment *seg = NULL;
  int rc = idgen__segment_new(&seg, &c, why, sizeof why);
  idgen__segment_free(seg);
  idgen__segment_backend_free(b);
  idgen__tz_free(tz);
  if (rc < 0)
    snprintf(err, errlen, "%s%s", prefix, why);
  return rc < 0 ? -1 : 0;
}

int idgen__gen_spec_period(const idgen__gen_spec *s, idgen__segment_config *out,
                           idgen__tz **tz, char *err, size_t errlen) {
  char what[IDGEN_CFG_PATH + 160], why[200];
  *tz = NULL;
  if (idgen__period_parse(s->period, &out->period) < 0) {
    origin(s, "period", what, sizeof what);
    snprintf(err, errlen, "%s: '%s' is not a period (day, month, year, none)", what,
             s->period);
    return -1;
  }
  if (!out->period)
    return 0;
  if (idgen__tz_load(s->timezone, tz, why, sizeof why) < 0) {
    origin(s, "timezone", what, sizeof what);
    snprintf(err, errlen, "%s: %s", what, why);
    return -1;
  }
  out->tz = *tz;
  out->period_digits = (unsigned)s->digits;
  out->ns = s->lease.ns;
  return 0;
}

int idgen__gen_spec_format(const idgen__gen_spec *s, idgen__seg_format *out, char *err,
                           size_t errlen) {
  char what[IDGEN_CFG_PATH + 160], why[256];
  idgen__period_kind period = IDGEN__PERIOD_NONE;
  idgen__period_parse(s->period, &period);
  if (idgen__seg_format_compile(out, s->format, s->name, period, (unsigned)s->digits, why,
                                sizeof why) < 0) {
    origin(s, "format", what, sizeof what);
    snprintf(err, errlen, "%s: %s", what, why);
    return -1;
  }
  return 0;
}

void idgen__gen_spec_segment_config(const idgen__gen_spec *s, idgen__segment_backend *b,
                                    idgen_clock *clock, idgen__segment_config *out) {
  idgen__segment_config_init(out, s->name, b, clock);
  out->step = s->step;
  out->max_step = s->max_step;
  out->prefetch_pct = (int)s->prefetch_pct;
  out->period_ns = (int64_t)s->period_s * 1000000000;
  out->retry_ns = (int64_t)s->retry_ms * 1000000;
}

static int check_gen(const idgen__gen_spec *s, char *err, size_t errlen) {
  if (s->kind == KIND_SNOWFLAKE && check_snowflake(s, err, errlen) < 0)
    return -1;
  if (s->kind == KIND_SEGMENT && check_segment(s, err, errlen) < 0)
    return -1;
  if (s->opaque_key_file[0]) {
    char what[IDGEN_CFG_PATH + 160];
    origin(s, "opaque_key_file", what, sizeof what);
    idgen_opaque *opaque = NULL;
    if (idgen__opaque_open(what, s->opaque_key_file, s->name, strlen(s->name), &opaque, err,
                           errlen) < 0)
      return -1;
    idgen_opaque_free(opaque);
  }
  return 0;
}

/* The worker IDs a k8s generator takes over every pod, as its IDs carry them (its
 * datacenter's under one): offset to offset + k8s_replicas - 1. */
static void k8s_workers(const idgen__gen_spec *s, uint64_t *lo, uint64_t *hi) {
  idgen__snowflake_choices choices;
  idgen_lease_space space;
  char why[IDGEN_CFG_PATH + 200];
  /* Both passed check_snowflake already. */
  idgen__gen_spec_parse(s, &choices, why, sizeof why);
  idgen_lease_space_of(&s->lease, &choices.layout, &space, NULL, 0);
  uint64_t offset = (uint64_t)s->lease.worker_id_offset;
  *lo = idgen_lease_space_worker(&space, offset);
  *hi = idgen_lease_space_worker(&space, offset + (uint64_t)s->lease.k8s_replicas - 1);
}

/* Two k8s generators of one namespace must not meet on any two pods, and a pod sees
 * only its own generators: so the pods are bounded (--k8s-replicas N) and each
 * generator's N worker IDs kept apart from the other's, here, before any pod starts. */
static int check_k8s_pair(const idgen__gen_spec *a, const idgen__gen_spec *b, char *err,
                          size_t errlen) {
  int64_t n = a->lease.k8s_replicas;
  if (n == 0) {
    snprintf(
        err, errlen,
        "generators '%s' and '%s' share namespace '%s' under the k8s provider with no "
        "bound on the pods, so one pod's '%s' can take another pod's '%s' worker ID: "
        "set --k8s-replicas N (IDGEN_K8S_REPLICAS, the StatefulSet's replicas at most) "
        "and worker_id_offset values N apart, or give one a namespace of its own",
        a->name, b->name, a->lease.ns, b->name, a->name);
    return -1;
  }
  uint64_t alo, ahi, blo, bhi;
  k8s_workers(a, &alo, &ahi);
  k8s_workers(b, &blo, &bhi);
  if (alo <= bhi && blo <= ahi) {
    snprintf(err, errlen,
             "generators '%s' and '%s' would share worker IDs across pods under the k8s "
             "provider: '%s' takes %llu-%llu and '%s' %llu-%llu (worker_id_offset + "
             "ordinals 0-%lld of --k8s-replicas %lld): give them worker_id_offset values "
             "at least %lld apart",
             a->name, b->name, a->name, (unsigned long long)alo, (unsigned long long)ahi,
             b->name, (unsigned long long)blo, (unsigned long long)bhi, (long long)(n - 1),
             (long long)n, (long long)n);
    return -1;
  }
  return 0;
}

/* With the static and k8s providers each generator claims a fixed worker ID; two that
 * claim one would meet on its lock file in the state directory, whatever their
 * namespaces. Under k8s two of one namespace must not meet across pods either. */
static int check_fixed_workers(const idgen__serve_config *cfg, char *err, size_t errlen) {
  if (cfg->lease.kind != IDGEN_LEASE_STATIC && cfg->lease.kind != IDGEN_LEASE_K8S)
    return 0;
  int k8s = cfg->lease.kind == IDGEN_LEASE_K8S;
  for (size_t i = 0; i < cfg->ngens; i++)
    for (size_t j = i + 1; j < cfg->ngens; j++) {
      const idgen_lease_config *a = &cfg->gens[i].lease, *b = &cfg->gens[j].lease;
      if (cfg->gens[i].kind != KIND_SNOWFLAKE || cfg->gens[j].kind != KIND_SNOWFLAKE)
        continue;
      if (k8s && !strcmp(a->ns, b->ns)) {
        if (check_k8s_pair(&cfg->gens[i], &cfg->gens[j], err, errlen) < 0)
          return -1;
        continue;
      }
      if (a->datacenter != b->datacenter ||
          (k8s ? a->worker_id_offset != b->worker_id_offset : a->worker_id != b->worker_id))
        continue;
      snprintf(err, errlen,
               "generators '%s' and '%s' would both claim worker ID %lld%s with the %s "
               "provider (one lock file per worker ID in the state directory, whatever the "
               "namespace): give each its own %s",
               cfg->gens[i].name, cfg->gens[j].name,
               (long long)(k8s ? a->worker_id_offset : a->worker_id),
               k8s ? " past the pod ordinal" : "", k8s ? "k8s" : "static",
               k8s ? "worker_id_offset" : "worker_id");
      return -1;
    }
  return 0;
}

/* The --tls-* options together (their files are read by server/tls.c before serving). */
static int check_tls(const idgen__serve_config *cfg, char *err, size_t errlen) {
  const char *mode = cfg->tls_client_cert;
  if (strcmp(mode, "none") != 0 && strcmp(mode, "optional") != 0 &&
      strcmp(mode, "require") != 0) {
    snprintf(err, errlen, "--tls-client-cert '%s': expected none, optional or require",
             mode);
    return -1;
  }
  if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
    snprintf(err, errlen, "--tls-cert and --tls-key go together: %s is missing",
             cfg->tls_cert[0] ? "--tls-key" : "--tls-cert");
    return -1;
  }
  int client = strcmp(mode, "none") != 0;
  if ((client || cfg->tls_ca[0]) && !cfg->tls_cert[0]) {
    snprintf(err, errlen, "%s needs --tls-cert and --tls-key",
             client ? "--tls-client-cert" : "--tls-ca");
    return -1;
  }
  if (client && !cfg->tls_ca[0]) {
    snprintf(err, errlen, "--tls-client-cert %s needs --tls-ca (the CAs that sign them)",
             mode);
    return -1;
  }
  if (!client && cfg->tls_ca[0]) {
    snprintf(err, errlen,
             "--tls-ca is for client certificates: give --tls-client-cert "
             "optional or require");
    return -1;
  }
  return 0;
}

/* A team's certificate needs one verified: --tls-ca with --tls-client-cert optional or
 * require (check_tls makes those go together). */
static int check_cert_teams(const idgen__serve_config *cfg, char *err, size_t errlen) {
  for (size_t i = 0; i < cfg->ntokens && !cfg->tls_ca[0]; i++) {
    const idgen__token_spec *t = &cfg->tokens[i];
    if (!t->cert_subject[0] && !t->cert_san[0])
      continue;
    snprintf(err, errlen,
             "%s:%d: tokens.%s.%s: needs --tls-ca and --tls-client-cert optional or "
             "require (a client certificate verified)",
             cfg->config_file, t->line, t->name,
             t->cert_subject[0] ? "cert_subject" : "cert_san");
    return -1;
  }
  return 0;
}

/* --health-listen: plain text, so loopback only (a probe on the host, never a way
 * around TLS from the network). */
static int check_health(const idgen__serve_config *cfg, char *err, size_t errlen) {
  char host[256];
  uint16_t port;
  if (!cfg->health_listen[0])
    return 0;
  if (idgen__parse_hostport(cfg->health_listen, host, sizeof host, &port) < 0) {
    snprintf(err, errlen, "--health-listen '%s': expected ADDR:PORT", cfg->health_listen);
    return -1;
  }
  if (strncmp(host, "127.", 4) != 0 && strcmp(host, "::1") != 0 &&
      strcmp(host, "[::1]") != 0) {
    snprintf(err, errlen,
             "--health-listen '%s': a plain-text port must be on loopback (127.0.0.0/8 or "
             "::1)",
             cfg->health_listen);
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
  if (strcmp(cfg->clock, "mono") && strcmp(cfg->clock, "wall")) {
    snprintf(err, errlen, "--clock '%s': expected mono or wall", cfg->clock);
    return -1;
  }
  if (strcmp(cfg->log_level, "debug") && strcmp(cfg->log_level, "info") &&
      strcmp(cfg->log_level, "warn")) {
    snprintf(err, errlen, "--log-level '%s': expected debug, info or warn", cfg->log_level);
    return -1;
  }
  if (check_tls(cfg, err, errlen) < 0 || check_cert_teams(cfg, err, errlen) < 0 ||
      check_health(cfg, err, errlen) < 0)
    return -1;
  for (size_t i = 0; i < cfg->ngens; i++)
    if (check_gen(&cfg->gens[i], err, errlen) < 0)
      return -1;
  if (check_fixed_workers(cfg, err, errlen) < 0)
    return -1;
  memset(cfg->auth_token, 0, sizeof cfg->auth_token);
  return load_token(cfg, err, errlen);
}
