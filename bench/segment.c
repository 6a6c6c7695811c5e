/* bench/segment.c (bench_segment): the cost of a segment generator's next() on its hot
 * path, and how many backend calls a million numbers cost.
 *
 *   bench_segment [--backend B --dsn DSN] [--name NAME] [--numbers N] [--threads T]
 *                 [--step S] [--max-step M] [--batch K] [--period day|month|year]
 *
 * The generator runs as the service runs it (its own fetcher thread, Leaf's double
 * buffer, the step adapting from S to M). Default backend: file, in a fresh temporary
 * directory. Prints one line:
 *   SEGMENTBENCH backend=.. threads=.. numbers=.. ns_per_number=.. blocks=..
 *                backend_calls_per_million=.. fetch_us=.. waits=.. final_step=..
 * fetch_us is the mean time of one backend call (lease a block).
 * waits counts the calls that found no block ready and waited for a fetch: the numbers
 * ran out faster than the backend answered. --period: a time-scoped sequence (UTC),
 * whose every number also reads the clock after its reservation (issue 28). */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idgen.h"
#include "segment/segment.h"

#define THREADS_MAX 64

typedef struct worker {
  idgen__segment *seg;
  uint64_t n;
  size_t batch;
  int failed;
} worker;

static void *draw(void *p) {
  worker *w = p;
  uint64_t v, buf[256], sum = 0;
  for (uint64_t i = 0; i < w->n;) {
    int64_t got;
    if (w->batch) {
      got = idgen__segment_next_batch(w->seg, buf, w->batch);
      v = buf[0];
    } else {
      got = idgen__segment_next(w->seg, &v) ? -1 : 1;
    }
    if (got <= 0) {
      w->failed = 1;
      return NULL;
    }
    sum += v;
    i += (uint64_t)got;
  }
  w->failed = sum == 0; /* keeps the loop from being optimised away */
  return NULL;
}

/* Runs threads workers of n numbers each; returns the seconds taken, or -1. */
static double run(worker *proto, int threads) {
  pthread_t t[THREADS_MAX];
  worker w[THREADS_MAX];
  int64_t t0 = idgen_monotonic_ns();
  for (int i = 0; i < threads; i++) {
    w[i] = *proto;
    if (pthread_create(&t[i], NULL, draw, &w[i]))
      return -1;
  }
  int failed = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(t[i], NULL);
    failed |= w[i].failed;
  }
  return failed ? -1 : (double)(idgen_monotonic_ns() - t0) / 1e9;
}

int main(int argc, char **argv) {
  static const struct option options[] = {
      {"backend", required_argument, NULL, 'b'},  {"dsn", required_argument, NULL, 'd'},
      {"name", required_argument, NULL, 'N'},     {"numbers", required_argument, NULL, 'n'},
      {"threads", required_argument, NULL, 't'},  {"step", required_argument, NULL, 's'},
      {"max-step", required_argument, NULL, 'm'}, {"batch", required_argument, NULL, 'k'},
      {"period", required_argument, NULL, 'p'},   {NULL, 0, NULL, 0}};
  const char *backend = "file", *dsn = NULL, *name = "bench", *period = "none";
  long long numbers = 10000000, threads = 1, step = 1000, max_step = 100000, batch = 0;
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
    case 'n':
      numbers = atoll(optarg);
      break;
    case 't':
      threads = atoll(optarg);
      break;
    case 's':
      step = atoll(optarg);
      break;
    case 'm':
      max_step = atoll(optarg);
      break;
    case 'k':
      batch = atoll(optarg);
      break;
    case 'p':
      period = optarg;
      break;
    default:
      fprintf(stderr,
              "usage: bench_segment [--backend B --dsn DSN] [--name NAME] "
              "[--numbers N] [--threads T] [--step S] [--max-step M] [--batch K]\n");
      return 2;
    }
  }
  if (numbers < 1 || threads < 1 || threads > THREADS_MAX || step < 1 || batch < 0 ||
      batch > 256) {
    fprintf(stderr, "bench_segment: bad option value\n");
    return 2;
  }
  char tmp[] = "/tmp/idgen-bench-segment-XXXXXX";
  if (!dsn) {
    if (strcmp(backend, "file") || !mkdtemp(tmp)) {
      fprintf(stderr, "bench_segment: --dsn is needed (only file has a default)\n");
      return 2;
    }
    dsn = tmp;
  }
  char err[IDGEN_SEGMENT_WHY_MAX];
  idgen__segment_backend *b = NULL;
  if (idgen__segment_backend_open(&b, backend, dsn, 0, err, sizeof err)) {
    fprintf(stderr, "bench_segment: %s\n", err);
    return 2;
  }
  if (b->vtable->init(b, name, (uint64_t)step, 0, 0) < 0) {
    fprintf(stderr, "bench_segment: %s\n", b->why);
    return 1;
  }
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__segment_config_init(&c, name, b, &clock.base);
  c.step = (uint64_t)step;
  c.max_step = (uint64_t)max_step;
  idgen__tz *tz = NULL;
  if (idgen__period_parse(period, &c.period) < 0 ||
      (c.period && idgen__tz_load("UTC", &tz, err, sizeof err) < 0)) {
    fprintf(stderr, "bench_segment: --period day, month, year or none\n");
    return 2;
  }
  c.tz = tz;
  c.period_digits = 9;
  idgen__segment *seg = NULL;
  if (idgen__segment_new(&seg, &c, err, sizeof err) ||
      idgen__segment_wait_ready(seg, 10000)) {
    fprintf(stderr, "bench_segment: %s\n", err);
    return 1;
  }
  uint64_t per = (uint64_t)(numbers / threads);
  worker proto = {seg, per, (size_t)batch, 0};
  double seconds = run(&proto, (int)threads);
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  idgen__segment_free(seg);
  idgen__tz_free(tz);

  if (seconds < 0) {
    idgen__segment_backend_free(b);
    fprintf(stderr, "bench_segment: a call failed\n");
    return 1;
  }
  double total = (double)per * (double)threads;
  printf("SEGMENTBENCH backend=%s threads=%lld numbers=%.0f ns_per_number=%.1f blocks=%llu "
         "backend_calls_per_million=%.2f fetch_us=%.0f waits=%llu final_step=%llu\n",
         backend, threads, total, seconds * 1e9 / total * (double)threads,
         (unsigned long long)s.blocks_fetched, (double)s.blocks_fetched * 1e6 / total,
         s.fetch_latency.count
             ? (double)s.fetch_latency.sum_us / (double)s.fetch_latency.count
             : 0.0,
         (unsigned long long)s.waits, (unsigned long long)s.step);
  idgen__segment_backend_free(b);
  if (dsn == tmp) {
    char path[128];
    snprintf(path, sizeof path, "%s/segment-%s", tmp, name);
    unlink(path);
    rmdir(tmp);
  }
  return 0;
}
