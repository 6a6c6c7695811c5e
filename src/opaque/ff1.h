/* ff1.h: FF1 (NIST SP 800-38G rev. 1, section 6) on OpenSSL's AES, for one key, radix,
 * length and tweak at a time; what idgen_opaque and the known-answer tests build on. */
#ifndef IDGEN_OPAQUE_FF1_H
#define IDGEN_OPAQUE_FF1_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"

#define IDGEN__FF1_RADIX_MIN 2
#define IDGEN__FF1_RADIX_MAX 62
#define IDGEN__FF1_TWEAK_MAX 4096

typedef struct evp_cipher_ctx_st idgen__evp_ctx; /* OpenSSL's EVP_CIPHER_CTX */

/* Everything that depends only on (key, radix, n, tweak), computed once. Each half of
 * the numeral string is held as one number, so radix^ceil(n/2) must stay below 2^64:
 * then NUM(B) takes b <= 8 bytes, S takes d <= 12 bytes, and every round is one AES
 * block (the standard's extra blocks for d > 16 never arise). */
typedef struct idgen__ff1 {
  idgen__evp_ctx *aes;   /* AES-ECB with the key schedule: only ever copied, read */
  unsigned radix, n;     /* the numeral string: n digits in [0, radix) */
  unsigned u, v;         /* its halves' lengths: u = floor(n / 2), v = n - u */
  unsigned b, d;         /* bytes of NUM(B) in Q; bytes of R used as S */
  int radix_pow2;        /* radix is a power of two: reduce by masking */
  uint64_t pow_u, pow_v; /* radix^u, radix^v */
  /* The CBC-MAC state after P and every block of Q but its last, XORed with Q's last
   * block as far as it is fixed (zero where the round number and NUM(B) go): the
   * input of the round's one AES block, but for those. */
  uint8_t chain[16];
} idgen__ff1;

/* Sets up f. key: 16, 24 or 32 bytes (AES-128/192/256). radix in [2, 62]; n >= 2,
 * with radix^n >= 1,000,000 (the standard's smallest domain) and radix^ceil(n/2) <
 * 2^64; tweaklen <= IDGEN__FF1_TWEAK_MAX. IDGEN_EINVAL for anything else, IDGEN_ENOMEM
 * if OpenSSL cannot allocate. On failure f holds nothing to clear. */
int idgen__ff1_init(idgen__ff1 *f, const uint8_t *key, size_t keylen, unsigned radix,
                    unsigned n, const uint8_t *tweak, size_t tweaklen);
/* Frees the key schedule and wipes f. */
void idgen__ff1_clear(idgen__ff1 *f);

/* A fresh copy of f's cipher context for one caller (EVP contexts change as they run,
 * so threads never share one). NULL when out of memory. Free with idgen__ff1_ctx_free. */
idgen__evp_ctx *idgen__ff1_ctx_new(const idgen__ff1 *f);
void idgen__ff1_ctx_free(idgen__evp_ctx *ctx);

/* FF1.Encrypt / FF1.Decrypt on the halves' numbers: *a = NUM_radix(X[1..u]) < radix^u,
 * *b = NUM_radix(X[u+1..n]) < radix^v, replaced by those of the result. ctx: from
 * idgen__ff1_ctx_new, used by one thread at a time. IDGEN_ERANGE if a half is out of
 * range; IDGEN_ENOMEM if AES fails (it does not, once the context exists). */
int idgen__ff1_encrypt_halves(const idgen__ff1 *f, idgen__evp_ctx *ctx, uint64_t *a,
                              uint64_t *b);
int idgen__ff1_decrypt_halves(const idgen__ff1 *f, idgen__evp_ctx *ctx, uint64_t *a,
                              uint64_t *b);

/* The same on numeral strings: in[0..n) digits, most significant first, into
 * out[0..n) (in and out may be the same array). IDGEN_ECHAR if a digit is >= radix;
 * IDGEN_ENOMEM. Thread-safe (a context per call). */
int idgen__ff1_encrypt(const idgen__ff1 *f, const uint8_t *in, uint8_t *out);
int idgen__ff1_decrypt(const idgen__ff1 *f, const uint8_t *in, uint8_t *out);

/* One AES block with f's key (for the benchmark's baseline). 0 or IDGEN_ENOMEM. */
int idgen__ff1_aes_block(idgen__evp_ctx *ctx, const uint8_t in[16], uint8_t out[16]);

#endif
