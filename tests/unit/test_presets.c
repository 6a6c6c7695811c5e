/* test_presets.c: every preset decodes real IDs published by its system (the source of
 * each is cited beside it), and composes them back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"

static idgen_layout preset(const char *name) {
  idgen_layout l;
  assert_int_equal(idgen_layout_preset(name, &l), 0);
  return l;
}

/* Decomposes id, checks the time and the node fields, and composes it back. */
static idgen_parts expect_parts(const idgen_layout *l, uint64_t id, const char *iso,
                                uint64_t node0, uint64_t node1, uint64_t seq) {
  idgen_parts p;
  char when[32];
  assert_int_equal(idgen_decompose(l, id, &p), 0);
  assert_int_equal(idgen_format_time(p.time_ms, when, sizeof when), 24);
  assert_string_equal(when, iso);
  assert_true(p.node[0] == node0);
  assert_true(p.node[1] == node1);
  assert_true(p.seq == seq);
  uint64_t back = 0;
  assert_int_equal(idgen_compose(l, &p, &back), 0);
  assert_true(back == id);
  return p;
}

static void test_discord(void **state) {
  (void)state;
  idgen_layout l = preset("discord");
  /* Discord developer docs, "Reference" > "Snowflakes": 175928847299117063 is
   * 2016-04-30 11:18:25.796 UTC, internal worker ID 1, internal process ID 0,
   * increment 7. */
  idgen_parts p =
      expect_parts(&l, UINT64_C(175928847299117063), "2016-04-30T11:18:25.796Z", 1, 0, 7);
  assert_true(p.time_ms == INT64_C(1462015105796));
  assert_string_equal(l.fields[1].name, "worker");
  assert_string_equal(l.fields[2].name, "process");
  /* The epoch as documented there: 1420070400000, the first second of 2015. */
  assert_true(l.epoch_ms == INT64_C(1420070400000));
}

static void test_twitter(void **state) {
  (void)state;
  idgen_layout l = preset("twitter");
  /* Twitter API v1.1 docs, "Tweet object" example: id 1050118621198921728 with
   * "created_at": "Wed Oct 10 20:19:24 +0000 2018" (created_at has whole seconds). */
  idgen_parts p;
  assert_int_equal(idgen_decompose(&l, UINT64_C(1050118621198921728), &p), 0);
  assert_true(p.time_ms / 1000 == INT64_C(1539202764));
  /* Wikipedia, "Snowflake ID", Example: tweet 1541815603606036480 was posted at Unix
   * time 1656432460.105 (2022-06-28 16:07:40.105 UTC) by machine 378, sequence 0.
   * Twitter's machine is datacenter (5 bits) : worker (5 bits): 378 = 11 : 26. */
  p = expect_parts(&l, UINT64_C(1541815603606036480), "2022-06-28T16:07:40.105Z", 11, 26,
                   0);
  assert_true(p.worker == 378);
  assert_string_equal(l.fields[1].name, "datacenter");
  assert_string_equal(l.fields[2].name, "worker");
  /* The epoch in Twitter's snowflake source (IdWorker.scala, twepoch). */
  assert_true(l.epoch_ms == INT64_C(1288834974657));
}

static void test_instagram(void **state) {
  (void)state;
  idgen_layout l = preset("instagram");
  /* Stack Overflow question 63683015, "Instagram media ID to timestamp conversion":
   * media 2384288897814875714 was posted 2020-08-26T13:43:27Z and 2383568809444681765
   * 2020-08-25T13:52:46Z (known to the second). */
  idgen_parts p;
  assert_int_equal(idgen_decompose(&l, UINT64_C(2384288897814875714), &p), 0);
  assert_true(p.time_ms / 1000 == INT64_C(1598449407)); /* 2020-08-26T13:43:27Z */
  assert_int_equal(idgen_decompose(&l, UINT64_C(2383568809444681765), &p), 0);
  assert_true(p.time_ms / 1000 == INT64_C(1598363566)); /* 2020-08-25T13:52:46Z */
  /* Instagram Engineering, "Sharding & IDs at Instagram" (2012): the PL/pgSQL next_id
   * computes (now_millis - 1314220021721) << 23 | shard_id << 10 | seq % 1024, with
   * shard_id 5 in the example. Compose must give the same number. */
  int64_t now_ms = INT64_C(1598449407313);
  uint64_t want =
      (uint64_t)(now_ms - INT64_C(1314220021721)) << 23 | 5u << 10 | (5001 % 1024);
  idgen_parts in;
  memset(&in, 0, sizeof in);
  assert_int_equal(idgen_layout_ticks(&l, now_ms, &in.ticks), 0);
  in.worker = 5;
  in.seq = 5001 % 1024;
  uint64_t id = 0;
  assert_int_equal(idgen_compose(&l, &in, &id), 0);
  assert_true(id == want);
  assert_string_equal(l.fields[1].name, "shard");
  assert_true(l.epoch_ms == INT64_C(1314220021721));
}

