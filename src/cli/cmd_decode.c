/* cmd_decode.c: `idgen decode`: reads IDs in any codec form and prints their parts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/decode_json.h"
#include "server/config.h" /* --generator: a generator of idgen serve's --config */

static const char usage_text[] =
    "usage: idgen decode [--layout L] [--format F] [--json] ID...\n"
    "\n"
    "Prints the time (ISO 8601 UTC, ms), each node field by name and the sequence of\n"
    "each ID. An ID may be in any form idgen writes: decimal, base62 (11 chars),\n"
    "base32 (13 chars, Crockford), hex (16 chars) or friendly\n"
    "(yyyyMMddHHmmssSSS-<node>[-<node>]-<seq>); the form is told by its shape (see\n"
    "docs/codecs.md). An all-digit text is read as decimal unless it starts with '0'.\n"
    "A UUID (36 chars, 8-4-4-4-12, any version) or a ULID (26 chars, Crockford) is\n"
    "also read: scheme, version and variant, and the time of v1, v6, v7 and ULIDs\n"
    "(JSON: {\"id\",\"scheme\",\"version\",\"variant\",\"time\",\"time_ms\"}; see\n"
    "docs/uuid.md). --layout and --format apply to 64-bit IDs only.\n"
    "\n"
    "With --generator NAME, each ID is read as that generator of idgen serve's config\n"
    "file (--config FILE, or $IDGEN_CONFIG) writes it: a segment generator's text form\n"
    "(format: ORD-{date:%Y%m%d}-{seq:06}) strictly back to its period and number, a\n"
    "snowflake generator's (format: ord_{base62}) to its parts under its layout\n"
    "(docs/generators.md). JSON: {\"id\",\"generator\",\"value\",\"period\",\"number\"}.\n"
    "A segment text is tried with every format of the generator's history (formats-NAME\n"
    "in its state directory) and the config's; one that two formats read as different\n"
    "numbers is refused as ambiguous (exit 1), one that none reads exits 2.\n"
    "\n"
    "  --layout L   preset (snowflake, twitter, discord, instagram, sonyflake, js53)\n"
    "               or a layout spec; default snowflake\n"
    "  --format F   read every ID in this form only: decimal, base62, base32, hex,\n"
    "               friendly\n"
    "  --generator NAME  read IDs as generator NAME of the config file writes them\n"
    "  --config FILE     idgen serve's generators file (default $IDGEN_CONFIG)\n"
    "  --json       one JSON object per line:\n"
    "               {\"id\":\"<decimal>\",\"layout\":\"<name>\",\"time\":\"<ISO>\",\n"
    "                \"time_ms\":<unix "
    "ms>,\"fields\":{\"<node>\":<n>,...,\"sequence\":<n>}}\n"
    "  --help       this text\n"
    "\n"
    "Exit status: 0 all decoded, 2 bad usage or an ID that does not decode (then\n"
    "nothing is printed).\n";

#define DECODED_FIELDS_MAX 8

typedef struct decode_opts {
  idgen_layout layout;
  int forced; /* --format given */
  idgen_format format;
} decode_opts;

/* What one text decodes to, whatever its kind. */
typedef struct decoded {
  int is_wide; /* a UUID or a ULID: in w */
  idgen__wide w;
  uint64_t value;                     /* the 64-bit ID */
  char id[48];                        /* canonical text: decimal for 64-bit IDs */
  char layout[IDGEN_LAYOUT_NAME_MAX]; /* layout or scheme name */
  const char *form;                   /* the form the text was read as */
  int64_t time_ms;
  size_t nfields;
  struct {
    char name[IDGEN_FIELD_NAME_MAX];
    uint64_t value;
  } fields[DECODED_FIELDS_MAX]; /* node fields in layout order, then sequence */
} decoded;

static void add_field(decoded *d, const char *name, uint64_t value) {
  if (d->nfields >= DECODED_FIELDS_MAX)
    return;
  snprintf(d->fields[d->nfields].name, sizeof d->fields[d->nfields].name, "%s", name);
  d->fields[d->nfields++].value = value;
}

