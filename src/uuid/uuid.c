/* uuid.c: UUIDv7 (Method 3 fraction + Method 2 random counter), UUIDv4, and the strict
 * UUID text and byte codecs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/uuid.h"
#include "core/text_internal.h"
#include "uuid/uuid_internal.h"

_Static_assert(sizeof(idgen_uuid) == 16, "idgen_uuid must be exactly 16 bytes");

#define MS_MAX UINT64_C(0xFFFFFFFFFFFF)
#define TICK_MAX ((MS_MAX << 12) | 0xFFFu)
#define RAND_B_MAX ((UINT64_C(1) << 62) - 1)
#define RAND_B_SEED_MASK                                                                   \
  ((UINT64_C(1) << 61) - 1) /* the top bit of rand_b is the guard                          \
                             */
#define BATCH_CHUNK 64      /* values per random fill in a batch */

struct idgen_uuid7_gen {
  idgen_clock *clock;
  idgen_random *random;
  pthread_mutex_t lock;
  /* Guarded by lock: the last value issued, as (tick, rand_b). */
  uint64_t tick; /* ms << 12 | rand_a fraction */
  uint64_t rand_b;
  uint64_t fork_gen;
  int started;
};

/* Unix ns -> tick (ms << 12 | floor(ns_in_ms * 4096 / 10^6)). */
static int ns_to_tick(int64_t unix_ns, uint64_t *tick) {
  if (unix_ns < 0)
    return IDGEN_ERANGE;
  uint64_t ns = (uint64_t)unix_ns;
  uint64_t ms = ns / NS_PER_MS;
  if (ms > MS_MAX)
    return IDGEN_ERANGE;
  uint64_t frac = (ns % NS_PER_MS) * 4096u / NS_PER_MS;
  *tick = ms << 12 | frac;
  return 0;
}

static void compose(uint64_t tick, uint64_t rand_b, idgen_uuid *out) {
  uint64_t hi = (tick >> 12) << 16 | UINT64_C(0x7000) | (tick & 0xFFFu);
  uint64_t lo = UINT64_C(0x8000000000000000) | (rand_b & RAND_B_MAX);
  idgen__store_be64(out->b, hi);
  idgen__store_be64(out->b + 8, lo);
}

/* The next (tick, rand_b) after the last one, given the clock's tick and 8 random bytes
 * as r. Lock held. */
static int step(idgen_uuid7_gen *gen, uint64_t now_tick, uint64_t r) {
  uint64_t fork_gen = idgen__fork_generation();
  int forked = gen->fork_gen != fork_gen;
  gen->fork_gen = fork_gen;
  if (!gen->started || now_tick > gen->tick) {
    gen->tick = now_tick;
    gen->rand_b = r & RAND_B_SEED_MASK;
    gen->started = 1;
    return 0;
  }
  uint64_t inc = 1 + (r >> 32);
  if (forked || gen->rand_b > RAND_B_MAX - inc) {
    /* A forked child leaves the parent's tick to it; a full rand_b moves on a tick. */
    if (gen->tick == TICK_MAX)
      return IDGEN_ERANGE;
    gen->tick++;
    gen->rand_b = r & RAND_B_SEED_MASK;
    return 0;
  }
  gen->rand_b += inc; /* same tick, or the clock is behind: count on */
  return 0;
}

int idgen_uuid7_new(idgen_uuid7_gen **out, const idgen_uuid7_config *config) {
  if (!out || !config || !config->clock || !config->random)
    return IDGEN_EINVAL;
  idgen__fork_watch();
  idgen_uuid7_gen *gen = calloc(1, sizeof *gen);
  if (!gen)
    return IDGEN_ENOMEM;
  gen->clock = config->clock;
  gen->random = config->random;
  gen->fork_gen = idgen__fork_generation();
  pthread_mutex_init(&gen->lock, NULL);
  *out = gen;
  return 0;
}

