/* test_opaque_concurrency.c: one idgen_opaque shared by several threads that encode and
 * decode at once give exactly what one thread alone gives. More threads than the object
 * pools cipher contexts (8), so the ones that find none free copy one. Runs under TSan
 * too. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "idgen/opaque.h"

#define THREADS 16
#define PER_THREAD 10000

typedef struct job {
  const idgen_opaque *o;
  const uint64_t *ids, *want;
  int failures;
} job;

static void *run(void *arg) {
  job *j = arg;
  for (size_t i = 0; i < PER_THREAD; i++) {
    uint64_t out, back;
    if (idgen_opaque_encode(j->o, j->ids[i], &out) != 0 || out != j->want[i] ||
        idgen_opaque_decode(j->o, out, &back) != 0 || back != j->ids[i])
      j->failures++;
  }
  return NULL;
}

static void test_shared_object(void **state) {
  (void)state;
  uint8_t key[32];
  for (size_t i = 0; i < sizeof key; i++)
    key[i] = (uint8_t)(i * 7 + 1);
  idgen_opaque *o;
  assert_int_equal(idgen_opaque_new(&o, key, sizeof key, (const uint8_t *)"default", 7), 0);
  uint64_t *ids = malloc(PER_THREAD * sizeof *ids),
           *want = malloc(PER_THREAD * sizeof *want);
  assert_non_null(ids);
  assert_non_null(want);
  uint64_t x = 1;
  for (size_t i = 0; i < PER_THREAD; i++) {
    x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    ids[i] = x >> 1;
    assert_int_equal(idgen_opaque_encode(o, ids[i], &want[i]), 0);
  }
  pthread_t threads[THREADS];
  job jobs[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (job){o, ids, want, 0};
    assert_int_equal(pthread_create(&threads[t], NULL, run, &jobs[t]), 0);
  }
  for (int t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    assert_int_equal(jobs[t].failures, 0);
  }
  idgen_opaque_free(o);
  free(ids);
  free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shared_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
