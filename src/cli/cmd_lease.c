/* cmd_lease.c: `idgen lease`: what a worker-ID provider would claim and who holds IDs;
 * plus the lease-option helpers other subcommands (next, serve) share. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "idgen/etcd.h"
#include "idgen/redis.h"
#include "idgen/zookeeper.h"
#include "idgen/lease.h"

size_t cli_lease_add_options(struct option *opts, size_t at, size_t max) {
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; lo[i].name && at < max; i++)
    opts[at++] =
        (struct option){lo[i].name, lo[i].has_arg ? required_argument : no_argument, NULL,
                        CLI_LEASE_OPT_BASE + (int)i};
  return at;
}

int cli_lease_option(idgen_lease_config *config, int val, const char *arg,
                     const char *cmd) {
  const idgen_lease_option *lo = idgen_lease_options();
  char err[256];
  if (idgen_lease_config_set(config, lo[val - CLI_LEASE_OPT_BASE].name, arg, err,
                             sizeof err))
    return cli_error(CLI_USAGE, cmd, "%s", err);
  return CLI_OK;
}

void cli_lease_usage(FILE *out) {
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; lo[i].name; i++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", lo[i].name, lo[i].has_arg ? " " : "",
             lo[i].has_arg ? lo[i].arg : "");
    fprintf(out, "  %-24s %s", left, lo[i].help);
    if (lo[i].env)
      fprintf(out, " [env %s]", lo[i].env);
    fputc('\n', out);
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: idgen lease [--layout L] [lease options]\n"
          "\n"
          "Shows what a worker-ID provider would claim, without claiming it, and the\n"
          "current holders and high-water marks (HWM) it knows of. It only reads: it\n"
          "makes no state directory and writes no file. Providers:\n"
          "  file    one host: the smallest worker-N lock file free in the state dir\n"
          "  etcd    a fleet: etcd v3 leases, HWM written only while the lease holds\n"
          "  zookeeper  a fleet: an ephemeral node per worker ID; the HWM node written\n"
          "          only at the version this holder last saw (--zookeeper HOST:PORT,...)\n"
          "  redis   a fleet on one Redis primary (--redis URL): token-fenced scripts;\n"
          "          NOT consensus: a failover or a restart without AOF loses keys\n"
          "  k8s     StatefulSet ordinal (IDGEN_POD_INDEX or the -N hostname suffix) +\n"
          "          --worker-id-offset (an ordinal below --k8s-replicas, if given)\n"
          "Holders are listed for the whole namespace, one table per datacenter when\n"
          "any has one (--datacenter; docs/leases.md, \"Many regions\").\n"
          "  static  --worker-id as given. NO FENCE: two processes with the same ID\n"
          "          will issue duplicate IDs; only the operator can prevent it.\n"
          "See docs/leases.md.\n"
          "\n"
          "  -l, --layout L           layout (decides how many worker IDs exist)\n");
  cli_lease_usage(out);
}

static void fmt_time(int64_t ms, char *out, size_t outlen) {
  if (ms <= 0 || idgen_format_time(ms, out, outlen) < 0)
    snprintf(out, outlen, "-");
}

/* The holders as a table; one per datacenter, each under its heading, when any holder
 * has a datacenter. */
static void print_holders(const idgen_lease_holder *hs, size_t count) {
  int grouped = 0;
  for (size_t i = 0; i < count; i++)
    grouped |= hs[i].datacenter >= 0;
  for (size_t i = 0; i < count; i++) {
    if (i == 0 || hs[i].datacenter != hs[i - 1].datacenter) {
      if (grouped && hs[i].datacenter >= 0)
        printf("datacenter %lld:\n", (long long)hs[i].datacenter);
      else if (grouped)
        printf("no datacenter:\n");
      printf("%-7s %-5s %-20s %-8s %-24s %-9s %-24s %s\n", "worker", "live", "host", "pid",
             "hwm", "ttl-left", "started", "region");
    }
    char hwm[32], started[32], ttl[16];
    fmt_time(hs[i].hwm_ms, hwm, sizeof hwm);
    fmt_time(hs[i].start_ms, started, sizeof started);
    if (hs[i].ttl_left_ms >= 0)
      snprintf(ttl, sizeof ttl, "%.1fs", (double)hs[i].ttl_left_ms / 1000.0);
    else
      snprintf(ttl, sizeof ttl, "-");
    printf("%-7llu %-5s %-20s %-8lld %-24s %-9s %-24s %s\n",
           (unsigned long long)hs[i].worker, hs[i].live ? "yes" : "no",
           hs[i].host[0] ? hs[i].host : "-", (long long)hs[i].pid, hwm, ttl, started,
           hs[i].region[0] ? hs[i].region : "-");
  }
}

