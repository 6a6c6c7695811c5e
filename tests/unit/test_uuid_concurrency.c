/* test_uuid_concurrency.c: one v7 generator and one monotonic ULID generator shared by
 * several threads, on the real clock and on a fake clock another thread keeps jumping
 * back and forth: each thread's values strictly increase, and no value repeats. Runs
 * under TSan too. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"

#define THREADS 4
#define PER_THREAD 20000
#define MS 1000000LL

typedef struct job {
  idgen_uuid7_gen *gen7;
  idgen_ulid_gen *genu;
  idgen_random *rnd; /* for v4 */
  uint8_t (*out)[16];
  int failures;
} job;

static void *run_v7(void *arg) {
  job *j = arg;
  for (size_t i = 0; i < PER_THREAD;) {
    if (i % 3 == 0 && PER_THREAD - i >= 10) {
      idgen_uuid batch[10];
      if (idgen_uuid7_next_batch(j->gen7, batch, 10) != 10)
        j->failures++;
      for (int k = 0; k < 10; k++)
        memcpy(j->out[i++], batch[k].b, 16);
    } else {
      idgen_uuid u;
      if (idgen_uuid7_next(j->gen7, &u) != 0)
        j->failures++;
      memcpy(j->out[i++], u.b, 16);
    }
  }
  return NULL;
}

static void *run_ulid(void *arg) {
  job *j = arg;
  for (size_t i = 0; i < PER_THREAD;) {
    if (i % 3 == 0 && PER_THREAD - i >= 10) {
      idgen_ulid batch[10];
      if (idgen_ulid_next_batch(j->genu, batch, 10) != 10)
        j->failures++;
      for (int k = 0; k < 10; k++)
        memcpy(j->out[i++], batch[k].b, 16);
    } else {
      idgen_ulid u;
      if (idgen_ulid_next(j->genu, &u) != 0)
        j->failures++;
      memcpy(j->out[i++], u.b, 16);
    }
  }
  return NULL;
}

static void *run_v4(void *arg) {
  job *j = arg;
  for (size_t i = 0; i < PER_THREAD; i++) {
    idgen_uuid u;
    if (idgen_uuid4(j->rnd, &u) != 0)
      j->failures++;
    memcpy(j->out[i], u.b, 16);
  }
  return NULL;
}

typedef struct jumper {
  idgen_clock_fake *clock;
  _Atomic int stop;
} jumper;

/* Moves the fake clock forward and back (by up to a second) until told to stop. */
static void *run_jumper(void *arg) {
  jumper *jp = arg;
  int64_t steps[] = {MS / 3, -2 * MS, 5 * MS, -1000 * MS, 1000 * MS + 1, 250, -MS};
  for (unsigned i = 0; !atomic_load(&jp->stop); i++) {
    idgen_clock_fake_advance(jp->clock, steps[i % (sizeof steps / sizeof steps[0])]);
    sched_yield();
  }
  return NULL;
}

static int cmp16(const void *a, const void *b) {
  return memcmp(a, b, 16);
}

/* Runs fn on THREADS threads (plus the jumper if clock is set), then checks. */
static void run_and_check(void *(*fn)(void *), job proto, idgen_clock_fake *clock,
                          int ordered) {
  uint8_t(*all)[16] = malloc((size_t)THREADS * PER_THREAD * 16);
  assert_non_null(all);
  job jobs[THREADS];
  pthread_t tids[THREADS], jt;
  jumper jp = {clock, 0};
  if (clock)
    assert_int_equal(pthread_create(&jt, NULL, run_jumper, &jp), 0);
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = proto;
    jobs[t].out = all + (size_t)t * PER_THREAD;
    jobs[t].failures = 0;
    assert_int_equal(pthread_create(&tids[t], NULL, fn, &jobs[t]), 0);
  }
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_join(tids[t], NULL), 0);
  if (clock) {
    atomic_store(&jp.stop, 1);
    assert_int_equal(pthread_join(jt, NULL), 0);
  }
  for (int t = 0; t < THREADS; t++) {
    assert_int_equal(jobs[t].failures, 0);
    if (ordered)
      for (size_t i = 1; i < PER_THREAD; i++)
        assert_true(memcmp(jobs[t].out[i - 1], jobs[t].out[i], 16) < 0);
  }
  qsort(all, (size_t)THREADS * PER_THREAD, 16, cmp16);
  for (size_t i = 1; i < (size_t)THREADS * PER_THREAD; i++)
    assert_true(memcmp(all[i - 1], all[i], 16) < 0);
  free(all);
}

static void test_v7_threads(void **state) {
  (void)state;
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_clock_mono mono;
  idgen_clock_mono_init(&mono);
  idgen_uuid7_config cfg = {&mono.base, rnd};
  job proto = {0};
  assert_int_equal(idgen_uuid7_new(&proto.gen7, &cfg), 0);
  run_and_check(run_v7, proto, NULL, 1);
  idgen_uuid7_free(proto.gen7);

  idgen_clock_fake fake;
  idgen_clock_fake_init(&fake, 1700000000000LL * MS);
  cfg.clock = &fake.base;
  assert_int_equal(idgen_uuid7_new(&proto.gen7, &cfg), 0);
  run_and_check(run_v7, proto, &fake, 1);
  idgen_uuid7_free(proto.gen7);
  idgen_random_system_free(rnd);
}

static void test_ulid_threads(void **state) {
  (void)state;
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_clock_mono mono;
  idgen_clock_mono_init(&mono);
  idgen_ulid_config cfg = {&mono.base, rnd, 1};
  job proto = {0};
  assert_int_equal(idgen_ulid_new(&proto.genu, &cfg), 0);
  run_and_check(run_ulid, proto, NULL, 1);
  idgen_ulid_free(proto.genu);

  idgen_clock_fake fake;
  idgen_clock_fake_init(&fake, 1700000000000LL * MS);
  cfg.clock = &fake.base;
  assert_int_equal(idgen_ulid_new(&proto.genu, &cfg), 0);
  run_and_check(run_ulid, proto, &fake, 1);
  idgen_ulid_free(proto.genu);

  cfg.monotonic = 0; /* plain: unordered, but unique */
  assert_int_equal(idgen_ulid_new(&proto.genu, &cfg), 0);
  run_and_check(run_ulid, proto, &fake, 0);
  idgen_ulid_free(proto.genu);
  idgen_random_system_free(rnd);
}

static void test_v4_threads(void **state) {
  (void)state;
  job proto = {0};
  assert_int_equal(idgen_random_system_new(&proto.rnd), 0);
  run_and_check(run_v4, proto, NULL, 0);
  idgen_random_system_free(proto.rnd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_v7_threads),
      cmocka_unit_test(test_ulid_threads),
      cmocka_unit_test(test_v4_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