void idgen_uuid7_free(idgen_uuid7_gen *gen) {
  if (!gen)
    return;
  pthread_mutex_destroy(&gen->lock);
  explicit_bzero(gen, sizeof *gen); /* the last rand_b predicts the next values */
  free(gen);
}

int idgen_uuid7_next(idgen_uuid7_gen *gen, idgen_uuid *out) {
  if (!gen || !out)
    return IDGEN_EINVAL;
  uint8_t rnd[8];
  int rc = idgen_random_fill(gen->random, rnd, sizeof rnd);
  if (rc < 0)
    return rc;
  uint64_t r = idgen__load_be64(rnd);
  explicit_bzero(rnd, sizeof rnd);
  uint64_t now_tick;
  rc = ns_to_tick(idgen_clock_now_ns(gen->clock), &now_tick);
  if (rc < 0)
    return rc;
  pthread_mutex_lock(&gen->lock);
  rc = step(gen, now_tick, r);
  uint64_t tick = gen->tick, rand_b = gen->rand_b;
  pthread_mutex_unlock(&gen->lock);
  if (rc == 0)
    compose(tick, rand_b, out);
  return rc;
}

int64_t idgen_uuid7_next_batch(idgen_uuid7_gen *gen, idgen_uuid *out, size_t n) {
  if (!gen || (!out && n > 0) || n > (size_t)INT64_MAX)
    return IDGEN_EINVAL;
  uint64_t now_tick;
  int rc = ns_to_tick(idgen_clock_now_ns(gen->clock), &now_tick);
  if (rc < 0)
    return rc;
  uint8_t rnd[8 * BATCH_CHUNK];
  size_t done = 0;
  pthread_mutex_lock(&gen->lock);
  while (done < n && rc == 0) {
    size_t chunk = n - done < BATCH_CHUNK ? n - done : BATCH_CHUNK;
    rc = idgen_random_fill(gen->random, rnd, 8 * chunk);
    for (size_t i = 0; i < chunk && rc == 0; i++) {
      rc = step(gen, now_tick, idgen__load_be64(rnd + 8 * i));
      if (rc == 0)
        compose(gen->tick, gen->rand_b, &out[done++]);
    }
  }
  pthread_mutex_unlock(&gen->lock);
  explicit_bzero(rnd, sizeof rnd);
  return done > 0 ? (int64_t)done : (n == 0 ? 0 : rc);
}

int idgen_uuid7_from_parts(int64_t unix_ns, uint64_t rand_b, idgen_uuid *out) {
  if (!out)
    return IDGEN_EINVAL;
  uint64_t tick;
  int rc = ns_to_tick(unix_ns, &tick);
  if (rc < 0)
    return rc;
  compose(tick, rand_b, out);
  return 0;
}

int idgen_uuid7_time_ms(idgen_uuid u, int64_t *unix_ms) {
  if (!unix_ms)
    return IDGEN_EINVAL;
  if (idgen_uuid_version(u) != 7 || idgen_uuid_variant_of(u) != IDGEN_UUID_VARIANT_RFC)
    return IDGEN_EVERSION;
  *unix_ms = (int64_t)(idgen__load_be64(u.b) >> 16);
  return 0;
}

void idgen__uuid7_state(idgen_uuid7_gen *gen, uint64_t *tick, uint64_t *rand_b) {
  pthread_mutex_lock(&gen->lock);
  *tick = gen->tick;
  *rand_b = gen->rand_b;
  pthread_mutex_unlock(&gen->lock);
}

void idgen__uuid7_set_state(idgen_uuid7_gen *gen, uint64_t tick, uint64_t rand_b) {
  pthread_mutex_lock(&gen->lock);
  gen->tick = tick;
  gen->rand_b = rand_b;
  gen->started = 1;
  pthread_mutex_unlock(&gen->lock);
}

/* ---- UUIDv4 ---------------------------------------------------------------------- */

static void set_v4_bits(idgen_uuid *u) {
  u->b[6] = (uint8_t)((u->b[6] & 0x0Fu) | 0x40u);
  u->b[8] = (uint8_t)((u->b[8] & 0x3Fu) | 0x80u);
}