/* A 64-bit ID in any codec form (or the forced one) under the layout. */
static int decode_id64(const char *text, const decode_opts *o, decoded *d, char *err,
                       size_t errlen) {
  uint64_t id;
  idgen_format form = o->format;
  size_t len = strlen(text);
  int rc = o->forced ? idgen_id_parse(text, len, o->format, &o->layout, &id)
                     : idgen_id_parse_any(text, len, &o->layout, &id, &form);
  if (rc < 0) {
    if (o->forced)
      snprintf(err, errlen, "'%s' is not a %s ID: %s", text, idgen_format_name(o->format),
               idgen_strerror(rc));
    else
      snprintf(err, errlen, "'%s' is not an ID: %s", text, idgen_strerror(rc));
    return rc;
  }
  idgen_parts parts;
  if ((rc = idgen_decompose(&o->layout, id, &parts)) < 0) {
    snprintf(err, errlen, "'%s' does not fit layout %s: %s", text,
             o->layout.name[0] ? o->layout.name : "custom", idgen_strerror(rc));
    return rc;
  }
  memset(d, 0, sizeof *d);
  d->value = id;
  snprintf(d->id, sizeof d->id, "%" PRIu64, id);
  snprintf(d->layout, sizeof d->layout, "%s",
           o->layout.name[0] ? o->layout.name : "custom");
  d->form = idgen_format_name(form);
  d->time_ms = parts.time_ms;
  int node = 0;
  for (unsigned i = 0; i < o->layout.nfields; i++)
    if (o->layout.fields[i].kind == IDGEN_FIELD_NODE && node < IDGEN_LAYOUT_NODES_MAX) {
      add_field(d, o->layout.fields[i].name, parts.node[node]);
      node++;
    }
  add_field(d, "sequence", parts.seq);
  return 0;
}

/* Recognises what kind of value a text is and decodes it: a UUID or a ULID by its shape
 * (common/decode_json.c, shared with the server), else a 64-bit ID. */
static int decode_text(const char *text, const decode_opts *o, decoded *d, char *err,
                       size_t errlen) {
  size_t len = strlen(text);
  memset(d, 0, sizeof *d);
  int wide = o->forced ? 0 : idgen__wide_parse(text, len, &d->w);
  if (wide < 0) {
    snprintf(err, errlen, "'%s' is not a %s: %s", text, idgen__wide_kind(text, len),
             idgen_strerror(wide));
    return wide;
  }
  if (wide) {
    d->is_wide = 1;
    return 0;
  }
  return decode_id64(text, o, d, err, errlen);
}

static void print_wide(const idgen__wide *w) {
  printf("%-10s %s\n%-10s %s\n%-10s %s\n", "id", w->id, "form", w->form, "scheme",
         w->scheme);
  if (w->version >= 0)
    printf("%-10s %d\n", "version", w->version);
  if (w->variant)
    printf("%-10s %s\n", "variant", w->variant);
  if (w->has_time) {
    char when[32];
    printf("%-10s %s\n", "time",
           idgen_format_time(w->time_ms, when, sizeof when) >= 0 ? when : "?");
    printf("%-10s %" PRId64 "\n", "time_ms", w->time_ms);
  }
}

static void print_text(const decoded *d, int first) {
  char when[32];
  if (!first)
    printf("\n");
  if (d->is_wide) {
    print_wide(&d->w);
    return;
  }
  if (idgen_format_time(d->time_ms, when, sizeof when) < 0)
    snprintf(when, sizeof when, "?");
  printf("%-10s %s\n", "id", d->id);
  printf("%-10s %s\n", "form", d->form);
  printf("%-10s %s\n", "layout", d->layout);
  printf("%-10s %s\n", "time", when);
  for (size_t i = 0; i < d->nfields; i++)
    printf("%-10s %" PRIu64 "\n", d->fields[i].name, d->fields[i].value);
}

/* The same object as GET /v1/decode/{id} and RESP DECODE (common/decode_json.c). */
static int print_json(const decoded *d, const idgen_layout *layout) {
  char json[IDGEN_DECODE_JSON_MAX];
  int n = d->is_wide ? idgen__wide_json(&d->w, json, sizeof json)
                     : idgen__decode_json(layout, d->value, json, sizeof json);
  if (n < 0)
    return n;
  printf("%s\n", json);
  return 0;
}

/* --generator: the texts of one generator of the config file, every one read before
 * any is printed. A segment generator's: its format strictly back to period and
 * number; a snowflake generator's: its prefix off, then base62 under its layout. */
/* A segment text read back with the format that made it: each of the generator's
 * formats (its history, and the config's format) is tried. 0 with v[0..2] and the
 * format that read it; IDGEN_EFORMAT if none reads it; IDGEN_ECONFLICT if two read it
 * to different numbers (a history from before the format check, or edited). */
