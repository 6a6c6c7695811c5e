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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_discord),
      cmocka_unit_test(test_twitter),
      cmocka_unit_test(test_instagram),
      cmocka_unit_test(test_sonyflake),
      cmocka_unit_test(test_snowflake_and_js53),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
