/* cmd_next.c: `idgen next`: print new Snowflake IDs from a local generator. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

#define NEXT_MAX_COUNT UINT64_C(100000000)
#define NEXT_CHUNK 4096

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: idgen next [-n N] [--layout L] [--worker W] [--format F] [--policy P]\n"
      "\n"
      "Prints N new IDs (default 1), one per line, from a generator in this process.\n"
      "The worker ID is taken as given: nothing stops another process from using the\n"
      "same one. For fenced worker IDs run `idgen serve` (see docs/leases.md).\n"
      "\n"
      "  -n, --count N     how many IDs, 1 to %llu (default 1)\n"
      "  -l, --layout L    a preset (snowflake, twitter, discord, instagram, sonyflake,\n"
      "                    js53) or a spec like time:41@1ms,worker:10,seq:12 (default\n"
      "                    snowflake; see docs/layouts.md)\n"
      "  -w, --worker W    worker ID, 0 to the layout's maximum (default 0)\n"
      "  -f, --format F    decimal, base62, base32, hex or friendly (default decimal)\n"
      "  -p, --policy P    when the clock runs backwards: fail, wait or logical\n"
      "                    (default wait)\n",
      (unsigned long long)NEXT_MAX_COUNT);
}

int idgen__cmd_next(int argc, char **argv) {
  static const struct option options[] = {{"count", required_argument, NULL, 'n'},
                                          {"layout", required_argument, NULL, 'l'},
                                          {"worker", required_argument, NULL, 'w'},
                                          {"format", required_argument, NULL, 'f'},
                                          {"policy", required_argument, NULL, 'p'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  uint64_t count = 1, worker = 0;
  const char *layout_spec = NULL, *worker_text = NULL;
  idgen_format format = IDGEN_FORMAT_DECIMAL;
  idgen_policy policy = IDGEN_POLICY_WAIT;
  int opt;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":n:l:w:f:p:h", options, NULL)) != -1) {
    switch (opt) {
    case 'n':
      if (cli_parse_u64(optarg, 1, NEXT_MAX_COUNT, &count) < 0)
        return cli_error(CLI_USAGE, "next", "count '%s' is not a number from 1 to %llu",
                         optarg, (unsigned long long)NEXT_MAX_COUNT);
      break;
    case 'l':
      layout_spec = optarg;
      break;
    case 'w':
      worker_text = optarg;
      break;
    case 'f':
      if (idgen_format_parse(optarg, &format) < 0)
        return cli_error(CLI_USAGE, "next",
                         "format '%s' is not decimal, base62, base32, hex or friendly",
                         optarg);
      break;
    case 'p':
      if (idgen_policy_parse(optarg, &policy) < 0)
        return cli_error(CLI_USAGE, "next", "policy '%s' is not fail, wait or logical",
                         optarg);
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "next", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "next", "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "next", "unexpected argument '%s'", argv[optind]);

  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config config;
  idgen_gen_config_init(&config, &clock.base);
  char err[160];
  if (cli_layout(layout_spec, &config.layout, err, sizeof err) < 0)
    return cli_error(CLI_USAGE, "next", "%s", err);
  if (worker_text &&
      cli_parse_u64(worker_text, 0, idgen_layout_max_worker(&config.layout), &worker) < 0)
    return cli_error(CLI_USAGE, "next", "worker '%s' is not a number from 0 to %llu",
                     worker_text,
                     (unsigned long long)idgen_layout_max_worker(&config.layout));
  config.worker = worker;
  config.policy = policy;
  idgen_gen *gen;
  int rc = idgen_gen_new(&gen, &config);
  if (rc < 0)
    return cli_error(CLI_FAILED, "next", "cannot start the generator: %s",
                     idgen_strerror(rc));

  uint64_t ids[NEXT_CHUNK];
  char text[IDGEN_FORMAT_MAX];
  int status = CLI_OK;
  for (uint64_t done = 0; done < count && status == CLI_OK;) {
    size_t want = count - done < NEXT_CHUNK ? (size_t)(count - done) : NEXT_CHUNK;
    int64_t got = idgen_gen_next_batch(gen, ids, want);
    if (got < 0) {
      status = cli_error(CLI_FAILED, "next", "%s", idgen_strerror((int)got));
      break;
    }
    for (int64_t i = 0; i < got; i++) {
      int len = idgen_id_format(ids[i], format, &config.layout, text, sizeof text);
      if (len < 0) {
        status = cli_error(CLI_FAILED, "next", "cannot format %llu: %s",
                           (unsigned long long)ids[i], idgen_strerror(len));
        break;
      }
      text[len] = '\n';
      fwrite(text, 1, (size_t)len + 1, stdout);
    }
    done += (uint64_t)got;
  }
  idgen_gen_free(gen);
  if (fflush(stdout) != 0 && status == CLI_OK)
    status = cli_error(CLI_FAILED, "next", "cannot write the IDs");
  return status;
}
