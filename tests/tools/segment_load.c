/* segment_load.c: a process that hands out numbers from a segment generator as the
 * service will (its own fetcher thread, the real backend), as fast as it can or paced,
 * and records every number (and every refusal) in the history format `idgen check
 * --integers` reads:
 *   <unix ms> <process> <number> <name>
 *   <unix ms> <process> ERR <error name>
 * It stops after --count numbers, or on SIGTERM/SIGINT, and then prints its counters on
 * one line to stderr. It gives up, exit 1, after --stall-ms (default 30000; 0: never)
 * with no number at all: a refusal that never ends (a broken fence refusing every
 * block) must fail its test quickly, not hold it until the test's own timeout.
 *   SEGMENTLOAD issued=.. blocks=.. step=.. backend_errors=.. refused=.. waits=.. last=..
 * Usage: segment_load --backend B --dsn DSN --name NAME --process P --out FILE
 *          [--count N] [--step N] [--max-step N] [--period-ms MS] [--prefetch PCT]
 *          [--retry-ms MS] [--batch K] [--pace-us US] [--timeout-ms MS]
 *          [--stall-ms MS] */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen.h"
#include "segment/segment.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static int64_t wall_ms(void) {
  return idgen_wall_ns() / 1000000;
}

static void sleep_us(int64_t us) {
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void usage(void) {
  fprintf(stderr, "usage: segment_load --backend B --dsn DSN --name NAME --process P --out "
                  "FILE [--count N] [--step N] [--max-step N] [--period-ms MS] [--prefetch "
                  "PCT] [--retry-ms MS] [--batch K] [--pace-us US] [--timeout-ms MS] "
                  "[--stall-ms MS]\n");
}

int main(int argc, char **argv) {
  static const struct option options[] = {{"backend", required_argument, NULL, 'b'},
                                          {"dsn", required_argument, NULL, 'd'},
                                          {"name", required_argument, NULL, 'N'},
                                          {"process", required_argument, NULL, 'p'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"count", required_argument, NULL, 'n'},
                                          {"step", required_argument, NULL, 's'},
                                          {"max-step", required_argument, NULL, 'm'},
                                          {"period-ms", required_argument, NULL, 'P'},
                                          {"prefetch", required_argument, NULL, 'f'},
                                          {"retry-ms", required_argument, NULL, 'r'},
                                          {"batch", required_argument, NULL, 'k'},
                                          {"pace-us", required_argument, NULL, 'u'},
                                          {"timeout-ms", required_argument, NULL, 't'},
                                          {"stall-ms", required_argument, NULL, 'S'},
                                          {NULL, 0, NULL, 0}};
  const char *backend = NULL, *dsn = NULL, *name = NULL, *process = NULL, *out_path = NULL;
  long long count = -1, step = 1000, max_step = 0, period_ms = 0, prefetch = 20;
  long long retry_ms = 100, batch = 0, pace_us = 0, timeout_ms = 2000, stall_ms = 30000;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      backend = optarg;
      break;
    case 'd':
      dsn = optarg;
      break;
    case 'N':
      name = optarg;
      break;
    case 'p':
      process = optarg;
      break;
    case 'o':
      out_path = optarg;
      break;
    case 'n':
      count = atoll(optarg);
      break;
    case 's':
      step = atoll(optarg);
      break;
    case 'm':
      max_step = atoll(optarg);
      break;
    case 'P':
      period_ms = atoll(optarg);
      break;
    case 'f':
      prefetch = atoll(optarg);
      break;
    case 'r':
      retry_ms = atoll(optarg);
      break;
    case 'k':
      batch = atoll(optarg);
      break;
    case 'u':
      pace_us = atoll(optarg);
      break;
    case 't':
      timeout_ms = atoll(optarg);
      break;
    case 'S':
      stall_ms = atoll(optarg);
      break;
    default:
      usage();
      return 2;
    }
  }
  if (!backend || !dsn || !name || !process || !out_path || optind != argc || step < 1 ||
      batch < 0 || batch > 4096 || stall_ms < 0 || strchr(process, ' ')) {
    usage();
    return 2;
  }
  char err[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_backend *b = NULL;
  if (idgen__segment_backend_open(&b, backend, dsn, timeout_ms, err, sizeof err)) {
    fprintf(stderr, "segment_load: %s\n", err);
    return 2;
  }
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__segment_config_init(&c, name, b, &clock.base);
  c.step = (uint64_t)step;
  c.max_step = max_step ? (uint64_t)max_step : (uint64_t)step;
  if (period_ms)
    c.period_ns = period_ms * 1000000;
  c.prefetch_pct = (int)prefetch;
  c.retry_ns = retry_ms * 1000000;
  idgen__segment *seg = NULL;
  c.manual = 1; /* the config checked first, without a fetcher */
  if (idgen__segment_new(&seg, &c, err, sizeof err)) {
    fprintf(stderr, "segment_load: %s\n", err);
    idgen__segment_backend_free(b);
    return 2;
  }
  idgen__segment_free(seg);
  seg = NULL;
  c.manual = 0;
  const char *ns = getenv("IDGEN_NAMESPACE"); /* the file backend's claim, as idgen's */
  if (idgen__segment_file_start(b, ns && *ns ? ns : "default", name, 0) < 0) {
    fprintf(stderr, "segment_load: %s\n", b->why);
    idgen__segment_backend_free(b);
    return 1;
  }
  if (idgen__segment_new(&seg, &c, err, sizeof err)) {
    fprintf(stderr, "segment_load: %s\n", err);
    idgen__segment_backend_free(b);
    return 2;
  }
  FILE *out = fopen(out_path, "a");
  if (!out) {
    fprintf(stderr, "segment_load: cannot write '%s'\n", out_path);
    return 2;
  }
  /* Whole lines only, so that a reader (or a kill -9) never sees half of one. */
  setvbuf(out, NULL, _IOLBF, 0);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  uint64_t buf[4096];
  long long done = 0;
  int stalled = 0;
  int64_t last_number_ms = wall_ms();
  while (!stop_flag && (count < 0 || done < count)) {
    size_t want = batch ? (size_t)batch : 1;
    if (count >= 0 && (long long)want > count - done)
      want = (size_t)(count - done);
    int64_t got = idgen__segment_next_batch(seg, buf, want);
    int64_t now = wall_ms();
    for (int64_t i = 0; i < got; i++)
      fprintf(out, "%lld %s %llu %s\n", (long long)now, process, (unsigned long long)buf[i],
              name);
    if (got < 0) {
      fprintf(out, "%lld %s ERR %s\n", (long long)now, process, idgen_err_name((int)got));
      if (stall_ms && now - last_number_ms >= stall_ms) {
        fprintf(stderr, "segment_load: no number for %lld ms, refused with %s: giving up\n",
                stall_ms, idgen_err_name((int)got));
        stalled = 1;
        break;
      }
      sleep_us(1000); /* a refusal is immediate: do not write a million of them */
    } else {
      done += got;
      last_number_ms = now;
    }
    if (pace_us)
      sleep_us(pace_us);
  }
  fclose(out);
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  fprintf(stderr,
          "SEGMENTLOAD issued=%llu blocks=%llu step=%llu backend_errors=%llu refused=%llu "
          "waits=%llu last=%llu\n",
          (unsigned long long)s.issued, (unsigned long long)s.blocks_fetched,
          (unsigned long long)s.step, (unsigned long long)s.backend_errors,
          (unsigned long long)s.refused, (unsigned long long)s.waits,
          (unsigned long long)s.last_max);
  idgen__segment_free(seg);
  idgen__segment_backend_free(b);
  return stalled ? 1 : 0;
}
