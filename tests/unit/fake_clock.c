/* fake_clock.c: the tests' clock that moves only when told, and their fake random
 * source (fake_clock.h). */
#include "fake_clock.h"

static int64_t fake_now(idgen_clock *base) {
  idgen_clock_fake *clock = (idgen_clock_fake *)base;
  if (clock->auto_advance_ns)
    return atomic_fetch_add(&clock->now_ns, clock->auto_advance_ns) +
           clock->auto_advance_ns;
  return atomic_load(&clock->now_ns);
}

static void fake_pass(idgen_clock *base, int64_t ns) {
  idgen_clock_fake_advance((idgen_clock_fake *)base, ns > 0 ? ns : 1);
}

static const idgen_clock_class fake_clock_class = {fake_now, fake_pass, fake_pass};

void idgen_clock_fake_init(idgen_clock_fake *clock, int64_t unix_ns) {
  clock->base.vtable = &fake_clock_class;
  clock->auto_advance_ns = 0;
  atomic_init(&clock->now_ns, unix_ns);
}

void idgen_clock_fake_set(idgen_clock_fake *clock, int64_t unix_ns) {
  atomic_store(&clock->now_ns, unix_ns);
}

void idgen_clock_fake_advance(idgen_clock_fake *clock, int64_t ns) {
  atomic_fetch_add(&clock->now_ns, ns);
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15u;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
  return x ^ (x >> 31);
}

static int fake_fill(idgen_random *random, void *buf, size_t len) {
  idgen_random_fake *fake = (idgen_random_fake *)random;
  int fail = atomic_load(&fake->fail);
  if (fail)
    return fail;
  uint64_t start = atomic_fetch_add(&fake->pos, (uint64_t)len);
  uint8_t *out = buf;
  for (size_t i = 0; i < len; i++) {
    uint64_t at = start + i;
    if (fake->bytes && fake->len)
      out[i] = fake->bytes[at % fake->len];
    else
      out[i] = (uint8_t)(splitmix64(fake->seed ^ (at / 8)) >> (8 * (at % 8)));
  }
  return 0;
}

static const idgen_random_class fake_random_class = {fake_fill};

void idgen_random_fake_init(idgen_random_fake *random, const void *bytes, size_t len) {
  random->base.vtable = &fake_random_class;
  random->bytes = bytes;
  random->len = bytes ? len : 0;
  random->seed = 0;
  atomic_init(&random->pos, 0);
  atomic_init(&random->fail, 0);
}

void idgen_random_fake_rewind(idgen_random_fake *random) {
  atomic_store(&random->pos, 0);
}
