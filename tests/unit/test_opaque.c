/* test_opaque.c: FF1 against NIST's published samples (SP 800-38G, FF1samples: radix
 * 10 and 36, AES-128/192/256) and radix-2 vectors from an independent implementation;
 * then the 63-bit opaque IDs: fixed vectors, edges, a million round trips, a bijection
 * on a reduced domain, parameter and key-text errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "idgen/opaque.h"
#include "opaque/ff1.h"

static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* The NIST samples' keys: each is a prefix of this one. */
static const uint8_t nist_key[32] = {0x2B, 0x7E, 0x15, 0x16, 0x28, 0xAE, 0xD2, 0xA6,
                                     0xAB, 0xF7, 0x15, 0x88, 0x09, 0xCF, 0x4F, 0x3C,
                                     0xEF, 0x43, 0x59, 0xD8, 0xD5, 0x80, 0xAA, 0x4F,
                                     0x7F, 0x03, 0x6D, 0x6F, 0x04, 0xFC, 0x6A, 0x94};

/* Fixed key for idgen's own vectors: bytes 0x00..0x1f. */
static uint8_t fixed_key[32];

typedef struct vector {
  const char *name;
  size_t keylen;
  unsigned radix;
  const char *tweak_hex;
  const char *pt, *ct; /* numeral strings in the alphabet above */
} vector;

/* NIST SP 800-38G, FF1samples.pdf, samples 1 to 9. */
static const vector nist[] = {
    {"sample 1", 16, 10, "", "0123456789", "2433477484"},
    {"sample 2", 16, 10, "39383736353433323130", "0123456789", "6124200773"},
    {"sample 3", 16, 36, "3737373770717273373737", "0123456789abcdefghi",
     "a9tv40mll9kdu509eum"},
    {"sample 4", 24, 10, "", "0123456789", "2830668132"},
    {"sample 5", 24, 10, "39383736353433323130", "0123456789", "2496655549"},
    {"sample 6", 24, 36, "3737373770717273373737", "0123456789abcdefghi",
     "xbj3kv35jrawxv32ysr"},
    {"sample 7", 32, 10, "", "0123456789", "6657667009"},
    {"sample 8", 32, 10, "39383736353433323130", "0123456789", "1001623463"},
    {"sample 9", 32, 36, "3737373770717273373737", "0123456789abcdefghi",
     "xs8a0azh2avyalyzuwd"},
};

/* Radix 2, n = 88, AES-256 with the NIST key: the Zcash project's FF1 vectors
 * (zcash-test-vectors, ff1.py), computed by another implementation than this one. The
 * fourth has a 255-byte tweak (0, 1, ..., 254): Q then spans 17 blocks. */
#define ZEROS88                                                                            \
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000" \
  "00"
#define Z1_CT                                                                              \
  "00001001001101010111011111111100110000011011001111100111011101010110101001000100110011" \
  "11"
#define Z2_CT                                                                              \
  "11011010110100011000111100000100110011111101100111010101101000011110010001010111110110" \
  "00"
#define ALT88                                                                              \
  "01010101010101010101010101010101010101010101010101010101010101010101010101010101010101" \
  "01"
#define Z3_CT                                                                              \
  "00001111010000011110110101110111111100011001010000000011011011101000100101110011001001" \
  "10"
#define Z4_CT                                                                              \
  "01111101100010000001110101100001000101011010000000111001111001001000101011011110101000" \
  "11"
static const vector zcash[] = {
    {"zcash 1", 32, 2, "", ZEROS88, Z1_CT},
    {"zcash 2", 32, 2, "", Z1_CT, Z2_CT},
    {"zcash 3", 32, 2, "", ALT88, Z3_CT},
    {"zcash 4 (255-byte tweak)", 32, 2, "*", ALT88, Z4_CT},
};

static size_t unhex(const char *hex, uint8_t *out) {
  size_t n = strlen(hex) / 2;
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
  return n;
}

static void to_digits(const char *text, uint8_t *digits) {
  for (size_t i = 0; text[i]; i++)
    digits[i] = (uint8_t)(strchr(alphabet, text[i]) - alphabet);
}

