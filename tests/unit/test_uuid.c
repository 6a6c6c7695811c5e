/* test_uuid.c: UUIDv7 and UUIDv4: RFC 9562 vectors, monotonicity under a jumping fake
 * clock, version/variant bits, strict text parsing, uniqueness over many draws. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"
#include "uuid/uuid_internal.h"

#define MS 1000000LL
/* RFC 9562 Appendix A.6: unix_ts_ms 0x017F22E279B0, rand_a 0xCC3, rand_b
 * 0x18C4DC0C0C07398F. */
#define RFC_V7_TEXT "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
#define RFC_V7_MS 0x017F22E279B0LL
/* A.3: UUIDv4. */
#define RFC_V4_TEXT "919108f7-52d1-4320-9bac-f847db4148a8"

static const uint8_t rfc_v7_rand_b[8] = {0x18, 0xC4, 0xDC, 0x0C, 0x0C, 0x07, 0x39, 0x8F};
static const uint8_t rfc_v4_bytes[16] = {0x91, 0x91, 0x08, 0xf7, 0x52, 0xd1, 0x43, 0x20,
                                         0x9b, 0xac, 0xf8, 0x47, 0xdb, 0x41, 0x48, 0xa8};
static const uint8_t ones[1] = {0xFF};

/* How many draws the big tests make: 10^7, or 10^6 under ASan (shadow memory and a
 * slower qsort), or IDGEN_TEST_DRAWS if set (never below 10^6). */
static size_t draws(void) {
  size_t n = 10000000;
#if defined(__SANITIZE_ADDRESS__)
  n = 1000000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  n = 1000000;
#endif
#endif
  const char *env = getenv("IDGEN_TEST_DRAWS");
  if (env && *env) {
    n = (size_t)strtoull(env, NULL, 10);
    if (n < 1000000)
      n = 1000000;
  }
  return n;
}

static idgen_uuid parse_ok(const char *text) {
  idgen_uuid u;
  memset(&u, 0, sizeof u);
  assert_int_equal(idgen_uuid_parse(text, strlen(text), &u), 0);
  return u;
}

static void format_ok(idgen_uuid u, char *buf) {
  assert_int_equal(idgen_uuid_format(u, buf, IDGEN_UUID_TEXT_LEN + 1), IDGEN_UUID_TEXT_LEN);
}

static void test_rfc_v7_example_text(void **state) {
  (void)state;
  char buf[IDGEN_UUID_TEXT_LEN + 1];
  idgen_uuid upper = parse_ok("017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
  idgen_uuid lower = parse_ok(RFC_V7_TEXT);
  assert_memory_equal(upper.b, lower.b, 16);
  format_ok(upper, buf);
  assert_string_equal(buf, RFC_V7_TEXT);
  assert_int_equal(idgen_uuid_version(upper), 7);
  assert_int_equal(idgen_uuid_variant_of(upper), IDGEN_UUID_VARIANT_RFC);
  int64_t ms = 0;
  assert_int_equal(idgen_uuid7_time_ms(upper, &ms), 0);
  assert_int_equal(ms, RFC_V7_MS);
  assert_int_equal(ms, 1645557742000LL); /* 2022-02-22T19:22:22Z, as the RFC says */
}

static void test_rfc_v4_example_text(void **state) {
  (void)state;
  char buf[IDGEN_UUID_TEXT_LEN + 1];
  idgen_uuid u = parse_ok("919108F7-52D1-4320-9BAC-F847DB4148A8");
  assert_memory_equal(u.b, rfc_v4_bytes, 16);
  format_ok(u, buf);
  assert_string_equal(buf, RFC_V4_TEXT);
  assert_int_equal(idgen_uuid_version(u), 4);
  assert_int_equal(idgen_uuid_variant_of(u), IDGEN_UUID_VARIANT_RFC);
  int64_t ms = 42;
  assert_int_equal(idgen_uuid7_time_ms(u, &ms), IDGEN_EVERSION);
  assert_int_equal(ms, 42);
}

/* The generator, fed the RFC's timestamp (with a sub-ms part whose 12-bit fraction is
 * the example's rand_a 0xCC3) and the example's rand_b as random bytes, makes the
 * example exactly. 797700 ns * 4096 / 10^6 = 3267.4 -> 3267 = 0xCC3. */
static void test_rfc_v7_example_generated(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, RFC_V7_MS * MS + 797700);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, rfc_v7_rand_b, sizeof rfc_v7_rand_b);
  idgen_uuid7_config cfg = {&clock.base, &rnd.base};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  idgen_uuid u;
  assert_int_equal(idgen_uuid7_next(gen, &u), 0);
  char buf[IDGEN_UUID_TEXT_LEN + 1];
  format_ok(u, buf);
  assert_string_equal(buf, RFC_V7_TEXT);
  assert_int_equal(rnd.pos, 8); /* exactly 8 bytes per value */
  idgen_uuid7_free(gen);

  idgen_uuid p;
  assert_int_equal(
      idgen_uuid7_from_parts(RFC_V7_MS * MS + 797700, 0x18C4DC0C0C07398Full, &p), 0);
  assert_memory_equal(p.b, u.b, 16);
}

