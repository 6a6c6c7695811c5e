/* cmd_check.c: `idgen check`: reads the IDs clients recorded and decides whether any
 * was issued twice or out of order: Snowflake IDs (per worker), or with --integers the
 * plain numbers of segment sequences (per name and process). A radix sort finds
 * duplicates: 10^8 IDs in seconds. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

#define SHOW_DUPLICATES 10
#define MAX_ERROR_KINDS 64
#define MAX_REPLICA 64
#define MAX_NAMES 256 /* --integers: sequences per run */

typedef struct history {
  const char *path;
  const char *text;
  size_t len;
  uint64_t ids, errors, order_violations, bad_lines;
  int64_t longest_outage_ms; /* from the last success before an error to the next */
  int64_t longest_gap_ms;
} history;

typedef struct error_kind {
  char name[32];
  uint64_t count;
} error_kind;

/* The IDs of one name (--integers), or of all (Snowflake: one pool, name ""). */
typedef struct pool {
  char name[MAX_REPLICA + 1];
  uint64_t *ids;
  size_t n, cap;
} pool;

/* --integers: the newest number one process handed out for one name, in a history. */
typedef struct last_number {
  const char *process;
  size_t process_len;
  int pool;
  uint64_t last;
} last_number;

typedef struct checker {
  idgen_layout layout;
  int integers;
  pool pools[MAX_NAMES];
  int npools;
  size_t nids;
  error_kind kinds[MAX_ERROR_KINDS];
  int nkinds;
  uint64_t *last_by_worker; /* per history: newest ID seen from each worker */
  last_number *lasts;       /* --integers, per history */
  size_t nlasts, lasts_cap, last_hit;
  int json;
} checker;

typedef struct line {
  int64_t ms;
  const char *replica, *third, *fourth;
  size_t replica_len, third_len, fourth_len;
} line;

/* Splits one line into up to four space-separated words; 0 if malformed. */
static int split(const char *p, const char *end, line *out) {
  const char *words[4] = {0};
  size_t lens[4] = {0};
  int n = 0;
  while (p < end && n < 4) {
    while (p < end && *p == ' ')
      p++;
    if (p == end)
      break;
    words[n] = p;
    while (p < end && *p != ' ')
      p++;
    lens[n] = (size_t)(p - words[n]);
    n++;
  }
  if (n < 3)
    return 0;
  int64_t ms = 0;
  for (size_t i = 0; i < lens[0]; i++) {
    if (words[0][i] < '0' || words[0][i] > '9' || i > 15)
      return 0;
    ms = ms * 10 + (words[0][i] - '0');
  }
  *out = (line){ms, words[1], words[2], words[3], lens[1], lens[2], lens[3]};
  return 1;
}

static int push_id(checker *c, int pool_index, uint64_t id) {
  pool *p = &c->pools[pool_index];
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 1 << 16;
    uint64_t *ids = realloc(p->ids, cap * sizeof *ids);
    if (!ids)
      return IDGEN_ENOMEM;
    p->ids = ids;
    p->cap = cap;
  }
  p->ids[p->n++] = id;
  c->nids++;
  return 0;
}

/* The pool of a name (created on first sight; at most MAX_REPLICA bytes, as segment
 * names are); IDGEN_ERANGE past MAX_NAMES. */
static int pool_of(checker *c, const char *name, size_t len) {
  for (int i = 0; i < c->npools; i++)
    if (strlen(c->pools[i].name) == len && !memcmp(c->pools[i].name, name, len))
      return i;
  if (c->npools == MAX_NAMES)
    return IDGEN_ERANGE;
  pool *p = &c->pools[c->npools];
  memcpy(p->name, name, len);
  p->name[len] = '\0';
  return c->npools++;
}

/* --integers: the slot that keeps the newest number of (process, pool) in the current
 * history. Lines of one process come in runs, so the last slot found is tried first. */
static last_number *last_of(checker *c, const char *process, size_t len, int pool_index) {
  for (size_t k = 0; k < c->nlasts; k++) {
    size_t i = (c->last_hit + k) % c->nlasts;
    last_number *l = &c->lasts[i];
    if (l->pool == pool_index && l->process_len == len &&
        !memcmp(l->process, process, len)) {
      c->last_hit = i;
      return l;
    }
  }
  if (c->nlasts == c->lasts_cap) {
    size_t cap = c->lasts_cap ? c->lasts_cap * 2 : 64;
    last_number *ls = realloc(c->lasts, cap * sizeof *ls);
    if (!ls)
      return NULL;
    c->lasts = ls;
    c->lasts_cap = cap;
  }
  c->last_hit = c->nlasts;
  c->lasts[c->nlasts] = (last_number){process, len, pool_index, 0};
  return &c->lasts[c->nlasts++];
}

