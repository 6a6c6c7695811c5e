/* bench/client.c: libidgen-client's calls per second and latency, beside hand-made
 * hiredis clients, against `idgen serve` processes bench/client.sh started.
 *   bench_client range SERVERS NAME THREADS SECONDS       next() calls/s of a range name
 *   bench_client ids SERVERS NAME THREADS SECONDS         next() calls/s of a Snowflake
 * name bench_client latency SERVERS NAME SECONDS             p50/p99/p99.9 of next() in ns
 *   bench_client pipelined HOST:PORT NAME SECONDS DEPTH   IDS 4096 pipelined by hand
 *   bench_client single HOST:PORT NAME SECONDS            one ID per round trip
 * Each prints one line: "<what> <value>" (value: per second, or ns). */
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen/client.h"

static idgen_client *client;
static const char *name;
static double seconds;
static _Atomic int stop;
static _Atomic uint64_t total, errors;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *caller(void *arg) {
  (void)arg;
  uint64_t n = 0, bad = 0, id, sum = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    for (int i = 0; i < 4096; i++) {
      if (idgen_client_next(client, name, &id) == 0) {
        sum += id;
        n++;
      } else {
        bad++;
      }
    }
  }
  atomic_fetch_add(&total, n);
  atomic_fetch_add(&errors, bad);
  return (void *)(uintptr_t)(sum & 1);
}

static int open_client(const char *servers) {
  idgen_client_options o;
  idgen_client_options_init(&o);
  char err[256];
  if (idgen_client_new(&client, servers, &o, err, sizeof err) < 0) {
    fprintf(stderr, "bench_client: %s\n", err);
    return -1;
  }
  /* Warm up: the first refills, the batch grown. */
  uint64_t id;
  double until = now_s() + 0.5;
  while (now_s() < until)
    idgen_client_next(client, name, &id);
  return 0;
}

static int run_threads(const char *what, long threads) {
  pthread_t th[64];
  double t0 = now_s();
  for (long i = 0; i < threads; i++)
    pthread_create(&th[i], NULL, caller, NULL);
  struct timespec d = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&d, NULL);
  atomic_store(&stop, 1);
  for (long i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  double took = now_s() - t0;
  idgen_client_stats st;
  idgen_client_stats_get(client, &st);
  printf("%s %.0f errors=%" PRIu64 " waits=%" PRIu64 " refills=%" PRIu64 "\n", what,
         (double)atomic_load(&total) / took, atomic_load(&errors), st.waits, st.refills);
  idgen_client_free(client);
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int latency(void) {
  size_t cap = 50 * 1000 * 1000, n = 0;
  int64_t *lat = malloc(cap * sizeof *lat);
  if (!lat)
    return 2;
  double until = now_s() + seconds;
  uint64_t id;
  while (n < cap && (n & 4095 || now_s() < until)) {
    int64_t t0 = now_ns();
    idgen_client_next(client, name, &id);
    lat[n++] = now_ns() - t0;
  }
  qsort(lat, n, sizeof *lat, cmp_i64);
  printf("latency p50=%" PRId64 " p99=%" PRId64 " p99.9=%" PRId64 " max=%" PRId64
         " calls=%zu\n",
         lat[n / 2], lat[n * 99 / 100], lat[n * 999 / 1000], lat[n - 1], n);
  free(lat);
  idgen_client_free(client);
  return 0;
}

static redisContext *connect_to(const char *addr) {
  char host[256];
  int port;
  if (sscanf(addr, "%255[^:]:%d", host, &port) != 2)
    return NULL;
  redisContext *c = redisConnect(host, port);
  return c && !c->err ? c : NULL;
}

/* IDS name 4096, depth requests in flight at a time. */
static int pipelined(const char *addr, int depth) {
  redisContext *c = connect_to(addr);
  if (!c)
    return 2;
  uint64_t n = 0;
  double t0 = now_s(), until = t0 + seconds;
  for (int i = 0; i < depth; i++)
    redisAppendCommand(c, "IDS %s 4096", name);
  while (now_s() < until) {
    redisReply *r;
    if (redisGetReply(c, (void **)&r) != REDIS_OK)
      return 2;
    if (r->type == REDIS_REPLY_ARRAY)
      n += r->elements;
    freeReplyObject(r);
    redisAppendCommand(c, "IDS %s 4096", name);
  }
  printf("pipelined %.0f\n", (double)n / (now_s() - t0));
  redisFree(c);
  return 0;
}

static int single(const char *addr) {
  redisContext *c = connect_to(addr);
  if (!c)
    return 2;
  uint64_t n = 0;
  double t0 = now_s(), until = t0 + seconds;
  while (now_s() < until) {
    redisReply *r = redisCommand(c, "ID %s", name);
    if (!r)
      return 2;
    n += r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
  }
  printf("single %.0f\n", (double)n / (now_s() - t0));
  redisFree(c);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: see bench/client.c\n");
    return 2;
  }
  name = argv[3];
  if ((!strcmp(argv[1], "range") || !strcmp(argv[1], "ids")) && argc == 6) {
    seconds = atof(argv[5]);
    if (open_client(argv[2]) < 0)
      return 1;
    return run_threads(argv[1], atol(argv[4]));
  }
  if (!strcmp(argv[1], "latency")) {
    seconds = atof(argv[4]);
    if (open_client(argv[2]) < 0)
      return 1;
    return latency();
  }
  seconds = atof(argv[4]);
  if (!strcmp(argv[1], "pipelined") && argc == 6)
    return pipelined(argv[2], atoi(argv[5]));
  if (!strcmp(argv[1], "single"))
    return single(argv[2]);
  fprintf(stderr, "bench_client: bad usage\n");
  return 2;
}