static void test_rfc_v4_example_generated(void **state) {
  (void)state;
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, rfc_v4_bytes, sizeof rfc_v4_bytes);
  idgen_uuid u;
  assert_int_equal(idgen_uuid4(&rnd.base, &u), 0);
  assert_memory_equal(u.b, rfc_v4_bytes, 16);
  idgen_uuid batch[3];
  assert_int_equal(idgen_uuid4_batch(&rnd.base, batch, 3), 3);
  for (int i = 0; i < 3; i++)
    assert_memory_equal(batch[i].b, rfc_v4_bytes, 16);
  /* All ones and all zeros still get version 4 and variant 10. */
  idgen_random_fake_init(&rnd, ones, 1);
  assert_int_equal(idgen_uuid4(&rnd.base, &u), 0);
  char buf[IDGEN_UUID_TEXT_LEN + 1];
  format_ok(u, buf);
  assert_string_equal(buf, "ffffffff-ffff-4fff-bfff-ffffffffffff");
  static const uint8_t zero[1] = {0};
  idgen_random_fake_init(&rnd, zero, 1);
  assert_int_equal(idgen_uuid4(&rnd.base, &u), 0);
  format_ok(u, buf);
  assert_string_equal(buf, "00000000-0000-4000-8000-000000000000");
}

static void test_v7_fraction(void **state) {
  (void)state;
  struct {
    int64_t sub_ns;
    unsigned rand_a;
  } cases[] = {{0, 0},         {244, 0},       {245, 1},      {500000, 2048},
               {999755, 4094}, {999756, 4095}, {999999, 4095}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen_uuid u;
    assert_int_equal(idgen_uuid7_from_parts(1000 * MS + cases[i].sub_ns, 0, &u), 0);
    unsigned rand_a = (unsigned)(u.b[6] & 0x0F) << 8 | u.b[7];
    assert_int_equal(rand_a, cases[i].rand_a);
    int64_t ms;
    assert_int_equal(idgen_uuid7_time_ms(u, &ms), 0);
    assert_int_equal(ms, 1000);
  }
  idgen_uuid u;
  assert_int_equal(idgen_uuid7_from_parts(-1, 0, &u), IDGEN_ERANGE);
  /* int64 ns end in 2262, long before 48 bits of ms (10889): the largest clock fits. */
  assert_int_equal(idgen_uuid7_from_parts(INT64_MAX, 0, &u), 0);
  int64_t ms;
  assert_int_equal(idgen_uuid7_time_ms(u, &ms), 0);
  assert_int_equal(ms, INT64_MAX / MS);
}

