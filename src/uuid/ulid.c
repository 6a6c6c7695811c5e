/* ulid.c: ULID generators (plain and monotonic) and the strict Crockford base32 codec. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/uuid.h"
#include "core/text_internal.h"
#include "uuid/uuid_internal.h"

_Static_assert(sizeof(idgen_ulid) == 16, "idgen_ulid must be exactly 16 bytes");

__extension__ typedef unsigned __int128 u128;

#define MS_MAX INT64_C(0xFFFFFFFFFFFF)
#define RAND_BYTES 10
#define BATCH_CHUNK 64

struct idgen_ulid_gen {
  idgen_clock *clock;
  idgen_random *random;
  int monotonic;
  pthread_mutex_t lock;
  /* Guarded by lock (monotonic mode): the last value issued. */
  idgen_ulid last;
  int64_t last_ms;
  uint64_t fork_gen;
  int started;
};

static int clock_ms(idgen_ulid_gen *gen, int64_t *ms) {
  int64_t ns = idgen_clock_now_ns(gen->clock);
  if (ns < 0 || ns / NS_PER_MS > MS_MAX)
    return IDGEN_ERANGE;
  *ms = ns / NS_PER_MS;
  return 0;
}

static void set_ms(idgen_ulid *u, int64_t ms) {
  for (int i = 5; i >= 0; i--) {
    u->b[i] = (uint8_t)ms;
    ms >>= 8;
  }
}

/* Adds 1 to the 80 random bits; 0 if they were all ones (then u is unchanged). */
static int increment(idgen_ulid *u) {
  for (int i = 15; i >= 6; i--)
    if (u->b[i] != 0xFF) {
      u->b[i]++;
      for (int j = i + 1; j < 16; j++)
        u->b[j] = 0;
      return 1;
    }
  return 0;
}

/* The next monotonic value after gen->last for a clock at now_ms. Lock held. */
static int step_monotonic(idgen_ulid_gen *gen, int64_t now_ms) {
  uint64_t fork_gen = idgen__fork_generation();
  int forked = gen->started && gen->fork_gen != fork_gen;
  gen->fork_gen = fork_gen;
  int64_t ms;
  if (!gen->started || now_ms > gen->last_ms) {
    ms = now_ms;
  } else if (forked) {
    /* The parent keeps its ms; the child moves to the next one, fresh bits. */
    if (gen->last_ms == MS_MAX)
      return IDGEN_ERANGE;
    ms = gen->last_ms + 1;
  } else {
    /* Same ms, or the clock is behind: count on from the last value. */
    if (!increment(&gen->last))
      return IDGEN_EEXHAUSTED;
    return 0;
  }
  idgen_ulid u;
  int rc = idgen_random_fill(gen->random, u.b + 6, RAND_BYTES);
  if (rc < 0)
    return rc;
  set_ms(&u, ms);
  gen->last = u;
  gen->last_ms = ms;
  gen->started = 1;
  explicit_bzero(&u, sizeof u);
  return 0;
}

int idgen_ulid_new(idgen_ulid_gen **out, const idgen_ulid_config *config) {
  if (!out || !config || !config->clock || !config->random)
    return IDGEN_EINVAL;
  idgen__fork_watch();
  idgen_ulid_gen *gen = calloc(1, sizeof *gen);
  if (!gen)
    return IDGEN_ENOMEM;
  gen->clock = config->clock;
  gen->random = config->random;
  gen->monotonic = config->monotonic != 0;
  gen->fork_gen = idgen__fork_generation();
  pthread_mutex_init(&gen->lock, NULL);
  *out = gen;
  return 0;
}

void idgen_ulid_free(idgen_ulid_gen *gen) {
  if (!gen)
    return;
  pthread_mutex_destroy(&gen->lock);
  explicit_bzero(gen, sizeof *gen);
  free(gen);
}

