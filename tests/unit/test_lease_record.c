/* test_lease_record.c: the holder record's own strict reader (record.c), which replaced
 * jansson in libidgen: it reads every record earlier versions wrote (state directories
 * and etcd keys carry over their HWM), a record it writes reads back the same, and
 * anything that is not one flat object of strings and integers is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lease/lease_internal.h"

static int parse(const char *text, idgen__record *r) {
  return idgen__record_parse(text, strlen(text), r);
}

/* A worker file as main wrote it before this change: the record, padded with spaces to
 * 511 bytes and a newline (idgen__hwm_file_write). */
static void test_reads_old_records(void **state) {
  (void)state;
  char file[512];
  const char *rec =
      "{\"hwm_ms\":\"1767225600123\",\"host\":\"node-7.example\",\"pid\":\"4242\","
      "\"start_ms\":\"1767225500000\",\"wall_ms\":\"1767225597000\"}";
  memset(file, ' ', sizeof file);
  memcpy(file, rec, strlen(rec));
  file[511] = '\n';
  idgen__record r;
  assert_int_equal(idgen__record_parse(file, sizeof file, &r), 0);
  assert_int_equal(r.hwm_ms, INT64_C(1767225600123));
  assert_string_equal(r.host, "node-7.example");
  assert_int_equal(r.pid, 4242);
  assert_int_equal(r.start_ms, INT64_C(1767225500000));
  assert_int_equal(r.wall_ms, INT64_C(1767225597000));
  assert_int_equal(r.datacenter, -1);
  assert_string_equal(r.region, "");
  /* with a datacenter and a region (the regions change), and as JSON numbers */
  assert_int_equal(
      parse(" {\"hwm_ms\":\"9\",\"host\":\"h\",\"pid\":\"1\",\"start_ms\":\"2\","
            "\"wall_ms\":\"3\",\"datacenter\":\"2\",\"region\":\"eu-west\"}\n",
            &r),
      0);
  assert_int_equal(r.datacenter, 2);
  assert_string_equal(r.region, "eu-west");
  assert_int_equal(parse("{ \"hwm_ms\" : 77 , \"pid\" : -1 }\r\n\t", &r), 0);
  assert_int_equal(r.hwm_ms, 77);
  assert_int_equal(r.pid, -1);
  /* a field a later version adds is passed over */
  assert_int_equal(parse("{\"hwm_ms\":\"5\",\"future\":\"x\",\"count\":12}", &r), 0);
  assert_int_equal(r.hwm_ms, 5);
}

static void test_round_trip(void **state) {
  (void)state;
  idgen__record a, b;
  idgen__record_self(&a, "host-1", 1000, 3, "us-east");
  a.hwm_ms = INT64_MAX;
  a.wall_ms = 12345;
  char text[512];
  int n = idgen__record_format(&a, text, sizeof text);
  assert_true(n > 0);
  assert_int_equal(idgen__record_parse(text, (size_t)n, &b), 0);
  assert_memory_equal(&a, &b, sizeof a);
  idgen__record_self(&a, "x\"y\\z", 0, -1, NULL); /* dropped, not escaped, when written */
  n = idgen__record_format(&a, text, sizeof text);
  assert_int_equal(idgen__record_parse(text, (size_t)n, &b), 0);
  assert_string_equal(b.host, "xyz");
}

static void test_refuses_anything_else(void **state) {
  (void)state;
  static const char *const bad[] = {
      "{}",                                  /* no HWM: corrupt, never HWM 0 */
      "{\"host\":\"h\"}",                    /* the same */
      "{\"hwm_ms\":\"-5\"}",                 /* a negative HWM */
      "{\"hwm_ms\":\"1\",\"hwm_ms\":\"2\"}", /* which one? */
      "{\"hwm_ms\":\"1\",\"host\":\"a\",\"host\":\"b\"}",
      "{\"hwm_ms\":\"1\",\"x\":\"a\",\"x\":\"b\"}", /* unknown keys too */
      "{\"hwm_ms\":1.5}",                           /* a fraction */
      "{\"hwm_ms\":1e3}",                           /* an exponent */
      "{\"hwm_ms\":01}",                            /* JSON has no leading zeros */
      "{\"hwm_ms\":\"12x\"}",                       /* not digits */
      "{\"hwm_ms\":\" 12\"}",                       /* strtoll took this; no more */
      "{\"hwm_ms\":\"+12\"}",                       /* nor this */
      "{\"hwm_ms\":\"\"}",                          /* nor an empty string */
      "{\"hwm_ms\":\"99999999999999999999\"}",      /* past int64 */
      "{\"hwm_ms\":\"9223372036854775808\"}",       /* INT64_MAX + 1 */
      "{\"hwm_ms\":true}",                          /* not a string or integer */
      "{\"hwm_ms\":null}",
      "{\"hwm_ms\":\"1\",\"x\":{}}", /* nothing nested, known or not */
      "{\"hwm_ms\":\"1\",\"x\":[1]}",
      "{\"hwm_ms\":\"1\",\"host\":7}",          /* a name must be a string */
      "{\"hwm_ms\":\"1\",\"host\":\"a\\\"b\"}", /* no escapes are ever written */
      "{\"hwm_ms\":\"1\",\"host\":\"a\tb\"}",   /* nor control bytes */
      "{\"hwm_ms\":\"1\"",                      /* unterminated */
      "{\"hwm_ms\":\"1}",
      "{\"hwm_ms\":\"1\",}",  /* a trailing comma */
      "{\"hwm_ms\" \"1\"}",   /* no colon */
      "{hwm_ms:1}",           /* unquoted key */
      "{\"hwm_ms\":\"1\"} x", /* after the object */
      "{\"hwm_ms\":\"1\"}{}",
      "[{\"hwm_ms\":\"1\"}]", /* not an object */
      "\"hwm_ms\"",
      "hwm_ms=1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    idgen__record r;
    memset(&r, 0xAB, sizeof r);
    idgen__record before = r;
    if (parse(bad[i], &r) != IDGEN_EFORMAT)
      fail_msg("accepted: %s", bad[i]);
    assert_memory_equal(&r, &before, sizeof r); /* untouched on failure */
  }
  idgen__record r;
  assert_int_equal(idgen__record_parse("", 0, &r), IDGEN_EEMPTY);
  assert_int_equal(idgen__record_parse("\0\0\0  \n", 6, &r), IDGEN_EEMPTY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reads_old_records),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_refuses_anything_else),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
