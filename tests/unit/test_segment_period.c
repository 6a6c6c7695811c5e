/* test_segment_period.c: time-scoped segment sequences (issue 28) on a fake clock over a
 * midnight: each period its own key from 1, the old period's blocks dropped, no number
 * handed out outside its period, a clock back across midnight refused, a full period
 * refused; periods and timezones (Europe/Berlin's DST) computed right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_clock.h"
#include "segment/segment.h"

#define MS INT64_C(1000000)
/* 2026-11-30T23:59:59.000Z */
#define BEFORE_MIDNIGHT_NS (INT64_C(1796083199000) * MS)

/* A backend in memory with one counter per key, and a log of the keys started. */
typedef struct keys_backend {
  idgen__segment_backend base;
  char keys[8][IDGEN_SEGMENT_NAME_MAX + 1];
  uint64_t max[8];
  int nkeys, starts, fetches;
  char last_fetch[IDGEN_SEGMENT_NAME_MAX + 1];
} keys_backend;

static int key_index(keys_backend *k, const char *key) {
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
  k->starts++;
  if (key_index(k, key) >= 0)
    return 1;
  snprintf(k->keys[k->nkeys], sizeof k->keys[0], "%s", key);
  k->max[k->nkeys++] = 0;
  return 0;
}

static int kb_fetch(idgen__segment_backend *b, const char *key, uint64_t step,
                    uint64_t floor, idgen__segment_block *out) {
  keys_backend *k = (keys_backend *)b;
  (void)floor;
  k->fetches++;
  snprintf(k->last_fetch, sizeof k->last_fetch, "%s", key);
  int i = key_index(k, key);
  if (i < 0)
    return idgen__segment_why(b, -2, "no key %s", key);
  k->max[i] += step;
  *out = (idgen__segment_block){k->max[i], step, 1};
  return 0;
}

static void kb_free(idgen__segment_backend *b) {
  (void)b;
}

static const idgen__segment_backend_class kb_class = {"keys",  kb_init, kb_fetch,
                                                      kb_free, NULL,    NULL, NULL};

typedef struct fixture {
  keys_backend k;
  idgen_clock_fake clock;
  idgen__tz *tz;
  idgen__segment *seg;
} fixture;

static void make(fixture *f, idgen__period_kind period, const char *zone, unsigned digits,
                 int64_t t_ns) {
  memset(&f->k, 0, sizeof f->k);
  f->k.base.vtable = &kb_class;
  idgen_clock_fake_init(&f->clock, t_ns);
  char err[256];
  assert_int_equal(idgen__tz_load(zone, &f->tz, err, sizeof err), 0);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &f->k.base, &f->clock.base);
  c.step = 10;
  c.max_step = 10;
  c.prefetch_pct = 0; /* the next block is fetched at once: one is always buffered */
  c.manual = 1;
  c.period = period;
  c.tz = f->tz;
  c.period_digits = digits;
  int rc = idgen__segment_new(&f->seg, &c, err, sizeof err);
  if (rc)
    print_error("new: %s\n", err);
  assert_int_equal(rc, 0);
}

static void done(fixture *f) {
  idgen__segment_free(f->seg);
  idgen__tz_free(f->tz);
}

static uint64_t next(fixture *f) {
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f->seg, &v), 0);
  return v;
}

static void test_midnight(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS);
  assert_true(next(&f) == UINT64_C(20261130000001));
  assert_true(next(&f) == UINT64_C(20261130000002));
  idgen__segment_run_fetcher(f.seg); /* the buffered block of 20261130: 11-20 */
  idgen__segment_stats st;
  idgen__segment_stats_get(f.seg, &st);
  assert_true(st.next_left == 10);
  assert_string_equal(f.k.last_fetch, "orders:20261130");
  /* 999 ms later: still the 30th. */
  idgen_clock_fake_advance(&f.clock, 999 * MS);
  assert_true(next(&f) == UINT64_C(20261130000003));
  /* Midnight: the 1st of December starts at 1, under its own key. The first call
   * reserves 4, finds it outside its period and burns it; the period change then drops
   * the 30th's current block (5-10) and its buffered one (11-20) at once, rather than
   * burning them one call at a time. */
  idgen_clock_fake_advance(&f.clock, 1 * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  assert_string_equal(f.k.keys[1], "orders:20261201");
  idgen__segment_stats_get(f.seg, &st);
  assert_true(st.period == 20261201);
  assert_true(st.period_burnt == 1);
  assert_true(st.period_dropped == 6 + 10);
  assert_true(next(&f) == UINT64_C(20261201000002));
  /* A batch across the next midnight: none of it has the old date after it. */
  idgen_clock_fake_set(&f.clock, (INT64_C(1796169600000) - 1) * MS); /* 23:59:59.999 */
  uint64_t batch[4];
  assert_int_equal(idgen__segment_next_batch(f.seg, batch, 2), 2);
  assert_true(batch[0] == UINT64_C(20261201000003));
  idgen_clock_fake_advance(&f.clock, MS);
  assert_int_equal(idgen__segment_next_batch(f.seg, batch, 4), 4);
  assert_true(batch[0] == UINT64_C(20261202000001) && batch[3] == UINT64_C(20261202000004));
  done(&f);
}

