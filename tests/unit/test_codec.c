/* test_codec.c: every 64-bit ID codec: known answers, round trips on edge and random
 * values, order preservation, and malformed inputs rejected with the right error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"

#define ID_MAX UINT64_C(0x7fffffffffffffff)
#define P53 (UINT64_C(1) << 53)

static const idgen_format fixed_forms[] = {IDGEN_FORMAT_BASE62, IDGEN_FORMAT_BASE32,
                                           IDGEN_FORMAT_HEX};
static const idgen_format plain_forms[] = {IDGEN_FORMAT_DECIMAL, IDGEN_FORMAT_BASE62,
                                           IDGEN_FORMAT_BASE32, IDGEN_FORMAT_HEX};
static const uint64_t edges[] = {0,  1,       2,   9,       10,         61,    62,
                                 63, P53 - 1, P53, P53 + 1, ID_MAX - 1, ID_MAX};

/* splitmix64: a fixed, seedable source so failures repeat. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t rnd(void) {
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}
/* Random IDs of every magnitude, not only near 2^63. */
static uint64_t rnd_id(void) {
  return (rnd() & ID_MAX) >> (rnd() % 63);
}

static void layout(const char *name, idgen_layout *out) {
  assert_int_equal(idgen_layout_preset(name, out), 0);
}

static int parse(const char *s, idgen_format f, const idgen_layout *l, uint64_t *id) {
  return idgen_id_parse(s, strlen(s), f, l, id);
}

static void expect_text(uint64_t id, idgen_format f, const idgen_layout *l,
                        const char *want) {
  char buf[IDGEN_FORMAT_MAX];
  uint64_t back = 12345;
  assert_int_equal(idgen_id_format(id, f, l, buf, sizeof buf), (int)strlen(want));
  assert_string_equal(buf, want);
  assert_int_equal(parse(want, f, l, &back), 0);
  assert_true(back == id);
}

static void expect_reject(const char *s, idgen_format f, const idgen_layout *l, int err) {
  uint64_t id = 777;
  int rc = parse(s, f, l, &id);
  if (rc != err)
    fail_msg("'%s' as %s: got %s, want %s", s, idgen_format_name(f), idgen_err_name(rc),
             idgen_err_name(err));
  assert_true(id == 777); /* untouched on failure */
}

static void test_known_answers(void **state) {
  (void)state;
  expect_text(0, IDGEN_FORMAT_DECIMAL, NULL, "0");
  expect_text(ID_MAX, IDGEN_FORMAT_DECIMAL, NULL, "9223372036854775807");
  expect_text(P53 + 1, IDGEN_FORMAT_DECIMAL, NULL, "9007199254740993");
  expect_text(0, IDGEN_FORMAT_BASE62, NULL, "00000000000");
  expect_text(61, IDGEN_FORMAT_BASE62, NULL, "0000000000z");
  expect_text(62, IDGEN_FORMAT_BASE62, NULL, "00000000010");
  expect_text(ID_MAX, IDGEN_FORMAT_BASE62, NULL, "AzL8n0Y58m7");
  expect_text(0, IDGEN_FORMAT_BASE32, NULL, "0000000000000");
  expect_text(31, IDGEN_FORMAT_BASE32, NULL, "000000000000Z");
  expect_text(ID_MAX, IDGEN_FORMAT_BASE32, NULL, "7ZZZZZZZZZZZZ");
  expect_text(P53 - 1, IDGEN_FORMAT_BASE32, NULL, "007ZZZZZZZZZZ");
  expect_text(0, IDGEN_FORMAT_HEX, NULL, "0000000000000000");
  expect_text(ID_MAX, IDGEN_FORMAT_HEX, NULL, "7fffffffffffffff");
  expect_text(0xabcdef, IDGEN_FORMAT_HEX, NULL, "0000000000abcdef");
}

