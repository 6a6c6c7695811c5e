/* test_segment_period_concurrency.c: four threads draw numbers of a period generator
 * (with its fetcher thread) while the fake clock crosses midnight at least three times: no
 * number twice, each thread's numbers rise and never go back to an earlier day, and every
 * number's day is one the clock showed. Labelled for the TSan run. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_clock.h"
#include "segment/segment.h"

#define MS INT64_C(1000000)
#define DAY_MS INT64_C(86400000)
#define MIDNIGHT_MS INT64_C(1796083200000) /* 2026-12-01T00:00:00Z */
#define THREADS 4
#define PER_THREAD 20000

/* One counter per key, behind a mutex: the fetcher is the only caller, but TSan sees the
 * test read it too. */
typedef struct keys_backend {
  idgen__segment_backend base;
  pthread_mutex_t mu;
  char keys[8][IDGEN_SEGMENT_NAME_MAX + 1];
  uint64_t max[8];
  int nkeys;
} keys_backend;

static int find(keys_backend *k, const char *key) {
  for (int i = 0; i < k->nkeys; i++)
    if (!strcmp(k->keys[i], key))
      return i;
  return -1;
}

static int kb_init(idgen__segment_backend *b, const char *key, uint64_t step,
                   uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  keys_backend *k = (keys_backend *)b;
  (void)step, (void)start_after;
  pthread_mutex_lock(&k->mu);
  int rc = 1;
  if (find(k, key) < 0 && k->nkeys < 8) {
    snprintf(k->keys[k->nkeys], sizeof k->keys[0], "%s", key);
    k->max[k->nkeys++] = 0;
    rc = 0;
  }
  pthread_mutex_unlock(&k->mu);
  return rc;
}

static int kb_fetch(idgen__segment_backend *b, const char *key, uint64_t step,
                    uint64_t floor, idgen__segment_block *out) {
  keys_backend *k = (keys_backend *)b;
  (void)floor;
  pthread_mutex_lock(&k->mu);
  int i = find(k, key), rc = 0;
  if (i < 0) {
    rc = idgen__segment_why(b, -2, "no key %s", key);
  } else {
    k->max[i] += step;
    *out = (idgen__segment_block){k->max[i], step, 1};
  }
  pthread_mutex_unlock(&k->mu);
  return rc;
}

static void kb_free(idgen__segment_backend *b) {
  (void)b;
}

static const idgen__segment_backend_class kb_class = {"keys",  kb_init, kb_fetch,
                                                      kb_free, NULL,    NULL, NULL};

typedef struct worker {
  idgen__segment *seg;
  idgen_clock_fake *clock;
  uint64_t got[PER_THREAD];
  int64_t before_ms[PER_THREAD], after_ms[PER_THREAD];
  size_t n;
} worker;

static void *draw(void *arg) {
  worker *w = arg;
  while (w->n < PER_THREAD) {
    int64_t before = idgen_clock_now_ns(&w->clock->base) / MS;
    uint64_t v;
    int rc = idgen__segment_next(w->seg, &v);
    int64_t after = idgen_clock_now_ns(&w->clock->base) / MS;
    if (rc == 0) {
      w->got[w->n] = v;
      w->before_ms[w->n] = before;
      w->after_ms[w->n] = after;
      w->n++;
    }
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static const idgen__tz *utc;

static uint64_t day_of(int64_t ms) {
  uint64_t n = 0;
  int64_t start, end;
  assert_int_equal(idgen__period_of(IDGEN__PERIOD_DAY, utc, ms, &n, &start, &end), 0);
  return n;
}

static void test_threads_across_midnights(void **state) {
  (void)state;
  keys_backend k;
  memset(&k, 0, sizeof k);
  k.base.vtable = &kb_class;
  pthread_mutex_init(&k.mu, NULL);
  idgen_clock_fake clock;
  /* Every read moves the clock on: 20,000 numbers a thread cross a day in ~1,000 reads
   * of 1/40,000 of a day, so the four threads see several midnights. */
  idgen_clock_fake_init(&clock, (MIDNIGHT_MS - DAY_MS / 2) * MS);
  clock.auto_advance_ns = DAY_MS * MS / 40000;
  idgen__tz *tz;
  char err[256];
  assert_int_equal(idgen__tz_load("UTC", &tz, err, sizeof err), 0);
  utc = tz;
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &k.base, &clock.base);
  c.step = 50;
  c.max_step = 50;
  c.period = IDGEN__PERIOD_DAY;
  c.tz = tz;
  idgen__segment *seg;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), 0);
  static worker w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].seg = seg;
    w[i].clock = &clock;
    assert_int_equal(pthread_create(&t[i], NULL, draw, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
  assert_non_null(all);
  size_t n = 0;
  unsigned days_seen = 0;
  for (int i = 0; i < THREADS; i++)
    for (size_t j = 0; j < w[i].n; j++) {
      uint64_t v = w[i].got[j], day = v / 1000000;
      /* The number's day is one the clock showed during the call. */
      if (!(day >= day_of(w[i].before_ms[j]) && day <= day_of(w[i].after_ms[j])))
        print_error("thread %d #%zu: %llu between %lld and %lld ms\n", i, j,
                    (unsigned long long)v, (long long)w[i].before_ms[j],
                    (long long)w[i].after_ms[j]);
      assert_true(day >= day_of(w[i].before_ms[j]) && day <= day_of(w[i].after_ms[j]));
      if (j > 0)
        assert_true(v > w[i].got[j - 1]); /* rising, so never back to an earlier day */
      days_seen |= day == 20261130   ? 1u
                   : day == 20261201 ? 2u
                   : day == 20261202 ? 4u
                   : day == 20261203 ? 8u
                                     : 0u;
      all[n++] = v;
    }
  qsort(all, n, sizeof *all, cmp_u64);
  for (size_t i = 1; i < n; i++)
    assert_true(all[i] != all[i - 1]);
  if (days_seen != 0xf)
    print_error("days seen: %#x, last %llu\n", days_seen, (unsigned long long)all[n - 1]);
  assert_true(days_seen == 0xf);
  idgen__segment_stats st;
  idgen__segment_stats_get(seg, &st);
  print_message("%zu numbers, the last of day %llu; dropped %llu, burnt %llu\n", n,
                (unsigned long long)(all[n - 1] / 1000000),
                (unsigned long long)st.period_dropped, (unsigned long long)st.period_burnt);
  free(all);
  idgen__segment_free(seg);
  idgen__tz_free(tz);
  pthread_mutex_destroy(&k.mu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_across_midnights),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
