/* test_layout.c: presets, the spec grammar, validation errors, limits, compose/decompose,
 * and ISO time text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"

static idgen_layout parse_ok(const char *spec) {
  idgen_layout l;
  char err[160] = "";
  int rc = idgen_layout_parse(spec, strlen(spec), 0, &l, err, sizeof err);
  if (rc != 0)
    fail_msg("layout '%s' rejected: %s", spec, err);
  return l;
}

static void parse_fails(const char *spec, const char *reason_part) {
  idgen_layout l;
  char err[160] = "";
  assert_int_equal(
      idgen_layout_parse(spec, strlen(spec), INT64_C(1800000000000), &l, err, sizeof err),
      IDGEN_ELAYOUT);
  if (!strstr(err, reason_part))
    fail_msg("layout '%s': reason '%s' does not mention '%s'", spec, err, reason_part);
}

static void test_presets(void **state) {
  (void)state;
  for (const char *const *name = idgen_layout_preset_names(); *name; name++) {
    idgen_layout l;
    assert_int_equal(idgen_layout_preset(*name, &l), 0);
    assert_string_equal(l.name, *name);
    assert_true(l.time_bits + l.time_shift <= 63);
  }
  idgen_layout l = parse_ok("snowflake");
  assert_int_equal(l.epoch_ms, INT64_C(1767225600000));
  assert_int_equal(l.time_bits, 41);
  assert_int_equal(l.node_bits, 10);
  assert_int_equal(l.seq_bits, 12);
  assert_int_equal(l.time_shift, 22);
  l = parse_ok("twitter");
  assert_int_equal(l.epoch_ms, INT64_C(1288834974657));
  assert_string_equal(l.fields[1].name, "datacenter");
  assert_string_equal(l.fields[2].name, "worker");
  l = parse_ok("sonyflake");
  assert_int_equal(l.unit_ms, 10);
  assert_int_equal(l.epoch_ms, INT64_C(1409529600000));
  assert_int_equal(l.seq_shift, 16);
  assert_int_equal(l.fields[2].shift, 0);
  assert_string_equal(l.fields[2].name, "machine");
  l = parse_ok("js53");
  assert_int_equal(l.time_bits + l.time_shift, 53);
  assert_int_equal(idgen_layout_preset("nope", &l), IDGEN_EINVAL);
}

static void test_spec_grammar(void **state) {
  (void)state;
  idgen_layout l = parse_ok("time:41@1ms,worker:10,seq:12,epoch:2026-01-01");
  assert_int_equal(l.epoch_ms, INT64_C(1767225600000));
  assert_string_equal(l.name, "custom");
  l = parse_ok("time:39@10ms,sequence:8,machine:16,epoch:2014-09-01T00:00:00Z,name:sony");
  assert_string_equal(l.name, "sony");
  assert_int_equal(l.unit_ms, 10);
  l = parse_ok("time:31@1s,dc:4,node:8,seq:20,epoch:1700000000000");
  assert_int_equal(l.unit_ms, 1000);
  assert_int_equal(l.node_bits, 12);
  /* format and parse back give the same layout */
  char spec[256];
  assert_true(idgen_layout_format(&l, spec, sizeof spec) > 0);
  idgen_layout back = parse_ok(spec);
  assert_memory_equal(&back, &l, sizeof l);
  assert_int_equal(idgen_layout_format(&l, spec, 8), IDGEN_EBUFSIZE);
}

static void test_spec_errors(void **state) {
  (void)state;
  parse_fails("", "empty");
  parse_fails("bogus", "unknown layout 'bogus'");
  parse_fails("time:41,worker:10,seq:13", "64 bits");
  parse_fails("time:41,worker:0,seq:12", "field 'worker'");
  parse_fails("time:41,worker:10", "'seq' is missing");
  parse_fails("worker:10,time:41,seq:12", "'time' must come first");
  parse_fails("time:41,seq:12", "node fields");
  parse_fails("time:41,a:1,b:1,c:1,seq:12", "");
  parse_fails("time:41,a:2,seq:4,b:2", "adjacent");
  parse_fails("time:41@5ms,worker:10,seq:12", "unit '5ms'");
  parse_fails("time:41,worker@1ms:10,seq:12", "");
  parse_fails("time:41,worker:x,seq:12", "field 'worker'");
  parse_fails("time:41,worker:10,seq:12,epoch:2099-01-01", "future");
  parse_fails("time:41,worker:10,seq:12,epoch:2026-02-30", "epoch");
  parse_fails("time:41,worker:10,,seq:12", "empty item");
  parse_fails("time:55@1s,worker:4,seq:4", "year 9999");
  parse_fails("time:48@1ms,worker:4,seq:4", "year 9999");
  parse_fails("time:41,worker:10,worker:3,seq:12", "twice");
  parse_fails("time:41,9lives:10,seq:12", "field name");
}

static void test_limits(void **state) {
  (void)state;
  idgen_layout l = parse_ok("snowflake");
  char when[32];
  /* 2^41 ms after 2026-01-01 */
  assert_int_equal(idgen_layout_end_ms(&l), INT64_C(1767225600000) + (INT64_C(1) << 41));
  idgen_format_time(idgen_layout_end_ms(&l), when, sizeof when);
  assert_string_equal(when, "2095-09-07T15:47:35.552Z");
  /* IDs pass 2^53 about 25 days after the epoch: 2^31 ms */
  assert_int_equal(idgen_layout_js_unsafe_ms(&l),
                   INT64_C(1767225600000) + (INT64_C(1) << 31));
  assert_int_equal(idgen_layout_max_worker(&l), 1023);
  assert_true(idgen_layout_ids_per_second(&l) == 4096000.0);
  l = parse_ok("js53");
  assert_int_equal(idgen_layout_js_unsafe_ms(&l), INT64_MAX);
  l = parse_ok("sonyflake");
  assert_true(idgen_layout_ids_per_second(&l) == 25600.0);
  /* Sonyflake: 2^39 units of 10 ms from 2014-09-01 = about 174 years */
  assert_int_equal(idgen_layout_end_ms(&l),
                   INT64_C(1409529600000) + (INT64_C(1) << 39) * 10);
}