static void count_error(checker *c, const char *kind, size_t len) {
  if (len >= sizeof c->kinds[0].name)
    len = sizeof c->kinds[0].name - 1;
  for (int i = 0; i < c->nkinds; i++)
    if (strlen(c->kinds[i].name) == len && !memcmp(c->kinds[i].name, kind, len)) {
      c->kinds[i].count++;
      return;
    }
  if (c->nkinds == MAX_ERROR_KINDS) { /* the last slot gathers the rest */
    snprintf(c->kinds[MAX_ERROR_KINDS - 1].name, sizeof c->kinds[0].name, "other");
    c->kinds[MAX_ERROR_KINDS - 1].count++;
    return;
  }
  error_kind *k = &c->kinds[c->nkinds++];
  memcpy(k->name, kind, len);
  k->name[len] = '\0';
  k->count = 1;
}

/* Writes s as a JSON string body: quotes, backslashes and controls escaped. */
static void json_text(FILE *out, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
}

/* One pass over a history: IDs into the pool, order per worker, outages, errors. */
static int scan(checker *c, history *h) {
  size_t workers = (size_t)idgen_layout_max_worker(&c->layout) + 1;
  memset(c->last_by_worker, 0, workers * sizeof *c->last_by_worker);
  c->nlasts = 0;
  int64_t last_ok_ms = -1, first_error_ms = -1, last_error_ms = -1;
  const char *p = h->text, *end = h->text + h->len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
      eol = end;
    line l;
    if (eol == p || *p == '#') {
      p = eol + 1;
      continue;
    }
    if (!split(p, eol, &l)) {
      h->bad_lines++;
      p = eol + 1;
      continue;
    }
    p = eol + 1;
    if (l.third_len == 3 && !memcmp(l.third, "ERR", 3)) {
      h->errors++;
      count_error(c, l.fourth ? l.fourth : "unknown", l.fourth ? l.fourth_len : 7);
      if (first_error_ms < 0)
        first_error_ms = l.ms;
      last_error_ms = l.ms;
      continue;
    }
    uint64_t id;
    if (idgen_id_parse(l.third, l.third_len, IDGEN_FORMAT_DECIMAL, NULL, &id) < 0 ||
        (c->integers && l.fourth_len > MAX_REPLICA)) {
      h->bad_lines++;
      continue;
    }
    uint64_t *last;
    int pool_index = 0;
    if (c->integers) {
      /* A segment generator's numbers rise strictly within one process, per name. */
      pool_index = l.fourth ? pool_of(c, l.fourth, l.fourth_len) : pool_of(c, "", 0);
      if (pool_index < 0)
        return pool_index;
      last_number *ln = last_of(c, l.replica, l.replica_len, pool_index);
      if (!ln)
        return IDGEN_ENOMEM;
      last = &ln->last;
    } else {
      /* One holder's IDs rise in the order this client received them; a new holder of
       * the worker ID starts above the old one's high-water mark, so they still rise. */
      idgen_parts parts;
      if (idgen_decompose(&c->layout, id, &parts) < 0) {
        h->bad_lines++;
        continue;
      }
      last = &c->last_by_worker[parts.worker];
    }
    int rc = push_id(c, pool_index, id);
    if (rc < 0)
      return rc;
    h->ids++;
    if (id <= *last && *last)
      h->order_violations++;
    else
      *last = id;
    if (last_ok_ms >= 0 && l.ms - last_ok_ms > h->longest_gap_ms)
      h->longest_gap_ms = l.ms - last_ok_ms;
    if (first_error_ms >= 0) {
      int64_t from = last_ok_ms >= 0 ? last_ok_ms : first_error_ms;
      if (l.ms - from > h->longest_outage_ms) {
        h->longest_outage_ms = l.ms - from;
      }
      first_error_ms = -1;
    }
    last_ok_ms = l.ms;
  }
  /* An outage still open when the history ends lasts at least to its last error. */
  if (first_error_ms >= 0) {
    int64_t from = last_ok_ms >= 0 ? last_ok_ms : first_error_ms;
    if (last_error_ms - from > h->longest_outage_ms)
      h->longest_outage_ms = last_error_ms - from;
  }
  return 0;
}

