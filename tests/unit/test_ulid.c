/* test_ulid.c: ULID: the spec's example, the strict Crockford decoder, plain and
 * monotonic generation under a jumping fake clock, and the overflow error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"

#define MS 1000000LL
#define SPEC_EXAMPLE "01ARZ3NDEKTSV4RRFFQ69G5FAV"
#define SPEC_EXAMPLE_MS 1469922850259LL /* its first 10 chars, 01ARZ3NDEK */
/* The spec's seed-time example: ulid(1469918176385) starts "01ARYZ6S41". */
#define SPEC_SEED_MS 1469918176385LL

static const uint8_t ones[1] = {0xFF};
static const uint8_t zero[1] = {0};

static idgen_ulid parse_ok(const char *text) {
  idgen_ulid u;
  memset(&u, 0, sizeof u);
  int rc = idgen_ulid_parse(text, strlen(text), &u);
  if (rc != 0)
    fail_msg("'%s': %s", text, idgen_err_name(rc));
  return u;
}

static void format_ok(idgen_ulid u, char *buf) {
  assert_int_equal(idgen_ulid_format(u, buf, IDGEN_ULID_TEXT_LEN + 1), IDGEN_ULID_TEXT_LEN);
}

static void test_spec_example(void **state) {
  (void)state;
  char buf[IDGEN_ULID_TEXT_LEN + 1];
  idgen_ulid u = parse_ok(SPEC_EXAMPLE);
  format_ok(u, buf);
  assert_string_equal(buf, SPEC_EXAMPLE);
  assert_int_equal(idgen_ulid_time_ms(u), SPEC_EXAMPLE_MS);
  idgen_ulid lower = parse_ok("01arz3ndektsv4rrffq69g5fav");
  assert_memory_equal(lower.b, u.b, 16);
  idgen_ulid mixed = parse_ok("01aRz3NdEkTsV4rRfFq69G5fAv");
  assert_memory_equal(mixed.b, u.b, 16);
  /* Bytes round-trip too. */
  idgen_ulid v;
  assert_int_equal(idgen_ulid_from_bytes(u.b, 16, &v), 0);
  assert_memory_equal(v.b, u.b, 16);
  assert_int_equal(idgen_ulid_from_bytes(u.b, 10, &v), IDGEN_ELENGTH);
}