static void test_compose_decompose(void **state) {
  (void)state;
  for (const char *const *name = idgen_layout_preset_names(); *name; name++) {
    idgen_layout l;
    idgen_layout_preset(*name, &l);
    idgen_parts p = {.ticks = (UINT64_C(1) << l.time_bits) - 1,
                     .worker = idgen_layout_max_worker(&l),
                     .seq = (UINT64_C(1) << l.seq_bits) - 1};
    uint64_t id;
    assert_int_equal(idgen_compose(&l, &p, &id), 0);
    assert_int_equal(id, (UINT64_C(1) << (l.time_bits + l.time_shift)) - 1);
    idgen_parts back;
    assert_int_equal(idgen_decompose(&l, id, &back), 0);
    assert_int_equal(back.ticks, p.ticks);
    assert_int_equal(back.worker, p.worker);
    assert_int_equal(back.seq, p.seq);
    p.seq++;
    assert_int_equal(idgen_compose(&l, &p, &id), IDGEN_ERANGE);
    assert_int_equal(idgen_decompose(&l, UINT64_C(1) << 63, &back), IDGEN_ERANGE);
  }
  idgen_layout l = parse_ok("twitter");
  idgen_parts p = {.ticks = 5, .worker = (3 << 5) | 7, .seq = 9};
  uint64_t id;
  assert_int_equal(idgen_compose(&l, &p, &id), 0);
  assert_int_equal(id, (UINT64_C(5) << 22) | (UINT64_C(3) << 17) | (UINT64_C(7) << 12) | 9);
  idgen_parts back;
  idgen_decompose(&l, id, &back);
  assert_int_equal(back.node[0], 3);
  assert_int_equal(back.node[1], 7);
  assert_int_equal(back.time_ms, INT64_C(1288834974657) + 5);
  /* Sonyflake: sequence above machine */
  l = parse_ok("sonyflake");
  p = (idgen_parts){.ticks = 2, .worker = 0xBEEF, .seq = 3};
  idgen_compose(&l, &p, &id);
  assert_int_equal(id, (UINT64_C(2) << 24) | (UINT64_C(3) << 16) | 0xBEEF);
}

static void test_time_text(void **state) {
  (void)state;
  char buf[32];
  assert_int_equal(idgen_format_time(0, buf, sizeof buf), 24);
  assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
  idgen_format_time(INT64_C(1767225600000), buf, sizeof buf);
  assert_string_equal(buf, "2026-01-01T00:00:00.000Z");
  idgen_format_time(INT64_C(951782400123), buf, sizeof buf);
  assert_string_equal(buf, "2000-02-29T00:00:00.123Z");
  assert_int_equal(idgen_format_time(0, buf, 24), IDGEN_EBUFSIZE);
  int64_t ms;
  assert_int_equal(idgen_parse_time("2000-02-29T00:00:00.123Z", 24, &ms), 0);
  assert_int_equal(ms, INT64_C(951782400123));
  assert_int_equal(idgen_parse_time("2014-09-01", 10, &ms), 0);
  assert_int_equal(ms, INT64_C(1409529600000));
  assert_int_equal(idgen_parse_time("2014-09-01T01:02:03Z", 20, &ms), 0);
  assert_int_equal(ms, INT64_C(1409529600000) + 3723000);
  assert_int_equal(idgen_parse_time("2001-02-29", 10, &ms), IDGEN_EOVERFLOW);
  assert_int_equal(idgen_parse_time("2001-13-01", 10, &ms), IDGEN_EOVERFLOW);
  assert_int_equal(idgen_parse_time("2001-1-01", 9, &ms), IDGEN_ELENGTH);
  assert_int_equal(idgen_parse_time("2001/01/01", 10, &ms), IDGEN_EFORMAT);
  assert_int_equal(idgen_parse_time("2001-01-0x", 10, &ms), IDGEN_ECHAR);
  assert_int_equal(idgen_parse_time("2001-01-01T24:00:00Z", 20, &ms), IDGEN_EOVERFLOW);
  assert_int_equal(idgen_parse_time("2001-01-01T00:00:00+", 20, &ms), IDGEN_EFORMAT);
  assert_int_equal(idgen_parse_time("", 0, &ms), IDGEN_EEMPTY);
}

static void test_errors_named(void **state) {
  (void)state;
  assert_string_equal(idgen_err_name(IDGEN_ELEASE), "IDGEN_ELEASE");
  assert_string_equal(idgen_strerror(IDGEN_ECAP),
                      "high-water mark cap reached: not issuing");
  assert_string_equal(idgen_err_name(-2), "ENOENT");
  assert_string_equal(idgen_strerror(-2), "No such file or directory");
  assert_string_equal(idgen_err_name(-99999), "UNKNOWN");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_presets),           cmocka_unit_test(test_spec_grammar),
      cmocka_unit_test(test_spec_errors),       cmocka_unit_test(test_limits),
      cmocka_unit_test(test_compose_decompose), cmocka_unit_test(test_time_text),
      cmocka_unit_test(test_errors_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
