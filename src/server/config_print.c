/* config_print.c: the two texts config.c's tables print, --help and --print-config
 * (the effective configuration, each value with where it came from). */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "idgen/lease.h"
#include "server/config.h"
#include "server/config_table.h"

void idgen__serve_config_usage(FILE *out) {
  fprintf(out, "usage: idgen serve [options]\n\n"
               "Runs the ID service: HTTP/JSON and the Redis protocol (RESP2) on one event "
               "loop per\n"
               "thread. Every option can also be set by the environment variable shown; "
               "flags win.\n"
               "The generators are the default one (the options below) and those --config "
               "names.\n\n");
  for (size_t i = 0; i < idgen__serve_nopts; i++) {
    char env[64];
    idgen__serve_env_name(&idgen__serve_opts[i], env, sizeof env);
    fprintf(out, "  --%s=%s\n      %s (default \"%s\"; %s)\n", idgen__serve_opts[i].name,
            idgen__serve_opts[i].kind == OPT_STR ? "TEXT" : "N", idgen__serve_opts[i].help,
            idgen__serve_opts[i].def, env);
  }
  fprintf(out, "\nWorker-ID lease (see docs/leases.md; default: the file provider):\n");
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; lo[i].name; i++)
    fprintf(out, "  --%s%s%s\n      %s%s%s%s\n", lo[i].name, lo[i].has_arg ? "=" : "",
            lo[i].has_arg ? lo[i].arg : "", lo[i].help, lo[i].env ? " (" : "",
            lo[i].env ? lo[i].env : "", lo[i].env ? ")" : "");
  fprintf(out,
          "\nGenerators of the --config file (YAML: generators: NAME: {kind: K, ...}),\n"
          "served as GET /v1/id?name=NAME, /v1/ids?name=NAME&count=N, RESP ID NAME,\n"
          "IDS NAME N (docs/generators.md). The options of each kind:\n");
  static const idgen__kind order[] = {KIND_SNOWFLAKE, KIND_SEGMENT, KIND_UUID7, KIND_UUID4,
                                      KIND_ULID};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
    char keys[512];
    idgen__gen_keys_of(order[k], keys, sizeof keys);
    fprintf(out, "  %-9s %s\n", idgen__kind_name(order[k]), keys);
  }
  fprintf(out,
          "\n  --print-config\n      print the effective configuration and exit\n"
          "  --help\n      this text\n\n"
          "The --config file may also hold tokens: NAME: {file: F, generators: [G, ...],\n"
          "decode: true|false, rate: N, burst: M}: each token issues only from the\n"
          "generators it names (omitted or [\"*\"]: every one; others get 403 / -NOPERM),\n"
          "decodes opaque IDs only with decode: true (default false), and with a rate takes\n"
          "at most N IDs a second, M at once (default N): over it 429 + Retry-After / -BUSY,\n"
          "more than M at once 400 over_burst. --auth-token-file is every generator, with\n"
          "decode, no quota. cert_subject: \"CN=x,O=y\" (RFC 2253) or cert_san:\n"
          "\"DNS:x\" (or URI:, email:) make a verified client certificate (--tls-ca)\n"
          "that team, without a token; file may then be omitted. A token sent wins\n"
          "over the certificate.\n\n"
          "Signals: SIGTERM/SIGINT stop gracefully (exit 0). SIGHUP reopens the log file,\n"
          "reads --config again with the command line as it was, and then the tokens. Of\n"
          "the generators, only a segment or snowflake generator's format changes live\n"
          "(connections and worker IDs kept); any other change (a generator added or\n"
          "removed, a layout, worker ID, backend, DSN, step, period, tokens turned on or\n"
          "off, ...) is refused with a log line saying it needs a restart, and then nothing\n"
          "of that reload applies. The tokens: section (tokens added or removed, their\n"
          "generators, decode, rate, burst) takes effect with a reload that applies; each\n"
          "token keeps its quota's bucket. A file that fails to read or check keeps\n"
          "everything (one log line says why); the token files in force are read again.\n"
          "See docs/server.md for the routes and commands.\n");
}

