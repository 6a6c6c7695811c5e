/* test_gen_concurrency.c: threads drawing from one generator never see a repeat, each
 * thread's IDs increase, and re-arming under load keeps both true. Runs under TSan. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"

#define THREADS 4
#define PER_THREAD 250000 /* 10^6 IDs in all */

typedef struct worker_arg {
  idgen_gen *gen;
  uint64_t *ids;
  int batch; /* draw in batches of this size, or singly if 0 */
  int failed;
} worker_arg;

static void *draw(void *p) {
  worker_arg *a = p;
  for (size_t n = 0; n < PER_THREAD;) {
    if (a->batch) {
      size_t want = PER_THREAD - n < (size_t)a->batch ? PER_THREAD - n : (size_t)a->batch;
      int64_t got = idgen_gen_next_batch(a->gen, a->ids + n, want);
      if (got <= 0) {
        a->failed = (int)got;
        return NULL;
      }
      n += (size_t)got;
    } else {
      int rc = idgen_gen_next(a->gen, a->ids + n);
      if (rc) {
        a->failed = rc;
        return NULL;
      }
      n++;
    }
  }
  return NULL;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

typedef struct rearm_arg {
  idgen_gen *gen;
  atomic_int stop;
} rearm_arg;

/* Re-arms the same worker again and again and raises the cap, as a lease renewal
 * would: readers must either finish inside one armed period or retry. */
static void *rearm(void *p) {
  rearm_arg *a = p;
  while (!atomic_load(&a->stop)) {
    idgen_gen_arm(a->gen, 3, 0, IDGEN_NO_CAP, IDGEN_NO_DEADLINE);
    idgen_gen_set_cap(a->gen, IDGEN_NO_CAP);
    idgen_gen_set_deadline(a->gen, IDGEN_NO_DEADLINE);
  }
  return NULL;
}

static void run(int with_rearm, int batch) {
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock.base);
  c.worker = 3;
  idgen_gen *gen;
  assert_int_equal(idgen_gen_new(&gen, &c), 0);
  uint64_t *all = malloc(sizeof *all * THREADS * PER_THREAD);
  worker_arg args[THREADS];
  pthread_t tids[THREADS], rearmer;
  rearm_arg ra = {gen, 0};
  if (with_rearm)
    pthread_create(&rearmer, NULL, rearm, &ra);
  for (int i = 0; i < THREADS; i++) {
    args[i] = (worker_arg){gen, all + (size_t)i * PER_THREAD, i % 2 ? batch : 0, 0};
    pthread_create(&tids[i], NULL, draw, &args[i]);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(tids[i], NULL);
  if (with_rearm) {
    atomic_store(&ra.stop, 1);
    pthread_join(rearmer, NULL);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(args[i].failed, 0);
    for (size_t n = 1; n < PER_THREAD; n++)
      assert_true(args[i].ids[n] > args[i].ids[n - 1]);
  }
  qsort(all, THREADS * PER_THREAD, sizeof *all, cmp_u64);
  for (size_t n = 1; n < THREADS * PER_THREAD; n++)
    if (all[n] == all[n - 1])
      fail_msg("duplicate ID %llu", (unsigned long long)all[n]);
  idgen_gen_stats s;
  idgen_gen_stats_get(gen, &s);
  assert_true(s.issued >= THREADS * PER_THREAD);
  free(all);
  idgen_gen_free(gen);
}

static void test_threads_singles_and_batches(void **state) {
  (void)state;
  run(0, 1000);
}

static void test_threads_while_rearming(void **state) {
  (void)state;
  run(1, 37);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_singles_and_batches),
      cmocka_unit_test(test_threads_while_rearming),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