static int parse_segment_text(const idgen__seg_format *const *formats, size_t nformats,
                              const char *t, uint64_t *v, const idgen__seg_format **by,
                              const idgen__seg_format **other) {
  int found = 0;
  for (size_t k = 0; k < nformats; k++) {
    uint64_t w[3];
    if (idgen__seg_format_parse(formats[k], t, strlen(t), &w[0], &w[1], &w[2]) < 0)
      continue;
    if (found && w[0] != v[0]) {
      *other = formats[k];
      return IDGEN_ECONFLICT;
    }
    if (!found)
      memcpy(v, w, sizeof w), *by = formats[k];
    found = 1;
  }
  return found ? 0 : IDGEN_EFORMAT;
}

static int decode_generator(const char *name, const char *config, int json, int n,
                            char **texts) {
  char *args[] = {"serve", "--config", (char *)config, NULL};
  idgen__serve_config cfg;
  memset(&cfg, 0, sizeof cfg);
  char err[512];
  idgen__config_status st =
      idgen__serve_config_load(&cfg, config ? 3 : 1, args, stdout, err, sizeof err);
  if (st != IDGEN_CONFIG_SERVE)
    return cli_error(CLI_USAGE, "decode", "%s", err);
  int status = CLI_OK;
  const idgen__gen_spec *spec = idgen__serve_config_gen(&cfg, name, strlen(name));
  idgen__seg_format fmt;
  /* A segment generator's formats: its history's, then the config's if it is new. */
  idgen__seg_history *history = NULL;
  const idgen__seg_format *formats[IDGEN_SEG_HISTORY_MAX + 1];
  size_t nformats = 0;
  char history_path[IDGEN_LEASE_PATH_MAX + 96] = "";
  char prefix[IDGEN__SNOWFLAKE_PREFIX_MAX + 1] = "";
  idgen__snowflake_choices choices;
  if (!spec || !spec->format[0]) {
    status = cli_error(CLI_USAGE, "decode", "%s '%s' in %s%s",
                       spec ? "no format: generator" : "no generator", name,
                       config ? config : "$IDGEN_CONFIG",
                       spec ? " (decode its IDs without --generator)" : "");
  } else if (spec->kind == KIND_SEGMENT) {
    if (idgen__gen_spec_format(spec, &fmt, err, sizeof err) < 0)
      status = cli_error(CLI_USAGE, "decode", "%s", err);
    else if (!(history = calloc(1, sizeof *history)))
      status = cli_error(CLI_FAILED, "decode", "out of memory");
    idgen__gen_spec_format_history(spec, history_path, sizeof history_path);
    int rc = status == CLI_OK ? idgen__seg_history_load(history, history_path, spec->name,
                                                        err, sizeof err)
                              : 0;
    if (rc < 0)
      status = cli_error(CLI_FAILED, "decode", "%s", err);
    for (size_t k = 0; status == CLI_OK && k < history->n; k++)
      formats[nformats++] = &history->formats[k];
    if (status == CLI_OK && !idgen__seg_history_has(history, &fmt))
      formats[nformats++] = &fmt;
  } else if (idgen__snowflake_prefix(spec, prefix, sizeof prefix, err, sizeof err) < 0 ||
             idgen__gen_spec_parse(spec, &choices, err, sizeof err) < 0) {
    status = cli_error(CLI_USAGE, "decode", "%s", err);
  }
  uint64_t *values = status == CLI_OK ? calloc((size_t)n, 3 * sizeof *values) : NULL;
  const idgen__seg_format **made_by = status == CLI_OK ? calloc((size_t)n, sizeof *made_by)
                                                       : NULL;
  if (status == CLI_OK && (!values || !made_by))
    status = cli_error(CLI_FAILED, "decode", "out of memory");
  for (int i = 0; status == CLI_OK && i < n; i++) {
    const char *t = texts[i];
    size_t len = strlen(t), plen = strlen(prefix);
    const idgen__seg_format *other = NULL;
    int rc = spec->kind == KIND_SEGMENT
                 ? parse_segment_text(formats, nformats, t, &values[3 * i], &made_by[i], &other)
             : len > plen && !memcmp(t, prefix, plen)
                 ? idgen_id_parse(t + plen, len - plen, IDGEN_FORMAT_BASE62,
                                  &choices.layout, &values[3 * i])
                 : IDGEN_EFORMAT;
    if (rc == IDGEN_ECONFLICT)
      status = cli_error(CLI_FAILED, "decode",
                         "'%s' is ambiguous: formats '%s' and '%s' of generator %s (%s) read "
                         "it as two numbers",
                         t, made_by[i]->template_text, other->template_text, name,
                         history_path);
    else if (rc < 0 && nformats > 1)
      status = cli_error(CLI_USAGE, "decode",
                         "'%s' is not an ID of generator %s in any of its %zu formats (%s)",
                         t, name, nformats, history_path);
    else if (rc < 0)
      status =
          cli_error(CLI_USAGE, "decode", "'%s' is not an ID of generator %s (format %s)", t,
                    name, spec->format);
  }
  for (int i = 0; status == CLI_OK && i < n; i++) {
    uint64_t *v = &values[3 * i];
    if (spec->kind == KIND_SNOWFLAKE) {
      char out[IDGEN_DECODE_JSON_MAX];
      if (idgen__decode_json(&choices.layout, v[0], out, sizeof out) < 0) {
        status = cli_error(CLI_USAGE, "decode", "'%s' does not fit its layout", texts[i]);
        break;
      }
      if (json)
        printf("{\"text\":\"%s\",\"generator\":\"%s\",%s\n", texts[i], name, out + 1);
      else
        printf("%s%-10s %s\n%-10s %s\n%-10s %" PRIu64 "\n", i ? "\n" : "", "text", texts[i],
               "generator", name, "id", v[0]);
      continue;
    }
    if (json)
      printf("{\"id\":\"%s\",\"generator\":\"%s\",\"value\":\"%" PRIu64
             "\",\"period\":%" PRIu64 ",\"number\":%" PRIu64 "}\n",
             texts[i], name, v[0], v[1], v[2]);
    else
      printf("%s%-10s %s\n%-10s %s\n%-10s %s\n%-10s %" PRIu64 "\n%-10s %" PRIu64
             "\n%-10s %" PRIu64 "\n",
             i ? "\n" : "", "id", texts[i], "generator", name, "kind",
             idgen__period_name(made_by[i]->period),
             "period", v[1], "number", v[2], "value", v[0]);
  }
  free(values);
  free(made_by);
  free(history);
  idgen__serve_config_free(&cfg);
  if (fflush(stdout) != 0 && status == CLI_OK)
    status = CLI_FAILED;
  return status;
}