static void test_v7_monotonic_clock_back(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  rnd.seed = 7;
  idgen_uuid7_config cfg = {&clock.base, &rnd.base};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  idgen_uuid prev, u;
  assert_int_equal(idgen_uuid7_next(gen, &prev), 0);
  /* A script of clock moves: same instant, steps back by 1 s and 1 ms, tiny steps
   * forward that stay behind, then past the last value. */
  int64_t moves[] = {0, 0,          -1000 * MS, 0, 1, -MS, 100, 1000 * MS + MS,
                     0, -5000 * MS, 7 * MS};
  int64_t last_ms = 1700000000000LL;
  for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) {
    idgen_clock_fake_advance(&clock, moves[m]);
    for (int i = 0; i < 1000; i++) {
      assert_int_equal(idgen_uuid7_next(gen, &u), 0);
      assert_true(idgen_uuid_compare(prev, u) < 0);
      assert_int_equal(idgen_uuid_version(u), 7);
      int64_t ms;
      assert_int_equal(idgen_uuid7_time_ms(u, &ms), 0);
      assert_true(ms >= last_ms); /* never goes back with the clock */
      last_ms = ms;
      prev = u;
    }
  }
  /* While the clock is behind, the time field stays at the last ms issued. */
  idgen_clock_fake_set(&clock, 1600000000000LL * MS);
  assert_int_equal(idgen_uuid7_next(gen, &u), 0);
  int64_t ms;
  assert_int_equal(idgen_uuid7_time_ms(u, &ms), 0);
  assert_int_equal(ms, last_ms);
  assert_true(idgen_uuid_compare(prev, u) < 0);
  idgen_uuid7_free(gen);
}

/* rand_b near its top: the generator moves to the next tick, with a fresh seed below
 * the guard bit, and stays increasing. Ends with IDGEN_ERANGE at the last tick. */
static void test_v7_counter_overflow(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 5000 * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, ones, 1); /* increment 2^32, seed 2^61 - 1 */
  idgen_uuid7_config cfg = {&clock.base, &rnd.base};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  idgen_uuid a, b;
  assert_int_equal(idgen_uuid7_next(gen, &a), 0);
  uint64_t tick, rand_b;
  idgen__uuid7_state(gen, &tick, &rand_b);
  assert_int_equal(tick, (uint64_t)5000 << 12);
  assert_int_equal(rand_b, (UINT64_C(1) << 61) - 1); /* guard bit kept clear */
  uint64_t top = (UINT64_C(1) << 62) - 1;
  idgen__uuid7_set_state(gen, tick, top - 5);
  assert_int_equal(idgen_uuid7_next(gen, &b), 0);
  idgen__uuid7_state(gen, &tick, &rand_b);
  assert_int_equal(tick, ((uint64_t)5000 << 12) + 1);
  assert_int_equal(rand_b, (UINT64_C(1) << 61) - 1);
  assert_true(idgen_uuid_compare(a, b) < 0);
  /* Just under the top, an increment that fits is still taken. */
  idgen__uuid7_set_state(gen, tick, top - (UINT64_C(1) << 32));
  assert_int_equal(idgen_uuid7_next(gen, &b), 0);
  idgen__uuid7_state(gen, &tick, &rand_b);
  assert_int_equal(rand_b, top);
  assert_int_equal(tick, ((uint64_t)5000 << 12) + 1);
  /* At the very last tick there is nowhere to go. */
  idgen__uuid7_set_state(gen, ((uint64_t)IDGEN_UUID_MAX_MS << 12) | 0xFFF, top);
  idgen_uuid untouched;
  memset(&untouched, 0xAB, sizeof untouched);
  idgen_uuid out = untouched;
  assert_int_equal(idgen_uuid7_next(gen, &out), IDGEN_ERANGE);
  assert_memory_equal(out.b, untouched.b, 16);
  idgen_uuid7_free(gen);
}