/* Where a value came from, as --print-config writes it: "file:LINE" for the file. */
static const char *source_text(const char *src, int line, char *buf, size_t buflen) {
  if (strcmp(src, "file"))
    return src;
  snprintf(buf, buflen, "file:%d", line);
  return buf;
}

static const char *lease_source(const char *name, char *buf, size_t buflen) {
  int line;
  const char *src = idgen__lease_opt_source(name, &line);
  return source_text(src, line, buf, buflen);
}

static void print_lease(const idgen_lease_config *l, FILE *out) {
  char b[32];
#define SRC(name) lease_source(name, b, sizeof b)
  fprintf(out, "lease = \"%s\"  # %s\n", idgen_lease_kind_name(l->kind), SRC("lease"));
  fprintf(out, "state-dir = \"%s\"  # %s\n", l->state_dir[0] ? l->state_dir : "(default)",
          SRC("state-dir"));
  if (l->worker_id >= 0)
    fprintf(out, "worker-id = %lld  # %s\n", (long long)l->worker_id, SRC("worker-id"));
  else
    fprintf(out, "worker-id = unset  # %s\n", SRC("worker-id"));
  fprintf(out, "worker-id-offset = %lld  # %s\n", (long long)l->worker_id_offset,
          SRC("worker-id-offset"));
  fprintf(out, "pod-index = %lld  # %s\n", (long long)l->pod_index, SRC("pod-index"));
  if (l->k8s_replicas > 0)
    fprintf(out, "k8s-replicas = %lld  # %s\n", (long long)l->k8s_replicas,
            SRC("k8s-replicas"));
  else
    fprintf(out, "k8s-replicas = unset  # %s\n", SRC("k8s-replicas"));
  fprintf(out, "etcd = \"");
  for (int i = 0; i < l->nendpoints; i++)
    fprintf(out, "%s%s", i ? "," : "", l->endpoints[i]);
  fprintf(out, "\"  # %s\n", SRC("etcd"));
  static const char *const access[] = {"etcd-cacert", "etcd-cert", "etcd-key", "etcd-user",
                                       "etcd-password-file"};
  static const char *const redis_access[] = {"redis-cacert", "redis-cert", "redis-key",
                                             "redis-user", "redis-password-file"};
  for (size_t i = 0; i < sizeof access / sizeof access[0]; i++)
    fprintf(out, "%s = \"%s\"  # %s\n", access[i], idgen__lease_key_text(l, access[i]),
            SRC(access[i]));
  fprintf(out, "etcd-password = %s  # %s\n",
          l->etcd_password[0] ? "(set, not shown)" : "unset",
          l->etcd_password[0] ? "env IDGEN_ETCD_PASSWORD" : "default");
  fprintf(out, "zookeeper = \"%s\"  # %s\n", l->zookeeper, SRC("zookeeper"));
  fprintf(out, "zk-user = \"%s\"  # %s\n", l->zk_user, SRC("zk-user"));
  fprintf(out, "zk-password-file = \"%s\"  # %s\n", l->zk_password_file,
          SRC("zk-password-file"));
  fprintf(out, "zk-password = %s  # %s\n", l->zk_password[0] ? "(set, not shown)" : "unset",
          l->zk_password[0] ? "env IDGEN_ZK_PASSWORD" : "default");
  for (size_t i = 0; i < sizeof redis_access / sizeof redis_access[0]; i++)
    fprintf(out, "%s = \"%s\"  # %s\n", redis_access[i],
            idgen__lease_key_text(l, redis_access[i]), SRC(redis_access[i]));
  fprintf(out, "redis-password = %s  # %s\n",
          l->redis_password[0] ? "(set, not shown)" : "unset",
          l->redis_password[0] ? "env IDGEN_REDIS_PASSWORD" : "default");
  fprintf(out, "namespace = \"%s\"  # %s\n", l->ns, SRC("namespace"));
  fprintf(out, "lease-ttl = %lld  # seconds; %s\n", (long long)(l->ttl_ms / 1000),
          SRC("lease-ttl"));
  idgen_keeper_config effective; /* what 0 means: min(2000, TTL/3) */
  idgen_keeper_config_from(&effective, l);
  fprintf(out, "lease-margin = %lld  # %s%s\n", (long long)effective.margin_ms,
          SRC("lease-margin"), l->margin_ms ? "" : ": min(2000, TTL/3)");
  fprintf(out, "hwm-ahead = %lld  # %s\n", (long long)l->ahead_ms, SRC("hwm-ahead"));
  fprintf(out, "hwm-interval = %lld  # %s\n", (long long)l->hwm_interval_ms,
          SRC("hwm-interval"));
  fprintf(out, "hwm-wait-max = %lld  # %s\n", (long long)l->hwm_wait_max_ms,
          SRC("hwm-wait-max"));
  fprintf(out, "etcd-timeout = %lld  # %s\n", (long long)l->request_timeout_ms,
          SRC("etcd-timeout"));
  fprintf(out, "max-clock-skew = %lld  # %s\n", (long long)l->max_skew_ms,
          SRC("max-clock-skew"));
  fprintf(out, "require-ntp-sync = %s  # %s\n", l->require_ntp_sync ? "true" : "false",
          SRC("require-ntp-sync"));
  if (l->datacenter >= 0)
    fprintf(out, "datacenter = %lld  # %s\n", (long long)l->datacenter, SRC("datacenter"));
  else
    fprintf(out, "datacenter = unset  # %s\n", SRC("datacenter"));
  if (l->range_lo >= 0)
    fprintf(out, "worker-id-range = \"%lld-%lld\"  # %s\n", (long long)l->range_lo,
            (long long)l->range_hi, SRC("worker-id-range"));
  else
    fprintf(out, "worker-id-range = unset  # %s\n", SRC("worker-id-range"));
  fprintf(out, "region = \"%s\"  # %s\n", l->region, SRC("region"));
#undef SRC
}