int idgen_uuid4(idgen_random *random, idgen_uuid *out) {
  if (!random || !out)
    return IDGEN_EINVAL;
  idgen_uuid u;
  int rc = idgen_random_fill(random, u.b, sizeof u.b);
  if (rc < 0)
    return rc;
  set_v4_bits(&u);
  *out = u;
  return 0;
}

int64_t idgen_uuid4_batch(idgen_random *random, idgen_uuid *out, size_t n) {
  if (!random || (!out && n > 0) || n > (size_t)INT64_MAX / 16)
    return IDGEN_EINVAL;
  if (n == 0)
    return 0;
  int rc = idgen_random_fill(random, out, n * sizeof *out);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < n; i++)
    set_v4_bits(&out[i]);
  return (int64_t)n;
}

/* ---- fields, text, bytes --------------------------------------------------------- */

int idgen_uuid_version(idgen_uuid u) {
  return u.b[6] >> 4;
}

idgen_uuid_variant idgen_uuid_variant_of(idgen_uuid u) {
  unsigned top = u.b[8] >> 5;
  if (top < 4)
    return IDGEN_UUID_VARIANT_NCS;
  if (top < 6)
    return IDGEN_UUID_VARIANT_RFC;
  if (top == 6)
    return IDGEN_UUID_VARIANT_MICROSOFT;
  return IDGEN_UUID_VARIANT_FUTURE;
}

const char *idgen_uuid_variant_name(idgen_uuid_variant variant) {
  switch (variant) {
  case IDGEN_UUID_VARIANT_NCS:
    return "ncs";
  case IDGEN_UUID_VARIANT_RFC:
    return "rfc9562";
  case IDGEN_UUID_VARIANT_MICROSOFT:
    return "microsoft";
  case IDGEN_UUID_VARIANT_FUTURE:
    return "future";
  }
  return "unknown";
}

int idgen_uuid_compare(idgen_uuid a, idgen_uuid b) {
  return memcmp(a.b, b.b, sizeof a.b);
}

static const char hex_lower[] = "0123456789abcdef";

int idgen_uuid_format(idgen_uuid u, char *out, size_t outlen) {
  if (!out || outlen < IDGEN_UUID_TEXT_LEN + 1)
    return IDGEN_EBUFSIZE;
  char *p = out;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      *p++ = '-';
    *p++ = hex_lower[u.b[i] >> 4];
    *p++ = hex_lower[u.b[i] & 15];
  }
  *p = '\0';
  return IDGEN_UUID_TEXT_LEN;
}

int idgen_uuid_parse(const char *s, size_t len, idgen_uuid *out) {
  if (!out || (!s && len > 0))
    return IDGEN_EINVAL;
  if (len == 0)
    return IDGEN_EEMPTY;
  if (len != IDGEN_UUID_TEXT_LEN)
    return IDGEN_ELENGTH;
  idgen_uuid u;
  int nibbles = 0;
  for (size_t i = 0; i < IDGEN_UUID_TEXT_LEN; i++) {
    unsigned char c = (unsigned char)s[i];
    int hyphen_here = i == 8 || i == 13 || i == 18 || i == 23;
    if (hyphen_here) {
      if (c != '-')
        return IDGEN_EFORMAT;
      continue;
    }
    int v = idgen__hex_value(c);
    if (v < 0)
      return c == '-' ? IDGEN_EFORMAT : IDGEN_ECHAR;
    if (nibbles % 2 == 0)
      u.b[nibbles / 2] = (uint8_t)(v << 4);
    else
      u.b[nibbles / 2] = (uint8_t)(u.b[nibbles / 2] | v);
    nibbles++;
  }
  *out = u;
  return 0;
}

int idgen_uuid_from_bytes(const void *bytes, size_t len, idgen_uuid *out) {
  if (!out || (!bytes && len > 0))
    return IDGEN_EINVAL;
  if (len != 16)
    return IDGEN_ELENGTH;
  memcpy(out->b, bytes, 16);
  return 0;
}
