/* ff1.c: FF1 (NIST SP 800-38G rev. 1, Algorithms 7 and 8) on OpenSSL's AES. The
 * standard's steps are named in the comments; AES itself is OpenSSL's. */
#include "opaque/ff1.h"

#include <endian.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

__extension__ typedef unsigned __int128 u128;

/* The standard's smallest domain: radix^n >= 1,000,000 (rev. 1, section 5.2). */
#define FF1_MIN_DOMAIN 1000000u
#define FF1_ROUNDS 10

/* Big-endian 8 bytes: one load or store and a byte swap. */
static uint64_t load_be64(const uint8_t *p) {
  uint64_t x;
  memcpy(&x, p, sizeof x);
  return be64toh(x);
}

static void store_be64(uint8_t *p, uint64_t x) {
  x = htobe64(x);
  memcpy(p, &x, sizeof x);
}

static unsigned bit_length(uint64_t x) {
  return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

/* radix^k, or 0 if it is 2^64 or more. */
static uint64_t power(unsigned radix, unsigned k) {
  u128 p = 1;
  for (unsigned i = 0; i < k; i++) {
    p *= radix;
    if (p >> 64)
      return 0;
  }
  return (uint64_t)p;
}

/* radix^n >= FF1_MIN_DOMAIN, without overflow for any n. */
static int domain_large_enough(unsigned radix, unsigned n) {
  uint64_t p = 1;
  for (unsigned i = 0; i < n && p < FF1_MIN_DOMAIN; i++)
    p *= radix;
  return p >= FF1_MIN_DOMAIN;
}

int idgen__ff1_aes_block(idgen__evp_ctx *ctx, const uint8_t in[16], uint8_t out[16]) {
  int outl = 0;
  if (EVP_EncryptUpdate(ctx, out, &outl, in, 16) != 1 || outl != 16)
    return IDGEN_ENOMEM;
  return 0;
}

static const EVP_CIPHER *aes_ecb(size_t keylen) {
  switch (keylen) {
  case 16:
    return EVP_aes_128_ecb();
  case 24:
    return EVP_aes_192_ecb();
  case 32:
    return EVP_aes_256_ecb();
  default:
    return NULL;
  }
}

/* Byte k of Q's fixed part: T, then the zero padding (step 6.i). */
static uint8_t q_byte(const uint8_t *tweak, size_t tweaklen, size_t k) {
  return k < tweaklen ? tweak[k] : 0;
}

/* Steps 5 and 6.i-ii up to Q's last block: the CBC-MAC of P and of Q's blocks that do
 * not depend on the round, the same for every call. */
static int precompute_mac(idgen__ff1 *f, const uint8_t *tweak, size_t tweaklen) {
  uint8_t p[16] = {1, 2, 1};
  p[3] = (uint8_t)(f->radix >> 16);
  p[4] = (uint8_t)(f->radix >> 8);
  p[5] = (uint8_t)f->radix;
  p[6] = FF1_ROUNDS;
  p[7] = (uint8_t)(f->u % 256);
  for (int i = 0; i < 4; i++) {
    p[8 + i] = (uint8_t)(f->n >> (24 - 8 * i));
    p[12 + i] = (uint8_t)(tweaklen >> (24 - 8 * i));
  }
  uint8_t y[16];
  int rc = idgen__ff1_aes_block(f->aes, p, y);
  /* Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM(B)]^b: a whole number of blocks,
   * of which only the last holds the round number and NUM(B) (b <= 8). */
  size_t fixed = tweaklen + (16 - (tweaklen + f->b + 1) % 16) % 16;
  size_t qlen = fixed + 1 + f->b;
  for (size_t at = 0; rc == 0 && at + 16 < qlen; at += 16) {
    uint8_t block[16];
    for (size_t k = 0; k < 16; k++)
      block[k] = y[k] ^ q_byte(tweak, tweaklen, at + k);
    rc = idgen__ff1_aes_block(f->aes, block, y);
  }
  memcpy(f->chain, y, sizeof y);
  for (size_t k = 0; k + 1 + f->b < 16; k++)
    f->chain[k] ^= q_byte(tweak, tweaklen, qlen - 16 + k);
  OPENSSL_cleanse(y, sizeof y);
  return rc;
}

int idgen__ff1_init(idgen__ff1 *f, const uint8_t *key, size_t keylen, unsigned radix,
                    unsigned n, const uint8_t *tweak, size_t tweaklen) {
  const EVP_CIPHER *cipher = aes_ecb(keylen);
  if (!f || !key || !cipher || radix < IDGEN__FF1_RADIX_MIN ||
      radix > IDGEN__FF1_RADIX_MAX || n < 2 || !domain_large_enough(radix, n) ||
      (!tweak && tweaklen) || tweaklen > IDGEN__FF1_TWEAK_MAX)
    return IDGEN_EINVAL;
  memset(f, 0, sizeof *f);
  f->radix = radix;
  f->n = n;
  f->u = n / 2; /* step 1 */
  f->v = n - f->u;
  f->pow_u = power(radix, f->u);
  f->pow_v = power(radix, f->v);
  if (!f->pow_v)
    return IDGEN_EINVAL; /* a half of 2^64 values or more */
  /* Step 3: b = ceil(ceil(v * log2(radix)) / 8); ceil(v * log2(radix)) is the number of
   * bits of radix^v - 1, exactly (no floating point). Step 4: d = 4 ceil(b / 4) + 4. */
  f->b = (bit_length(f->pow_v - 1) + 7) / 8;
  f->d = 4 * ((f->b + 3) / 4) + 4;
  f->radix_pow2 = (radix & (radix - 1)) == 0;
  f->aes = EVP_CIPHER_CTX_new();
  if (!f->aes)
    return IDGEN_ENOMEM;
  if (EVP_EncryptInit_ex2(f->aes, cipher, key, NULL, NULL) != 1 ||
      EVP_CIPHER_CTX_set_padding(f->aes, 0) != 1 ||
      precompute_mac(f, tweak, tweaklen) < 0) {
    idgen__ff1_clear(f);
    return IDGEN_ENOMEM;
  }
  return 0;
}

void idgen__ff1_clear(idgen__ff1 *f) {
  if (!f)
    return;
  EVP_CIPHER_CTX_free(f->aes); /* OpenSSL wipes the key schedule as it frees it */
  OPENSSL_cleanse(f, sizeof *f);
}

idgen__evp_ctx *idgen__ff1_ctx_new(const idgen__ff1 *f) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx && EVP_CIPHER_CTX_copy(ctx, f->aes) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}