static void check_vector(const vector *v) {
  uint8_t tweak[255];
  size_t tweaklen;
  if (!strcmp(v->tweak_hex, "*")) {
    for (size_t i = 0; i < 255; i++)
      tweak[i] = (uint8_t)i;
    tweaklen = 255;
  } else {
    tweaklen = unhex(v->tweak_hex, tweak);
  }
  unsigned n = (unsigned)strlen(v->pt);
  idgen__ff1 f;
  assert_int_equal(idgen__ff1_init(&f, nist_key, v->keylen, v->radix, n, tweak, tweaklen),
                   0);
  uint8_t pt[128], ct[128], out[128];
  to_digits(v->pt, pt);
  to_digits(v->ct, ct);
  assert_int_equal(idgen__ff1_encrypt(&f, pt, out), 0);
  char text[129] = {0};
  for (unsigned i = 0; i < n; i++)
    text[i] = alphabet[out[i]];
  if (strcmp(text, v->ct) != 0)
    fail_msg("%s: encrypt gave %s, want %s", v->name, text, v->ct);
  assert_int_equal(idgen__ff1_decrypt(&f, ct, out), 0);
  assert_memory_equal(out, pt, n);
  /* In place, as the header allows. */
  memcpy(out, pt, n);
  assert_int_equal(idgen__ff1_encrypt(&f, out, out), 0);
  assert_memory_equal(out, ct, n);
  idgen__ff1_clear(&f);
}

static void test_nist_samples(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof nist / sizeof nist[0]; i++)
    check_vector(&nist[i]);
}

static void test_radix2_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof zcash / sizeof zcash[0]; i++)
    check_vector(&zcash[i]);
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static idgen_opaque *fixed_opaque(size_t keylen, const char *tweak) {
  for (size_t i = 0; i < sizeof fixed_key; i++)
    fixed_key[i] = (uint8_t)i;
  idgen_opaque *o = NULL;
  assert_int_equal(
      idgen_opaque_new(&o, fixed_key, keylen, (const uint8_t *)tweak, strlen(tweak)), 0);
  return o;
}

/* idgen's own vectors: key 00 01 .. 1f (AES-256) or 00 .. 0f (AES-128), tweak "default"
 * (the default generator's). They pin the bit order (STR_2^63, most significant bit
 * first) and the tweak bytes; tests/tools/ff1_reference.py, a separate implementation
 * written from the standard, gives the same values. */
static const struct {
  size_t keylen;
  uint64_t id, opaque;
} fixed[] = {
    {32, 0, UINT64_C(1928147665358327327)},
    {32, 1, UINT64_C(7446678137478122738)},
    {32, UINT64_C(4611686018427387904), UINT64_C(593690778404878550)},
    {32, UINT64_C(9223372036854775807), UINT64_C(5158646560925547725)},
    {32, UINT64_C(120705948263120896), UINT64_C(8296964069946032915)},
    {16, 0, UINT64_C(2057388562790317833)},
    {16, UINT64_C(120705948263120896), UINT64_C(6783352697625987691)},
};

static void test_fixed_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    idgen_opaque *o = fixed_opaque(fixed[i].keylen, "default");
    uint64_t out = 0, back = 0;
    assert_int_equal(idgen_opaque_encode(o, fixed[i].id, &out), 0);
    if (out != fixed[i].opaque)
      fail_msg("key of %zu bytes, id %llu: opaque %llu, want %llu", fixed[i].keylen,
               (unsigned long long)fixed[i].id, (unsigned long long)out,
               (unsigned long long)fixed[i].opaque);
    assert_int_equal(idgen_opaque_decode(o, out, &back), 0);
    assert_int_equal(back, fixed[i].id);
    idgen_opaque_free(o);
  }
}

/* The 63-bit path (halves as numbers) agrees with FF1 on the numeral string
 * STR_2^63(id), the path the known-answer tests prove. */
static void test_matches_numeral_string(void **state) {
  (void)state;
  idgen_opaque *o = fixed_opaque(32, "default");
  idgen__ff1 f;
  assert_int_equal(idgen__ff1_init(&f, fixed_key, 32, 2, 63, (const uint8_t *)"default", 7),
                   0);
  uint64_t seed = 42;
  for (int i = 0; i < 2000; i++) {
    uint64_t id = splitmix(&seed) >> 1, out;
    uint8_t bits[63];
    for (int k = 0; k < 63; k++)
      bits[k] = (uint8_t)(id >> (62 - k) & 1);
    assert_int_equal(idgen__ff1_encrypt(&f, bits, bits), 0);
    uint64_t want = 0;
    for (int k = 0; k < 63; k++)
      want = want << 1 | bits[k];
    assert_int_equal(idgen_opaque_encode(o, id, &out), 0);
    assert_int_equal(out, want);
  }
  idgen__ff1_clear(&f);
  idgen_opaque_free(o);
}