static void test_v7_errors(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, -1);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  idgen_uuid7_gen *gen = NULL;
  idgen_uuid7_config bad = {NULL, &rnd.base};
  assert_int_equal(idgen_uuid7_new(&gen, &bad), IDGEN_EINVAL);
  bad = (idgen_uuid7_config){&clock.base, NULL};
  assert_int_equal(idgen_uuid7_new(&gen, &bad), IDGEN_EINVAL);
  assert_int_equal(idgen_uuid7_new(&gen, NULL), IDGEN_EINVAL);
  assert_null(gen);
  idgen_uuid7_free(NULL);

  idgen_uuid7_config cfg = {&clock.base, &rnd.base};
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  idgen_uuid out;
  memset(&out, 0xAB, sizeof out);
  assert_int_equal(idgen_uuid7_next(gen, &out), IDGEN_ERANGE); /* before 1970 */
  idgen_clock_fake_set(&clock, 1000 * MS);
  atomic_store(&rnd.fail, -EIO);
  assert_int_equal(idgen_uuid7_next(gen, &out), -EIO);
  idgen_uuid batch[4];
  memset(batch, 0xAB, sizeof batch);
  assert_int_equal(idgen_uuid7_next_batch(gen, batch, 4), -EIO);
  for (int i = 0; i < 16; i++)
    assert_int_equal(out.b[i], 0xAB);
  assert_int_equal(idgen_uuid4(&rnd.base, &out), -EIO);
  assert_int_equal(idgen_uuid4_batch(&rnd.base, batch, 4), -EIO);
  atomic_store(&rnd.fail, 0);
  assert_int_equal(idgen_uuid7_next(gen, &out), 0);
  assert_int_equal(idgen_uuid7_next_batch(gen, batch, 0), 0);
  idgen_uuid7_free(gen);
}

static void test_v7_batch(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * MS);
  idgen_random_fake rnd;
  idgen_random_fake_init(&rnd, NULL, 0);
  idgen_uuid7_config cfg = {&clock.base, &rnd.base};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  enum { N = 1000 };
  static idgen_uuid out[3 * N];
  assert_int_equal(idgen_uuid7_next_batch(gen, out, N), N);
  assert_int_equal(rnd.pos, 8 * N);
  idgen_clock_fake_advance(&clock, -60000 * MS);
  assert_int_equal(idgen_uuid7_next(gen, &out[N]), 0);
  assert_int_equal(idgen_uuid7_next_batch(gen, out + N + 1, N - 1), N - 1);
  idgen_clock_fake_advance(&clock, 120000 * MS);
  assert_int_equal(idgen_uuid7_next_batch(gen, out + 2 * N, N), N);
  for (size_t i = 1; i < 3 * N; i++)
    assert_true(idgen_uuid_compare(out[i - 1], out[i]) < 0);
  idgen_uuid7_free(gen);
}

static void test_version_variant_bits(void **state) {
  (void)state;
  enum { N = 1000000 };
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_uuid7_config cfg = {&clock.base, rnd};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  idgen_uuid *buf = malloc(N * sizeof *buf);
  assert_non_null(buf);
  /* v7: half one by one, half in batches. */
  for (size_t i = 0; i < N / 2; i++)
    assert_int_equal(idgen_uuid7_next(gen, &buf[i]), 0);
  for (size_t i = N / 2; i < N; i += 1000)
    assert_int_equal(idgen_uuid7_next_batch(gen, &buf[i], 1000), 1000);
  unsigned rand_a_or = 0, rand_b_or = 0;
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(buf[i].b[6] >> 4, 7);
    assert_int_equal(buf[i].b[8] >> 6, 2);
    if (i > 0)
      assert_true(idgen_uuid_compare(buf[i - 1], buf[i]) < 0);
    rand_a_or |= buf[i].b[7];
    rand_b_or |= buf[i].b[15];
  }
  assert_int_equal(rand_a_or, 0xFF); /* the fraction and rand_b really vary */
  assert_int_equal(rand_b_or, 0xFF);
  /* v4: bits set, and the other bits both 0 and 1 somewhere. */
  for (size_t i = 0; i < N / 2; i++)
    assert_int_equal(idgen_uuid4(rnd, &buf[i]), 0);
  assert_int_equal(idgen_uuid4_batch(rnd, buf + N / 2, N / 2), N / 2);
  uint8_t all_or[16] = {0}, all_and[16];
  memset(all_and, 0xFF, sizeof all_and);
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(idgen_uuid_version(buf[i]), 4);
    assert_int_equal(idgen_uuid_variant_of(buf[i]), IDGEN_UUID_VARIANT_RFC);
    for (int k = 0; k < 16; k++) {
      all_or[k] |= buf[i].b[k];
      all_and[k] &= buf[i].b[k];
    }
  }
  for (int k = 0; k < 16; k++) {
    uint8_t fixed = k == 6 ? 0xF0 : k == 8 ? 0xC0 : 0;
    assert_int_equal(all_or[k] | fixed, 0xFF);
    assert_int_equal(all_and[k] & (uint8_t)~fixed, 0);
  }
  free(buf);
  idgen_uuid7_free(gen);
  idgen_random_system_free(rnd);
}

