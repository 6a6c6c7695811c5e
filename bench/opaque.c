/* opaque.c (bench_opaque): ns per ID of an opaque ID (FF1, 10 AES blocks) next to plain
 * ID formatting and next to one AES block, measured in the same run on one core.
 *
 *   bench_opaque [-n N] [--trials T] [--json FILE]
 *
 * Each figure is the median of T trials (default 5) of N IDs each (default 10^6).
 * Prints a table and whether idgen_opaque_encode meets the target (<= 2 us per ID). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen.h"
#include "idgen/opaque.h"
#include "opaque/ff1.h"

#define TARGET_NS 2000.0

static idgen_opaque *opaque;
static idgen__ff1 ff1; /* the same permutation as opaque, for the parts' costs */
static idgen__evp_ctx *reused;
static volatile uint64_t sink;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fail(const char *what, int rc) {
  fprintf(stderr, "bench_opaque: %s: %s\n", what, idgen_strerror(rc));
  exit(1);
}

/* IDs as a server hands them out: increasing, from a recent time. */
static uint64_t id_at(size_t i) {
  return (UINT64_C(120705948263120896) + (uint64_t)i * 4099) & INT64_MAX;
}

/* Each run_* handles n IDs and returns something of them, so none is optimised away. */
static uint64_t run_format(size_t n) {
  uint64_t acc = 0;
  char text[IDGEN_FORMAT_MAX];
  for (size_t i = 0; i < n; i++) {
    int len = idgen_id_format(id_at(i), IDGEN_FORMAT_BASE62, NULL, text, sizeof text);
    if (len < 0)
      fail("format", len);
    acc += (uint64_t)text[len - 1];
  }
  return acc;
}

static uint64_t run_aes(size_t n) {
  uint8_t block[16] = {0}, out[16];
  uint64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    memcpy(block, &(uint64_t){id_at(i)}, 8);
    int rc = idgen__ff1_aes_block(reused, block, out);
    if (rc < 0)
      fail("aes", rc);
    acc += out[0];
  }
  return acc;
}

static uint64_t run_ctx_copy(size_t n) {
  uint64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    idgen__evp_ctx *ctx = idgen__ff1_ctx_new(&ff1);
    if (!ctx)
      fail("context", IDGEN_ENOMEM);
    acc += (uint64_t)(uintptr_t)ctx & 1;
    idgen__ff1_ctx_free(ctx);
  }
  return acc;
}

static uint64_t run_ff1_reused(size_t n) {
  uint64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t id = id_at(i), a = id >> 32, b = id & 0xffffffffu;
    int rc = idgen__ff1_encrypt_halves(&ff1, reused, &a, &b);
    if (rc < 0)
      fail("ff1", rc);
    acc += a ^ b;
  }
  return acc;
}

static uint64_t run_encode(size_t n) {
  uint64_t acc = 0, out;
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_opaque_encode(opaque, id_at(i), &out);
    if (rc < 0)
      fail("encode", rc);
    acc += out;
  }
  return acc;
}

static uint64_t run_decode(size_t n) {
  uint64_t acc = 0, out;
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_opaque_decode(opaque, id_at(i), &out);
    if (rc < 0)
      fail("decode", rc);
    acc += out;
  }
  return acc;
}

static uint64_t run_encode_batch(size_t n) {
  uint64_t acc = 0, ids[4096];
  for (size_t i = 0; i < n; i += 4096) {
    size_t k = n - i < 4096 ? n - i : 4096;
    for (size_t j = 0; j < k; j++)
      ids[j] = id_at(i + j);
    int rc = idgen_opaque_encode_batch(opaque, ids, ids, k);
    if (rc < 0)
      fail("encode batch", rc);
    acc += ids[k - 1];
  }
  return acc;
}

static uint64_t run_encode_base62(size_t n) {
  uint64_t acc = 0, out;
  char text[IDGEN_FORMAT_MAX];
  for (size_t i = 0; i < n; i++) {
    int rc = idgen_opaque_encode(opaque, id_at(i), &out);
    int len =
        rc < 0 ? rc : idgen_id_format(out, IDGEN_FORMAT_BASE62, NULL, text, sizeof text);
    if (len < 0)
      fail("encode + format", len);
    acc += (uint64_t)text[len - 1];
  }
  return acc;
}

typedef struct bench {
  const char *name;
  const char *what;
  uint64_t (*run)(size_t n);
  double ns;
} bench;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double time_one(const bench *b, size_t n) {
  int64_t t0 = now_ns();
  sink ^= b->run(n);
  return (double)(now_ns() - t0) / (double)n;
}

