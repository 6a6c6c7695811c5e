/* test_segment_format.c: a period generator's text form (issue 28): made from the
 * integer, read back strictly, and the templates refused at config time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "idgen/error.h"
#include "segment/format.h"

static idgen__seg_format compiled(const char *t, idgen__period_kind p, unsigned digits) {
  idgen__seg_format f;
  char err[200] = "";
  int rc = idgen__seg_format_compile(&f, t, "orders", p, digits, err, sizeof err);
  if (rc)
    print_error("%s: %s\n", t, err);
  assert_int_equal(rc, 0);
  return f;
}

static void round_trip(const idgen__seg_format *f, uint64_t v, const char *want) {
  char text[160];
  assert_int_equal(idgen__seg_format_text(f, v, text, sizeof text), (int)strlen(want));
  assert_string_equal(text, want);
  uint64_t back = 0, period = 0, n = 0;
  assert_int_equal(idgen__seg_format_parse(f, text, strlen(text), &back, &period, &n), 0);
  assert_true(back == v);
  assert_true(period == v / f->mult && n == v % f->mult);
}

static void test_round_trips(void **state) {
  (void)state;
  idgen__seg_format f = compiled("ORD-{date:%Y%m%d}-{seq:06}", IDGEN__PERIOD_DAY, 6);
  round_trip(&f, UINT64_C(20261201000123), "ORD-20261201-000123");
  round_trip(&f, UINT64_C(20261201999999), "ORD-20261201-999999");
  f = compiled("{name}/{date:%Y-%m}/{seq:08}", IDGEN__PERIOD_MONTH, 6);
  round_trip(&f, UINT64_C(202612000001), "orders/2026-12/00000001");
  f = compiled("INV{date:%Y}{seq:07}", IDGEN__PERIOD_YEAR, 7);
  round_trip(&f, UINT64_C(20260000042), "INV20260000042");
  f = compiled("T{date:%Y.%j}-{seq:04}%", IDGEN__PERIOD_DAY, 4);
  round_trip(&f, UINT64_C(202612310007), "T2026.365-0007%");
  f = compiled("{date:%Y%%%m%%%d}{seq:03}", IDGEN__PERIOD_DAY, 3);
  round_trip(&f, UINT64_C(20261229001), "2026%12%29001");
}

static void test_strict_parse(void **state) {
  (void)state;
  idgen__seg_format f = compiled("ORD-{date:%Y%m%d}-{seq:06}", IDGEN__PERIOD_DAY, 6);
  static const char *const bad[] = {
      "ORD-20261201-00012",   /* short */
      "ORD-20261201-0001234", /* long */
      "ord-20261201-000123",  /* literal case */
      "ORD-20261301-000123",  /* month 13 */
      "ORD-20260229-000123",  /* 2026 is no leap year */
      "ORD-20261201-000000",  /* numbers start at 1 */
      "ORD-2026120a-000123",  /* a letter */
      "ORD-19691231-000001",  /* before 1970 */
      "ORD-20261201-+00123",  /* a sign */
      "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t v = 7, p = 7, n = 7;
    assert_int_equal(idgen__seg_format_parse(&f, bad[i], strlen(bad[i]), &v, &p, &n),
                     IDGEN_EFORMAT);
    assert_true(v == 7 && p == 7 && n == 7);
  }
  /* %m twice must agree; %j must agree with %m and %d. */
  f = compiled("{date:%Y%m%d%m}{seq:02}", IDGEN__PERIOD_DAY, 2);
  uint64_t v, p, n;
  assert_int_equal(idgen__seg_format_parse(&f, "202612011201", 12, &v, &p, &n), 0);
  assert_int_equal(idgen__seg_format_parse(&f, "202612011101", 12, &v, &p, &n),
                   IDGEN_EFORMAT);
}

