/* test_segment_format.c: a period generator's text form (issue 28): made from the
 * integer, read back strictly, and the templates refused at config time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Issue 35 item 6: the history file of the formats a generator has served. */
#define HEAD IDGEN_SEG_HISTORY_HEADER
static void test_history_parse(void **state) {
  (void)state;
  static idgen__seg_history h;
  const char *good = HEAD "day 6 X{date:%Y%j}{seq:07}\nmonth 4 {name}/{date:%Y%m}-{seq:05}\n";
  char err[300] = "";
  assert_int_equal(idgen__seg_history_parse(&h, good, strlen(good), "orders", err, sizeof err),
                   0);
  assert_int_equal(h.n, 2);
  assert_string_equal(h.formats[0].template_text, "X{date:%Y%j}{seq:07}");
  assert_true(h.formats[0].period == IDGEN__PERIOD_DAY && h.formats[0].mult == 1000000);
  assert_true(h.formats[1].period == IDGEN__PERIOD_MONTH && h.formats[1].mult == 10000);
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"", "line 1: not 'idgen segment format history 1'"},
      {"idgen segment format history 2\nday 6 X{date:%Y%m%d}{seq:06}\n", "line 1: not"},
      {HEAD, "no format after the header"},
      {HEAD "day 6 X{date:%Y%m%d}{seq:06}", "line 2: no end of line"},
      {HEAD "day 6 X{date:%Y%m%d}{seq:06}\nday 6 Y{date:%Y%m%d}{se", "line 3: no end of line"},
      {HEAD "week 6 X{date:%Y%m%d}{seq:06}\n", "line 2: 'week' is not a period"},
      {HEAD "none 6 X{date:%Y%m%d}{seq:06}\n", "line 2: 'none' is not a period"},
      {HEAD "day 0 X{date:%Y%m%d}{seq:06}\n", "line 2: digits '0'"},
      {HEAD "day 19 X{date:%Y%m%d}{seq:06}\n", "line 2: digits '19'"},
      {HEAD "day 06 X{date:%Y%m%d}{seq:06}\n", "line 2: digits '06'"},
      {HEAD "day x X{date:%Y%m%d}{seq:06}\n", "line 2: digits 'x'"},
      {HEAD "day 6\n", "line 2: not 'PERIOD DIGITS TEMPLATE'"},
      {HEAD "day 6 \n", "line 2: not 'PERIOD DIGITS TEMPLATE'"},
      {HEAD "day 6 X{nosuch}{seq:06}\n", "line 2: format:"},
      {HEAD "day 7 X{date:%Y%m%d}{seq:06}\n", "line 2: format:"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    h.n = 9;
    assert_int_equal(idgen__seg_history_parse(&h, bad[i].text, strlen(bad[i].text), "orders",
                                              err, sizeof err),
                     IDGEN_EFORMAT);
    if (!strstr(err, bad[i].why))
      print_error("case %zu: '%s' lacks '%s'\n", i, err, bad[i].why);
    assert_non_null(strstr(err, bad[i].why));
    assert_null(strchr(err, '\n'));
    assert_int_equal(h.n, 0);
  }
  /* A NUL inside a line. */
  const char nul[] = HEAD "day 6 X{date:%Y%m%d}\0{seq:06}\n";
  assert_int_equal(idgen__seg_history_parse(&h, nul, sizeof nul - 1, "orders", err, sizeof err),
                   IDGEN_EFORMAT);
  assert_non_null(strstr(err, "line 2: a NUL byte"));
}

static void test_history_conflict(void **state) {
  (void)state;
  static idgen__seg_history h;
  h.n = 0;
  h.formats[h.n++] = compiled("P{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_DAY, 6);
  h.formats[h.n++] = compiled("Q{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_DAY, 6);
  /* A' coincides with the first format only, not with the last. */
  idgen__seg_format a2 = compiled("P{date:%Y%j}{seq:07}", IDGEN__PERIOD_DAY, 6);
  assert_ptr_equal(idgen__seg_history_conflict(&h, &a2), &h.formats[0]);
  /* A format served before, again: its own texts, no conflict. */
  idgen__seg_format a = compiled("P{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_DAY, 6);
  assert_null(idgen__seg_history_conflict(&h, &a));
  assert_int_equal(idgen__seg_history_has(&h, &a), 1);
  /* The same template with other digits: the same text for another number. */
  idgen__seg_format d = compiled("P{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_DAY, 5);
  assert_int_equal(idgen__seg_history_has(&h, &d), 0);
  assert_ptr_equal(idgen__seg_history_conflict(&h, &d), &h.formats[0]);
  /* The same template, another period kind (a month's date written as a day's). */
  idgen__seg_format m = compiled("Q{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_MONTH, 6);
  assert_ptr_equal(idgen__seg_history_conflict(&h, &m), &h.formats[1]);
  /* A distinct prefix. */
  idgen__seg_format r = compiled("R{date:%Y%j}{seq:07}", IDGEN__PERIOD_DAY, 6);
  assert_null(idgen__seg_history_conflict(&h, &r));
}

static void test_history_file(void **state) {
  (void)state;
  char dir[] = "/tmp/idgen-history-XXXXXX", path[64], err[300] = "";
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/formats-orders", dir);
  static idgen__seg_history h, back;
  assert_int_equal(idgen__seg_history_load(&h, path, "orders", err, sizeof err), 0);
  assert_int_equal(h.n, 0);
  idgen__seg_format a = compiled("P{date:%Y%m%d}{seq:06}", IDGEN__PERIOD_DAY, 6);
  idgen__seg_format b = compiled("{name}{date:%Y%j}{seq:07}", IDGEN__PERIOD_DAY, 6);
  assert_int_equal(idgen__seg_history_add(&h, &a, path, err, sizeof err), 1);
  assert_int_equal(idgen__seg_history_add(&h, &a, path, err, sizeof err), 0);
  assert_int_equal(idgen__seg_history_add(&h, &b, path, err, sizeof err), 1);
  assert_int_equal(idgen__seg_history_load(&back, path, "orders", err, sizeof err), 1);
  assert_int_equal(back.n, 2);
  assert_string_equal(back.formats[1].template_text, "{name}{date:%Y%j}{seq:07}");
  /* A file cut short is refused, never read as a shorter history. */
  assert_int_equal(truncate(path, 40), 0);
  assert_true(idgen__seg_history_load(&back, path, "orders", err, sizeof err) < 0);
  assert_non_null(strstr(err, "no end of line"));
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_strict_parse),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_overlap),
      cmocka_unit_test(test_history_parse),
      cmocka_unit_test(test_history_conflict),
      cmocka_unit_test(test_history_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