/* One option of a generator, "key = value  # source", as the flat lines above. */
static void print_key(const idgen__gen_spec *s, const idgen__gen_key *k, FILE *out) {
  const idgen_lease_config *l = &s->lease;
  char value[IDGEN_CFG_PATH + 8];
  switch (k->type) {
  case GK_KIND:
    snprintf(value, sizeof value, "\"%s\"", idgen__kind_name(s->kind));
    break;
  case GK_STR: {
    char text[IDGEN_CFG_PATH];
    if (k->off == offsetof(idgen__gen_spec, dsn))
      idgen__dsn_masked(s->dsn, text, sizeof text);
    else
      snprintf(text, sizeof text, "%s", (const char *)s + k->off);
    snprintf(value, sizeof value, "\"%s\"", text);
    break;
  }
  case GK_U64: {
    uint64_t v;
    memcpy(&v, (const char *)s + k->off, sizeof v);
    snprintf(value, sizeof value, "%llu", (unsigned long long)v);
    break;
  }
  case GK_LEASE: {
    int64_t v = !strcmp(k->flag, "datacenter")         ? l->datacenter
                : !strcmp(k->flag, "worker-id")        ? l->worker_id
                : !strcmp(k->flag, "worker-id-offset") ? l->worker_id_offset
                                                       : 0;
    if (idgen__lease_key_text(l, k->flag))
      snprintf(value, sizeof value, "\"%.*s\"", (int)(sizeof value - 3),
               idgen__lease_key_text(l, k->flag));
    else if (!strcmp(k->flag, "namespace"))
      snprintf(value, sizeof value, "\"%s\"", l->ns);
    else if (!strcmp(k->flag, "worker-id-range") && l->range_lo >= 0)
      snprintf(value, sizeof value, "\"%lld-%lld\"", (long long)l->range_lo,
               (long long)l->range_hi);
    else if (v >= 0 && strcmp(k->flag, "worker-id-range"))
      snprintf(value, sizeof value, "%lld", (long long)v);
    else
      snprintf(value, sizeof value, "unset");
    break;
  }
  }
  size_t i = (size_t)(k - idgen__gen_keys);
  int line = s->lines[i];
  if (!strcmp(k->name, "dsn") && s->lines[idgen__gen_key_index("path")] > 0)
    line = s->lines[idgen__gen_key_index("path")];
  if (line > 0)
    fprintf(out, "%s = %s  # file:%d\n", k->name, value, line);
  else if (line == IDGEN__KEY_INHERITED)
    fprintf(out, "%s = %s  # the default generator's\n", k->name, value);
  else if (!strcmp(k->name, "dsn") && !s->dsn[0])
    fprintf(out, "dsn = \"\"  # default: %s/segment-%s\n",
            l->state_dir[0] ? l->state_dir : "(the state directory)", s->name);
  else
    fprintf(out, "%s = %s  # default\n", k->name, value);
}