static void roundtrip(const idgen_opaque *o, uint64_t id) {
  uint64_t out = ~UINT64_C(0), back = ~UINT64_C(0);
  assert_int_equal(idgen_opaque_encode(o, id, &out), 0);
  assert_true(out <= INT64_MAX);
  assert_int_equal(idgen_opaque_decode(o, out, &back), 0);
  assert_int_equal(back, id);
}

static void test_edges(void **state) {
  (void)state;
  idgen_opaque *o = fixed_opaque(32, "default");
  const uint64_t edges[] = {0, 1, UINT64_C(1) << 62, INT64_MAX};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    roundtrip(o, edges[i]);
  /* Decode is defined on every value too: each decodes to an ID that encodes back. */
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    uint64_t id, again;
    assert_int_equal(idgen_opaque_decode(o, edges[i], &id), 0);
    assert_true(id <= INT64_MAX);
    assert_int_equal(idgen_opaque_encode(o, id, &again), 0);
    assert_int_equal(again, edges[i]);
  }
  idgen_opaque_free(o);
}

static void test_million_roundtrips(void **state) {
  (void)state;
  idgen_opaque *o = fixed_opaque(32, "default");
  uint64_t seed = 7;
  size_t fixed_points = 0;
  for (int i = 0; i < 1000000; i++) {
    uint64_t id = splitmix(&seed) & INT64_MAX, out, back;
    assert_int_equal(idgen_opaque_encode(o, id, &out), 0);
    assert_true(out <= INT64_MAX);
    assert_int_equal(idgen_opaque_decode(o, out, &back), 0);
    if (back != id)
      fail_msg("id %llu: encode %llu, decode %llu", (unsigned long long)id,
               (unsigned long long)out, (unsigned long long)back);
    fixed_points += out == id;
  }
  /* A random permutation of 2^63 values has about one fixed point in all: seeing one
   * in a million draws would mean the permutation is not mixing. */
  assert_int_equal(fixed_points, 0);
  idgen_opaque_free(o);
}

/* A batch gives what the single calls give, in place too; a bad value anywhere leaves
 * the output untouched. */
static void test_batch(void **state) {
  (void)state;
  idgen_opaque *o = fixed_opaque(32, "default");
  enum { N = 1000 };
  uint64_t ids[N], out[N], again[N], seed = 11;
  for (size_t i = 0; i < N; i++)
    ids[i] = splitmix(&seed) & INT64_MAX;
  assert_int_equal(idgen_opaque_encode_batch(o, ids, out, N), 0);
  for (size_t i = 0; i < N; i++) {
    uint64_t one;
    assert_int_equal(idgen_opaque_encode(o, ids[i], &one), 0);
    assert_int_equal(out[i], one);
  }
  memcpy(again, out, sizeof out);
  assert_int_equal(idgen_opaque_decode_batch(o, again, again, N), 0); /* in place */
  assert_memory_equal(again, ids, sizeof ids);
  memcpy(again, ids, sizeof ids);
  again[N - 1] = UINT64_C(1) << 63;
  memset(out, 0xAB, sizeof out);
  assert_int_equal(idgen_opaque_encode_batch(o, again, out, N), IDGEN_EOVERFLOW);
  for (size_t i = 0; i < N; i++)
    assert_int_equal(out[i], UINT64_C(0xABABABABABABABAB));
  assert_int_equal(idgen_opaque_encode_batch(o, NULL, NULL, 0), 0);
  assert_int_equal(idgen_opaque_encode_batch(o, NULL, out, 1), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_decode_batch(NULL, ids, out, 1), IDGEN_EINVAL);
  idgen_opaque_free(o);
}