static void test_edges(void **state) {
  (void)state;
  char buf[IDGEN_ULID_TEXT_LEN + 1];
  idgen_ulid max = parse_ok("7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  for (int i = 0; i < 16; i++)
    assert_int_equal(max.b[i], 0xFF);
  format_ok(max, buf);
  assert_string_equal(buf, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  assert_int_equal(idgen_ulid_time_ms(max), IDGEN_UUID_MAX_MS);
  idgen_ulid min = parse_ok("00000000000000000000000000");
  for (int i = 0; i < 16; i++)
    assert_int_equal(min.b[i], 0);
  /* Every symbol in every position reads back to itself. */
  const char *alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  for (int d = 0; d < 32; d++) {
    char t[IDGEN_ULID_TEXT_LEN + 1];
    memset(t, alphabet[d], IDGEN_ULID_TEXT_LEN);
    t[0] = '7';
    t[IDGEN_ULID_TEXT_LEN] = '\0';
    format_ok(parse_ok(t), buf);
    assert_string_equal(buf, t);
  }
  /* One bit at a time. */
  for (int bit = 0; bit < 128; bit++) {
    idgen_ulid u;
    memset(&u, 0, sizeof u);
    u.b[15 - bit / 8] = (uint8_t)(1u << (bit % 8));
    format_ok(u, buf);
    idgen_ulid back = parse_ok(buf);
    assert_memory_equal(back.b, u.b, 16);
  }
  char small[IDGEN_ULID_TEXT_LEN];
  memset(small, 'x', sizeof small);
  assert_int_equal(idgen_ulid_format(max, small, sizeof small), IDGEN_EBUFSIZE);
  assert_int_equal(small[0], 'x');
}

static void test_malformed(void **state) {
  (void)state;
  struct {
    const char *text;
    int err;
  } cases[] = {
      {"", IDGEN_EEMPTY},
      {"01ARZ3NDEKTSV4RRFFQ69G5FA", IDGEN_ELENGTH},   /* 25 */
      {"01ARZ3NDEKTSV4RRFFQ69G5FAVV", IDGEN_ELENGTH}, /* 27 */
      {"01ARZ3NDEKTSV4RRFFQ69G5FAV\n", IDGEN_ELENGTH},
      {" 01ARZ3NDEKTSV4RRFFQ69G5FAV", IDGEN_ELENGTH},
      {"01ARZ3NDEK-TSV4RRFFQ69G5FAV", IDGEN_ELENGTH},
      {"01ARZ3NDEKTSV4RRFFQ69G5FAI", IDGEN_ECHAR}, /* no I -> 1 */
      {"01ARZ3NDEKTSV4RRFFQ69G5FAi", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FAL", IDGEN_ECHAR}, /* no L -> 1 */
      {"01ARZ3NDEKTSV4RRFFQ69G5FAl", IDGEN_ECHAR},
      {"O1ARZ3NDEKTSV4RRFFQ69G5FAV", IDGEN_ECHAR}, /* no O -> 0 */
      {"o1ARZ3NDEKTSV4RRFFQ69G5FAV", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FAU", IDGEN_ECHAR}, /* no U */
      {"01ARZ3NDEKTSV4RRFFQ69G5FAu", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FA-", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FA*", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FA ", IDGEN_ECHAR},
      {"01ARZ3NDEKTSV4RRFFQ69G5FA\xc3", IDGEN_ECHAR},
      {"80000000000000000000000000", IDGEN_EOVERFLOW},
      {"ZZZZZZZZZZZZZZZZZZZZZZZZZZ", IDGEN_EOVERFLOW},
      {"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", IDGEN_EOVERFLOW},
      {"z0000000000000000000000000", IDGEN_EOVERFLOW},
      {"8000000000000000000000000U", IDGEN_ECHAR}, /* a bad char is named first */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen_ulid out;
    memset(&out, 0xAB, sizeof out);
    int rc = idgen_ulid_parse(cases[i].text, strlen(cases[i].text), &out);
    if (rc != cases[i].err)
      fail_msg("'%s': got %s, want %s", cases[i].text, idgen_err_name(rc),
               idgen_err_name(cases[i].err));
    for (int k = 0; k < 16; k++)
      assert_int_equal(out.b[k], 0xAB);
  }
  char with_nul[] = SPEC_EXAMPLE;
  with_nul[5] = '\0';
  idgen_ulid out;
  assert_int_equal(idgen_ulid_parse(with_nul, IDGEN_ULID_TEXT_LEN, &out), IDGEN_ECHAR);
}

static idgen_ulid_gen *make_gen(idgen_clock_fake *clock, idgen_random_fake *rnd,
                                int monotonic) {
  idgen_ulid_config cfg = {&clock->base, &rnd->base, monotonic};
  idgen_ulid_gen *gen = NULL;
  assert_int_equal(idgen_ulid_new(&gen, &cfg), 0);
  return gen;
}

/* A known answer: the spec example's time with all-zero random bits. */
static void test_generated_known(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, SPEC_SEED_MS * MS + 999999);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, zero, 1);
  for (int monotonic = 0; monotonic < 2; monotonic++) {
    idgen_ulid_gen *gen = make_gen(&clock, &rnd, monotonic);
    idgen_ulid u;
    assert_int_equal(idgen_ulid_next(gen, &u), 0);
    char buf[IDGEN_ULID_TEXT_LEN + 1];
    format_ok(u, buf);
    assert_string_equal(buf, "01ARYZ6S410000000000000000");
    idgen_ulid_free(gen);
  }
  /* The example itself, from its time and its 80 random bits. */
  idgen_ulid ex = parse_ok(SPEC_EXAMPLE);
  idgen_clock_fake_set(&clock, SPEC_EXAMPLE_MS * MS);
  idgen_random_fake_init(&rnd, ex.b + 6, 10);
  idgen_ulid_gen *gen = make_gen(&clock, &rnd, 0);
  idgen_ulid u;
  assert_int_equal(idgen_ulid_next(gen, &u), 0);
  assert_memory_equal(u.b, ex.b, 16);
  assert_int_equal(rnd.pos, 10);
  idgen_ulid_free(gen);
}

static void test_plain(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  idgen_ulid_gen *gen = make_gen(&clock, &rnd, 0);
  idgen_ulid a, b;
  assert_int_equal(idgen_ulid_next(gen, &a), 0);
  assert_int_equal(idgen_ulid_next(gen, &b), 0);
  assert_int_equal(rnd.pos, 20);
  assert_int_equal(idgen_ulid_time_ms(a), 1700000000000LL);
  assert_memory_not_equal(a.b, b.b, 16);
  /* Plain mode follows the clock, even back. */
  idgen_clock_fake_advance(&clock, -1000 * MS);
  assert_int_equal(idgen_ulid_next(gen, &b), 0);
  assert_int_equal(idgen_ulid_time_ms(b), 1699999999000LL);
  idgen_ulid batch[100];
  assert_int_equal(idgen_ulid_next_batch(gen, batch, 100), 100);
  for (int i = 0; i < 100; i++)
    assert_int_equal(idgen_ulid_time_ms(batch[i]), 1699999999000LL);
  assert_int_equal(rnd.pos, 30 + 1000);
  idgen_clock_fake_set(&clock, -1);
  assert_int_equal(idgen_ulid_next(gen, &b), IDGEN_ERANGE);
  idgen_ulid_free(gen);
}

static int ulid_cmp(idgen_ulid a, idgen_ulid b) {
  return memcmp(a.b, b.b, 16);
}

static void test_monotonic_clock_back(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  rnd.seed = 3;
  idgen_ulid_gen *gen = make_gen(&clock, &rnd, 1);
  idgen_ulid prev, u;
  assert_int_equal(idgen_ulid_next(gen, &prev), 0);
  /* Within a ms: +1 exactly, no random bytes taken. */
  assert_int_equal(idgen_ulid_next(gen, &u), 0);
  assert_int_equal(rnd.pos, 10);
  idgen_ulid expect = prev;
  for (int i = 15; i >= 6; i--)
    if (++expect.b[i] != 0)
      break;
  assert_memory_equal(u.b, expect.b, 16);
  prev = u;
  int64_t moves[] = {0, -1000 * MS, 1, -MS, 999 * MS, 2 * MS, -3600000 * MS, 5 * MS};
  int64_t last_ms = 1700000000000LL;
  for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) {
    idgen_clock_fake_advance(&clock, moves[m]);
    for (int i = 0; i < 1000; i++) {
      assert_int_equal(idgen_ulid_next(gen, &u), 0);
      assert_true(ulid_cmp(prev, u) < 0);
      assert_true(idgen_ulid_time_ms(u) >= last_ms);
      last_ms = idgen_ulid_time_ms(u);
      prev = u;
    }
    idgen_ulid batch[50];
    assert_int_equal(idgen_ulid_next_batch(gen, batch, 50), 50);
    for (int i = 0; i < 50; i++) {
      assert_true(ulid_cmp(prev, batch[i]) < 0);
      prev = batch[i];
    }
  }
  idgen_ulid_free(gen);
}

/* The spec: when the 80 bits would overflow within a ms, generation fails. */
static void test_monotonic_overflow(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, ones, 1);
  idgen_ulid_gen *gen = make_gen(&clock, &rnd, 1);
  idgen_ulid first, u;
  assert_int_equal(idgen_ulid_next(gen, &first), 0);
  char buf[IDGEN_ULID_TEXT_LEN + 1];
  format_ok(first, buf);
  assert_string_equal(buf + 10, "ZZZZZZZZZZZZZZZZ");
  memset(&u, 0xAB, sizeof u);
  assert_int_equal(idgen_ulid_next(gen, &u), IDGEN_EEXHAUSTED);
  assert_int_equal(u.b[0], 0xAB);
  assert_int_equal(idgen_ulid_next(gen, &u), IDGEN_EEXHAUSTED); /* stays refused */
  idgen_clock_fake_advance(&clock, MS - 1);                     /* same ms still */
  assert_int_equal(idgen_ulid_next(gen, &u), IDGEN_EEXHAUSTED);
  idgen_clock_fake_advance(&clock, -5000 * MS); /* behind: still the same last value */
  assert_int_equal(idgen_ulid_next(gen, &u), IDGEN_EEXHAUSTED);
  idgen_ulid batch[4];
  assert_int_equal(idgen_ulid_next_batch(gen, batch, 4), IDGEN_EEXHAUSTED);
  idgen_clock_fake_set(&clock, 1700000000001LL * MS);        /* next ms: fresh bits */
  assert_int_equal(idgen_ulid_next_batch(gen, batch, 4), 1); /* one, then exhausted */
  assert_true(ulid_cmp(first, batch[0]) < 0);
  assert_int_equal(idgen_ulid_time_ms(batch[0]), 1700000000001LL);
  idgen_ulid_free(gen);
}

static void test_errors(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1000 * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  idgen_ulid_gen *gen = NULL;
  idgen_ulid_config bad = {NULL, &rnd.base, 0};
  assert_int_equal(idgen_ulid_new(&gen, &bad), IDGEN_EINVAL);
  bad = (idgen_ulid_config){&clock.base, NULL, 1};
  assert_int_equal(idgen_ulid_new(&gen, &bad), IDGEN_EINVAL);
  assert_int_equal(idgen_ulid_new(&gen, NULL), IDGEN_EINVAL);
  assert_null(gen);
  idgen_ulid_free(NULL);
  for (int monotonic = 0; monotonic < 2; monotonic++) {
    gen = make_gen(&clock, &rnd, monotonic);
    atomic_store(&rnd.fail, -EIO);
    idgen_ulid u;
    assert_int_equal(idgen_ulid_next(gen, &u), -EIO);
    idgen_ulid batch[3];
    assert_int_equal(idgen_ulid_next_batch(gen, batch, 3), -EIO);
    atomic_store(&rnd.fail, 0);
    assert_int_equal(idgen_ulid_next(gen, &u), 0);
    assert_int_equal(idgen_ulid_next_batch(gen, batch, 0), 0);
    idgen_ulid_free(gen);
  }
}

static int cmp16(const void *a, const void *b) {
  return memcmp(a, b, 16);
}

/* 10^6 plain ULIDs from the system source on the real clock: no repeats. */
static void test_plain_no_repeats(void **state) {
  (void)state;
  enum { N = 1000000 };
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_ulid_config cfg = {&clock.base, rnd, 0};
  idgen_ulid_gen *gen = NULL;
  assert_int_equal(idgen_ulid_new(&gen, &cfg), 0);
  idgen_ulid *buf = malloc(N * sizeof *buf);
  assert_non_null(buf);
  for (size_t i = 0; i < N; i += 1000)
    assert_int_equal(idgen_ulid_next_batch(gen, buf + i, 1000), 1000);
  qsort(buf, N, sizeof *buf, cmp16);
  for (size_t i = 1; i < N; i++)
    assert_true(memcmp(buf[i - 1].b, buf[i].b, 16) < 0);
  free(buf);
  idgen_ulid_free(gen);
  idgen_random_system_free(rnd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_example),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_generated_known),
      cmocka_unit_test(test_plain),
      cmocka_unit_test(test_monotonic_clock_back),
      cmocka_unit_test(test_monotonic_overflow),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_plain_no_repeats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