static int cmp_uuid(const void *a, const void *b) {
  return memcmp(a, b, 16);
}

/* No repeated value in draws() v4 values (sorted), and draws() v7 values strictly
 * increasing (so distinct) from one generator on the real clock. */
static void test_no_repeats(void **state) {
  (void)state;
  size_t n = draws();
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_uuid *buf = malloc(n * sizeof *buf);
  assert_non_null(buf);
  assert_int_equal(idgen_uuid4_batch(rnd, buf, n), (int64_t)n);
  qsort(buf, n, sizeof *buf, cmp_uuid);
  for (size_t i = 1; i < n; i++)
    assert_true(memcmp(buf[i - 1].b, buf[i].b, 16) < 0);

  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_uuid7_config cfg = {&clock.base, rnd};
  idgen_uuid7_gen *gen = NULL;
  assert_int_equal(idgen_uuid7_new(&gen, &cfg), 0);
  size_t chunk = 4096;
  for (size_t i = 0; i < n; i += chunk) {
    size_t k = n - i < chunk ? n - i : chunk;
    assert_int_equal(idgen_uuid7_next_batch(gen, buf + i, k), (int64_t)k);
  }
  for (size_t i = 1; i < n; i++)
    assert_true(memcmp(buf[i - 1].b, buf[i].b, 16) < 0);
  free(buf);
  idgen_uuid7_free(gen);
  idgen_random_system_free(rnd);
}

static void test_parse_malformed(void **state) {
  (void)state;
  struct {
    const char *text;
    int err;
  } cases[] = {
      {"", IDGEN_EEMPTY},
      {"017f22e2-79b0-7cc3-98c4-dc0c0c07398", IDGEN_ELENGTH},   /* 35 */
      {"017f22e2-79b0-7cc3-98c4-dc0c0c07398f0", IDGEN_ELENGTH}, /* 37 */
      {"017f22e279b07cc398c4dc0c0c07398f", IDGEN_ELENGTH},      /* no hyphens */
      {"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}", IDGEN_ELENGTH},
      {"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", IDGEN_ELENGTH},
      {" 017f22e2-79b0-7cc3-98c4-dc0c0c07398f", IDGEN_ELENGTH},
      {"017f22e2-79b0-7cc3-98c4-dc0c0c07398f\n", IDGEN_ELENGTH},
      {"017f22e2079b0-7cc3-98c4-dc0c0c07398f", IDGEN_EFORMAT}, /* '0' for '-' */
      {"017f22e2_79b0-7cc3-98c4-dc0c0c07398f", IDGEN_EFORMAT},
      {"017f22e-279b0-7cc3-98c4-dc0c0c07398f", IDGEN_EFORMAT}, /* hyphen moved */
      {"017f22e2-79b0-7cc3-98c4dc0c0c07398f-", IDGEN_EFORMAT},
      {"017f22e2-79b0-7cc3-98c4--c0c0c07398f", IDGEN_EFORMAT},
      {"017f22g2-79b0-7cc3-98c4-dc0c0c07398f", IDGEN_ECHAR},
      {"017f22e2-79b0-7cc3-98c4-dc0c0c07398 ", IDGEN_ECHAR},
      {"+17f22e2-79b0-7cc3-98c4-dc0c0c07398f", IDGEN_ECHAR},
      {"017f22e2-79b0-7cc3-98c4-dc0c0c07398\x80", IDGEN_ECHAR},
      {"017f22e2-79b0-7cc3-98c4-dc0c0c0739Zf", IDGEN_ECHAR},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen_uuid out;
    memset(&out, 0xAB, sizeof out);
    int rc = idgen_uuid_parse(cases[i].text, strlen(cases[i].text), &out);
    if (rc != cases[i].err)
      fail_msg("'%s': got %s, want %s", cases[i].text, idgen_err_name(rc),
               idgen_err_name(cases[i].err));
    for (int k = 0; k < 16; k++)
      assert_int_equal(out.b[k], 0xAB);
  }
  /* An embedded NUL is a bad character, not the end. */
  char with_nul[] = RFC_V7_TEXT;
  with_nul[20] = '\0';
  idgen_uuid out;
  assert_int_equal(idgen_uuid_parse(with_nul, IDGEN_UUID_TEXT_LEN, &out), IDGEN_ECHAR);
  /* Mixed case is accepted (RFC 9562: case-insensitive on input). */
  idgen_uuid a = parse_ok("017F22e2-79B0-7cC3-98c4-Dc0C0c07398F");
  idgen_uuid b = parse_ok(RFC_V7_TEXT);
  assert_memory_equal(a.b, b.b, 16);
  /* Every hex digit value in every position, both cases, reads back. */
  for (int d = 0; d < 16; d++) {
    char t[IDGEN_UUID_TEXT_LEN + 1];
    memset(t, "0123456789abcdef"[d], IDGEN_UUID_TEXT_LEN);
    t[8] = t[13] = t[18] = t[23] = '-';
    t[IDGEN_UUID_TEXT_LEN] = '\0';
    idgen_uuid u = parse_ok(t);
    for (int k = 0; k < 16; k++)
      assert_int_equal(u.b[k], d * 17);
    char f[IDGEN_UUID_TEXT_LEN + 1];
    format_ok(u, f);
    assert_string_equal(f, t);
  }
}

