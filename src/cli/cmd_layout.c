/* cmd_layout.c: `idgen layout`: a layout's bits drawn to scale, with its limits, as text
 * or (--svg) as a bar for docs and slides. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: idgen layout [--layout L] [--svg]\n"
      "\n"
      "Draws the 64 bits of an ID to scale, one column per bit, and prints each\n"
      "field's capacity, the IDs per second one worker can issue, the epoch, the\n"
      "end date of the time field, and the date IDs pass 2^53 (JavaScript's exact\n"
      "integers).\n"
      "\n"
      "With --svg it prints instead an SVG image of the 64 bits to scale, for docs and\n"
      "slides: the sign bit, any unused bits, then each field, a rectangle 16 pixels\n"
      "wide per bit, labelled with its name and bit count.\n"
      "\n"
      "  -l, --layout L   a preset or a spec (default snowflake; docs/layouts.md)\n"
      "  -s, --svg        print the SVG bar instead of the text\n");
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

/* --svg: one rectangle per run of bits, BIT_PX wide per bit, so widths are to scale. */
#define BIT_PX 16
#define SVG_MARGIN 20
#define BAR_Y 58
#define BAR_H 80
#define CHAR_PX 7.2 /* a 12 px monospace glyph's advance, near enough to fit labels */

static void svg_text(const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&':
      fputs("&amp;", stdout);
      break;
    case '<':
      fputs("&lt;", stdout);
      break;
    case '>':
      fputs("&gt;", stdout);
      break;
    case '"':
      fputs("&quot;", stdout);
      break;
    default:
      putchar(*s);
    }
  }
}

/* One run of bits, its highest bit at high: a rectangle, its label inside (two lines
 * when they fit across it, else one line turned upright and squeezed to fit), and the
 * number of its highest bit above its left edge. */
static void svg_box(unsigned high, unsigned bits, const char *name, const char *fill,
                    const char *ink) {
  unsigned x = SVG_MARGIN + (63 - high) * BIT_PX, w = bits * BIT_PX;
  double cx = x + w / 2.0, cy = BAR_Y + BAR_H / 2.0;
  char count[24];
  snprintf(count, sizeof count, "%u bit%s", bits, bits == 1 ? "" : "s");
  if (high == 63) /* the sign bit is too narrow for its number: left of the bar */
    printf("  <text x=\"%u\" y=\"%d\" class=\"num\" text-anchor=\"end\">63</text>\n", x - 2,
           BAR_Y - 6);
  else
    printf("  <text x=\"%u\" y=\"%d\" class=\"num\">%u</text>\n", x + 2, BAR_Y - 6, high);
  printf("  <rect class=\"field\" data-name=\"");
  svg_text(name);
  printf("\" data-bits=\"%u\" x=\"%u\" y=\"%d\" width=\"%u\" height=\"%d\" fill=\"%s\"/>\n",
         bits, x, BAR_Y, w, BAR_H, fill);
  size_t len = strlen(name) > strlen(count) ? strlen(name) : strlen(count);
  if ((double)len * CHAR_PX + 6 <= w) {
    printf("  <text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" class=\"label\">", cx, cy - 4, ink);
    svg_text(name);
    printf("</text>\n  <text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" class=\"label\">%s</text>\n",
           cx, cy + 12, ink, count);
    return;
  }
  double room = BAR_H - 8, need = (double)(strlen(name) + 1 + strlen(count)) * CHAR_PX;
  printf("  <text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" class=\"label\" "
         "transform=\"rotate(-90 %.1f %.1f)\"",
         cx, cy + 4, ink, cx, cy);
  if (need > room)
    printf(" textLength=\"%.0f\" lengthAdjust=\"spacingAndGlyphs\"", room);
  putchar('>');
  svg_text(name);
  printf(" %s</text>\n", count);
}

static void draw_svg(const idgen_layout *l) {
  static const char *const node_fill[] = {"#f28e2b", "#59a14f"};
  unsigned width = 2 * SVG_MARGIN + 64 * BIT_PX, height = BAR_Y + BAR_H + 34;
  unsigned total = (unsigned)l->time_bits + l->time_shift;
  printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
         "viewBox=\"0 0 %u %u\" data-bit-px=\"%d\">\n",
         width, height, width, height, BIT_PX);
  printf("  <style>text{font-family:monospace;font-size:12px}"
         ".label{text-anchor:middle}.title{font-size:14px;font-weight:bold}</style>\n"
         "  <rect width=\"%u\" height=\"%u\" fill=\"#ffffff\"/>\n",
         width, height);
  printf("  <text x=\"%d\" y=\"24\" class=\"title\">layout ", SVG_MARGIN);
  svg_text(l->name);
  printf(": 64 bits to scale, %d px a bit</text>\n", BIT_PX);
  svg_box(63, 1, "sign", "#9e9e9e", "#000000");
  if (total < 63)
    svg_box(62, 63 - total, "unused", "#e0e0e0", "#000000");
  int nodes = 0;
  for (int i = 0; i < l->nfields; i++) {
    const idgen_field *f = &l->fields[i];
    const char *fill = f->kind == IDGEN_FIELD_TIME  ? "#4e79a7"
                       : f->kind == IDGEN_FIELD_SEQ ? "#b07aa1"
                                                    : node_fill[nodes++ % 2];
    svg_box(f->shift + f->bits - 1u, f->bits, f->name, fill, "#ffffff");
  }
  printf("  <text x=\"%d\" y=\"%d\" class=\"num\" text-anchor=\"end\">0</text>\n",
         SVG_MARGIN + 64 * BIT_PX - 2, BAR_Y - 6);
  char spec[256];
  if (idgen_layout_format(l, spec, sizeof spec) > 0) {
    printf("  <text x=\"%d\" y=\"%d\">", SVG_MARGIN, BAR_Y + BAR_H + 22);
    svg_text(spec);
    printf("</text>\n");
  }
  printf("</svg>\n");
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

