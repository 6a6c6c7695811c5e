/* fake_clock.h: a clock for tests that moves only when told, and a fake random source:
 * test doubles implementing the public vtables (idgen/clock.h, idgen/random.h), kept out
 * of libidgen's ABI. Link them (the idgen_test_doubles library). */
#ifndef IDGEN_FAKE_CLOCK_H
#define IDGEN_FAKE_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "idgen/clock.h"
#include "idgen/random.h"

/* A clock that moves only when told: set, advance, or step back; spin_ns and sleep_ns
 * advance it by the time asked for, and every read advances it by auto_advance_ns
 * (0 unless set). Thread-safe. */
typedef struct idgen_clock_fake {
  idgen_clock base;
  _Atomic int64_t now_ns;
  int64_t auto_advance_ns;
} idgen_clock_fake;
void idgen_clock_fake_init(idgen_clock_fake *clock, int64_t unix_ns);
void idgen_clock_fake_set(idgen_clock_fake *clock, int64_t unix_ns);
void idgen_clock_fake_advance(idgen_clock_fake *clock, int64_t ns);

/* A fake random source: hands out bytes[0..len) over and over, in order, from where the
 * last fill stopped (so {0xff}, 1 gives all ones). With bytes == NULL it hands out a fixed
 * pseudo-random stream (splitmix64 of the byte position, seeded by seed) so tests get
 * varied but repeatable values. While fail is non-zero, fill returns fail and hands out
 * nothing. Thread-safe (each fill claims its range of positions with an atomic add).
 * The bytes are not copied: they must outlive the source. */
typedef struct idgen_random_fake {
  idgen_random base;
  const uint8_t *bytes;
  size_t len;
  uint64_t seed;
  _Atomic uint64_t pos; /* bytes handed out so far */
  _Atomic int fail;
} idgen_random_fake;
void idgen_random_fake_init(idgen_random_fake *random, const void *bytes, size_t len);
/* Starts the stream again at position 0 (bytes or seed unchanged). */
void idgen_random_fake_rewind(idgen_random_fake *random);

#endif
