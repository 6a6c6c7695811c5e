/* config.c: lease configuration from flags and environment, its checks, the provider
 * table and open(). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "lease/lease_internal.h"
#include "redis/url.h"

void idgen_lease_config_init(idgen_lease_config *c) {
  memset(c, 0, sizeof *c);
  c->kind = IDGEN_LEASE_FILE;
  c->worker_id = -1;
  c->pod_index = -1;
  snprintf(c->ns, sizeof c->ns, "default");
  c->ttl_ms = 10000;
  c->ahead_ms = 3000;
  c->hwm_interval_ms = 1000;
  c->hwm_wait_max_ms = 30000;
  c->request_timeout_ms = 5000;
  c->max_skew_ms = 10000;
  c->datacenter = -1;
  c->range_lo = c->range_hi = -1;
  snprintf(c->region, sizeof c->region, "default");
}

/* A kind libidgen knows: its name, the checks of its options, and its constructor when
 * libidgen has it. etcd's options are parsed and checked here, whether or not the
 * provider is linked; its constructor comes from libidgen-etcd, through
 * config->providers (idgen_lease_etcd); ZooKeeper's from libidgen-zookeeper
 * (idgen_lease_zookeeper) and Redis's from libidgen-redis (idgen_lease_redis) likewise. */
typedef struct kind_row {
  idgen_lease_provider provider; /* kind, name; .open NULL: in another library */
  int (*check)(const idgen_lease_config *c, const idgen_lease_space *space, char *err,
               size_t errlen); /* NULL: nothing beyond the common checks */
} kind_row;

/* libidgen's rows of the provider table (below), by kind and by name. */
static const kind_row *row_of(idgen_lease_kind kind);
static const kind_row *row_named(const char *name);

const char *idgen_lease_kind_name(idgen_lease_kind kind) {
  const kind_row *r = row_of(kind);
  return r ? r->provider.name : "unknown";
}

int idgen_lease_kind_parse(const char *name, idgen_lease_kind *out) {
  const kind_row *r = name ? row_named(name) : NULL;
  if (!r)
    return IDGEN_EINVAL;
  *out = r->provider.kind;
  return 0;
}