static void test_sonyflake(void **state) {
  (void)state;
  idgen_layout l = preset("sonyflake");
  /* No published Sonyflake ID with its parts was found. sony/sonyflake's sonyflake.go
   * builds an ID as elapsed << (8 + 16) | sequence << 16 | machine, elapsed counting
   * 10 ms units since its default StartTime 2014-09-01 00:00:00 UTC. So the machine is
   * the lowest 16 bits, after the sequence. Here: 2020-01-01T00:00:00.010Z, sequence 3,
   * machine 257 (host 192.168.1.1: its default machine ID is the private IPv4
   * address's lower 16 bits, 1.1). */
  int64_t start_ms = INT64_C(1409529600000);
  int64_t at_ms = INT64_C(1577836800010);
  uint64_t elapsed = (uint64_t)(at_ms - start_ms) / 10;
  uint64_t id = elapsed << 24 | 3u << 16 | 257u;
  idgen_parts p = expect_parts(&l, id, "2020-01-01T00:00:00.010Z", 257, 0, 3);
  assert_true(p.ticks == elapsed);
  assert_true(l.epoch_ms == start_ms);
  assert_int_equal(l.unit_ms, 10);
  assert_string_equal(l.fields[2].name, "machine");
  /* 39 bits of 10 ms: about 174 years, as its README says. */
  int64_t end = idgen_layout_end_ms(&l);
  assert_true(end - start_ms == (INT64_C(1) << 39) * 10);
}

static void test_snowflake_and_js53(void **state) {
  (void)state;
  idgen_layout l = preset("snowflake");
  assert_true(l.epoch_ms == INT64_C(1767225600000)); /* 2026-01-01T00:00:00Z */
  /* 1 ms after the epoch, worker 1023, sequence 4095. */
  expect_parts(&l, UINT64_C(1) << 22 | 1023u << 12 | 4095u, "2026-01-01T00:00:00.001Z",
               1023, 0, 4095);
  idgen_layout js = preset("js53");
  /* Every js53 ID fits a JavaScript number exactly: the largest is 2^53 - 1. */
  idgen_parts p;
  assert_int_equal(idgen_decompose(&js, (UINT64_C(1) << 53) - 1, &p), 0);
  assert_int_equal(idgen_decompose(&js, UINT64_C(1) << 53, &p), IDGEN_ERANGE);
}

/* The first and the last ID of the published ID's ms hold it between them, and are the
 * ID with every field after the time all zeros, or all ones (issue 28: IDs from a time). */
static void expect_bounds(const char *name, uint64_t id) {
  idgen_layout l = preset(name);
  idgen_parts p;
  assert_int_equal(idgen_decompose(&l, id, &p), 0);
  uint64_t first = 0, last = 0;
  assert_int_equal(idgen_layout_first_id(&l, p.time_ms, &first), 0);
  assert_int_equal(idgen_layout_last_id(&l, p.time_ms, &last), 0);
  uint64_t below = (UINT64_C(1) << l.time_shift) - 1;
  assert_true(first == (id & ~below));
  assert_true(last == (id | below));
  assert_true(first <= id && id <= last);
  /* The next ID after last is the next unit's first; the one before first, the previous
   * unit's last. */
  uint64_t next = 0, prev = 0;
  assert_int_equal(idgen_layout_first_id(&l, p.time_ms + l.unit_ms, &next), 0);
  assert_true(next == last + 1);
  assert_int_equal(idgen_layout_last_id(&l, p.time_ms - l.unit_ms, &prev), 0);
  assert_true(prev == first - 1);
  /* A time between two units (Sonyflake's 10 ms) is in the unit below. */
  if (l.unit_ms > 1) {
    uint64_t inside = 0;
    assert_int_equal(idgen_layout_first_id(&l, p.time_ms + l.unit_ms - 1, &inside), 0);
    assert_true(inside == first);
  }
  /* Out of range: the epoch's ms - 1 and the end date; outputs untouched. */
  uint64_t untouched = 42;
  assert_int_equal(idgen_layout_first_id(&l, l.epoch_ms - 1, &untouched),
                   IDGEN_EBEFOREEPOCH);
  assert_int_equal(idgen_layout_last_id(&l, idgen_layout_end_ms(&l), &untouched),
                   IDGEN_ETIMEEND);
  assert_true(untouched == 42);
  assert_int_equal(idgen_layout_first_id(&l, l.epoch_ms, &first), 0);
  assert_true(first == 0);
  assert_int_equal(idgen_layout_last_id(&l, idgen_layout_end_ms(&l) - 1, &last), 0);
  assert_true(last == (UINT64_C(1) << (l.time_bits + l.time_shift)) - 1);
}