static void test_round_trip_edges_and_random(void **state) {
  (void)state;
  char buf[IDGEN_FORMAT_MAX];
  for (size_t f = 0; f < sizeof plain_forms / sizeof plain_forms[0]; f++) {
    for (size_t i = 0; i < sizeof edges / sizeof edges[0] + 20000; i++) {
      uint64_t id = i < sizeof edges / sizeof edges[0] ? edges[i] : rnd_id(), back = 0;
      int n = idgen_id_format(id, plain_forms[f], NULL, buf, sizeof buf);
      assert_true(n > 0);
      assert_int_equal((size_t)n, strlen(buf));
      assert_int_equal(idgen_id_parse(buf, (size_t)n, plain_forms[f], NULL, &back), 0);
      assert_true(back == id);
      /* parse_any finds the same form unless the text is all digits without a
       * leading zero (then it is read as decimal, as documented). */
      idgen_format which;
      int digits = strspn(buf, "0123456789") == (size_t)n && (n == 1 || buf[0] != '0');
      if (plain_forms[f] == IDGEN_FORMAT_DECIMAL || !digits) {
        back = 0;
        assert_int_equal(idgen_id_parse_any(buf, (size_t)n, NULL, &back, &which), 0);
        assert_true(back == id);
        assert_int_equal(which, plain_forms[f]);
      }
      /* Case-insensitive forms read their other case too. */
      if (plain_forms[f] == IDGEN_FORMAT_BASE32 || plain_forms[f] == IDGEN_FORMAT_HEX) {
        for (int k = 0; k < n; k++)
          buf[k] = (char)(buf[k] >= 'a' && buf[k] <= 'z'   ? buf[k] - 32
                          : buf[k] >= 'A' && buf[k] <= 'Z' ? buf[k] + 32
                                                           : buf[k]);
        back = 0;
        assert_int_equal(idgen_id_parse(buf, (size_t)n, plain_forms[f], NULL, &back), 0);
        assert_true(back == id);
      }
    }
  }
}

static void test_friendly_round_trip(void **state) {
  (void)state;
  const char *const *names = idgen_layout_preset_names();
  char buf[IDGEN_FORMAT_MAX];
  for (size_t p = 0; names[p]; p++) {
    idgen_layout l;
    layout(names[p], &l);
    unsigned width = (unsigned)(l.time_bits + l.seq_bits + l.node_bits);
    uint64_t mask = width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
    for (int i = 0; i < 5000; i++) {
      uint64_t id = i == 0 ? 0 : i == 1 ? mask : rnd_id() & mask, back = 0;
      int n = idgen_id_format(id, IDGEN_FORMAT_FRIENDLY, &l, buf, sizeof buf);
      if (n < 0)
        fail_msg("%s: format %llu: %s", names[p], (unsigned long long)id,
                 idgen_err_name(n));
      assert_int_equal(idgen_id_parse(buf, (size_t)n, IDGEN_FORMAT_FRIENDLY, &l, &back), 0);
      assert_true(back == id);
      idgen_format which;
      back = 0;
      assert_int_equal(idgen_id_parse_any(buf, (size_t)n, &l, &back, &which), 0);
      assert_true(back == id);
      assert_int_equal(which, IDGEN_FORMAT_FRIENDLY);
    }
  }
}

static void test_friendly_known(void **state) {
  (void)state;
  idgen_layout sf, tw, dc, sony;
  layout("snowflake", &sf);
  layout("twitter", &tw);
  layout("discord", &dc);
  layout("sonyflake", &sony);
  expect_text(0, IDGEN_FORMAT_FRIENDLY, &sf, "20260101000000000-0-0");
  /* 1 ms after the epoch, worker 5, sequence 7. */
  expect_text(UINT64_C(1) << 22 | 5 << 12 | 7, IDGEN_FORMAT_FRIENDLY, &sf,
              "20260101000000001-5-7");
  /* Two node fields: time-datacenter-worker-seq. */
  expect_text(0, IDGEN_FORMAT_FRIENDLY, &tw, "20101104014254657-0-0-0");
  expect_text(UINT64_C(175928847299117063), IDGEN_FORMAT_FRIENDLY, &dc,
              "20160430111825796-1-0-7");
  /* Sonyflake: one tick is 10 ms; sequence comes before the machine in the bits but
   * the friendly form always reads time-node-seq. */
  expect_text(UINT64_C(1) << 24 | 3 << 16 | 9, IDGEN_FORMAT_FRIENDLY, &sony,
              "20140901000000010-9-3");
  /* A leap day exists; 2028-02-29 is after the snowflake epoch. */
  uint64_t id;
  assert_int_equal(parse("20280229235959999-1023-4095", IDGEN_FORMAT_FRIENDLY, &sf, &id),
                   0);
}