/* Numbers reserved before midnight and checked after are burnt, not handed out with the
 * old date: the fake clock moves on every read, so each reservation's check runs later
 * than its CAS. */
static void test_checked_after_the_reservation(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS + 999 * MS);
  assert_true(next(&f) / 1000000 == 20261130 || next(&f) / 1000000 == 20261201);
  f.clock.auto_advance_ns = MS / 2;
  for (int i = 0; i < 40; i++) {
    int64_t before = idgen_clock_now_ns(&f.clock.base);
    uint64_t v = next(&f);
    int64_t after = idgen_clock_now_ns(&f.clock.base);
    (void)before;
    /* The number's day is the day of a clock read between the call's start and end. */
    uint64_t day = v / 1000000;
    assert_true(day == 20261130 || day == 20261201);
    if (day == 20261130)
      assert_true(after - MS / 2 < INT64_C(1796083200000) * MS + MS);
  }
  done(&f);
}

static void test_clock_back_across_midnight(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS + 1000 * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  idgen_clock_fake_advance(&f.clock, -2000 * MS); /* back to the 30th */
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_ECLOCKBACK);
  assert_true(v == 0);
  /* Back on the 1st: the number reserved while the clock was behind was burnt. */
  idgen_clock_fake_advance(&f.clock, 2000 * MS);
  assert_true(next(&f) == UINT64_C(20261201000003));
  done(&f);
}

static void test_full_period(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_MONTH, "UTC", 1, BEFORE_MIDNIGHT_NS); /* 1-9 a month */
  for (uint64_t i = 1; i <= 9; i++)
    assert_true(next(&f) == UINT64_C(202611) * 10 + i);
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_EBACKEND);
  char why[256];
  idgen__segment_last_error(f.seg, why, sizeof why);
  assert_non_null(strstr(why, "period 202611 is full"));
  idgen_clock_fake_advance(&f.clock, 1000 * MS); /* December */
  assert_true(next(&f) == UINT64_C(2026121));
  done(&f);
}

/* Berlin: midnight of 1 December is 23:00Z the day before (CET, +1); of 1 July 22:00Z
 * (CEST, +2). The 30 November 23:30Z is 1 December in Berlin. */
static void test_timezone(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "Europe/Berlin", 6, (INT64_C(1796081400000)) * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  done(&f);
  idgen__tz *tz;
  char err[128];
  assert_int_equal(idgen__tz_load("Europe/Berlin", &tz, err, sizeof err), 0);
  uint64_t n;
  int64_t start, end;
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1796081400000), &n, &start, &end), 0);
  assert_true(n == 20261201 && start == INT64_C(1796079600000) && end == start + 86400000);
  /* 2026-07-01T12:00Z: the day began 2026-06-30T22:00Z. */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1782907200000), &n, &start, &end), 0);
  assert_true(n == 20260701 && start == INT64_C(1782856800000));
  /* 29 March 2026 has 23 hours in Berlin (clocks go forward at 02:00 CET). */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1774785600000), &n, &start, &end), 0);
  assert_true(n == 20260329 && end - start == 23 * INT64_C(3600000));
  /* A year, a month. */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_YEAR, tz, INT64_C(1782907200000), &n, &start, &end),
      0);
  assert_true(n == 2026 && start == INT64_C(1767222000000));
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_MONTH, tz, INT64_C(1782907200000), &n, &start, &end),
      0);
  assert_true(n == 202607 && end == INT64_C(1785535200000));
  idgen__tz_free(tz);
  assert_int_equal(idgen__tz_load("Mars/Olympus", &tz, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "Mars/Olympus"));
  assert_int_equal(idgen__tz_load("../etc/passwd", &tz, err, sizeof err), IDGEN_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_midnight),
      cmocka_unit_test(test_checked_after_the_reservation),
      cmocka_unit_test(test_clock_back_across_midnight),
      cmocka_unit_test(test_full_period),
      cmocka_unit_test(test_timezone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