/* LSD radix sort, 8 passes of 8 bits; passes where every key has the same byte are
 * skipped. */
static int radix_sort(uint64_t *a, size_t n) {
  uint64_t *tmp = malloc(n * sizeof *tmp + 1);
  if (!tmp)
    return IDGEN_ENOMEM;
  size_t counts[8][256];
  memset(counts, 0, sizeof counts);
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < 8; b++)
      counts[b][a[i] >> (8 * b) & 0xff]++;
  uint64_t *src = a, *dst = tmp;
  for (int b = 0; b < 8; b++) {
    size_t offsets[256], sum = 0;
    int trivial = 0;
    for (int v = 0; v < 256; v++) {
      if (counts[b][v] == n)
        trivial = 1;
      offsets[v] = sum;
      sum += counts[b][v];
    }
    if (trivial)
      continue;
    for (size_t i = 0; i < n; i++)
      dst[offsets[src[i] >> (8 * b) & 0xff]++] = src[i];
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, n * sizeof *a);
  free(tmp);
  return 0;
}

/* For a duplicated ID, which files and replicas have it (a second, rare pass); name
 * (--integers) limits it to the lines of one sequence. */
static void describe_duplicate(const history *hs, int nh, uint64_t id, const char *name,
                               FILE *out) {
  char want[24];
  int wlen = snprintf(want, sizeof want, "%llu", (unsigned long long)id);
  int shown = 0;
  for (int f = 0; f < nh; f++) {
    const char *p = hs[f].text, *end = hs[f].text + hs[f].len;
    while (p < end && shown < 8) {
      const char *eol = memchr(p, '\n', (size_t)(end - p));
      if (!eol)
        eol = end;
      line l;
      if (split(p, eol, &l) && l.third_len == (size_t)wlen &&
          !memcmp(l.third, want, l.third_len) &&
          (!name ||
           (l.fourth ? l.fourth_len == strlen(name) && !memcmp(l.fourth, name, l.fourth_len)
                     : !*name))) {
        fprintf(out, "%s %s replica %.*s at %lld ms", shown ? "," : " from", hs[f].path,
                (int)(l.replica_len < MAX_REPLICA ? l.replica_len : MAX_REPLICA), l.replica,
                (long long)l.ms);
        shown++;
      }
      p = eol + 1;
    }
  }
}

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: idgen check [--layout L | --integers] [--json] HISTORY...\n"
      "\n"
      "Reads histories recorded by clients, one file per client, one line per event:\n"
      "  <unix ms received> <replica> <id>          an ID received (decimal)\n"
      "  <unix ms> <replica> ERR <kind>             a request that got no ID\n"
      "Blank lines and lines starting with '#' are skipped.\n"
      "\n"
      "Reports the IDs, the duplicates (the first %d, with the files and replicas that\n"
      "received them), per-worker ordering violations (one worker's IDs must rise in\n"
      "the order each client received them), each client's longest unavailability (from\n"
      "its last ID before an error to its next ID) and the errors by kind. Duplicates\n"
      "are found by radix-sorting every ID.\n"
      "\n"
      "With --integers the IDs are the plain numbers of segment sequences, and an ID line\n"
      "may name its sequence:\n"
      "  <unix ms received> <process> <number> [<name>]\n"
      "Numbers must be unique per name (no name: one unnamed sequence), and rise within\n"
      "each history per (process, name): <process> must name one server process (a\n"
      "restarted server is a new process), as a segment generator's numbers rise only\n"
      "within one process. Snowflake IDs are the default; the two are not told apart\n"
      "by their digits, so the mode is chosen, never guessed.\n"
      "\n"
      "Exit status: 0 no duplicate and no ordering violation, 1 otherwise, 2 bad usage\n"
      "or an unreadable or malformed history.\n"
      "\n"
      "  -l, --layout L   the layout of the IDs, to read worker IDs (default snowflake)\n"
      "  -i, --integers   the IDs are segment numbers (see above), not Snowflake IDs\n"
      "  -j, --json       print the report as one JSON object\n",
      SHOW_DUPLICATES);
}