int idgen__cmd_decode(int argc, char **argv) {
  static const struct option options[] = {{"layout", required_argument, NULL, 'l'},
                                          {"format", required_argument, NULL, 'f'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"generator", required_argument, NULL, 'g'},
                                          {"config", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *layout_spec = NULL, *generator = NULL, *config = NULL;
  int json = 0, c;
  decode_opts o;
  memset(&o, 0, sizeof o);
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
    switch (c) {
    case 'l':
      layout_spec = optarg;
      break;
    case 'f':
      if (idgen_format_parse(optarg, &o.format) < 0)
        return cli_error(CLI_USAGE, "decode",
                         "unknown --format '%s' (decimal, base62, base32, hex, friendly)",
                         optarg);
      o.forced = 1;
      break;
    case 'j':
      json = 1;
      break;
    case 'g':
      generator = optarg;
      break;
    case 'c':
      config = optarg;
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "decode", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "decode", "unknown option '%s' (try --help)",
                       argv[optind - 1]);
    }
  }
  char err[256];
  if (cli_layout(layout_spec, &o.layout, err, sizeof err) < 0)
    return cli_error(CLI_USAGE, "decode", "%s", err);
  int n = argc - optind;
  if (n < 1)
    return cli_error(CLI_USAGE, "decode", "no ID given (try --help)");
  if (config && !generator)
    return cli_error(CLI_USAGE, "decode", "--config goes with --generator");
  if (generator) {
    if (layout_spec || o.forced)
      return cli_error(CLI_USAGE, "decode",
                       "--generator reads its own form: no --layout or --format");
    return decode_generator(generator, config, json, n, argv + optind);
  }

  /* Decode every ID before printing any, so a bad one leaves stdout empty. */
  decoded *all = calloc((size_t)n, sizeof *all);
  if (!all)
    return cli_error(CLI_FAILED, "decode", "out of memory");
  for (int i = 0; i < n; i++)
    if (decode_text(argv[optind + i], &o, &all[i], err, sizeof err) < 0) {
      free(all);
      return cli_error(CLI_USAGE, "decode", "%s", err);
    }
  int status = CLI_OK;
  for (int i = 0; i < n; i++) {
    if (json) {
      if (print_json(&all[i], &o.layout) < 0) {
        status =
            cli_error(CLI_FAILED, "decode", "cannot write the JSON of '%s'", all[i].id);
        break;
      }
    } else {
      print_text(&all[i], i == 0);
    }
  }
  free(all);
  if (fflush(stdout) != 0 && status == CLI_OK)
    status = CLI_FAILED;
  return status;
}