static void usage(FILE *out) {
  fprintf(out, "usage: bench_opaque [-n N] [--trials T] [--json FILE]\n"
               "  ns per ID of idgen_opaque_encode/decode next to plain base62 formatting\n"
               "  and one AES block, median of T trials (default 5) of N IDs (default\n"
               "  1000000), one thread. --json FILE also writes the figures as JSON.\n");
}

int main(int argc, char **argv) {
  size_t n = 1000000;
  int trials = 5;
  const char *json_path = NULL;
  static const struct option opts[] = {{"json", required_argument, NULL, 'j'},
                                       {"trials", required_argument, NULL, 't'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
    switch (c) {
    case 'n':
      n = strtoull(optarg, NULL, 10);
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
  if (n == 0 || trials < 1 || trials > 101 || optind != argc) {
    usage(stderr);
    return 2;
  }

  uint8_t key[32];
  for (size_t i = 0; i < sizeof key; i++)
    key[i] = (uint8_t)i;
  const uint8_t *tweak = (const uint8_t *)"default";
  int rc = idgen_opaque_new(&opaque, key, sizeof key, tweak, 7);
  if (rc < 0 || (rc = idgen__ff1_init(&ff1, key, sizeof key, 2, 63, tweak, 7)) < 0)
    fail("new", rc);
  reused = idgen__ff1_ctx_new(&ff1);
  if (!reused)
    fail("context", IDGEN_ENOMEM);

  bench benches[] = {
      {"format_base62", "plain ID -> base62 text (idgen_id_format)", run_format, 0},
      {"aes_block", "one AES-256 block (OpenSSL EVP, ECB, context reused)", run_aes, 0},
      {"context_copy", "a context copied and freed (a call pays it if 8 are taken)",
       run_ctx_copy, 0},
      {"ff1_reused_context", "FF1 radix 2, n 63 (10 AES blocks), context reused",
       run_ff1_reused, 0},
      {"opaque_encode", "idgen_opaque_encode (thread-safe: a pooled context)", run_encode,
       0},
      {"opaque_decode", "idgen_opaque_decode", run_decode, 0},
      {"opaque_batch", "idgen_opaque_encode_batch of 4096 (one context)", run_encode_batch,
       0},
      {"opaque_base62", "idgen_opaque_encode + base62 text (the server's work)",
       run_encode_base62, 0},
  };
  enum { NB = sizeof benches / sizeof benches[0] };
  double samples[NB][101];
  for (int b = 0; b < NB; b++) /* warm up */
    (void)time_one(&benches[b], n / 10 + 1);
  for (int t = 0; t < trials; t++)
    for (int b = 0; b < NB; b++)
      samples[b][t] = time_one(&benches[b], n);
  for (int b = 0; b < NB; b++) {
    qsort(samples[b], (size_t)trials, sizeof(double), cmp_double);
    benches[b].ns = samples[b][trials / 2];
  }
  double aes = benches[1].ns, plain = benches[0].ns, encode = benches[4].ns;
  int met = encode <= TARGET_NS;

  printf("bench_opaque: median of %d trials of %zu IDs, one thread\n", trials, n);
  printf("%-20s %9s %10s  %s\n", "measure", "ns/ID", "AES blocks", "what");
  for (int b = 0; b < NB; b++)
    printf("%-20s %9.1f %10.1f  %s\n", benches[b].name, benches[b].ns, benches[b].ns / aes,
           benches[b].what);
  printf("opaque_encode = %.1fx plain base62 formatting, %.1f AES blocks\n", encode / plain,
         encode / aes);
  printf("target: idgen_opaque_encode <= %.0f ns per ID on one core: %s\n", TARGET_NS,
         met ? "met" : "MISSED");

  if (json_path) {
    FILE *f = fopen(json_path, "w");
    if (!f) {
      perror(json_path);
      return 1;
    }
    fprintf(f,
            "{\"benchmark\":\"opaque\",\"unit\":\"ns_per_id\",\"trials\":%d,"
            "\"ids_per_trial\":%zu,\"target_ns\":%.0f,\"target_met\":%s,\"results\":[",
            trials, n, TARGET_NS, met ? "true" : "false");
    for (int b = 0; b < NB; b++)
      fprintf(f, "%s{\"name\":\"%s\",\"ns_per_id\":%.2f,\"aes_blocks\":%.2f}", b ? "," : "",
              benches[b].name, benches[b].ns, benches[b].ns / aes);
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
      perror(json_path);
      return 1;
    }
  }
  idgen__ff1_ctx_free(reused);
  idgen__ff1_clear(&ff1);
  idgen_opaque_free(opaque);
  return 0;
}