static void test_bounds(void **state) {
  (void)state;
  /* The published IDs of the tests above. */
  expect_bounds("discord", UINT64_C(175928847299117063));
  expect_bounds("twitter", UINT64_C(1541815603606036480));
  expect_bounds("twitter", UINT64_C(1050118621198921728));
  expect_bounds("instagram", UINT64_C(2384288897814875714));
  expect_bounds("sonyflake",
                (UINT64_C(1577836800010) - UINT64_C(1409529600000)) / 10 << 24 | 3u << 16 |
                    257u);
  expect_bounds("snowflake", UINT64_C(1) << 22 | 1023u << 12 | 4095u);
  expect_bounds("js53", (UINT64_C(1) << 53) - 1 - (UINT64_C(1) << 12));
  /* Discord's docs: 175928847299117063 (worker 1, increment 7) is 2016-04-30T11:18:25.796Z;
   * its ms starts at 175928847299117063 - (1 << 17) - 7: the time shifted past worker,
   * process and increment (22 bits). */
  idgen_layout d = preset("discord");
  uint64_t first = 0;
  assert_int_equal(idgen_layout_first_id(&d, INT64_C(1462015105796), &first), 0);
  assert_true(first == (UINT64_C(1462015105796) - UINT64_C(1420070400000)) << 22);
  assert_true(first == UINT64_C(175928847298985984));
}

/* RFC 9562's v7 example 017F22E2-79B0-7CC3-98C4-DC0C0C07398F (unix_ts_ms 0x017F22E279B0)
 * lies between the bounds of its ms; the ULID spec's example likewise. */
static void test_bounds_uuid7_ulid(void **state) {
  (void)state;
  idgen_uuid lo, hi, ex;
  assert_int_equal(idgen_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 36, &ex), 0);
  assert_int_equal(idgen_uuid7_bound(INT64_C(0x017F22E279B0), 0, &lo), 0);
  assert_int_equal(idgen_uuid7_bound(INT64_C(0x017F22E279B0), 1, &hi), 0);
  char text[40];
  assert_int_equal(idgen_uuid_format(lo, text, sizeof text), 36);
  assert_string_equal(text, "017f22e2-79b0-7000-8000-000000000000");
  assert_int_equal(idgen_uuid_format(hi, text, sizeof text), 36);
  assert_string_equal(text, "017f22e2-79b0-7fff-bfff-ffffffffffff");
  assert_true(idgen_uuid_compare(lo, ex) < 0 && idgen_uuid_compare(ex, hi) < 0);
  assert_int_equal(idgen_uuid_version(hi), 7);
  assert_int_equal(idgen_uuid7_bound(-1, 0, &lo), IDGEN_EBEFOREEPOCH);
  assert_int_equal(idgen_uuid7_bound(IDGEN_UUID_MAX_MS + 1, 1, &lo), IDGEN_ETIMEEND);
  idgen_ulid ulo, uhi;
  /* ULID spec: 01ARZ3NDEKTSV4RRFFQ69G5FAV; its time is the first 10 chars, 01ARZ3NDEK. */
  assert_int_equal(idgen_ulid_bound(INT64_C(1469922850259), 0, &ulo), 0);
  assert_int_equal(idgen_ulid_bound(INT64_C(1469922850259), 1, &uhi), 0);
  assert_int_equal(idgen_ulid_format(ulo, text, sizeof text), 26);
  assert_string_equal(text, "01ARZ3NDEK0000000000000000");
  assert_int_equal(idgen_ulid_format(uhi, text, sizeof text), 26);
  assert_string_equal(text, "01ARZ3NDEKZZZZZZZZZZZZZZZZ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_discord),
      cmocka_unit_test(test_twitter),
      cmocka_unit_test(test_instagram),
      cmocka_unit_test(test_sonyflake),
      cmocka_unit_test(test_snowflake_and_js53),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_bounds_uuid7_ulid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