int idgen__cmd_lease(int argc, char **argv) {
  struct option opts[IDGEN_LEASE_OPTIONS_MAX + 3];
  size_t n = 0;
  opts[n++] = (struct option){"layout", required_argument, NULL, 'l'};
  opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
  n = cli_lease_add_options(opts, n, sizeof opts / sizeof opts[0] - 1);
  opts[n] = (struct option){NULL, 0, NULL, 0};

  idgen_lease_config config;
  idgen_lease_config_init(&config);
  char err[512];
  const char *layout_spec = NULL;
  int opt;
  opterr = 0;
  optind = 1;
  /* the environment first, so that flags win */
  int env_rc = idgen_lease_config_env(&config, err, sizeof err);
  if (env_rc)
    return cli_error(CLI_USAGE, "lease", "%s", err);
  while ((opt = getopt_long(argc, argv, ":l:h", opts, NULL)) != -1) {
    if (opt >= CLI_LEASE_OPT_BASE) {
      int rc = cli_lease_option(&config, opt, optarg, "lease");
      if (rc)
        return rc;
      continue;
    }
    switch (opt) {
    case 'l':
      layout_spec = optarg;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "lease", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "lease", "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "lease", "unexpected argument '%s'", argv[optind]);
  idgen_layout layout;
  if (cli_layout(layout_spec, &layout, err, sizeof err) < 0)
    return cli_error(CLI_USAGE, "lease", "%s", err);
  if (idgen_lease_config_check(&config, &layout, err, sizeof err))
    return cli_error(CLI_USAGE, "lease", "%s", err);
  static const idgen_lease_provider *const providers[] = {&idgen_lease_etcd,
                                                         &idgen_lease_redis,
                                                         &idgen_lease_zookeeper, NULL};
  config.providers = providers; /* the binary links every provider */
  idgen_lease *lease;
  int rc = idgen_lease_open_readonly(&lease, &config, &layout, err, sizeof err);
  if (rc)
    return cli_error(CLI_FAILED, "lease", "%s", err);

  /* The holders first: a failure prints nothing on stdout. Every holder of the
   * namespace: datacenters and layouts other than ours too. */
  size_t cap = 256, count = 0;
  idgen_lease_holder *hs = NULL;
  for (;;) {
    idgen_lease_holder *more = realloc(hs, cap * sizeof *hs);
    if (!more) {
      free(hs);
      idgen_lease_free(lease);
      return cli_error(CLI_FAILED, "lease", "out of memory");
    }
    hs = more;
    rc = idgen_lease_holders(lease, hs, cap, &count);
    if (rc || count <= cap)
      break;
    cap = count;
  }
  if (rc) {
    cli_error(CLI_FAILED, "lease", "%s", idgen_lease_why(lease));
    free(hs);
    idgen_lease_free(lease);
    return CLI_FAILED;
  }
  char line[512];
  idgen_lease_describe(lease, line, sizeof line);
  printf("provider: %s\n", line);
  int64_t maxerr = 0;
  int sync = idgen_ntp_synced(&maxerr);
  printf("ntp: %s\n", sync == 1   ? "synchronised (adjtimex)"
                      : sync == 0 ? "NOT synchronised (adjtimex)"
                                  : "unknown (adjtimex failed)");
  printf("holders: %zu\n", count);
  print_holders(hs, count);
  free(hs);
  idgen_lease_free(lease);
  return CLI_OK;
}