/* Radix 2, n = 20: all 2^20 inputs give 2^20 different outputs, and decrypt undoes. */
static void test_bijection_radix2_n20(void **state) {
  (void)state;
  enum { N = 20, SIZE = 1 << N, HALF = N / 2 };
  idgen__ff1 f;
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 2, N, (const uint8_t *)"bijection", 9),
                   0);
  idgen__evp_ctx *ctx = idgen__ff1_ctx_new(&f);
  assert_non_null(ctx);
  uint8_t *seen = calloc(SIZE / 8, 1);
  assert_non_null(seen);
  size_t distinct = 0;
  for (uint64_t x = 0; x < SIZE; x++) {
    uint64_t a = x >> HALF, b = x & ((1u << HALF) - 1);
    assert_int_equal(idgen__ff1_encrypt_halves(&f, ctx, &a, &b), 0);
    uint64_t y = a << HALF | b;
    assert_true(y < SIZE);
    if (!(seen[y / 8] & (1u << (y % 8)))) {
      seen[y / 8] |= (uint8_t)(1u << (y % 8));
      distinct++;
    }
    assert_int_equal(idgen__ff1_decrypt_halves(&f, ctx, &a, &b), 0);
    assert_int_equal(a << HALF | b, x);
  }
  assert_int_equal(distinct, SIZE);
  free(seen);
  idgen__ff1_ctx_free(ctx);
  idgen__ff1_clear(&f);
}

/* Another tweak or another key: another permutation. */
static void test_tweak_and_key_separate(void **state) {
  (void)state;
  idgen_opaque *a = fixed_opaque(32, "default"), *b = fixed_opaque(32, "orders"),
               *c = fixed_opaque(32, ""), *d = fixed_opaque(16, "default");
  uint64_t seed = 9;
  for (int i = 0; i < 100; i++) {
    uint64_t id = splitmix(&seed) & INT64_MAX, oa, ob, oc, od;
    assert_int_equal(idgen_opaque_encode(a, id, &oa), 0);
    assert_int_equal(idgen_opaque_encode(b, id, &ob), 0);
    assert_int_equal(idgen_opaque_encode(c, id, &oc), 0);
    assert_int_equal(idgen_opaque_encode(d, id, &od), 0);
    assert_true(oa != ob && oa != oc && ob != oc && oa != od);
  }
  idgen_opaque_free(a);
  idgen_opaque_free(b);
  idgen_opaque_free(c);
  idgen_opaque_free(d);
}

static void test_errors(void **state) {
  (void)state;
  idgen_opaque *o = (idgen_opaque *)&o;
  static uint8_t long_tweak[IDGEN_OPAQUE_TWEAK_MAX + 1];
  assert_int_equal(idgen_opaque_new(NULL, nist_key, 16, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, nist_key, 0, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, nist_key, 15, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, nist_key, 17, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, NULL, 16, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, nist_key, 16, NULL, 3), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_new(&o, nist_key, 16, long_tweak, sizeof long_tweak),
                   IDGEN_EINVAL);
  assert_ptr_equal(o, (idgen_opaque *)&o); /* untouched */
  assert_int_equal(idgen_opaque_new(&o, nist_key, 16, long_tweak, IDGEN_OPAQUE_TWEAK_MAX),
                   0);
  uint64_t out = 77;
  assert_int_equal(idgen_opaque_encode(o, UINT64_C(1) << 63, &out), IDGEN_EOVERFLOW);
  assert_int_equal(idgen_opaque_decode(o, UINT64_MAX, &out), IDGEN_EOVERFLOW);
  assert_int_equal(out, 77);
  assert_int_equal(idgen_opaque_encode(NULL, 1, &out), IDGEN_EINVAL);
  assert_int_equal(idgen_opaque_encode(o, 1, NULL), IDGEN_EINVAL);
  idgen_opaque_free(o);
  idgen_opaque_free(NULL);

  /* FF1's parameters. */
  idgen__ff1 f;
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 1, 63, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 63, 10, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 62, 1, NULL, 0), IDGEN_EINVAL);
  /* Smallest domain 10^6: radix 10 needs 6 digits, radix 2 needs 20 bits. */
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 10, 5, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 2, 19, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 10, 6, NULL, 0), 0);
  idgen__ff1_clear(&f);
  /* Each half below 2^64: radix 62 up to 20 digits (62^10 < 2^64 < 62^11), radix 2 up to
   * 127 (a half of 64 bits is 2^64 values). */
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 62, 20, NULL, 0), 0);
  idgen__ff1_clear(&f);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 62, 21, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 2, 127, NULL, 0), IDGEN_EINVAL);
  assert_int_equal(idgen__ff1_init(&f, nist_key, 16, 2, 126, NULL, 0), 0);
  uint8_t digits[126] = {0};
  digits[5] = 2;
  assert_int_equal(idgen__ff1_encrypt(&f, digits, digits), IDGEN_ECHAR);
  uint64_t a = UINT64_C(1) << 63, b = 0;
  idgen__evp_ctx *ctx = idgen__ff1_ctx_new(&f);
  assert_int_equal(idgen__ff1_encrypt_halves(&f, ctx, &a, &b), IDGEN_ERANGE);
  idgen__ff1_ctx_free(ctx);
  idgen__ff1_clear(&f);
}

