/* test_collide.c: the collision figures idgen collide prints, against hand-worked
 * values (10^6 IDs/s for a year of 365.25 days). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "idgen.h"

#define RATE 1e6
#define YEAR IDGEN_SECONDS_PER_YEAR

static void expect_one_in(idgen_scheme s, double lo, double hi) {
  idgen_collide_result r;
  assert_int_equal(idgen_collide(s, RATE, YEAR, &r), 0);
  if (!(r.one_in >= lo && r.one_in <= hi))
    fail_msg("%s: 1 in %.6g, want [%.4g, %.4g]", idgen_scheme_name(s), r.one_in, lo, hi);
}

static void test_issue_figures(void **state) {
  (void)state;
  /* n = 3.15576e13; n^2 / 2^123 = 9.365e-11: 1 in 1.068e10. */
  expect_one_in(IDGEN_SCHEME_UUIDV4, 1.065e10, 1.075e10);
  /* k = 1000 per ms; 10^6 / 2^81 per ms over 3.15576e10 ms = 1.305e-8: 1 in 7.66e7. */
  expect_one_in(IDGEN_SCHEME_ULID, 7.6e7, 7.75e7);
  /* 10^6 / 2^75 per ms over 3.15576e10 ms = 8.353e-7: 1 in 1.197e6. */
  expect_one_in(IDGEN_SCHEME_UUIDV7, 1.19e6, 1.21e6);
  idgen_collide_result r;
  assert_int_equal(idgen_collide(IDGEN_SCHEME_SNOWFLAKE, RATE, YEAR, &r), 0);
  assert_true(r.probability == 0);
  assert_true(isinf(r.one_in));
}

static void test_details(void **state) {
  (void)state;
  idgen_collide_result r;
  assert_int_equal(idgen_collide(IDGEN_SCHEME_UUIDV7, RATE, YEAR, &r), 0);
  assert_int_equal(r.random_bits, 74);
  assert_true(fabs(r.ids - 3.15576e13) < 1);
  assert_true(fabs(r.windows - 3.15576e10) < 1);
  assert_true(fabs(r.ids_per_window - 1000) < 1e-9);
  assert_true(fabs(r.p_window / (1e6 / ldexp(1, 75)) - 1) < 1e-12);
  /* Small: the sum over ms equals windows * p to many digits. */
  assert_true(fabs(r.probability / (r.windows * r.p_window) - 1) < 1e-6);
}

static void test_birthday(void **state) {
  (void)state;
  /* n = 2^61 of 122 bits: n^2 / 2^123 = 1/2. */
  assert_true(fabs(idgen_birthday(ldexp(1, 61), 122) - (1 - exp(-0.5))) < 1e-15);
  /* Tiny values keep their digits (1 - exp(-x) would round to 0). */
  assert_true(fabs(idgen_birthday(1, 122) / ldexp(1, -123) - 1) < 1e-12);
  assert_true(idgen_birthday(0, 64) == 0);
  /* Huge n: certain, and no overflow on the way. */
  assert_true(idgen_birthday(1e300, 122) == 1);
  assert_true(isnan(idgen_birthday(-1, 64)));
  assert_true(isnan(idgen_birthday(1, 0)));
  /* Saturation for time-prefixed schemes: a million per ms with 8 random bits. */
  assert_int_equal(idgen_scheme_random_bits(IDGEN_SCHEME_ULID), 80);
  idgen_collide_result r;
  assert_int_equal(idgen_collide(IDGEN_SCHEME_ULID, 1e30, YEAR, &r), 0);
  assert_true(r.probability > 0.999999 && r.probability <= 1);
}

static void test_bad_input(void **state) {
  (void)state;
  idgen_collide_result r = {.ids = 42};
  assert_int_equal(idgen_collide(IDGEN_SCHEME_UUIDV4, -1, YEAR, &r), IDGEN_EINVAL);
  assert_int_equal(idgen_collide(IDGEN_SCHEME_UUIDV4, NAN, YEAR, &r), IDGEN_EINVAL);
  assert_int_equal(idgen_collide(IDGEN_SCHEME_UUIDV4, RATE, INFINITY, &r), IDGEN_EINVAL);
  assert_int_equal(idgen_collide((idgen_scheme)9, RATE, YEAR, &r), IDGEN_EINVAL);
  assert_int_equal(idgen_collide(IDGEN_SCHEME_UUIDV4, RATE, YEAR, NULL), IDGEN_EINVAL);
  assert_true(r.ids == 42);
  idgen_scheme s;
  assert_int_equal(idgen_scheme_parse("uuidv7", &s), 0);
  assert_int_equal(s, IDGEN_SCHEME_UUIDV7);
  assert_int_equal(idgen_scheme_parse("UUIDv7", &s), IDGEN_EINVAL);
  assert_string_equal(idgen_scheme_name(IDGEN_SCHEME_SNOWFLAKE), "snowflake");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_issue_figures),
      cmocka_unit_test(test_details),
      cmocka_unit_test(test_birthday),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
