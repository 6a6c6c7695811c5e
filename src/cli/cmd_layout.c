/* cmd_layout.c: `idgen layout`: a layout's bits drawn to scale, with its limits. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: idgen layout [--layout L]\n"
          "\n"
          "Draws the 64 bits of an ID to scale, one column per bit, and prints each\n"
          "field's capacity, the IDs per second one worker can issue, the epoch, the\n"
          "end date of the time field, and the date IDs pass 2^53 (JavaScript's exact\n"
          "integers).\n"
          "\n"
          "  -l, --layout L   a preset or a spec (default snowflake; docs/layouts.md)\n");
}

/* One cell per bit: the label centred in the field's width, cut if it does not fit. */
static void draw_label(const char *label, unsigned width) {
  size_t len = strlen(label);
  if (len > width)
    len = width;
  unsigned left = (unsigned)(width - len) / 2;
  printf("%*s%.*s%*s|", (int)left, "", (int)len, label, (int)(width - len - left), "");
}

static void draw_rule(const idgen_layout *l) {
  printf("+-+");
  for (int i = 0; i < l->nfields; i++) {
    for (unsigned b = 0; b < l->fields[i].bits; b++)
      putchar('-');
    putchar('+');
  }
  putchar('\n');
}

static void print_duration(double ms) {
  double days = ms / 86400000.0;
  if (days >= 365.25 * 2)
    printf("%.1f years", days / 365.25);
  else if (days >= 2)
    printf("%.1f days", days);
  else
    printf("%.1f hours", ms / 3600000.0);
}

int idgen__cmd_layout(int argc, char **argv) {
  static const struct option options[] = {{"layout", required_argument, NULL, 'l'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *spec = NULL;
  int opt;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":l:h", options, NULL)) != -1) {
    switch (opt) {
    case 'l':
      spec = optarg;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "layout", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "layout", "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "layout", "unexpected argument '%s'", argv[optind]);
  idgen_layout l;
  char err[160];
  if (cli_layout(spec, &l, err, sizeof err) < 0)
    return cli_error(CLI_USAGE, "layout", "%s", err);

  unsigned total = (unsigned)l.time_bits + l.time_shift;
  printf("layout %s: %u bits used of 63, bit 63 (sign) always 0", l.name, total);
  if (total < 63)
    printf(", bits 62-%u unused (0)", total);
  printf("\n\n");
  /* Bit numbers above the rule: the highest bit of each field. */
  printf("63 ");
  for (int i = 0; i < l.nfields; i++) {
    char num[8];
    snprintf(num, sizeof num, "%u", l.fields[i].shift + l.fields[i].bits - 1u);
    printf("%-*s", l.fields[i].bits + 1, num);
  }
  printf("\n");
  draw_rule(&l);
  printf("|0|");
  for (int i = 0; i < l.nfields; i++)
    draw_label(l.fields[i].name, l.fields[i].bits);
  printf("\n");
  draw_rule(&l);
  printf("\n%-12s %5s %6s  %s\n", "field", "bits", "shift", "capacity");
  for (int i = 0; i < l.nfields; i++) {
    const idgen_field *f = &l.fields[i];
    unsigned long long values = 1ull << f->bits;
    printf("%-12s %5u %6u  ", f->name, f->bits, f->shift);
    if (f->kind == IDGEN_FIELD_TIME) {
      printf("%llu units of %u ms = ", values, l.unit_ms);
      print_duration((double)values * l.unit_ms);
    } else if (f->kind == IDGEN_FIELD_SEQ) {
      printf("%llu IDs per %u ms per worker", values, l.unit_ms);
    } else {
      printf("%llu values", values);
    }
    printf("\n");
  }
  char when[32];
  printf("\nworkers:              %llu (IDs 0-%llu)\n",
         (unsigned long long)idgen_layout_max_worker(&l) + 1,
         (unsigned long long)idgen_layout_max_worker(&l));
  printf("IDs/s per worker:     %.0f (the ceiling of one generator)\n",
         idgen_layout_ids_per_second(&l));
  idgen_format_time(l.epoch_ms, when, sizeof when);
  printf("epoch:                %s (Unix ms %lld)\n", when, (long long)l.epoch_ms);
  int64_t end = idgen_layout_end_ms(&l);
  if (idgen_format_time(end, when, sizeof when) < 0)
    snprintf(when, sizeof when, "after year 9999");
  printf("end of time field:    %s (", when);
  print_duration((double)(end - l.epoch_ms));
  printf(" after the epoch)\n");
  int64_t js = idgen_layout_js_unsafe_ms(&l);
  if (js == INT64_MAX) {
    printf("passes 2^53:          never (every ID is exact in a JavaScript number)\n");
  } else {
    if (idgen_format_time(js, when, sizeof when) < 0)
      snprintf(when, sizeof when, "after year 9999");
    printf("passes 2^53:          %s (", when);
    print_duration((double)(js - l.epoch_ms));
    printf(" after the epoch): send IDs to JSON as strings\n");
  }
  char specbuf[256];
  if (idgen_layout_format(&l, specbuf, sizeof specbuf) > 0)
    printf("spec:                 %s\n", specbuf);
  int64_t now = cli_now_ms();
  if (now >= end)
    printf("warning: the time field is exhausted: generators refuse to start\n");
  else if (end - now < INT64_C(365) * 86400000)
    printf("warning: the time field ends within a year\n");
  return CLI_OK;
}