static void test_refused(void **state) {
  (void)state;
  static const struct {
    const char *t;
    idgen__period_kind p;
    unsigned digits;
    const char *why;
  } cases[] = {
      {"ORD-{date:%Y%m%d}-{seq:05}", IDGEN__PERIOD_DAY, 6, "cannot hold the largest"},
      {"ORD-{date:%y%m%d}-{seq:06}", IDGEN__PERIOD_DAY, 6, "%y cannot be read back"},
      {"ORD-{date:%b}-{seq:06}", IDGEN__PERIOD_MONTH, 6, "%b cannot be read back"},
      {"ORD-{date:%Y%m}-{seq:06}", IDGEN__PERIOD_DAY, 6, "cannot be read back to a day"},
      {"ORD-{date:%Y}-{seq:06}", IDGEN__PERIOD_MONTH, 6, "to a month"},
      {"ORD-{date:%Y%m%d}", IDGEN__PERIOD_DAY, 6, "exactly one {seq:0N}"},
      {"{seq:06}{seq:06}{date:%Y%m%d}", IDGEN__PERIOD_DAY, 6, "exactly one"},
      {"ORD-{date:%Y%m%d}-{seq:6}", IDGEN__PERIOD_DAY, 6, "unknown field {seq:6}"},
      {"ORD-{when}-{seq:06}", IDGEN__PERIOD_DAY, 6, "unknown field {when}"},
      {"ORD-{date:%Y%m%d-{seq:06}", IDGEN__PERIOD_DAY, 6, "'{' inside a field"},
      {"ORD}-{seq:06}{date:%Y}", IDGEN__PERIOD_YEAR, 6, "'}' without '{'"},
      {"ORD-{seq:06}", IDGEN__PERIOD_NONE, 6, "needs a period"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen__seg_format f;
    char err[200] = "";
    assert_int_equal(idgen__seg_format_compile(&f, cases[i].t, "orders", cases[i].p,
                                               cases[i].digits, err, sizeof err),
                     IDGEN_EINVAL);
    if (!strstr(err, cases[i].why))
      print_error("%s: '%s' lacks '%s'\n", cases[i].t, err, cases[i].why);
    assert_non_null(strstr(err, cases[i].why));
    assert_null(strchr(err, '\n'));
  }
}

/* Issue 35 item 6: whether two formats' texts can coincide. */
static int overlap(const char *a, const char *b) {
  idgen__seg_format fa = compiled(a, IDGEN__PERIOD_DAY, 6);
  idgen__seg_format fb = compiled(b, IDGEN__PERIOD_DAY, 6);
  int ab = idgen__seg_format_overlap(&fa, &fb), ba = idgen__seg_format_overlap(&fb, &fa);
  assert_int_equal(ab, ba);
  return ab;
}

static void test_overlap(void **state) {
  (void)state;
  /* The same format: its own texts. */
  assert_int_equal(overlap("X{date:%Y%m%d}{seq:06}", "X{date:%Y%m%d}{seq:06}"), 1);
  /* The report: 21 Jan's X2026021 0000001 and 10 Feb's X20260210 000001. */
  assert_int_equal(overlap("X{date:%Y%j}{seq:07}", "X{date:%Y%m%d}{seq:06}"), 1);
  /* A width change to the same length, and to another length. */
  assert_int_equal(overlap("X{date:%Y%m%d}{seq:07}", "X{date:%Y%m%d}-{seq:06}"), 0);
  assert_int_equal(overlap("X{date:%Y%m%d}{seq:06}", "X{date:%Y%m%d}{seq:07}"), 0);
  assert_int_equal(overlap("{date:%Y%m%d}{seq:07}", "X{date:%Y%m%d}{seq:06}"), 0);
  /* A literal prefix changed: distinct; a digit literal against a field: not. */
  assert_int_equal(overlap("X{date:%Y%m%d}{seq:06}", "Y{date:%Y%m%d}{seq:06}"), 0);
  assert_int_equal(overlap("1{date:%Y%m%d}{seq:06}", "{date:%Y%m%d}{seq:07}"), 1);
  assert_int_equal(overlap("X-{date:%Y%m%d}{seq:06}", "X{date:%Y%m%d}-{seq:06}"), 0);
  /* {name} is a literal: "orders". */
  assert_int_equal(overlap("{name}{date:%Y%m%d}{seq:06}", "orders{date:%Y%m%d}{seq:06}"), 1);
  assert_int_equal(overlap("{name}{date:%Y%m%d}{seq:06}", "orderz{date:%Y%m%d}{seq:06}"), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_strict_parse),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_overlap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