static const idgen_lease_option options[] = {
    {"lease", "IDGEN_LEASE", 1, "KIND",
     "worker-ID provider: file (one host, default), etcd (fleet), zookeeper (fleet), redis "
     "(fleet, not consensus), k8s (StatefulSet ordinal), static (--worker-id; NO FENCE: "
     "two "
     "processes with one ID collide)"},
    {"state-dir", "IDGEN_STATE_DIR", 1, "DIR",
     "where lock files and local HWM files live (file, static, k8s)"},
    {"worker-id", "IDGEN_WORKER_ID", 1, "N", "static: the worker ID (unchecked: no fence)"},
    {"worker-id-offset", "IDGEN_WORKER_ID_OFFSET", 1, "N",
     "k8s: added to the pod ordinal (ordinals are unique only within one StatefulSet)"},
    {"pod-index", "IDGEN_POD_INDEX", 1, "N",
     "k8s: the pod ordinal (default: the -N suffix of the hostname)"},
    {"k8s-replicas", "IDGEN_K8S_REPLICAS", 1, "N",
     "k8s: ordinals are below N (the StatefulSet's replicas at most; a pod past it is "
     "refused), so a generator at offset o takes worker IDs o to o+N-1: needed by two "
     "snowflake generators in one namespace"},
    {"etcd", "IDGEN_ETCD", 1, "URLS",
     "etcd: endpoints, comma-separated, all http://host:port or all https://host:port"},
    {"etcd-cacert", "IDGEN_ETCD_CACERT", 1, "FILE",
     "etcd: PEM CA certificates that sign https:// endpoints' certificates (default: "
     "the system's); the peer and its host name are always verified"},
    {"etcd-cert", "IDGEN_ETCD_CERT", 1, "FILE",
     "etcd: PEM client certificate for https:// endpoints (etcd --client-cert-auth), "
     "with --etcd-key"},
    {"etcd-key", "IDGEN_ETCD_KEY", 1, "FILE", "etcd: PEM private key of --etcd-cert"},
    {"etcd-user", "IDGEN_ETCD_USER", 1, "USER",
     "etcd: authenticate as USER (etcd auth enabled); the password from "
     "--etcd-password-file or IDGEN_ETCD_PASSWORD"},
    {"etcd-password-file", "IDGEN_ETCD_PASSWORD_FILE", 1, "FILE",
     "etcd: file holding --etcd-user's password (one line), read at start"},
    {"zookeeper", "IDGEN_ZOOKEEPER", 1, "HOST:PORT[,...]",
     "zookeeper: the ensemble's servers, comma-separated (host:port); its maxClientCnxns "
     "must allow one connection per generator"},
    {"zk-user", "IDGEN_ZK_USER", 1, "USER",
     "zookeeper: authenticate each session as digest user USER (no ':') and make the "
     "namespace's nodes writable by USER alone, readable by all; the password from "
     "--zk-password-file or IDGEN_ZK_PASSWORD"},
    {"zk-password-file", "IDGEN_ZK_PASSWORD_FILE", 1, "FILE",
     "zookeeper: file holding --zk-user's password (one line), read at start"},
    {"redis", "IDGEN_REDIS", 1, "URL",
     "redis: the primary, redis://[user:pass@]HOST:PORT[/db], or rediss:// over TLS (not "
     "a consensus store: see docs/leases.md)"},
    {"redis-cacert", "IDGEN_REDIS_CACERT", 1, "FILE",
     "redis: PEM CA certificates that sign a rediss:// server's certificate (default: "
     "the system's); the peer and its host name are always verified"},
    {"redis-cert", "IDGEN_REDIS_CERT", 1, "FILE",
     "redis: PEM client certificate for rediss:// (tls-auth-clients), with --redis-key"},
    {"redis-key", "IDGEN_REDIS_KEY", 1, "FILE", "redis: PEM private key of --redis-cert"},
    {"redis-user", "IDGEN_REDIS_USER", 1, "USER",
     "redis: AUTH as this ACL user (or rediss://USER@HOST with a password source); the "
     "password from --redis-password-file or IDGEN_REDIS_PASSWORD"},
    {"redis-password-file", "IDGEN_REDIS_PASSWORD_FILE", 1, "FILE",
     "redis: file holding the AUTH password (one line), read at start; then the URL "
     "holds none"},
    {"redis-min-replicas", NULL, 1, "N",
     "redis: each HWM write waits (WAIT) until N replicas have it (default 0)"},
    {"namespace", "IDGEN_NAMESPACE", 1, "NAME",
     "worker IDs are unique per namespace: etcd keys and ZooKeeper nodes live under "
     "/idgen/NAME/; file, "
     "static and k8s claim each ID host-wide in it (default \"default\")"},
    {"lease-ttl", "IDGEN_LEASE_TTL", 1, "SECONDS",
     "etcd, redis: lease TTL; zookeeper: the session timeout asked for (the ensemble may "
     "negotiate another, which counts) (default 10, at least 2)"},
    {"lease-margin", NULL, 1, "MS",
     "stop issuing this long before the lease would expire (default min(2000, TTL/3))"},
    {"hwm-ahead", NULL, 1, "MS", "cap = now + this, persisted before use (default 3000)"},
    {"hwm-interval", NULL, 1, "MS", "how often the HWM is written (default 1000)"},
    {"hwm-wait-max", NULL, 1, "MS",
     "refuse to start when the HWM is further ahead than this (default 30000)"},
    {"etcd-timeout", NULL, 1, "MS",
     "etcd, redis: per-request timeout; zookeeper: how long opening waits for a session "
     "(default 5000)"},
    {"max-clock-skew", NULL, 1, "MS",
     "etcd, zookeeper: refuse to start this far from the median clock of live peers "
     "(default 10000; "
     "0: do not check)"},
    {"require-ntp-sync", NULL, 0, NULL,
     "refuse to start when the kernel says the clock is "
     "not NTP-synchronised"},
    {"datacenter", "IDGEN_DATACENTER", 1, "N",
     "layouts with two node fields (twitter: datacenter, worker): the high field is N; "
     "providers claim the low one only, in a space of N's own (one N per region)"},
    {"worker-id-range", "IDGEN_WORKER_ID_RANGE", 1, "LO-HI",
     "claim only these values of the claimed field (the low one with --datacenter): "
     "file and etcd take the smallest free one; static and k8s must fall in it"},
    {"region", "IDGEN_REGION", 1, "NAME",
     "this region's name, written in holder records; etcd and zookeeper refuse to start "
     "when a live "
     "holder of the same datacenter names another (default \"default\")"},
    {NULL, NULL, 0, NULL, NULL},
};
/* Callers size their option arrays by IDGEN_LEASE_OPTIONS_MAX (idgen serve's parser, the
 * CLI's): a table past it would lose its last options there, without a word. */
_Static_assert(sizeof options / sizeof options[0] <= IDGEN_LEASE_OPTIONS_MAX + 1,
               "more lease options than IDGEN_LEASE_OPTIONS_MAX");

const idgen_lease_option *idgen_lease_options(void) {
  return options;
}

/* A bad value: its message into err, IDGEN_EINVAL returned (core/error.c). */
#define fail(err, errlen, ...) idgen__fail(IDGEN_EINVAL, err, errlen, __VA_ARGS__)

static int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out) {
  if (!s || !*s || !isdigit((unsigned char)*s))
    return IDGEN_EINVAL;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < min || v > max)
    return IDGEN_EINVAL;
  *out = v;
  return 0;
}

/* --etcd (here, not in libidgen-etcd: the option is parsed whether or not the provider
 * is linked; the segment etcd backend reads its DSN through idgen_lease_config_set):
 * "URL[,URL...]" (http:// or https://, trailing slashes dropped, blanks skipped) into
 * eps, *count the count. IDGEN_EINVAL with a one-line reason in err. */