/* The text drawing: one column per bit, then each field's capacity and the limits. */
static void draw_text(const idgen_layout *l) {
  unsigned total = (unsigned)l->time_bits + l->time_shift;
  printf("layout %s: %u bits used of 63, bit 63 (sign) always 0", l->name, total);
  if (total < 63)
    printf(", bits 62-%u unused (0)", total);
  printf("\n\n");
  /* Bit numbers above the rule: the highest bit of each field. */
  printf("63 ");
  for (int i = 0; i < l->nfields; i++) {
    char num[8];
    snprintf(num, sizeof num, "%u", l->fields[i].shift + l->fields[i].bits - 1u);
    printf("%-*s", l->fields[i].bits + 1, num);
  }
  printf("\n");
  draw_rule(l);
  printf("|0|");
  for (int i = 0; i < l->nfields; i++)
    draw_label(l->fields[i].name, l->fields[i].bits);
  printf("\n");
  draw_rule(l);
  printf("\n%-12s %5s %6s  %s\n", "field", "bits", "shift", "capacity");
  for (int i = 0; i < l->nfields; i++) {
    const idgen_field *f = &l->fields[i];
    unsigned long long values = 1ull << f->bits;
    printf("%-12s %5u %6u  ", f->name, f->bits, f->shift);
    if (f->kind == IDGEN_FIELD_TIME) {
      printf("%llu units of %u ms = ", values, l->unit_ms);
      print_duration((double)values * l->unit_ms);
    } else if (f->kind == IDGEN_FIELD_SEQ) {
      printf("%llu IDs per %u ms per worker", values, l->unit_ms);
    } else {
      printf("%llu values", values);
    }
    printf("\n");
  }
  char when[32];
  printf("\nworkers:              %llu (IDs 0-%llu)\n",
         (unsigned long long)idgen_layout_max_worker(l) + 1,
         (unsigned long long)idgen_layout_max_worker(l));
  printf("IDs/s per worker:     %.0f (the ceiling of one generator)\n",
         idgen_layout_ids_per_second(l));
  idgen_format_time(l->epoch_ms, when, sizeof when);
  printf("epoch:                %s (Unix ms %lld)\n", when, (long long)l->epoch_ms);
  int64_t end = idgen_layout_end_ms(l);
  if (idgen_format_time(end, when, sizeof when) < 0)
    snprintf(when, sizeof when, "after year 9999");
  printf("end of time field:    %s (", when);
  print_duration((double)(end - l->epoch_ms));
  printf(" after the epoch)\n");
  int64_t js = idgen_layout_js_unsafe_ms(l);
  if (js == INT64_MAX) {
    printf("passes 2^53:          never (every ID is exact in a JavaScript number)\n");
  } else {
    if (idgen_format_time(js, when, sizeof when) < 0)
      snprintf(when, sizeof when, "after year 9999");
    printf("passes 2^53:          %s (", when);
    print_duration((double)(js - l->epoch_ms));
    printf(" after the epoch): send IDs to JSON as strings\n");
  }
  char specbuf[256];
  if (idgen_layout_format(l, specbuf, sizeof specbuf) > 0)
    printf("spec:                 %s\n", specbuf);
  int64_t now = cli_now_ms();
  if (now >= end)
    printf("warning: the time field is exhausted: generators refuse to start\n");
  else if (end - now < INT64_C(365) * 86400000)
    printf("warning: the time field ends within a year\n");
}

int idgen__cmd_layout(int argc, char **argv) {
  static const struct option options[] = {{"layout", required_argument, NULL, 'l'},
                                          {"svg", no_argument, NULL, 's'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *spec = NULL;
  int opt, svg = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":l:sh", options, NULL)) != -1) {
    switch (opt) {
    case 'l':
      spec = optarg;
      break;
    case 's':
      svg = 1;
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
  if (svg)
    draw_svg(&l);
  else
    draw_text(&l);
  return CLI_OK;
}