void idgen__ff1_ctx_free(idgen__evp_ctx *ctx) {
  EVP_CIPHER_CTX_free(ctx);
}

/* Steps 6.i-iv of round i: y = NUM(S), S the first d bytes of R = PRF(P || Q), where
 * num is NUM(B) when encrypting and NUM(A) when decrypting. */
static int round_y(const idgen__ff1 *f, idgen__evp_ctx *ctx, unsigned i, uint64_t num,
                   u128 *y) {
  uint8_t block[16], r[16];
  /* Q ends in [i]^1 || [num]^b, b <= 8, and num < 256^b: num's 8 big-endian bytes can
   * be XORed into the block's last 8 as they are (its high bytes are zero). */
  memcpy(block, f->chain, 16);
  store_be64(block + 8, load_be64(block + 8) ^ num);
  block[15 - f->b] ^= (uint8_t)i;
  int rc = idgen__ff1_aes_block(ctx, block, r);
  if (rc < 0)
    return rc;
  /* S = the first d bytes of R (d is 8 or 12 here, so step 6.iii needs no block more);
   * y = NUM_2(S). */
  *y = f->d == 8 ? (u128)load_be64(r) : (u128)load_be64(r) << 32 | load_be64(r + 8) >> 32;
  return 0;
}

/* Step 6.v: the modulus radix^m, m = u in even rounds and v in odd ones. */
static uint64_t modulus(const idgen__ff1 *f, unsigned i) {
  return i % 2 == 0 ? f->pow_u : f->pow_v;
}