static int endpoints_parse(const char *value,
                           char eps[IDGEN_LEASE_ENDPOINTS_MAX][IDGEN_LEASE_PATH_MAX],
                           int *count, char *err, size_t errlen) {
  char buf[IDGEN_LEASE_PATH_MAX * 2];
  if (strlen(value) >= sizeof buf)
    return fail(err, errlen, "too long");
  snprintf(buf, sizeof buf, "%s", value);
  int n = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    if (!*tok)
      continue;
    if (n == IDGEN_LEASE_ENDPOINTS_MAX)
      return fail(err, errlen, "more than %d endpoints", IDGEN_LEASE_ENDPOINTS_MAX);
    if (strncmp(tok, "http://", 7) && strncmp(tok, "https://", 8))
      return fail(err, errlen, "'%s' is not an http:// or https:// URL", tok);
    if (n > 0 &&
        (strncmp(eps[0], "https://", 8) != 0) != (strncmp(tok, "https://", 8) != 0))
      return fail(err, errlen,
                  "'%s' and '%s' mix http:// and https:// (one scheme for all endpoints)",
                  eps[0], tok);
    size_t len = strlen(tok);
    while (len && tok[len - 1] == '/')
      tok[--len] = '\0';
    if (len >= IDGEN_LEASE_PATH_MAX)
      return fail(err, errlen, "URL too long");
    memcpy(eps[n], tok, len + 1);
    n++;
  }
  if (n == 0)
    return fail(err, errlen, "no endpoint given");
  *count = n;
  return 0;
}

static int set_endpoints(idgen_lease_config *c, const char *value, char *err,
                         size_t errlen) {
  char why[IDGEN_LEASE_WHY_MAX];
  if (endpoints_parse(value, c->endpoints, &c->nendpoints, why, sizeof why))
    return fail(err, errlen, "--etcd: %s", why);
  return 0;
}

/* --zookeeper "HOST:PORT[,HOST:PORT...]" (blanks dropped), kept as the client's host
 * string: each host non-empty, each port 1-65535, at most IDGEN_LEASE_ENDPOINTS_MAX. */
static int set_zookeeper(idgen_lease_config *c, const char *value, char *err,
                         size_t errlen) {
  char buf[IDGEN_LEASE_PATH_MAX], out[IDGEN_LEASE_PATH_MAX] = "";
  if (strlen(value) >= sizeof buf)
    return fail(err, errlen, "--zookeeper: too long");
  snprintf(buf, sizeof buf, "%s", value);
  int n = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    size_t len = strlen(tok);
    while (len && tok[len - 1] == ' ')
      tok[--len] = '\0';
    if (!*tok)
      continue;
    char *colon = strrchr(tok, ':');
    int64_t port;
    if (!colon || colon == tok || parse_i64(colon + 1, 1, 65535, &port))
      return fail(err, errlen, "--zookeeper: '%s' is not HOST:PORT", tok);
    if (strchr(tok, '/') || strchr(tok, ' '))
      return fail(err, errlen, "--zookeeper: '%s' is not HOST:PORT (no paths, no blanks)",
                  tok);
    if (++n > IDGEN_LEASE_ENDPOINTS_MAX)
      return fail(err, errlen, "--zookeeper: more than %d servers",
                  IDGEN_LEASE_ENDPOINTS_MAX);
    size_t used = strlen(out);
    snprintf(out + used, sizeof out - used, "%s%s", used ? "," : "", tok);
  }
  if (n == 0)
    return fail(err, errlen, "--zookeeper: no server given");
  snprintf(c->zookeeper, sizeof c->zookeeper, "%s", out);
  return 0;
}

/* "LO-HI", two non-negative integers, LO <= HI. */
static int set_range(idgen_lease_config *c, const char *value, char *err, size_t errlen) {
  char lo[32];
  const char *dash = strchr(value, '-');
  int64_t a, b;
  if (!dash || (size_t)(dash - value) >= sizeof lo)
    return fail(err, errlen, "--worker-id-range: '%s' is not LO-HI", value);
  memcpy(lo, value, (size_t)(dash - value));
  lo[dash - value] = '\0';
  if (parse_i64(lo, 0, INT64_MAX, &a) || parse_i64(dash + 1, 0, INT64_MAX, &b))
    return fail(err, errlen, "--worker-id-range: '%s' is not LO-HI (two integers)", value);
  if (a > b)
    return fail(err, errlen, "--worker-id-range: '%s' is empty (LO above HI)", value);
  c->range_lo = a;
  c->range_hi = b;
  return 0;
}

static int ns_ok(const char *s) {
  if (!*s)
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
      return 0;
  return 1;
}

/* The options that take a non-negative integer, and the int64_t each sets. */
static const struct {
  const char *name;
  size_t offset;
} whole_numbers[] = {
    {"worker-id", offsetof(idgen_lease_config, worker_id)},
    {"worker-id-offset", offsetof(idgen_lease_config, worker_id_offset)},
    {"pod-index", offsetof(idgen_lease_config, pod_index)},
    {"datacenter", offsetof(idgen_lease_config, datacenter)},
    {"k8s-replicas", offsetof(idgen_lease_config, k8s_replicas)},
    {"redis-min-replicas", offsetof(idgen_lease_config, redis_min_replicas)},
};

/* The string field of an etcd or Redis TLS or auth option (etcd-cacert, redis-cert,
 * ...) or a ZooKeeper auth option (zk-user, zk-password-file): 1 with *dst and *cap, 0 for another name. */
