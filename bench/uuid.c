/* uuid.c (bench_uuid): ns per value of idgen's UUIDv7 (binary, text, batch), UUIDv4 and
 * ULID next to libuuid's uuid_generate_random, measured in the same run.
 *
 *   bench_uuid [-n N] [--libuuid-n N] [--trials T] [--json FILE]
 *
 * Each figure is the median of T trials (default 5) of N values each (default 10^6;
 * libuuid 10^5, it is ~20x slower). Prints a table with each generator's speed-up over
 * libuuid v4 and whether it meets the target (>= 20x). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "idgen.h"

#define TARGET_SPEEDUP 20.0

static idgen_uuid7_gen *gen7;
static idgen_ulid_gen *ulid_plain, *ulid_mono;
static idgen_random *rnd;
static volatile uint8_t sink;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fail(const char *what, int rc) {
  fprintf(stderr, "bench_uuid: %s: %s\n", what, idgen_strerror(rc));
  exit(1);
}

/* Each run_* makes n values and returns a byte of them, so none is optimised away. */
static uint8_t run_v7(size_t n) {
  uint8_t acc = 0;
  idgen_uuid u;
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_uuid7_next(gen7, &u);
    if (rc < 0)
      fail("uuid7", rc);
    acc ^= u.b[15];
  }
  return acc;
}

static uint8_t run_v7_text(size_t n) {
  uint8_t acc = 0;
  idgen_uuid u;
  char text[IDGEN_UUID_TEXT_LEN + 1];
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_uuid7_next(gen7, &u);
    if (rc < 0)
      fail("uuid7", rc);
    idgen_uuid_format(u, text, sizeof text);
    acc ^= (uint8_t)text[35];
  }
  return acc;
}

static uint8_t run_v7_batch(size_t n) {
  uint8_t acc = 0;
  idgen_uuid batch[256];
  for (size_t i = 0; i < n; i += 256) {
    size_t k = n - i < 256 ? n - i : 256;
    int64_t got = idgen_uuid7_next_batch(gen7, batch, k);
    if (got != (int64_t)k)
      fail("uuid7 batch", (int)got);
    acc ^= batch[k - 1].b[15];
  }
  return acc;
}

static uint8_t run_v4(size_t n) {
  uint8_t acc = 0;
  idgen_uuid u;
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_uuid4(rnd, &u);
    if (rc < 0)
      fail("uuid4", rc);
    acc ^= u.b[15];
  }
  return acc;
}

static uint8_t run_v4_batch(size_t n) {
  uint8_t acc = 0;
  idgen_uuid batch[256];
  for (size_t i = 0; i < n; i += 256) {
    size_t k = n - i < 256 ? n - i : 256;
    int64_t got = idgen_uuid4_batch(rnd, batch, k);
    if (got != (int64_t)k)
      fail("uuid4 batch", (int)got);
    acc ^= batch[k - 1].b[15];
  }
  return acc;
}

static uint8_t run_ulid_with(idgen_ulid_gen *gen, size_t n, int text) {
  uint8_t acc = 0;
  idgen_ulid u;
  char buf[IDGEN_ULID_TEXT_LEN + 1];
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_ulid_next(gen, &u);
    if (rc < 0)
      fail("ulid", rc);
    if (text) {
      idgen_ulid_format(u, buf, sizeof buf);
      acc ^= (uint8_t)buf[25];
    } else {
      acc ^= u.b[15];
    }
  }
  return acc;
}

static uint8_t run_ulid(size_t n) {
  return run_ulid_with(ulid_plain, n, 0);
}
static uint8_t run_ulid_mono(size_t n) {
  return run_ulid_with(ulid_mono, n, 0);
}
static uint8_t run_ulid_text(size_t n) {
  return run_ulid_with(ulid_plain, n, 1);
}

static uint8_t run_libuuid(size_t n) {
  uint8_t acc = 0;
  uuid_t u;
  for (size_t i = 0; i < n; i++) {
    uuid_generate_random(u);
    acc ^= u[15];
  }
  return acc;
}

typedef struct bench {
  const char *name;
  const char *what;
  uint8_t (*run)(size_t n);
  int is_libuuid;
  double ns;
} bench;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of trials runs of n values, in ns per value. Trials alternate between
 * generators (see main), so slow drifts of the machine hit all of them alike. */
static double time_one(bench *b, size_t n) {
  int64_t t0 = now_ns();
  sink ^= b->run(n);
  return (double)(now_ns() - t0) / (double)n;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: bench_uuid [-n N] [--libuuid-n N] [--trials T] [--json FILE]\n"
          "  ns per value of idgen's UUIDv7/v4/ULID and libuuid's uuid_generate_random,\n"
          "  median of T trials (default 5) of N values (default 1000000; libuuid\n"
          "  100000). --json FILE also writes the figures as JSON.\n");
}