/* y mod m: a mask when the radix is a power of two (radix 2, the opaque IDs' case);
 * else a 128-bit division, which costs about as much as an AES block. */
static uint64_t reduce(const idgen__ff1 *f, u128 y, uint64_t m) {
  return f->radix_pow2 ? (uint64_t)y & (m - 1) : (uint64_t)(y % m);
}

int idgen__ff1_encrypt_halves(const idgen__ff1 *f, idgen__evp_ctx *ctx, uint64_t *a,
                              uint64_t *b) {
  uint64_t na = *a, nb = *b;
  if (na >= f->pow_u || nb >= f->pow_v)
    return IDGEN_ERANGE;
  for (unsigned i = 0; i < FF1_ROUNDS; i++) {
    u128 y;
    int rc = round_y(f, ctx, i, nb, &y);
    if (rc < 0)
      return rc;
    uint64_t m = modulus(f, i);
    /* 6.vi: c = (NUM(A) + y) mod radix^m; both terms are below m < 2^64, so the sum
     * passes m at most once (and may wrap 2^64 on the way: the subtraction undoes it). */
    uint64_t c = na + reduce(f, y, m);
    if (c >= m || c < na)
      c -= m;
    na = nb; /* 6.viii */
    nb = c;  /* 6.vii, 6.ix */
  }
  *a = na;
  *b = nb;
  return 0;
}

int idgen__ff1_decrypt_halves(const idgen__ff1 *f, idgen__evp_ctx *ctx, uint64_t *a,
                              uint64_t *b) {
  uint64_t na = *a, nb = *b;
  if (na >= f->pow_u || nb >= f->pow_v)
    return IDGEN_ERANGE;
  for (unsigned i = FF1_ROUNDS; i-- > 0;) {
    u128 y;
    int rc = round_y(f, ctx, i, na, &y);
    if (rc < 0)
      return rc;
    uint64_t m = modulus(f, i);
    uint64_t ym = reduce(f, y, m);
    uint64_t c = nb >= ym ? nb - ym : m - (ym - nb); /* (NUM(B) - y) mod radix^m */
    nb = na;
    na = c;
  }
  *a = na;
  *b = nb;
  return 0;
}

/* NUM_radix of digits[0..len): Horner's rule; the caller checked each digit. */
static uint64_t num(const uint8_t *digits, unsigned len, unsigned radix) {
  uint64_t x = 0;
  for (unsigned k = 0; k < len; k++)
    x = x * radix + digits[k];
  return x;
}

/* STR^len_radix(x): len digits, most significant first. */
static void str(uint64_t x, unsigned len, unsigned radix, uint8_t *digits) {
  for (unsigned k = len; k-- > 0;) {
    digits[k] = (uint8_t)(x % radix);
    x /= radix;
  }
}

static int run_digits(const idgen__ff1 *f, const uint8_t *in, uint8_t *out, int decrypt) {
  if (!f || !in || !out)
    return IDGEN_EINVAL;
  for (unsigned k = 0; k < f->n; k++)
    if (in[k] >= f->radix)
      return IDGEN_ECHAR;
  uint64_t a = num(in, f->u, f->radix), b = num(in + f->u, f->v, f->radix);
  idgen__evp_ctx *ctx = idgen__ff1_ctx_new(f);
  if (!ctx)
    return IDGEN_ENOMEM;
  int rc = decrypt ? idgen__ff1_decrypt_halves(f, ctx, &a, &b)
                   : idgen__ff1_encrypt_halves(f, ctx, &a, &b);
  idgen__ff1_ctx_free(ctx);
  if (rc < 0)
    return rc;
  str(a, f->u, f->radix, out);
  str(b, f->v, f->radix, out + f->u);
  return 0;
}

int idgen__ff1_encrypt(const idgen__ff1 *f, const uint8_t *in, uint8_t *out) {
  return run_digits(f, in, out, 0);
}

int idgen__ff1_decrypt(const idgen__ff1 *f, const uint8_t *in, uint8_t *out) {
  return run_digits(f, in, out, 1);
}