#define CHECK_GO (-1) /* parse_args: the options are read, go on */

/* Reads the options into c and sets *first to the first history's index; returns
 * CHECK_GO, or the exit status when there is nothing more to do (--help, bad usage). */
static int parse_args(int argc, char **argv, checker *c, int *first) {
  static const struct option options[] = {{"layout", required_argument, NULL, 'l'},
                                          {"integers", no_argument, NULL, 'i'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *spec = NULL;
  int opt;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":l:ijh", options, NULL)) != -1) {
    switch (opt) {
    case 'l':
      spec = optarg;
      break;
    case 'i':
      c->integers = 1;
      break;
    case 'j':
      c->json = 1;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "check", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "check", "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind == argc)
    return cli_error(CLI_USAGE, "check", "no history files given (see --help)");
  char err[160];
  if (cli_layout(spec, &c->layout, err, sizeof err) < 0)
    return cli_error(CLI_USAGE, "check", "%s", err);
  if (spec && c->integers)
    return cli_error(CLI_USAGE, "check", "--layout and --integers do not go together");
  *first = optind;
  return CHECK_GO;
}

/* Maps one history's file read-only (an empty file maps to nothing); an exit status. */
static int map_history(history *h) {
  int fd = open(h->path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    if (fd >= 0)
      close(fd);
    return cli_error(CLI_USAGE, "check", "cannot read '%s'", h->path);
  }
  h->len = (size_t)st.st_size;
  if (h->len) {
    void *map = mmap(NULL, h->len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      close(fd);
      return cli_error(CLI_USAGE, "check", "cannot map '%s'", h->path);
    }
    madvise(map, h->len, MADV_SEQUENTIAL);
    h->text = map;
  }
  close(fd);
  return CLI_OK;
}

/* Maps and scans each history in turn, stopping at the first that fails; an exit
 * status. */
static int load(checker *c, history *hs, int nh, char **paths) {
  for (int f = 0; f < nh; f++) {
    history *h = &hs[f];
    h->path = paths[f];
    int status = map_history(h);
    if (status != CLI_OK)
      return status;
    int rc = scan(c, h);
    if (rc == IDGEN_ERANGE)
      return cli_error(CLI_USAGE, "check", "'%s': more than %d sequence names", h->path,
                       MAX_NAMES);
    if (rc < 0)
      return cli_error(CLI_FAILED, "check", "out of memory");
    if (h->bad_lines)
      return cli_error(CLI_USAGE, "check", "'%s': %llu malformed lines", h->path,
                       (unsigned long long)h->bad_lines);
  }
  return CLI_OK;
}

/* What count() found: the duplicates (the first few, with their pools), and the
 * histories' ordering violations and errors summed. */
typedef struct tally {
  uint64_t dups, violations, errors, dup_shown[SHOW_DUPLICATES];
  int dup_pool[SHOW_DUPLICATES], nshown;
} tally;

/* Sorts each pool and counts the IDs that occur more than once; an exit status. */
static int count(checker *c, const history *hs, int nh, tally *t) {
  for (int k = 0; k < c->npools; k++) {
    const pool *p = &c->pools[k];
    if (radix_sort(p->ids, p->n) < 0)
      return cli_error(CLI_FAILED, "check", "out of memory");
    for (size_t i = 1; i < p->n; i++)
      if (p->ids[i] == p->ids[i - 1]) {
        t->dups++;
        if (t->nshown < SHOW_DUPLICATES && (i < 2 || p->ids[i - 2] != p->ids[i])) {
          t->dup_pool[t->nshown] = k;
          t->dup_shown[t->nshown++] = p->ids[i];
        }
      }
  }
  for (int f = 0; f < nh; f++) {
    t->violations += hs[f].order_violations;
    t->errors += hs[f].errors;
  }
  return CLI_OK;
}

static void report_json(const checker *c, const history *hs, int nh, const tally *t,
                        FILE *out) {
  fprintf(out, "{\"ids\":%zu,\"duplicates\":%llu,\"duplicate_examples\":[", c->nids,
          (unsigned long long)t->dups);
  for (int i = 0; i < t->nshown; i++)
    fprintf(out, "%s\"%llu\"", i ? "," : "", (unsigned long long)t->dup_shown[i]);
  fprintf(out, "],\"order_violations\":%llu,\"errors\":%llu,\"errors_by_kind\":{",
          (unsigned long long)t->violations, (unsigned long long)t->errors);
  for (int i = 0; i < c->nkinds; i++) {
    fprintf(out, "%s\"", i ? "," : "");
    json_text(out, c->kinds[i].name);
    fprintf(out, "\":%llu", (unsigned long long)c->kinds[i].count);
  }
  fprintf(out, "},\"clients\":[");
  for (int f = 0; f < nh; f++) {
    fprintf(out, "%s{\"file\":\"", f ? "," : "");
    json_text(out, hs[f].path);
    fprintf(out,
            "\",\"ids\":%llu,\"errors\":%llu,\"order_violations\":%llu,"
            "\"longest_unavailability_ms\":%lld,\"longest_gap_ms\":%lld}",
            (unsigned long long)hs[f].ids, (unsigned long long)hs[f].errors,
            (unsigned long long)hs[f].order_violations, (long long)hs[f].longest_outage_ms,
            (long long)hs[f].longest_gap_ms);
  }
  fprintf(out, "],\"pass\":%s}\n", t->dups || t->violations ? "false" : "true");
}

static void report_text(const checker *c, const history *hs, int nh, const tally *t,
                        FILE *out) {
  fprintf(out, "histories: %d, IDs: %zu, errors: %llu\n", nh, c->nids,
          (unsigned long long)t->errors);
  for (int i = 0; i < c->nkinds; i++)
    fprintf(out, "  error %s: %llu\n", c->kinds[i].name,
            (unsigned long long)c->kinds[i].count);
  for (int k = 0; c->integers && k < c->npools; k++)
    fprintf(out, "  sequence %s: %zu numbers\n",
            c->pools[k].name[0] ? c->pools[k].name : "-", c->pools[k].n);
  fprintf(out, "duplicates: %llu\n", (unsigned long long)t->dups);
  for (int i = 0; i < t->nshown; i++) {
    const char *name = c->pools[t->dup_pool[i]].name;
    fprintf(out, "  %llu", (unsigned long long)t->dup_shown[i]);
    if (c->integers)
      fprintf(out, " of %s", name[0] ? name : "-");
    describe_duplicate(hs, nh, t->dup_shown[i], c->integers ? name : NULL, out);
    fputc('\n', out);
  }
  fprintf(out, "ordering violations: %llu\n", (unsigned long long)t->violations);
  for (int f = 0; f < nh; f++)
    fprintf(out,
            "  %s: %llu IDs, %llu errors, longest unavailability %lld ms, longest gap "
            "%lld ms\n",
            hs[f].path, (unsigned long long)hs[f].ids, (unsigned long long)hs[f].errors,
            (long long)hs[f].longest_outage_ms, (long long)hs[f].longest_gap_ms);
  fprintf(out, "verdict: %s\n", t->dups || t->violations ? "FAIL" : "PASS");
}

/* Parse, load, count, then report. */
int idgen__cmd_check(int argc, char **argv) {
  checker c;
  memset(&c, 0, sizeof c);
  int first = 0, status = parse_args(argc, argv, &c, &first);
  if (status != CHECK_GO)
    return status;
  pool_of(&c, "", 0); /* Snowflake IDs: one pool */

  int nh = argc - first;
  history *hs = calloc((size_t)nh, sizeof *hs);
  c.last_by_worker =
      calloc((size_t)idgen_layout_max_worker(&c.layout) + 1, sizeof(uint64_t));
  if (!hs || !c.last_by_worker) {
    free(hs);
    free(c.last_by_worker);
    return cli_error(CLI_FAILED, "check", "out of memory");
  }
  tally t;
  memset(&t, 0, sizeof t);
  status = load(&c, hs, nh, argv + first);
  if (status == CLI_OK)
    status = count(&c, hs, nh, &t);
  if (status == CLI_OK) {
    if (c.json)
      report_json(&c, hs, nh, &t, stdout);
    else
      report_text(&c, hs, nh, &t, stdout);
    if (t.dups || t.violations)
      status = CLI_FAILED;
  }
  for (int f = 0; f < nh; f++)
    if (hs[f].text)
      munmap((void *)hs[f].text, hs[f].len);
  free(hs);
  for (int k = 0; k < c.npools; k++)
    free(c.pools[k].ids);
  free(c.lasts);
  free(c.last_by_worker);
  return status;
}
