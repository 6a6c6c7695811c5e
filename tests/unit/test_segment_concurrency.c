/* test_segment_concurrency.c: threads drawing from one segment generator, whose fetcher
 * thread leases small blocks in the background from a backend that goes down and comes
 * back, never see a number twice, and each thread's numbers rise. Runs under TSan. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "idgen.h"
#include "segment/segment.h"
#include "segment_mem.h"

#define THREADS 4
#define BURST 2500       /* numbers per thread and round */
#define ROUNDS 100       /* at least: 10^6 numbers in all */
#define MAX_ROUNDS 400   /* at most: 4 * 10^6 */
#define CONTENDED 200000 /* numbers drawn while another thread drew, at least */
#define PER_THREAD ((size_t)MAX_ROUNDS * BURST)

/* The threads draw in rounds, each begun by all of them at once (a barrier), until
 * ROUNDS rounds are done and CONTENDED numbers came from draws that overlapped another
 * thread's (the shared count of draws moved during the draw), or MAX_ROUNDS are. On a
 * machine whose cores other work keeps busy, the scheduler ran the threads of one fixed
 * run of 10^6 one after another: the mutant seg-cas (the offset stored, not swapped)
 * survived 1 run in 20 beside four busy loops; this way none of 40 beside eight. */
typedef struct shared {
  pthread_barrier_t round;
  atomic_uint_fast64_t draws, contended;
  int go; /* another round: decided by one thread between two barriers */
  int rounds;
} shared;

typedef struct worker_arg {
  idgen__segment *seg;
  shared *sh;
  uint64_t *out;
  size_t n;  /* how many in out */
  int batch; /* draw in batches of this size, or singly if 0 */
  uint64_t refused;
  int failed;
} worker_arg;

static void next_round(shared *sh) {
  if (pthread_barrier_wait(&sh->round) == PTHREAD_BARRIER_SERIAL_THREAD) {
    sh->go = sh->rounds < MAX_ROUNDS &&
             (sh->rounds < ROUNDS || atomic_load(&sh->contended) < CONTENDED);
    sh->rounds += sh->go;
  }
  pthread_barrier_wait(&sh->round);
}

static void *draw(void *p) {
  worker_arg *a = p;
  shared *sh = a->sh;
  for (next_round(sh); sh->go; next_round(sh)) {
    for (size_t end = a->n + BURST; a->n < end && !a->failed;) {
      uint_fast64_t before = atomic_fetch_add(&sh->draws, 1);
      int64_t got;
      if (a->batch) {
        size_t want = end - a->n < (size_t)a->batch ? end - a->n : (size_t)a->batch;
        got = idgen__segment_next_batch(a->seg, a->out + a->n, want);
      } else {
        int rc = idgen__segment_next(a->seg, a->out + a->n);
        got = rc ? rc : 1;
      }
      if (got > 0 && atomic_load(&sh->draws) != before + 1)
        atomic_fetch_add(&sh->contended, (uint_fast64_t)got);
      if (got == IDGEN_EBACKEND) { /* the backend is down: refused, try again */
        a->refused++;
        continue;
      }
      if (got <= 0)
        a->failed = (int)got; /* still at each barrier, so that the others finish */
      else
        a->n += (size_t)got;
    }
  }
  return NULL;
}

typedef struct flapper_arg {
  mem_backend *backend;
  atomic_int stop;
} flapper_arg;

/* Takes the backend down for 2 ms out of every 5 until told to stop. */
static void *flap(void *p) {
  flapper_arg *f = p;
  while (!atomic_load(&f->stop)) {
    struct timespec up = {0, 3000000}, down = {0, 2000000};
    nanosleep(&up, NULL);
    atomic_store(&f->backend->fail, IDGEN_EUNAVAIL);
    nanosleep(&down, NULL);
    atomic_store(&f->backend->fail, 0);
  }
  return NULL;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

static void run(int batch, int flapping) {
  mem_backend m;
  mem_setup(&m);
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &m.base, &clock.base);
  c.step = 100; /* small blocks: many switches and prefetches */
  c.max_step = 1000;
  c.retry_ns = 1000000;
  idgen__segment *seg;
  char err[256];
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), 0);

  uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
  assert_non_null(all);
  pthread_t threads[THREADS], flapper;
  worker_arg args[THREADS];
  shared sh = {.go = 0};
  assert_int_equal(pthread_barrier_init(&sh.round, NULL, THREADS), 0);
  flapper_arg fa = {.backend = &m};
  if (flapping)
    assert_int_equal(pthread_create(&flapper, NULL, flap, &fa), 0);
  for (int i = 0; i < THREADS; i++) {
    args[i] = (worker_arg){
        .seg = seg, .sh = &sh, .out = all + (size_t)i * PER_THREAD, .batch = batch};
    assert_int_equal(pthread_create(&threads[i], NULL, draw, &args[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&sh.round);
  if (flapping) {
    atomic_store(&fa.stop, 1);
    pthread_join(flapper, NULL);
  }
  size_t total = 0;
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(args[i].failed, 0);
    assert_int_equal(args[i].n, (size_t)sh.rounds * BURST);
    for (size_t k = 1; k < args[i].n; k++)
      assert_true(args[i].out[k] > args[i].out[k - 1]);
    memmove(all + total, args[i].out, args[i].n * sizeof *all);
    total += args[i].n;
  }
  printf("%d rounds, %zu numbers, %llu numbers drawn while another thread drew\n",
         sh.rounds, total, (unsigned long long)atomic_load(&sh.contended));
  qsort(all, total, sizeof *all, cmp_u64);
  for (size_t k = 1; k < total; k++)
    assert_true(all[k] != all[k - 1]);
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.issued, (uint64_t)total);
  free(all);
  idgen__segment_free(seg);
}

static void test_single(void **state) {
  (void)state;
  run(0, 0);
}

static void test_batches(void **state) {
  (void)state;
  run(37, 0);
}

static void test_backend_flapping(void **state) {
  (void)state;
  run(0, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single),
      cmocka_unit_test(test_batches),
      cmocka_unit_test(test_backend_flapping),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