static int access_field(idgen_lease_config *c, const char *name, char **dst,
                             size_t *cap) {
  const struct {
    const char *name;
    char *field;
    size_t cap;
  } fields[] = {
      {"etcd-cacert", c->etcd_cacert, sizeof c->etcd_cacert},
      {"etcd-cert", c->etcd_cert, sizeof c->etcd_cert},
      {"etcd-key", c->etcd_key, sizeof c->etcd_key},
      {"etcd-user", c->etcd_user, sizeof c->etcd_user},
      {"etcd-password-file", c->etcd_password_file, sizeof c->etcd_password_file},
      {"zk-user", c->zk_user, sizeof c->zk_user},
      {"zk-password-file", c->zk_password_file, sizeof c->zk_password_file},
      {"redis-cacert", c->redis_cacert, sizeof c->redis_cacert},
      {"redis-cert", c->redis_cert, sizeof c->redis_cert},
      {"redis-key", c->redis_key, sizeof c->redis_key},
      {"redis-user", c->redis_user, sizeof c->redis_user},
      {"redis-password-file", c->redis_password_file, sizeof c->redis_password_file},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (!strcmp(name, fields[i].name)) {
      *dst = fields[i].field;
      *cap = fields[i].cap;
      return 1;
    }
  return 0;
}

int idgen_lease_config_set(idgen_lease_config *c, const char *name, const char *value,
                           char *err, size_t errlen) {
  if (!c || !name)
    return fail(err, errlen, "no option name");
  const idgen_lease_option *opt = NULL;
  for (const idgen_lease_option *o = options; o->name; o++)
    if (!strcmp(o->name, name))
      opt = o;
  if (!opt)
    return fail(err, errlen, "unknown lease option --%s", name);
  if (opt->has_arg && !value)
    return fail(err, errlen, "--%s needs a value", name);
  int64_t v;
  char *field;
  size_t cap;
  for (size_t i = 0; i < sizeof whole_numbers / sizeof whole_numbers[0]; i++) {
    if (strcmp(name, whole_numbers[i].name))
      continue;
    if (parse_i64(value, 0, INT64_MAX, &v))
      return fail(err, errlen, "--%s: '%s' is not a non-negative integer", name, value);
    if (v == 0 && !strcmp(name, "k8s-replicas"))
      return fail(err, errlen, "--k8s-replicas: 0 pods leaves no ordinal (at least 1)");
    memcpy((char *)c + whole_numbers[i].offset, &v, sizeof v);
    return 0;
  }
  if (!strcmp(name, "lease")) {
    if (idgen_lease_kind_parse(value, &c->kind))
      return fail(err, errlen,
                  "--lease: unknown provider '%s' (file, etcd, zookeeper, redis, k8s, static)",
                  value);
  } else if (!strcmp(name, "state-dir")) {
    if (!*value || strlen(value) >= sizeof c->state_dir)
      return fail(err, errlen, "--state-dir: empty or too long");
    snprintf(c->state_dir, sizeof c->state_dir, "%s", value);
  } else if (!strcmp(name, "etcd")) {
    return set_endpoints(c, value, err, errlen);
  } else if (access_field(c, name, &field, &cap)) {
    if (strlen(value) >= cap)
      return fail(err, errlen, "--%s: too long (%zu bytes at most)", name, cap - 1);
    if (strchr(value, '\n') || strchr(value, '\r'))
      return fail(err, errlen, "--%s: a line break in the value", name);
    snprintf(field, cap, "%s", value); /* "" unsets: a file's entry can undo a flag's */
  } else if (!strcmp(name, "zookeeper")) {
    return set_zookeeper(c, value, err, errlen);
  } else if (!strcmp(name, "redis")) {
    idgen__redis_url url;
    char why[300];
    if (strlen(value) >= sizeof c->redis_url)
      return fail(err, errlen, "--redis: URL too long");
    if (idgen__redis_url_parse(value, &url, why, sizeof why))
      return fail(err, errlen, "--redis: %s", why);
    snprintf(c->redis_url, sizeof c->redis_url, "%s", value);
  } else if (!strcmp(name, "namespace") || !strcmp(name, "region")) {
    if (!ns_ok(value) || strlen(value) >= sizeof c->ns)
      return fail(err, errlen, "--%s: '%s' must be 1-%zu of [A-Za-z0-9._-]", name, value,
                  sizeof c->ns - 1);
    char *dst = !strcmp(name, "namespace") ? c->ns : c->region;
    snprintf(dst, IDGEN_LEASE_NAME_MAX, "%s", value);
  } else if (!strcmp(name, "worker-id-range")) {
    return set_range(c, value, err, errlen);
  } else if (!strcmp(name, "lease-ttl")) {
    if (parse_i64(value, 0, 86400, &v))
      return fail(err, errlen, "--lease-ttl: '%s' is not a number of seconds", value);
    if (v < 2)
      return fail(err, errlen, "--lease-ttl: %s s is below the minimum of 2 s", value);
    c->ttl_ms = v * 1000;
  } else if (!strcmp(name, "require-ntp-sync")) {
    c->require_ntp_sync = 1;
  } else {
    int64_t max = 86400000;
    if (parse_i64(value, 0, max, &v))
      return fail(err, errlen, "--%s: '%s' is not a number of milliseconds", name, value);
    if (!strcmp(name, "lease-margin"))
      c->margin_ms = v;
    else if (!strcmp(name, "hwm-ahead"))
      c->ahead_ms = v;
    else if (!strcmp(name, "hwm-interval"))
      c->hwm_interval_ms = v;
    else if (!strcmp(name, "hwm-wait-max"))
      c->hwm_wait_max_ms = v;
    else if (!strcmp(name, "etcd-timeout"))
      c->request_timeout_ms = v;
    else if (!strcmp(name, "max-clock-skew"))
      c->max_skew_ms = v;
  }
  return 0;
}

int idgen_lease_config_env(idgen_lease_config *c, char *err, size_t errlen) {
  for (const idgen_lease_option *o = options; o->name; o++) {
    if (!o->env)
      continue;
    const char *v = getenv(o->env);
    if (!v || !*v)
      continue;
    char why[256];
    if (idgen_lease_config_set(c, o->name, v, why, sizeof why)) {
      /* name the variable, not the flag */
      const char *colon = strchr(why, ':');
      return fail(err, errlen, "%s%s", o->env, colon ? colon : ": bad value");
    }
  }
  /* The passwords have no flag: a command line is visible to every user of the host. */
  const struct {
    const char *env;
    char *field;
    size_t cap;
  } pws[] = {{"IDGEN_ETCD_PASSWORD", c->etcd_password, sizeof c->etcd_password},
             {"IDGEN_ZK_PASSWORD", c->zk_password, sizeof c->zk_password},
             {"IDGEN_REDIS_PASSWORD", c->redis_password, sizeof c->redis_password}};
  for (size_t i = 0; i < sizeof pws / sizeof pws[0]; i++) {
    const char *pw = getenv(pws[i].env);
    if (!pw || !*pw)
      continue;
    if (strlen(pw) >= pws[i].cap)
      return fail(err, errlen, "%s: too long (%zu bytes at most)", pws[i].env,
                  pws[i].cap - 1);
    snprintf(pws[i].field, pws[i].cap, "%s", pw);
  }
  return 0;
}

/* ZooKeeper's digest provider splits "user:password" at the first colon. */
static int zk_access_check(const idgen_lease_config *c, char *err, size_t errlen) {
  int has_pw = c->zk_password_file[0] || c->zk_password[0];
  if (strchr(c->zk_user, ':'))
    return fail(err, errlen, "--zk-user: '%s' holds a ':' (a digest user name cannot)",
                c->zk_user);
  if (c->zk_user[0] && !has_pw)
    return fail(err, errlen,
                "--zk-user: no password (--zk-password-file FILE or IDGEN_ZK_PASSWORD)");
  if (!c->zk_user[0] && has_pw)
    return fail(err, errlen, "%s: no --zk-user to authenticate as",
                c->zk_password_file[0] ? "--zk-password-file" : "IDGEN_ZK_PASSWORD");
  return 0;
}

int idgen__lease_redis_access_check(const idgen_lease_config *c, const char *url_text,
                                    char *err, size_t errlen) {
  idgen__redis_url url;
  char why[300];
  if (idgen__redis_url_parse(url_text, &url, why, sizeof why))
    return fail(err, errlen, "%s", why);
  const char *tls = c->redis_cacert[0] ? "--redis-cacert"
                    : c->redis_cert[0] ? "--redis-cert"
                    : c->redis_key[0]  ? "--redis-key"
                                       : NULL;
  if (tls && !url.tls)
    return fail(err, errlen, "%s: the Redis URL is redis:// (TLS needs rediss://)", tls);
  if (!c->redis_cert[0] != !c->redis_key[0])
    return fail(err, errlen, "%s: needs %s too (a client certificate and its key)",
                c->redis_cert[0] ? "--redis-cert" : "--redis-key",
                c->redis_cert[0] ? "--redis-key" : "--redis-cert");
  /* The file is read at open; here it stands for a password of its own. */
  const char *pw = c->redis_password_file[0] ? "(file)" : c->redis_password;
  if (idgen__redis_url_auth(&url, c->redis_user, pw,
                            c->redis_password_file[0] ? "--redis-password-file"
                                                      : "IDGEN_REDIS_PASSWORD",
                            why, sizeof why))
    return fail(err, errlen, "%s", why);
  memset(url.pass, 0, sizeof url.pass);
  return 0;
}

int idgen__lease_etcd_access_check(const idgen_lease_config *c, char *err, size_t errlen) {
  int https = c->nendpoints > 0 && !strncmp(c->endpoints[0], "https://", 8);
  const char *tls = c->etcd_cacert[0] ? "--etcd-cacert"
                    : c->etcd_cert[0] ? "--etcd-cert"
                    : c->etcd_key[0]  ? "--etcd-key"
                                      : NULL;
  if (tls && c->nendpoints > 0 && !https)
    return fail(err, errlen, "%s: the etcd endpoints are http:// (TLS needs https://)",
                tls);
  if (!c->etcd_cert[0] != !c->etcd_key[0])
    return fail(err, errlen, "%s: needs %s too (a client certificate and its key)",
                c->etcd_cert[0] ? "--etcd-cert" : "--etcd-key",
                c->etcd_cert[0] ? "--etcd-key" : "--etcd-cert");
  int has_pw = c->etcd_password_file[0] || c->etcd_password[0];
  if (c->etcd_user[0] && !has_pw)
    return fail(
        err, errlen,
        "--etcd-user: no password (--etcd-password-file FILE or IDGEN_ETCD_PASSWORD)");
  if (!c->etcd_user[0] && has_pw)
    return fail(err, errlen, "%s: no --etcd-user to authenticate as",
                c->etcd_password_file[0] ? "--etcd-password-file" : "IDGEN_ETCD_PASSWORD");
  return 0;
}

static int64_t effective_margin(const idgen_lease_config *c) {
  if (c->margin_ms)
    return c->margin_ms;
  return c->ttl_ms / 3 < 2000 ? c->ttl_ms / 3 : 2000;
}

int idgen_lease_space_of(const idgen_lease_config *c, const idgen_layout *l,
                         idgen_lease_space *out, char *err, size_t errlen) {
  const idgen_field *node[IDGEN_LAYOUT_NODES_MAX];
  size_t nn = 0;
  for (size_t i = 0; i < l->nfields && nn < IDGEN_LAYOUT_NODES_MAX; i++)
    if (l->fields[i].kind == IDGEN_FIELD_NODE)
      node[nn++] = &l->fields[i]; /* adjacent, the high one first */
  if (nn == 0)
    return fail(err, errlen, "the layout has no node field");
  idgen_lease_space s;
  memset(&s, 0, sizeof s);
  s.datacenter = -1;
  s.low_bits = nn == 2 ? node[1]->bits : 0;
  if (c->datacenter >= 0) {
    if (nn < 2)
      return fail(err, errlen,
                  "--datacenter: the layout has one node field (%s); a datacenter needs "
                  "two (twitter: datacenter 5 bits, worker 5 bits)",
                  node[0]->name);
    if ((uint64_t)c->datacenter > idgen__space_field_max(node[0]->bits))
      return fail(err, errlen,
                  "--datacenter: %lld is out of range: the layout's %s field holds 0-%llu",
                  (long long)c->datacenter, node[0]->name,
                  (unsigned long long)idgen__space_field_max(node[0]->bits));
    s.datacenter = c->datacenter;
    s.bits = node[1]->bits;
    snprintf(s.field, sizeof s.field, "%s", node[1]->name);
    snprintf(s.dc_field, sizeof s.dc_field, "%s", node[0]->name);
  } else {
    s.bits = l->node_bits;
    snprintf(s.field, sizeof s.field, "%s", nn == 2 ? "worker ID" : node[0]->name);
  }
  s.lo = 0;
  s.hi = idgen__space_field_max(s.bits);
  if (c->range_lo >= 0) {
    if ((uint64_t)c->range_hi > s.hi)
      return fail(err, errlen,
                  "--worker-id-range: %lld-%lld is out of range: the %s field holds "
                  "0-%llu",
                  (long long)c->range_lo, (long long)c->range_hi, s.field,
                  (unsigned long long)s.hi);
    s.lo = (uint64_t)c->range_lo;
    s.hi = (uint64_t)c->range_hi;
  }
  *out = s;
  return 0;
}

/* The fixed claimed value of static and k8s must fall in the space. */
static int fixed_in_space(const idgen_lease_space *s, const char *what, uint64_t claimed,
                          char *err, size_t errlen) {
  if (claimed > idgen__space_field_max(s->bits))
    return fail(err, errlen, "%s %llu is out of range: the %s field holds 0-%llu", what,
                (unsigned long long)claimed, s->field,
                (unsigned long long)idgen__space_field_max(s->bits));
  if (claimed < s->lo || claimed > s->hi)
    return fail(err, errlen, "%s %llu is outside --worker-id-range %llu-%llu", what,
                (unsigned long long)claimed, (unsigned long long)s->lo,
                (unsigned long long)s->hi);
  return 0;
}

/* The checks of one kind (a row's check): 0, or IDGEN_EINVAL with one line in err. */
static int check_static(const idgen_lease_config *c, const idgen_lease_space *space,
                        char *err, size_t errlen) {
  if (c->worker_id < 0)
    return fail(err, errlen, "--lease static needs --worker-id (or IDGEN_WORKER_ID)");
  return fixed_in_space(space, "--worker-id:", (uint64_t)c->worker_id, err, errlen);
}

static int check_k8s(const idgen_lease_config *c, const idgen_lease_space *space, char *err,
                     size_t errlen) {
  if ((uint64_t)c->worker_id_offset > idgen__space_field_max(space->bits))
    return fail(err, errlen,
                "--worker-id-offset: %lld is out of range: the %s field "
                "holds 0-%llu",
                (long long)c->worker_id_offset, space->field,
                (unsigned long long)idgen__space_field_max(space->bits));
  int64_t ord;
  int rc = idgen__k8s_ordinal(c, &ord, err, errlen);
  if (rc)
    return rc;
  /* Pods cannot see each other: the bound is what keeps generators at offsets
   * k8s_replicas apart from meeting on another pod (docs/leases.md, "k8s and several
   * generators"). */
  if (c->k8s_replicas > 0 && ord >= c->k8s_replicas)
    return fail(err, errlen,
                "--k8s-replicas %lld: pod ordinal %lld is not below it (scale the "
                "StatefulSet within it, or raise it and space the offsets as far)",
                (long long)c->k8s_replicas, (long long)ord);
  char what[128];
  if (c->k8s_replicas > 0) {
    snprintf(what, sizeof what,
             "--k8s-replicas %lld: offset %lld + the last ordinal %lld =",
             (long long)c->k8s_replicas, (long long)c->worker_id_offset,
             (long long)(c->k8s_replicas - 1));
    if ((uint64_t)c->k8s_replicas - 1 > UINT64_MAX - (uint64_t)c->worker_id_offset)
      return fail(err, errlen, "%s too large", what);
    rc = fixed_in_space(space, what,
                        (uint64_t)c->worker_id_offset + (uint64_t)c->k8s_replicas - 1, err,
                        errlen);
    if (rc)
      return rc;
  }
  snprintf(what, sizeof what,
           "--worker-id-offset: ordinal %lld + offset %lld =", (long long)ord,
           (long long)c->worker_id_offset);
  if ((uint64_t)ord > UINT64_MAX - (uint64_t)c->worker_id_offset)
    return fail(err, errlen, "%s too large", what);
  return fixed_in_space(space, what, (uint64_t)(ord + c->worker_id_offset), err, errlen);
}

static int check_etcd(const idgen_lease_config *c, const idgen_lease_space *space,
                      char *err, size_t errlen) {
  (void)space;
  if (c->nendpoints == 0)
    return fail(err, errlen, "--lease etcd needs --etcd URLS (or IDGEN_ETCD)");
  return idgen__lease_etcd_access_check(c, err, errlen);
}

static int check_zookeeper(const idgen_lease_config *c, const idgen_lease_space *space,
                           char *err, size_t errlen) {
  (void)space;
  if (!c->zookeeper[0])
    return fail(err, errlen,
                "--lease zookeeper needs --zookeeper HOST:PORT[,...] (or IDGEN_ZOOKEEPER)");
  return zk_access_check(c, err, errlen);
}

/* A claim that finds no HWM history waits TTL + ahead (src/lease/redis.c). */
static int check_redis(const idgen_lease_config *c, const idgen_lease_space *space,
                       char *err, size_t errlen) {
  (void)space;
  if (!c->redis_url[0])
    return fail(err, errlen, "--lease redis needs --redis URL (or IDGEN_REDIS)");
  int64_t wait_max = c->hwm_wait_max_ms > 0 ? c->hwm_wait_max_ms : 30000;
  if (c->ttl_ms + c->ahead_ms > wait_max)
    return fail(err, errlen,
                "--lease-ttl + --hwm-ahead: %lld ms is beyond --hwm-wait-max (%lld ms): a "
                "worker ID with no HWM history would be refused",
                (long long)(c->ttl_ms + c->ahead_ms), (long long)wait_max);
  return idgen__lease_redis_access_check(c, c->redis_url, err, errlen);
}

int idgen_lease_config_check(const idgen_lease_config *c, const idgen_layout *layout,
                             char *err, size_t errlen) {
  if (c->ttl_ms < 2000)
    return fail(err, errlen, "--lease-ttl: %lld ms is below the minimum of 2 s",
                (long long)c->ttl_ms);
  int64_t margin = effective_margin(c);
  if (margin >= c->ttl_ms - c->ttl_ms / 3)
    return fail(err, errlen,
                "--lease-margin: %lld ms leaves no time between keepalives (TTL %lld ms, "
                "keepalive every %lld ms)",
                (long long)margin, (long long)c->ttl_ms, (long long)(c->ttl_ms / 3));
  if (c->hwm_interval_ms < 10)
    return fail(err, errlen, "--hwm-interval: below 10 ms");
  if (c->ahead_ms < c->hwm_interval_ms)
    return fail(err, errlen,
                "--hwm-ahead: %lld ms is shorter than the HWM interval (%lld ms): the "
                "generator would stall at the cap",
                (long long)c->ahead_ms, (long long)c->hwm_interval_ms);
  /* A worker ID with no HWM yet (a new worker file or etcd key) waits that long. */
  int64_t wait_max = c->hwm_wait_max_ms > 0 ? c->hwm_wait_max_ms : 30000;
  if (c->ahead_ms + c->hwm_interval_ms > wait_max)
    return fail(err, errlen,
                "--hwm-ahead + --hwm-interval: %lld ms is beyond --hwm-wait-max (%lld ms): "
                "a worker ID with no HWM yet would be refused",
                (long long)(c->ahead_ms + c->hwm_interval_ms), (long long)wait_max);
  if (c->request_timeout_ms < 100)
    return fail(err, errlen, "--etcd-timeout: below 100 ms");
  idgen_lease_space space;
  int rc = idgen_lease_space_of(c, layout, &space, err, errlen);
  if (rc)
    return rc;
  const kind_row *r = row_of(c->kind);
  if (!r)
    return fail(err, errlen, "unknown lease provider");
  return r->check ? r->check(c, &space, err, errlen) : 0;
}

int idgen__k8s_ordinal(const idgen_lease_config *c, int64_t *out, char *err,
                       size_t errlen) {
  if (c->pod_index >= 0) {
    *out = c->pod_index;
    return 0;
  }
  char host[256];
  if (c->hostname[0])
    snprintf(host, sizeof host, "%s", c->hostname);
  else if (gethostname(host, sizeof host))
    return fail(err, errlen, "--lease k8s: cannot read the hostname");
  host[sizeof host - 1] = '\0';
  char *dash = strrchr(host, '-');
  int64_t v;
  if (!dash || parse_i64(dash + 1, 0, INT64_MAX, &v))
    return fail(err, errlen,
                "--lease k8s: IDGEN_POD_INDEX is unset and hostname '%s' has no -N suffix",
                host);
  *out = v;
  return 0;
}

void idgen_keeper_config_from(idgen_keeper_config *out, const idgen_lease_config *c) {
  memset(out, 0, sizeof *out);
  out->margin_ms = effective_margin(c);
  out->ahead_ms = c->ahead_ms;
  out->hwm_interval_ms = c->hwm_interval_ms;
  out->hwm_wait_max_ms = c->hwm_wait_max_ms;
}

/* ---- the provider table ---------------------------------------------------------- */

static int open_file(idgen_lease **out, const idgen_lease_config *config,
                     const idgen_lease_space *space, int readonly, char *err,
                     size_t errlen) {
  return idgen__lease_file_new(out, config, space, readonly, err, errlen);
}

static int open_static(idgen_lease **out, const idgen_lease_config *config,
                       const idgen_lease_space *space, int readonly, char *err,
                       size_t errlen) {
  return idgen__lease_fixed_new(out, config, space, (uint64_t)config->worker_id, readonly,
                                err, errlen);
}

static int open_k8s(idgen_lease **out, const idgen_lease_config *config,
                    const idgen_lease_space *space, int readonly, char *err,
                    size_t errlen) {
  int64_t ord = 0;
  int rc = idgen__k8s_ordinal(config, &ord, err, errlen);
  if (rc)
    return rc;
  return idgen__lease_fixed_new(out, config, space,
                                (uint64_t)(ord + config->worker_id_offset), readonly, err,
                                errlen);
}

static const kind_row kinds[] = {
    {{IDGEN_LEASE_FILE, "file", open_file}, NULL},
    {{IDGEN_LEASE_STATIC, "static", open_static}, check_static},
    {{IDGEN_LEASE_K8S, "k8s", open_k8s}, check_k8s},
    {{IDGEN_LEASE_ETCD, "etcd", NULL}, check_etcd},
    {{IDGEN_LEASE_ZOOKEEPER, "zookeeper", NULL}, check_zookeeper},
    {{IDGEN_LEASE_REDIS, "redis", NULL}, check_redis},
};

static const kind_row *row_of(idgen_lease_kind kind) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (kinds[i].provider.kind == kind)
      return &kinds[i];
  return NULL;
}