int idgen_ulid_next(idgen_ulid_gen *gen, idgen_ulid *out) {
  if (!gen || !out)
    return IDGEN_EINVAL;
  int64_t ms;
  int rc = clock_ms(gen, &ms);
  if (rc < 0)
    return rc;
  if (!gen->monotonic) {
    idgen_ulid u;
    rc = idgen_random_fill(gen->random, u.b + 6, RAND_BYTES);
    if (rc < 0)
      return rc;
    set_ms(&u, ms);
    *out = u;
    return 0;
  }
  pthread_mutex_lock(&gen->lock);
  rc = step_monotonic(gen, ms);
  if (rc == 0)
    *out = gen->last;
  pthread_mutex_unlock(&gen->lock);
  return rc;
}

int64_t idgen_ulid_next_batch(idgen_ulid_gen *gen, idgen_ulid *out, size_t n) {
  if (!gen || (!out && n > 0) || n > (size_t)INT64_MAX)
    return IDGEN_EINVAL;
  int64_t ms;
  int rc = clock_ms(gen, &ms);
  if (rc < 0)
    return rc;
  size_t done = 0;
  if (!gen->monotonic) {
    uint8_t rnd[RAND_BYTES * BATCH_CHUNK];
    while (done < n) {
      size_t chunk = n - done < BATCH_CHUNK ? n - done : BATCH_CHUNK;
      rc = idgen_random_fill(gen->random, rnd, RAND_BYTES * chunk);
      if (rc < 0)
        break;
      for (size_t i = 0; i < chunk; i++, done++) {
        set_ms(&out[done], ms);
        memcpy(out[done].b + 6, rnd + RAND_BYTES * i, RAND_BYTES);
      }
    }
    explicit_bzero(rnd, sizeof rnd);
  } else {
    pthread_mutex_lock(&gen->lock);
    for (; done < n; done++) {
      rc = step_monotonic(gen, ms);
      if (rc < 0)
        break;
      out[done] = gen->last;
    }
    pthread_mutex_unlock(&gen->lock);
  }
  return done > 0 ? (int64_t)done : (n == 0 ? 0 : rc);
}

int64_t idgen_ulid_time_ms(idgen_ulid u) {
  int64_t ms = 0;
  for (int i = 0; i < 6; i++)
    ms = ms << 8 | u.b[i];
  return ms;
}

/* ---- Crockford base32 ------------------------------------------------------------ */

int idgen_ulid_format(idgen_ulid u, char *out, size_t outlen) {
  if (!out || outlen < IDGEN_ULID_TEXT_LEN + 1)
    return IDGEN_EBUFSIZE;
  u128 v = (u128)idgen__load_be64(u.b) << 64 | idgen__load_be64(u.b + 8);
  for (int i = IDGEN_ULID_TEXT_LEN - 1; i >= 0; i--) {
    out[i] = idgen__crockford_alphabet[(unsigned)(v & 31u)];
    v >>= 5;
  }
  out[IDGEN_ULID_TEXT_LEN] = '\0';
  return IDGEN_ULID_TEXT_LEN;
}

int idgen_ulid_parse(const char *s, size_t len, idgen_ulid *out) {
  if (!out || (!s && len > 0))
    return IDGEN_EINVAL;
  if (len == 0)
    return IDGEN_EEMPTY;
  if (len != IDGEN_ULID_TEXT_LEN)
    return IDGEN_ELENGTH;
  u128 v = 0;
  for (size_t i = 0; i < IDGEN_ULID_TEXT_LEN; i++) {
    int d = idgen__crockford_value((unsigned char)s[i]);
    if (d < 0)
      return IDGEN_ECHAR;
    v = v << 5 | (unsigned)d;
  }
  if (idgen__crockford_value((unsigned char)s[0]) > 7)
    return IDGEN_EOVERFLOW; /* 26 chars hold 130 bits; the top two must be zero */
  idgen__store_be64(out->b, (uint64_t)(v >> 64));
  idgen__store_be64(out->b + 8, (uint64_t)v);
  return 0;
}

int idgen_ulid_from_bytes(const void *bytes, size_t len, idgen_ulid *out) {
  if (!out || (!bytes && len > 0))
    return IDGEN_EINVAL;
  if (len != 16)
    return IDGEN_ELENGTH;
  memcpy(out->b, bytes, 16);
  return 0;
}
