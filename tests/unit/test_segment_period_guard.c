/* test_segment_period_guard.c: a period whose bounds do not hold the clock (the shape of
 * issue 35's Santiago bug: the day ends before the instants it holds) is refused
 * (IDGEN_EPERIOD, the reason said) and nothing is fetched for it, instead of the period
 * changing to itself without end. idgen__period_of is wrapped (-Wl,--wrap). */
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

int __real_idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                            uint64_t *number, int64_t *start_ms, int64_t *end_ms);
int __wrap_idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                            uint64_t *number, int64_t *start_ms, int64_t *end_ms);

/* The day ends 30 minutes before the clock, as Santiago's 5 September did. */
int __wrap_idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                            uint64_t *number, int64_t *start_ms, int64_t *end_ms) {
  (void)kind, (void)tz;
  *number = 20260905;
  *start_ms = unix_ms - 3600000;
  *end_ms = unix_ms - 1800000;
  return 0;
}

static int fetches;

static int gb_init(idgen__segment_backend *b, const char *key, uint64_t step,
                   uint64_t start_after, int force) {
  (void)b, (void)key, (void)step, (void)start_after, (void)force;
  return 0;
}

static int gb_fetch(idgen__segment_backend *b, const char *key, uint64_t step,
                    uint64_t floor, idgen__segment_block *out) {
  (void)b, (void)key, (void)floor;
  fetches++;
  *out = (idgen__segment_block){(uint64_t)fetches * step, step, 1};
  return 0;
}

static void gb_free(idgen__segment_backend *b) {
  (void)b;
}

static const idgen__segment_backend_class gb_class = {"guard", gb_init, gb_fetch,
                                                      gb_free, NULL,    NULL, NULL};

static void test_bounds_not_holding_the_clock(void **state) {
  (void)state;
  idgen__segment_backend be;
  memset(&be, 0, sizeof be);
  be.vtable = &gb_class;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, INT64_C(1788665400000) * MS); /* 2026-09-06T03:30Z */
  idgen__tz *tz;
  char err[256];
  assert_int_equal(idgen__tz_load("America/Santiago", &tz, err, sizeof err), 0);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &be, &clock.base);
  c.step = 10;
  c.max_step = 10;
  c.manual = 1;
  c.retry_ns = 0; /* every call may fetch again: none does */
  c.period = IDGEN__PERIOD_DAY;
  c.tz = tz;
  idgen__segment *seg;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), 0);
  for (int i = 0; i < 5; i++) {
    uint64_t v = 0, batch[2], first, count, stride;
    assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EPERIOD);
    assert_int_equal(idgen__segment_next_batch(seg, batch, 2), IDGEN_EPERIOD);
    assert_int_equal(idgen__segment_next_range(seg, 2, &first, &count, &stride),
                     IDGEN_EPERIOD);
    assert_true(idgen__segment_run_fetcher(seg) <= 0);
    idgen_clock_fake_advance(&clock, 1000 * MS);
  }
  assert_int_equal(fetches, 0);
  char why[256];
  idgen__segment_last_error(seg, why, sizeof why);
  assert_non_null(strstr(why, "does not hold the clock"));
  idgen__segment_free(seg);
  idgen__tz_free(tz);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bounds_not_holding_the_clock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
