/* cmd_at.c: `idgen at`: the smallest or the largest ID whose time is a given time. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/time_arg.h"

static const char usage_text[] =
    "usage: idgen at [--layout L | --scheme S] [--last] TIME...\n"
    "\n"
    "Prints, one line per TIME, the smallest ID whose time is TIME (every field after\n"
    "the time all zeros), or with --last the largest (all ones). So\n"
    "  WHERE id >= $(idgen at 2026-12-01) AND id <= $(idgen at --last "
    "2026-12-01T23:59:59.999Z)\n"
    "selects the IDs made on 1 December 2026 (UTC), with no created_at column. A time\n"
    "between two units of a coarse layout (sonyflake: 10 ms) rounds down to its unit.\n"
    "\n"
    "TIME is RFC 3339 (2026-12-01T00:00:00Z, 2026-12-01T01:00:00.250+01:00; a date\n"
    "alone is its midnight UTC), Unix ms (1796083200000), or now, now-1d, now+2h\n"
    "(units ms, s, m, h, d, w).\n"
    "\n"
    "  --layout L   preset (snowflake, twitter, discord, instagram, sonyflake, js53)\n"
    "               or a layout spec; default snowflake; the ID is printed in decimal\n"
    "  --scheme S   uuidv7 or ulid instead of a 64-bit layout (canonical text)\n"
    "  --last       the largest ID of TIME instead of the smallest\n"
    "  --help       this text\n"
    "\n"
    "Exit status: 0 printed, 2 bad usage or a TIME outside the layout's range, before\n"
    "its epoch or at or past its end date (the message gives the range; nothing is\n"
    "printed).\n";

int idgen__cmd_at(int argc, char **argv) {
  static const struct option options[] = {{"layout", required_argument, NULL, 'l'},
                                          {"scheme", required_argument, NULL, 's'},
                                          {"last", no_argument, NULL, 'L'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *layout_spec = NULL, *scheme_name = NULL;
  int last = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
    switch (c) {
    case 'l':
      layout_spec = optarg;
      break;
    case 's':
      scheme_name = optarg;
      break;
    case 'L':
      last = 1;
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "at", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "at", "unknown option '%s' (try --help)",
                       argv[optind - 1]);
    }
  }
  idgen__bound_scheme scheme = IDGEN__BOUND_LAYOUT;
  idgen_layout layout;
  memset(&layout, 0, sizeof layout);
  char err[256];
  if (scheme_name) {
    if (layout_spec)
      return cli_error(CLI_USAGE, "at", "give --layout or --scheme, not both");
    if (!idgen__bound_scheme_parse(scheme_name, &scheme))
      return cli_error(CLI_USAGE, "at", "unknown --scheme '%s' (uuidv7, ulid)",
                       scheme_name);
  } else if (cli_layout(layout_spec, &layout, err, sizeof err) < 0) {
    return cli_error(CLI_USAGE, "at", "%s", err);
  }
  int n = argc - optind;
  if (n < 1)
    return cli_error(CLI_USAGE, "at", "no TIME given (try --help)");

  /* Every bound before printing any, so a bad TIME leaves stdout empty. */
  char lines[64][48];
  if (n > 64)
    return cli_error(CLI_USAGE, "at", "at most 64 TIMEs at once");
  int64_t now_ms = cli_now_ms();
  for (int i = 0; i < n; i++) {
    const char *text = argv[optind + i];
    int64_t unix_ms;
    int rc = idgen__time_arg_parse(text, strlen(text), now_ms, &unix_ms);
    if (rc < 0)
      return cli_error(CLI_USAGE, "at",
                       "'%s' is not a time (RFC 3339, Unix ms, or now-1d): %s", text,
                       idgen_strerror(rc));
    if (idgen__bound_text(scheme, &layout, unix_ms, last, lines[i], sizeof lines[i], err,
                          sizeof err) < 0)
      return cli_error(CLI_USAGE, "at", "%s", err);
  }
  for (int i = 0; i < n; i++)
    printf("%s\n", lines[i]);
  return fflush(stdout) == 0 ? CLI_OK : CLI_FAILED;
}
