/* opaque.c: opaque IDs: FF1 with radix 2 over an ID's 63 bits; and key text. */
#include "idgen/opaque.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/text_internal.h" /* idgen__hex_value: inline, no link to libidgen */
#include "opaque/ff1.h"

/* The numeral string is STR_2^63(id): A is its first 31 bits, B its last 32. */
#define OPAQUE_BITS 63
#define OPAQUE_LOW_BITS 32
#define OPAQUE_ID_MAX ((UINT64_C(1) << OPAQUE_BITS) - 1)
#define OPAQUE_LOW_MASK ((UINT64_C(1) << OPAQUE_LOW_BITS) - 1)

/* Longest key text: 64 digits and "\r\n". */
#define KEY_TEXT_MAX (2 * IDGEN_OPAQUE_KEY_MAX + 2)

/* EVP cipher contexts change as they run, so no two threads may use one at once. A call
 * takes one of these, made at creation, with one atomic exchange; copying a context
 * instead (a malloc, a copy, a wipe and a free) costs a quarter of a call. When more
 * threads call at once than there are slots, the others copy. Each slot has its own
 * cache line, so threads on different slots do not share one. */
#define OPAQUE_SLOTS 8

typedef struct slot {
  _Alignas(64) atomic_int busy;
  idgen__evp_ctx *ctx;
} slot;

struct idgen_opaque {
  idgen__ff1 ff1;
  slot *slots; /* OPAQUE_SLOTS; a pointer, so that a const idgen_opaque can take one */
};

void idgen_opaque_free(idgen_opaque *o) {
  if (!o)
    return;
  for (size_t i = 0; o->slots && i < OPAQUE_SLOTS; i++)
    idgen__ff1_ctx_free(o->slots[i].ctx); /* OpenSSL wipes each key schedule */
  free(o->slots);
  idgen__ff1_clear(&o->ff1);
  free(o);
}

int idgen_opaque_new(idgen_opaque **out, const uint8_t *key, size_t keylen,
                     const uint8_t *tweak, size_t tweaklen) {
  if (!out || tweaklen > IDGEN_OPAQUE_TWEAK_MAX)
    return IDGEN_EINVAL;
  idgen_opaque *o = calloc(1, sizeof *o);
  if (!o)
    return IDGEN_ENOMEM;
  int rc = idgen__ff1_init(&o->ff1, key, keylen, 2, OPAQUE_BITS, tweak, tweaklen);
  if (rc < 0) {
    free(o);
    return rc;
  }
  o->slots = aligned_alloc(_Alignof(slot), OPAQUE_SLOTS * sizeof(slot));
  for (size_t i = 0; o->slots && i < OPAQUE_SLOTS; i++) {
    atomic_init(&o->slots[i].busy, 0);
    o->slots[i].ctx = idgen__ff1_ctx_new(&o->ff1);
  }
  for (size_t i = 0; o->slots && i < OPAQUE_SLOTS; i++)
    if (!o->slots[i].ctx)
      rc = IDGEN_ENOMEM;
  if (!o->slots || rc < 0) {
    idgen_opaque_free(o);
    return IDGEN_ENOMEM;
  }
  *out = o;
  return 0;
}

/* A free slot, starting from one picked by the calling thread (so that two threads
 * usually start apart), or NULL if all are taken. */
static slot *take_slot(const idgen_opaque *o) {
  uint64_t h = (uint64_t)(uintptr_t)pthread_self() * UINT64_C(0x9E3779B97F4A7C15);
  size_t start = (size_t)(h >> 32);
  for (size_t k = 0; k < OPAQUE_SLOTS; k++) {
    slot *s = &o->slots[(start + k) % OPAQUE_SLOTS];
    if (!atomic_load_explicit(&s->busy, memory_order_relaxed) &&
        !atomic_exchange_explicit(&s->busy, 1, memory_order_acquire))
      return s;
  }
  return NULL;
}

/* FF1 on in[0..n) into out[0..n), with one cipher context for all. */
static int permute(const idgen_opaque *o, const uint64_t *in, uint64_t *out, size_t n,
                   int decrypt) {
  if (!o || (n && (!in || !out)))
    return IDGEN_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (in[i] > OPAQUE_ID_MAX)
      return IDGEN_EOVERFLOW;
  slot *s = take_slot(o);
  idgen__evp_ctx *ctx = s ? s->ctx : idgen__ff1_ctx_new(&o->ff1);
  if (!ctx)
    return IDGEN_ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    uint64_t a = in[i] >> OPAQUE_LOW_BITS, b = in[i] & OPAQUE_LOW_MASK;
    rc = decrypt ? idgen__ff1_decrypt_halves(&o->ff1, ctx, &a, &b)
                 : idgen__ff1_encrypt_halves(&o->ff1, ctx, &a, &b);
    if (rc == 0)
      out[i] = a << OPAQUE_LOW_BITS | b;
  }
  if (s)
    atomic_store_explicit(&s->busy, 0, memory_order_release);
  else
    idgen__ff1_ctx_free(ctx);
  return rc;
}

int idgen_opaque_encode(const idgen_opaque *o, uint64_t id, uint64_t *out) {
  return out ? permute(o, &id, out, 1, 0) : IDGEN_EINVAL;
}

int idgen_opaque_decode(const idgen_opaque *o, uint64_t opaque, uint64_t *id) {
  return id ? permute(o, &opaque, id, 1, 1) : IDGEN_EINVAL;
}

int idgen_opaque_encode_batch(const idgen_opaque *o, const uint64_t *in, uint64_t *out,
                              size_t n) {
  return permute(o, in, out, n, 0);
}

int idgen_opaque_decode_batch(const idgen_opaque *o, const uint64_t *in, uint64_t *out,
                              size_t n) {
  return permute(o, in, out, n, 1);
}

int idgen_opaque_key_parse(const char *text, size_t len, uint8_t key[IDGEN_OPAQUE_KEY_MAX],
                           size_t *keylen) {
  if (!text || !key || !keylen)
    return IDGEN_EINVAL;
  if (len == 0)
    return IDGEN_EEMPTY;
  size_t digits = len;
  if (text[digits - 1] == '\n') {
    digits--;
    if (digits && text[digits - 1] == '\r')
      digits--;
  }
  for (size_t i = 0; i < digits; i++)
    if (idgen__hex_value((unsigned char)text[i]) < 0)
      return IDGEN_ECHAR;
  if (digits != 32 && digits != 64)
    return IDGEN_ELENGTH;
  for (size_t i = 0; i < digits / 2; i++)
    key[i] = (uint8_t)(idgen__hex_value((unsigned char)text[2 * i]) << 4 |
                       idgen__hex_value((unsigned char)text[2 * i + 1]));
  *keylen = digits / 2;
  return 0;
}

int idgen_opaque_key_load(const char *path, uint8_t key[IDGEN_OPAQUE_KEY_MAX],
                          size_t *keylen) {
  if (!path || !key || !keylen)
    return IDGEN_EINVAL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  char text[KEY_TEXT_MAX + 1];
  size_t len = 0;
  int rc = 0;
  while (len < sizeof text) { /* one byte more than any key text: too long is seen */
    ssize_t got = read(fd, text + len, sizeof text - len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      rc = -errno;
      break;
    }
    if (got == 0)
      break;
    len += (size_t)got;
  }
  close(fd);
  if (rc == 0)
    rc =
        len > KEY_TEXT_MAX ? IDGEN_ELENGTH : idgen_opaque_key_parse(text, len, key, keylen);
  OPENSSL_cleanse(text, sizeof text);
  return rc;
}