void idgen__serve_config_print(const idgen__serve_config *cfg, FILE *out) {
  print_lease(&cfg->lease, out);
  for (size_t i = 0; i < idgen__serve_nopts; i++) {
    const char *field = (const char *)cfg + idgen__serve_opts[i].off;
    char b[32];
    int line;
    const char *src = idgen__serve_opt_source(i, &line);
    src = source_text(src, line, b, sizeof b);
    if (idgen__serve_opts[i].kind == OPT_STR) {
      fprintf(out, "%s = \"%s\"  # %s\n", idgen__serve_opts[i].name, field, src);
    } else {
      uint64_t v;
      memcpy(&v, field, sizeof v);
      fprintf(out, "%s = %llu  # %s\n", idgen__serve_opts[i].name, (unsigned long long)v,
              src);
    }
  }
  /* The generators; the default's flag-backed options are the flat lines above. */
  for (size_t g = 0; g < cfg->ngens; g++) {
    const idgen__gen_spec *s = &cfg->gens[g];
    if (s->line > 0)
      fprintf(out, "[generators.%s]  # file:%d\n", s->name, s->line);
    else
      fprintf(out, "[generators.%s]  # the flags above\n", s->name);
    for (size_t i = 0; i < idgen__gen_nkeys; i++)
      if ((idgen__gen_keys[i].kinds & KB(s->kind)) &&
          strcmp(idgen__gen_keys[i].name, "path") && !(g == 0 && idgen__gen_keys[i].flag))
        print_key(s, &idgen__gen_keys[i], out);
  }
  /* The tokens: their files and what they may do, never their values. */
  for (size_t t = 0; t < cfg->ntokens; t++) {
    const idgen__token_spec *k = &cfg->tokens[t];
    fprintf(out, "[tokens.%s]  # file:%d\nfile = \"%s\"\ngenerators = ", k->name, k->line,
            k->file);
    if (k->all_generators)
      fprintf(out, "[\"*\"]");
    for (size_t g = 0; g < k->ngenerators; g++)
      fprintf(out, "%s\"%s\"%s", g ? ", " : "[", k->generators[g],
              g + 1 == k->ngenerators ? "]" : "");
    fprintf(out, "\ndecode = %s\n", k->decode ? "true" : "false");
    if (k->cert_subject[0])
      fprintf(out, "cert_subject = \"%s\"\n", k->cert_subject);
    if (k->cert_san[0])
      fprintf(out, "cert_san = \"%s\"\n", k->cert_san);
    if (k->rate)
      fprintf(out, "rate = %llu\nburst = %llu%s\n", (unsigned long long)k->rate,
              (unsigned long long)(k->burst ? k->burst : k->rate),
              k->burst ? "" : "  # default: one second of the rate");
    else
      fprintf(out, "rate = none  # no quota\n");
  }
}