static void test_bytes_and_buffers(void **state) {
  (void)state;
  idgen_uuid u, v = parse_ok(RFC_V7_TEXT);
  assert_int_equal(idgen_uuid_from_bytes(v.b, 15, &u), IDGEN_ELENGTH);
  assert_int_equal(idgen_uuid_from_bytes(v.b, 17, &u), IDGEN_ELENGTH);
  assert_int_equal(idgen_uuid_from_bytes(v.b, 16, &u), 0);
  assert_memory_equal(u.b, v.b, 16);
  char small[IDGEN_UUID_TEXT_LEN];
  memset(small, 'x', sizeof small);
  assert_int_equal(idgen_uuid_format(u, small, sizeof small), IDGEN_EBUFSIZE);
  assert_int_equal(small[0], 'x');
  /* Variants, from the top bits of byte 8. */
  struct {
    uint8_t b8;
    idgen_uuid_variant v;
  } var[] = {{0x00, IDGEN_UUID_VARIANT_NCS},       {0x7F, IDGEN_UUID_VARIANT_NCS},
             {0x80, IDGEN_UUID_VARIANT_RFC},       {0xBF, IDGEN_UUID_VARIANT_RFC},
             {0xC0, IDGEN_UUID_VARIANT_MICROSOFT}, {0xDF, IDGEN_UUID_VARIANT_MICROSOFT},
             {0xE0, IDGEN_UUID_VARIANT_FUTURE},    {0xFF, IDGEN_UUID_VARIANT_FUTURE}};
  for (size_t i = 0; i < sizeof var / sizeof var[0]; i++) {
    u.b[8] = var[i].b8;
    assert_int_equal(idgen_uuid_variant_of(u), var[i].v);
  }
  assert_string_equal(idgen_uuid_variant_name(IDGEN_UUID_VARIANT_RFC), "rfc9562");
  /* A v7 with the wrong variant has no v7 time. */
  u = v;
  u.b[8] = 0xC0;
  int64_t ms;
  assert_int_equal(idgen_uuid7_time_ms(u, &ms), IDGEN_EVERSION);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rfc_v7_example_text),
      cmocka_unit_test(test_rfc_v4_example_text),
      cmocka_unit_test(test_rfc_v7_example_generated),
      cmocka_unit_test(test_rfc_v4_example_generated),
      cmocka_unit_test(test_v7_fraction),
      cmocka_unit_test(test_v7_monotonic_clock_back),
      cmocka_unit_test(test_v7_counter_overflow),
      cmocka_unit_test(test_v7_errors),
      cmocka_unit_test(test_v7_batch),
      cmocka_unit_test(test_version_variant_bits),
      cmocka_unit_test(test_no_repeats),
      cmocka_unit_test(test_parse_malformed),
      cmocka_unit_test(test_bytes_and_buffers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