static void test_order_preserved(void **state) {
  (void)state;
  char a[IDGEN_FORMAT_MAX], b[IDGEN_FORMAT_MAX];
  for (size_t f = 0; f < sizeof fixed_forms / sizeof fixed_forms[0]; f++) {
    for (int i = 0; i < 50000; i++) {
      uint64_t x, y;
      switch (i % 3) {
      case 0: /* neighbours, where carries happen */
        x = rnd_id() % ID_MAX;
        y = x + 1;
        break;
      case 1: /* far apart in magnitude */
        x = rnd_id();
        y = rnd_id();
        break;
      default: /* every digit boundary */
        x = (UINT64_C(1) << (i % 63)) - 1;
        y = x + 1;
        break;
      }
      assert_true(idgen_id_format(x, fixed_forms[f], NULL, a, sizeof a) > 0);
      assert_true(idgen_id_format(y, fixed_forms[f], NULL, b, sizeof b) > 0);
      int c = strcmp(a, b);
      if ((x < y) != (c < 0) || (x == y) != (c == 0))
        fail_msg("%s: %llu vs %llu but '%s' vs '%s'", idgen_format_name(fixed_forms[f]),
                 (unsigned long long)x, (unsigned long long)y, a, b);
    }
  }
}

static void test_decimal_rejects(void **state) {
  (void)state;
  idgen_format d = IDGEN_FORMAT_DECIMAL;
  expect_reject("", d, NULL, IDGEN_EEMPTY);
  expect_reject("-1", d, NULL, IDGEN_ESIGN);
  expect_reject("+1", d, NULL, IDGEN_ESIGN);
  expect_reject("-", d, NULL, IDGEN_ESIGN);
  expect_reject("12a", d, NULL, IDGEN_ECHAR);
  expect_reject(" 1", d, NULL, IDGEN_ECHAR);
  expect_reject("1 ", d, NULL, IDGEN_ECHAR);
  expect_reject("1.0", d, NULL, IDGEN_ECHAR);
  expect_reject("1e3", d, NULL, IDGEN_ECHAR);
  expect_reject("0x10", d, NULL, IDGEN_ECHAR);
  expect_reject("01", d, NULL, IDGEN_EFORMAT);
  expect_reject("00", d, NULL, IDGEN_EFORMAT);
  expect_reject("9223372036854775808", d, NULL, IDGEN_EOVERFLOW);
  expect_reject("18446744073709551615", d, NULL, IDGEN_EOVERFLOW);
  expect_reject("18446744073709551616", d, NULL, IDGEN_EOVERFLOW);
  expect_reject("99999999999999999999999999999", d, NULL, IDGEN_EOVERFLOW);
  uint64_t id = 5;
  assert_int_equal(idgen_id_parse("1\0", 2, d, NULL, &id), IDGEN_ECHAR); /* NUL inside */
  assert_int_equal(idgen_id_parse("12", 1, d, NULL, &id), 0); /* length is the bound */
  assert_true(id == 1);
}

static void test_base62_rejects(void **state) {
  (void)state;
  idgen_format f = IDGEN_FORMAT_BASE62;
  expect_reject("", f, NULL, IDGEN_EEMPTY);
  expect_reject("-0000000001", f, NULL, IDGEN_ESIGN);
  expect_reject("+0000000001", f, NULL, IDGEN_ESIGN);
  expect_reject("0000000001", f, NULL, IDGEN_ELENGTH);
  expect_reject("000000000001", f, NULL, IDGEN_ELENGTH);
  expect_reject("1", f, NULL, IDGEN_ELENGTH);
  expect_reject("0000000000_", f, NULL, IDGEN_ECHAR);
  expect_reject("00000 00001", f, NULL, IDGEN_ECHAR);
  expect_reject("0000000000\xc3", f, NULL, IDGEN_ECHAR);
  expect_reject("AzL8n0Y58m8", f, NULL, IDGEN_EOVERFLOW); /* 2^63 */
  expect_reject("B0000000000", f, NULL, IDGEN_EOVERFLOW);
  expect_reject("zzzzzzzzzzz", f, NULL, IDGEN_EOVERFLOW); /* > 2^64 too */
}