static void test_key_parse(void **state) {
  (void)state;
  uint8_t key[IDGEN_OPAQUE_KEY_MAX];
  size_t len = 0;
  const char *k128 = "000102030405060708090a0b0C0D0E0F";
  assert_int_equal(idgen_opaque_key_parse(k128, strlen(k128), key, &len), 0);
  assert_int_equal(len, 16);
  assert_int_equal(key[0], 0x00);
  assert_int_equal(key[15], 0x0f);
  char text[80];
  snprintf(text, sizeof text, "%s%s\n", k128, k128);
  assert_int_equal(idgen_opaque_key_parse(text, strlen(text), key, &len), 0);
  assert_int_equal(len, 32);
  snprintf(text, sizeof text, "%s\r\n", k128);
  assert_int_equal(idgen_opaque_key_parse(text, strlen(text), key, &len), 0);
  assert_int_equal(len, 16);

  const struct {
    const char *text;
    int err;
  } bad[] = {
      {"", IDGEN_EEMPTY},
      {"\n", IDGEN_ELENGTH},
      {"000102030405060708090a0b0c0d0e0", IDGEN_ELENGTH},    /* 31 digits */
      {"000102030405060708090a0b0c0d0e0f0", IDGEN_ELENGTH},  /* 33 */
      {"000102030405060708090a0b0c0d0e0g", IDGEN_ECHAR},     /* not hex */
      {"000102030405060708090a0b0c0d0e0f\n\n", IDGEN_ECHAR}, /* two newlines */
      {"000102030405060708090a0b0c0d0e0f\r", IDGEN_ECHAR},
      {" 000102030405060708090a0b0c0d0e0f", IDGEN_ECHAR},
      {"0x0102030405060708090a0b0c0d0e0f", IDGEN_ECHAR},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(key, 0xAA, sizeof key);
    len = 99;
    int rc = idgen_opaque_key_parse(bad[i].text, strlen(bad[i].text), key, &len);
    if (rc != bad[i].err)
      fail_msg("'%s': %d, want %d", bad[i].text, rc, bad[i].err);
    assert_int_equal(len, 99);
    assert_int_equal(key[0], 0xAA);
  }
  /* A NUL inside is a character like any other, not an end. */
  assert_int_equal(idgen_opaque_key_parse("00\0", 3, key, &len), IDGEN_ECHAR);
  assert_int_equal(idgen_opaque_key_parse(NULL, 0, key, &len), IDGEN_EINVAL);
}

static void test_key_load(void **state) {
  (void)state;
  char dir[] = "/tmp/idgen-opaque-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[96];
  snprintf(path, sizeof path, "%s/key", dir);
  uint8_t key[IDGEN_OPAQUE_KEY_MAX];
  size_t len = 0;
  assert_int_equal(idgen_opaque_key_load(path, key, &len), -ENOENT);
  const char *contents[] = {
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\r\n0",
      "000102030405060708090a0b0c0d0e0f\n"};
  const int want[] = {0, IDGEN_ELENGTH, 0};
  const size_t want_len[] = {32, 0, 16};
  for (size_t i = 0; i < 3; i++) {
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(contents[i], file);
    fclose(file);
    len = 0;
    assert_int_equal(idgen_opaque_key_load(path, key, &len), want[i]);
    if (want[i] == 0) {
      assert_int_equal(len, want_len[i]);
      assert_int_equal(key[len - 1], len - 1);
    }
  }
  assert_int_equal(idgen_opaque_key_load(dir, key, &len), -EISDIR);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nist_samples),
      cmocka_unit_test(test_radix2_vectors),
      cmocka_unit_test(test_fixed_vectors),
      cmocka_unit_test(test_matches_numeral_string),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_million_roundtrips),
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_bijection_radix2_n20),
      cmocka_unit_test(test_tweak_and_key_separate),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_key_parse),
      cmocka_unit_test(test_key_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