static const kind_row *row_named(const char *name) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcmp(kinds[i].provider.name, name))
      return &kinds[i];
  return NULL;
}

/* The provider of config->kind: the program's (config->providers) first, then
 * libidgen's own; NULL when neither has a constructor for it. */
static const idgen_lease_provider *provider_of(const idgen_lease_config *config) {
  for (const idgen_lease_provider *const *p = config->providers; p && *p; p++)
    if ((*p)->kind == config->kind && (*p)->open)
      return *p;
  const kind_row *r = row_of(config->kind);
  return r && r->provider.open ? &r->provider : NULL;
}

static int open_lease(idgen_lease **out, const idgen_lease_config *config,
                      const idgen_layout *layout, int readonly, char *err, size_t errlen) {
  if (!out || !config || !layout)
    return fail(err, errlen, "no config");
  int rc = idgen_lease_config_check(config, layout, err, errlen);
  if (rc)
    return rc;
  idgen_lease_space space;
  idgen_lease_space_of(config, layout, &space, NULL, 0); /* checked just now */
  if (config->require_ntp_sync) {
    rc = idgen_ntp_synced(NULL);
    if (rc == 0) {
      if (err && errlen)
        snprintf(err, errlen,
                 "--require-ntp-sync: the kernel says the clock is not synchronised "
                 "(adjtimex)");
      return IDGEN_ECLOCKSKEW;
    }
  }
  const idgen_lease_provider *p = provider_of(config);
  if (!p) { /* a kind the checks know (etcd), whose library the program did not pass */
    if (err && errlen)
      snprintf(err, errlen,
               "the %s provider is not in this program: link libidgen-%s (pkg-config "
               "idgen-%s) and list idgen_lease_%s in idgen_lease_config.providers",
               idgen_lease_kind_name(config->kind), idgen_lease_kind_name(config->kind),
               idgen_lease_kind_name(config->kind), idgen_lease_kind_name(config->kind));
    return IDGEN_ENOPROVIDER;
  }
  return p->open(out, config, &space, readonly, err, errlen);
}

int idgen_lease_open(idgen_lease **out, const idgen_lease_config *config,
                     const idgen_layout *layout, char *err, size_t errlen) {
  return open_lease(out, config, layout, 0, err, errlen);
}

int idgen_lease_open_readonly(idgen_lease **out, const idgen_lease_config *config,
                              const idgen_layout *layout, char *err, size_t errlen) {
  return open_lease(out, config, layout, 1, err, errlen);
}

int idgen_ntp_synced(int64_t *maxerror_us) {
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  int state = adjtimex(&tx);
  if (state < 0)
    return -errno;
  if (maxerror_us)
    *maxerror_us = tx.maxerror;
  return state == TIME_ERROR || (tx.status & STA_UNSYNC) ? 0 : 1;
}