static void test_base32_rejects(void **state) {
  (void)state;
  idgen_format f = IDGEN_FORMAT_BASE32;
  expect_reject("", f, NULL, IDGEN_EEMPTY);
  expect_reject("-000000000001", f, NULL, IDGEN_ESIGN);
  expect_reject("000000000001", f, NULL, IDGEN_ELENGTH);
  expect_reject("00000000000001", f, NULL, IDGEN_ELENGTH);
  /* Strict Crockford: the aliases I, L (for 1) and O (for 0) are not mapped, U is not
   * a symbol, and neither are hyphens or check symbols. */
  expect_reject("000000000000I", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000i", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000L", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000l", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000O", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000o", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000U", f, NULL, IDGEN_ECHAR);
  expect_reject("000000-000000", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000*", f, NULL, IDGEN_ECHAR);
  expect_reject("8000000000000", f, NULL, IDGEN_EOVERFLOW); /* 2^63 */
  expect_reject("ZZZZZZZZZZZZZ", f, NULL, IDGEN_EOVERFLOW);
  uint64_t id = 0;
  assert_int_equal(parse("7zzzzzzzzzzzz", f, NULL, &id), 0);
  assert_true(id == ID_MAX);
}

static void test_hex_rejects(void **state) {
  (void)state;
  idgen_format f = IDGEN_FORMAT_HEX;
  expect_reject("", f, NULL, IDGEN_EEMPTY);
  expect_reject("-000000000000001", f, NULL, IDGEN_ESIGN);
  expect_reject("000000000000001", f, NULL, IDGEN_ELENGTH);
  expect_reject("00000000000000001", f, NULL, IDGEN_ELENGTH);
  expect_reject("0x00000000000001", f, NULL, IDGEN_ECHAR);
  expect_reject("000000000000000g", f, NULL, IDGEN_ECHAR);
  expect_reject("8000000000000000", f, NULL, IDGEN_EOVERFLOW);
  expect_reject("ffffffffffffffff", f, NULL, IDGEN_EOVERFLOW);
  uint64_t id = 0;
  assert_int_equal(parse("7FFFFFFFFFFFFFFF", f, NULL, &id), 0);
  assert_true(id == ID_MAX);
}

static void test_friendly_rejects(void **state) {
  (void)state;
  idgen_format f = IDGEN_FORMAT_FRIENDLY;
  idgen_layout sf, tw, sony;
  layout("snowflake", &sf);
  layout("twitter", &tw);
  layout("sonyflake", &sony);
  expect_reject("", f, &sf, IDGEN_EEMPTY);
  expect_reject("-20260101000000000-0-0", f, &sf, IDGEN_ESIGN);
  expect_reject("+20260101000000000-0-0", f, &sf, IDGEN_ESIGN);
  expect_reject("20260101000000000-0-x", f, &sf, IDGEN_ECHAR);
  expect_reject("2026-01-01T00:00:00.000Z-0-0", f, &sf, IDGEN_ECHAR);
  expect_reject("20260101000000000 -0-0", f, &sf, IDGEN_ECHAR);
  expect_reject("20260101000000000-0", f, &sf, IDGEN_EFORMAT);     /* too few parts */
  expect_reject("20260101000000000-0-0-0", f, &sf, IDGEN_EFORMAT); /* too many */
  expect_reject("20260101000000000-0-0", f, &tw, IDGEN_EFORMAT);   /* twitter has two */
  expect_reject("2026010100000000-0-0", f, &sf, IDGEN_EFORMAT);    /* 16 time digits */
  expect_reject("202601010000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* 18 */
  expect_reject("20260101000000000-0-", f, &sf, IDGEN_EFORMAT);
  expect_reject("20260101000000000--0", f, &sf, IDGEN_EFORMAT);
  expect_reject("20260101000000000-0-0-", f, &sf, IDGEN_EFORMAT);
  expect_reject("20261301000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* month 13 */
  expect_reject("20260001000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* month 0 */
  expect_reject("20260100000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* day 0 */
  expect_reject("20270229000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* not a leap year */
  expect_reject("20260431000000000-0-0", f, &sf, IDGEN_EFORMAT);  /* April 31 */
  expect_reject("20260101240000000-0-0", f, &sf, IDGEN_EFORMAT);  /* hour 24 */
  expect_reject("20260101006000000-0-0", f, &sf, IDGEN_EFORMAT);  /* minute 60 */
  expect_reject("20260101000060000-0-0", f, &sf, IDGEN_EFORMAT);  /* second 60 */
  expect_reject("20260101000000000-01-0", f, &sf, IDGEN_EFORMAT); /* leading zero */
  expect_reject("20260101000000000-0-00", f, &sf, IDGEN_EFORMAT);
  expect_reject("20140901000000005-0-0", f, &sony, IDGEN_EFORMAT); /* off the 10 ms unit */
  expect_reject("20251231235959999-0-0", f, &sf, IDGEN_EBEFOREEPOCH);
  expect_reject("19700101000000000-0-0", f, &sf, IDGEN_EBEFOREEPOCH);
  expect_reject("21000101000000000-0-0", f, &sf, IDGEN_EOVERFLOW);    /* past the end */
  expect_reject("20260101000000000-1024-0", f, &sf, IDGEN_EOVERFLOW); /* 10 bits */
  expect_reject("20260101000000000-0-4096", f, &sf, IDGEN_EOVERFLOW); /* 12 bits */
  expect_reject("20260101000000000-99999999999999999999999-0", f, &sf, IDGEN_EOVERFLOW);
  expect_reject("20101104014254657-32-0-0", f, &tw, IDGEN_EOVERFLOW); /* datacenter 5 */
  expect_reject("20101104014254657-0-32-0", f, &tw, IDGEN_EOVERFLOW); /* worker 5 */
  expect_reject("20260101000000000-0-0", f, NULL, IDGEN_EINVAL);
}

static void test_format_errors(void **state) {
  (void)state;
  char buf[IDGEN_FORMAT_MAX];
  idgen_layout sf, js;
  layout("snowflake", &sf);
  layout("js53", &js);
  for (int f = IDGEN_FORMAT_DECIMAL; f <= IDGEN_FORMAT_FRIENDLY; f++)
    assert_int_equal(
        idgen_id_format(UINT64_C(1) << 63, (idgen_format)f, &sf, buf, sizeof buf),
        IDGEN_ESIGN);
  assert_int_equal(idgen_id_format(1, IDGEN_FORMAT_BASE62, NULL, buf, 11), IDGEN_EBUFSIZE);
  assert_int_equal(idgen_id_format(1, IDGEN_FORMAT_BASE62, NULL, buf, 12), 11);
  assert_int_equal(idgen_id_format(1, IDGEN_FORMAT_BASE32, NULL, buf, 13), IDGEN_EBUFSIZE);
  assert_int_equal(idgen_id_format(1, IDGEN_FORMAT_HEX, NULL, buf, 16), IDGEN_EBUFSIZE);
  assert_int_equal(idgen_id_format(123, IDGEN_FORMAT_DECIMAL, NULL, buf, 3),
                   IDGEN_EBUFSIZE);
  assert_int_equal(idgen_id_format(123, IDGEN_FORMAT_DECIMAL, NULL, buf, 4), 3);
  assert_int_equal(idgen_id_format(0, IDGEN_FORMAT_FRIENDLY, &sf, buf, 21), IDGEN_EBUFSIZE);
  assert_int_equal(idgen_id_format(0, IDGEN_FORMAT_FRIENDLY, &sf, buf, 22), 21);
  assert_int_equal(idgen_id_format(0, IDGEN_FORMAT_FRIENDLY, NULL, buf, sizeof buf),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_id_format(P53, IDGEN_FORMAT_FRIENDLY, &js, buf, sizeof buf),
                   IDGEN_ERANGE); /* a bit outside js53's 53 */
  assert_int_equal(idgen_id_format(0, (idgen_format)99, NULL, buf, sizeof buf),
                   IDGEN_EINVAL);
}

static void test_parse_any_shapes(void **state) {
  (void)state;
  idgen_layout sf;
  layout("snowflake", &sf);
  uint64_t id = 0;
  idgen_format which = IDGEN_FORMAT_FRIENDLY;
  struct {
    const char *text;
    int rc;
    uint64_t id;
    idgen_format which;
  } cases[] = {
      {"0", 0, 0, IDGEN_FORMAT_DECIMAL},
      {"12345678901", 0, 12345678901u, IDGEN_FORMAT_DECIMAL}, /* 11 digits: decimal */
      {"1234567890123456", 0, 1234567890123456u, IDGEN_FORMAT_DECIMAL},
      {"00000000001", 0, 1, IDGEN_FORMAT_BASE62},
      {"0000000000z", 0, 61, IDGEN_FORMAT_BASE62},
      {"0000000000001", 0, 1, IDGEN_FORMAT_BASE32},
      {"000000000000z", 0, 31, IDGEN_FORMAT_BASE32},
      {"0000000000000001", 0, 1, IDGEN_FORMAT_HEX},
      {"000000000000000A", 0, 10, IDGEN_FORMAT_HEX},
      {"20260101000000001-5-7", 0, UINT64_C(1) << 22 | 5 << 12 | 7, IDGEN_FORMAT_FRIENDLY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = idgen_id_parse_any(cases[i].text, strlen(cases[i].text), &sf, &id, &which);
    if (rc != cases[i].rc)
      fail_msg("'%s': %s", cases[i].text, idgen_err_name(rc));
    assert_true(id == cases[i].id);
    assert_int_equal(which, cases[i].which);
  }
  struct {
    const char *text;
    int rc;
  } bad[] = {
      {"", IDGEN_EEMPTY},
      {"-1", IDGEN_ESIGN},
      {"+1", IDGEN_ESIGN},
      {"-0000000000001", IDGEN_ESIGN},
      {"007", IDGEN_EFORMAT}, /* decimal with a leading zero */
      {"abc", IDGEN_EFORMAT}, /* no form has 3 letters */
      {"0x0000000000000001", IDGEN_EFORMAT},
      {"9223372036854775808", IDGEN_EOVERFLOW},
      {"0000000000!", IDGEN_ECHAR},          /* 11 chars: base62 */
      {"000000000000I", IDGEN_ECHAR},        /* 13 chars: base32 */
      {"000000000000000g", IDGEN_ECHAR},     /* 16 chars: hex */
      {"800000000000000f", IDGEN_EOVERFLOW}, /* "8000000000000000" is a decimal */
      {"20260101000000000-0", IDGEN_EFORMAT},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    id = 42;
    which = IDGEN_FORMAT_FRIENDLY;
    int rc = idgen_id_parse_any(bad[i].text, strlen(bad[i].text), &sf, &id, &which);
    if (rc != bad[i].rc)
      fail_msg("'%s': got %s, want %s", bad[i].text, idgen_err_name(rc),
               idgen_err_name(bad[i].rc));
    assert_true(id == 42);
    assert_int_equal(which, IDGEN_FORMAT_FRIENDLY);
  }
  /* A friendly text needs a layout. */
  assert_int_equal(idgen_id_parse_any("20260101000000000-0-0", 21, NULL, &id, NULL),
                   IDGEN_EFORMAT);
  assert_int_equal(idgen_id_parse_any("5", 1, NULL, &id, NULL), 0);
  assert_true(id == 5);
}

static void test_format_names(void **state) {
  (void)state;
  const char *names[] = {"decimal", "base62", "base32", "hex", "friendly"};
  for (int i = 0; i < 5; i++) {
    idgen_format f = IDGEN_FORMAT_HEX;
    assert_int_equal(idgen_format_parse(names[i], &f), 0);
    assert_int_equal(f, i);
    assert_string_equal(idgen_format_name(f), names[i]);
  }
  idgen_format f;
  assert_int_equal(idgen_format_parse("DECIMAL", &f), IDGEN_EINVAL);
  assert_int_equal(idgen_format_parse("", &f), IDGEN_EINVAL);
  assert_int_equal(idgen_format_parse(NULL, &f), IDGEN_EINVAL);
  assert_string_equal(idgen_format_name((idgen_format)42), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_answers),
      cmocka_unit_test(test_round_trip_edges_and_random),
      cmocka_unit_test(test_friendly_round_trip),
      cmocka_unit_test(test_friendly_known),
      cmocka_unit_test(test_order_preserved),
      cmocka_unit_test(test_decimal_rejects),
      cmocka_unit_test(test_base62_rejects),
      cmocka_unit_test(test_base32_rejects),
      cmocka_unit_test(test_hex_rejects),
      cmocka_unit_test(test_friendly_rejects),
      cmocka_unit_test(test_format_errors),
      cmocka_unit_test(test_parse_any_shapes),
      cmocka_unit_test(test_format_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
