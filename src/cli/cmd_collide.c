/* cmd_collide.c: `idgen collide`: the chance that a scheme's IDs ever collide. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "idgen/collide.h"

static const char usage_text[] =
    "usage: idgen collide --scheme S --rate R --years Y\n"
    "\n"
    "Prints the probability that any two IDs collide when R IDs per second are made\n"
    "for Y years (of 365.25 days), with the birthday bound n^2 / 2^(b+1) for b random\n"
    "bits, computed as 1 - exp(-n^2 / 2^(b+1)):\n"
    "  uuidv4     122 random bits; any two of all IDs can collide\n"
    "  uuidv7     48-bit ms time + 74 random bits; only IDs of the same ms can collide:\n"
    "             k = R/1000 per ms, k^2 / 2^75 per ms, summed over every ms\n"
    "  ulid       48-bit ms time + 80 random bits; as uuidv7 with 2^81\n"
    "  snowflake  0, while every generator holds a distinct worker ID\n"
    "\n"
    "  --scheme S   uuidv4, uuidv7, ulid or snowflake\n"
    "  --rate R     IDs per second, > 0 (e.g. 1e6)\n"
    "  --years Y    how long, > 0 (e.g. 1 or 0.5)\n"
    "  --help       this text\n";

/* A finite number > 0, the whole text. */
static int parse_positive(const char *text, double *out) {
  char *end;
  if (!*text)
    return -1;
  double v = strtod(text, &end);
  if (*end || !isfinite(v) || !(v > 0))
    return -1;
  *out = v;
  return 0;
}

int idgen__cmd_collide(int argc, char **argv) {
  static const struct option options[] = {{"scheme", required_argument, NULL, 's'},
                                          {"rate", required_argument, NULL, 'r'},
                                          {"years", required_argument, NULL, 'y'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  idgen_scheme scheme = IDGEN_SCHEME_UUIDV4;
  double rate = 0, years = 0;
  int have_scheme = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
    switch (c) {
    case 's':
      if (idgen_scheme_parse(optarg, &scheme) < 0)
        return cli_error(CLI_USAGE, "collide",
                         "unknown --scheme '%s' (uuidv4, uuidv7, ulid, snowflake)", optarg);
      have_scheme = 1;
      break;
    case 'r':
      if (parse_positive(optarg, &rate) < 0)
        return cli_error(CLI_USAGE, "collide", "--rate '%s' is not a number > 0", optarg);
      break;
    case 'y':
      if (parse_positive(optarg, &years) < 0)
        return cli_error(CLI_USAGE, "collide", "--years '%s' is not a number > 0", optarg);
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "collide", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "collide", "unknown option '%s' (try --help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "collide", "unexpected argument '%s'", argv[optind]);
  if (!have_scheme)
    return cli_error(CLI_USAGE, "collide", "--scheme is required (try --help)");
  if (rate == 0)
    return cli_error(CLI_USAGE, "collide", "--rate is required (try --help)");
  if (years == 0)
    return cli_error(CLI_USAGE, "collide", "--years is required (try --help)");

  idgen_collide_result r;
  double seconds = years * IDGEN_SECONDS_PER_YEAR;
  if (idgen_collide(scheme, rate, seconds, &r) < 0 || isinf(r.ids))
    return cli_error(CLI_USAGE, "collide", "--rate times --years is too large");

  if (scheme == IDGEN_SCHEME_SNOWFLAKE)
    printf("scheme       snowflake (41-bit ms time, 10-bit worker, 12-bit sequence: "
           "nothing random)\n");
  else
    printf("scheme       %s (%d random bits%s)\n", idgen_scheme_name(scheme), r.random_bits,
           scheme == IDGEN_SCHEME_UUIDV4 ? "" : " after a 48-bit ms time");
  printf("IDs          %.4g (%.4g/s for %.4g year%s of 365.25 days)\n", r.ids, rate, years,
         years == 1 ? "" : "s");
  switch (scheme) {
  case IDGEN_SCHEME_UUIDV4:
    printf("model        any two of all IDs can collide: n^2 / 2^123\n");
    break;
  case IDGEN_SCHEME_UUIDV7:
  case IDGEN_SCHEME_ULID:
    printf("model        only IDs of one ms can collide: k = %.4g IDs per ms, each ms "
           "%.4g (k^2 / 2^%d), over %.4g ms\n",
           r.ids_per_window, r.p_window, r.random_bits + 1, r.windows);
    break;
  case IDGEN_SCHEME_SNOWFLAKE:
    break;
  }
  if (scheme == IDGEN_SCHEME_SNOWFLAKE) {
    /* The default layout: 4,096 sequence numbers per ms per worker, 1,024 workers. */
    double per_worker = 4096000.0, workers = ceil(rate / per_worker);
    printf("probability  0: a generator never repeats a (ms, sequence) pair, and distinct\n"
           "             worker IDs differ in their worker bits; this holds only while no\n"
           "             two live generators share a worker ID (leases see to that)\n");
    if (workers > 1024)
      printf("capacity     %.4g IDs/s needs %.0f workers of 4,096,000/s: more than the\n"
             "             1,024 of the default layout\n",
             rate, workers);
    else
      printf("capacity     %.4g IDs/s needs at least %.0f worker%s of 4,096,000/s "
             "(default layout: 1,024 workers)\n",
             rate, workers, workers == 1 ? "" : "s");
  } else if (r.probability > 0) {
    printf("probability  %.4g, about 1 in %.3g\n", r.probability, r.one_in);
  } else {
    printf("probability  below %.1g (too small for a double)\n", 4.9e-324);
  }
  return fflush(stdout) == 0 ? CLI_OK : CLI_FAILED;
}