int main(int argc, char **argv) {
  size_t n = 1000000, n_lib = 100000;
  int trials = 5;
  const char *json_path = NULL;
  static const struct option opts[] = {{"json", required_argument, NULL, 'j'},
                                       {"libuuid-n", required_argument, NULL, 'l'},
                                       {"trials", required_argument, NULL, 't'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
    switch (c) {
    case 'n':
      n = strtoull(optarg, NULL, 10);
      break;
    case 'l':
      n_lib = strtoull(optarg, NULL, 10);
      break;
    case 't':
      trials = atoi(optarg);
      break;
    case 'j':
      json_path = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (n == 0 || n_lib == 0 || trials < 1 || trials > 101 || optind != argc) {
    usage(stderr);
    return 2;
  }

  static idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  int rc = idgen_random_system_new(&rnd);
  if (rc < 0)
    fail("random", rc);
  idgen_uuid7_config c7 = {&clock.base, rnd};
  idgen_ulid_config cu = {&clock.base, rnd, 0};
  if ((rc = idgen_uuid7_new(&gen7, &c7)) < 0 || (rc = idgen_ulid_new(&ulid_plain, &cu)) < 0)
    fail("new", rc);
  cu.monotonic = 1;
  if ((rc = idgen_ulid_new(&ulid_mono, &cu)) < 0)
    fail("new", rc);

  bench benches[] = {
      {"libuuid_v4", "libuuid uuid_generate_random (binary)", run_libuuid, 1, 0},
      {"uuid7", "idgen UUIDv7 binary, one call per value", run_v7, 0, 0},
      {"uuid7_text", "idgen UUIDv7 + canonical text", run_v7_text, 0, 0},
      {"uuid7_batch", "idgen UUIDv7 binary, batches of 256", run_v7_batch, 0, 0},
      {"uuid4", "idgen UUIDv4 binary, one call per value", run_v4, 0, 0},
      {"uuid4_batch", "idgen UUIDv4 binary, batches of 256", run_v4_batch, 0, 0},
      {"ulid", "idgen ULID binary, plain", run_ulid, 0, 0},
      {"ulid_monotonic", "idgen ULID binary, monotonic", run_ulid_mono, 0, 0},
      {"ulid_text", "idgen ULID plain + Crockford text", run_ulid_text, 0, 0},
  };
  enum { NB = sizeof benches / sizeof benches[0] };
  double samples[NB][101];
  for (int b = 0; b < NB; b++) /* warm up: page faults, first refills */
    (void)time_one(&benches[b], benches[b].is_libuuid ? n_lib / 10 + 1 : n / 10 + 1);
  for (int t = 0; t < trials; t++)
    for (int b = 0; b < NB; b++)
      samples[b][t] = time_one(&benches[b], benches[b].is_libuuid ? n_lib : n);
  for (int b = 0; b < NB; b++) {
    qsort(samples[b], (size_t)trials, sizeof(double), cmp_double);
    benches[b].ns = samples[b][trials / 2];
  }
  double lib = benches[0].ns;

  printf("bench_uuid: median of %d trials; %zu values per idgen trial, %zu per libuuid "
         "trial\n",
         trials, n, n_lib);
  printf("%-16s %10s %12s %8s  %s\n", "generator", "ns/value", "vs libuuid", "target",
         "what");
  int all_ok = 1;
  for (int b = 0; b < NB; b++) {
    double speedup = lib / benches[b].ns;
    int ok = benches[b].is_libuuid || speedup >= TARGET_SPEEDUP;
    all_ok &= ok;
    printf("%-16s %10.1f %11.1fx %8s  %s\n", benches[b].name, benches[b].ns, speedup,
           benches[b].is_libuuid ? "-"
           : ok                  ? "ok"
                                 : "MISSED",
           benches[b].what);
  }
  printf("target: every idgen generator >= %.0fx faster than libuuid v4: %s\n",
         TARGET_SPEEDUP, all_ok ? "met" : "MISSED");

  if (json_path) {
    FILE *f = fopen(json_path, "w");
    if (!f) {
      perror(json_path);
      return 1;
    }
    fprintf(f,
            "{\"benchmark\":\"uuid\",\"unit\":\"ns_per_value\",\"trials\":%d,"
            "\"values_per_trial\":%zu,\"libuuid_values_per_trial\":%zu,"
            "\"target_speedup\":%.1f,\"target_met\":%s,\"results\":[",
            trials, n, n_lib, TARGET_SPEEDUP, all_ok ? "true" : "false");
    for (int b = 0; b < NB; b++)
      fprintf(f, "%s{\"name\":\"%s\",\"ns_per_value\":%.2f,\"speedup_vs_libuuid_v4\":%.2f}",
              b ? "," : "", benches[b].name, benches[b].ns, lib / benches[b].ns);
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
      perror(json_path);
      return 1;
    }
  }
  idgen_uuid7_free(gen7);
  idgen_ulid_free(ulid_plain);
  idgen_ulid_free(ulid_mono);
  idgen_random_system_free(rnd);
  return 0;
}
