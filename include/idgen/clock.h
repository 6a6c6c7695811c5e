/* idgen/clock.h: clock sources, passed in, so tests can move time by hand (a clock is any
 * struct whose first field points at an idgen_clock_class). */
#ifndef IDGEN_CLOCK_H
#define IDGEN_CLOCK_H

#include <stdint.h>

#include "idgen/error.h"

/* A 64-bit field the library reads and writes with atomic builtins: aligned to 8 bytes
 * on every target, so the accesses stay lock-free. */
#if defined(__GNUC__)
#define IDGEN_ATOMIC64 __attribute__((aligned(8)))
#else
#define IDGEN_ATOMIC64
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idgen_clock idgen_clock;

/* A clock is a struct whose first field points at one of these. */
typedef struct idgen_clock_class {
  /* Now, in Unix nanoseconds. Must be callable from many threads at once. */
  int64_t (*now_ns)(idgen_clock *clock);
  /* Let about ns nanoseconds pass by spinning on the CPU (short waits, where a sleep
   * would overshoot). The fake clock advances itself by ns (at least 1). */
  void (*spin_ns)(idgen_clock *clock, int64_t ns);
  /* Let about ns nanoseconds pass by sleeping, with a relative timeout (absolute
   * monotonic waits break under libfaketime). The fake clock advances itself by ns. */
  void (*sleep_ns)(idgen_clock *clock, int64_t ns);
} idgen_clock_class;

struct idgen_clock {
  const idgen_clock_class *vtable;
};

static inline int64_t idgen_clock_now_ns(idgen_clock *clock) {
  return clock->vtable->now_ns(clock);
}
static inline void idgen_clock_spin_ns(idgen_clock *clock, int64_t ns) {
  clock->vtable->spin_ns(clock, ns);
}
static inline void idgen_clock_sleep_ns(idgen_clock *clock, int64_t ns) {
  clock->vtable->sleep_ns(clock, ns);
}

/* CLOCK_REALTIME as it is: steps back when the wall clock does. */
typedef struct idgen_clock_wall {
  idgen_clock base;
} idgen_clock_wall;
IDGEN_API void idgen_clock_wall_init(idgen_clock_wall *clock);

/* CLOCK_MONOTONIC anchored to the wall clock at init, and re-anchored forward (never
 * back) when the wall clock is found ahead of it, checked every 10 ms. A wall-clock step
 * back does not reach it; a forward correction does. The default for generators.
 * now_ns is thread-safe. The struct may live anywhere (a stack, static data, shared
 * memory); its other fields are private: only the library touches them, atomically. */
typedef struct idgen_clock_mono {
  idgen_clock base;
  /* private: */
  IDGEN_ATOMIC64 int64_t offset_ns_;     /* wall - monotonic, raised only */
  IDGEN_ATOMIC64 int64_t next_check_ns_; /* monotonic time of the next wall-clock look */
  int64_t check_ns_;
} idgen_clock_mono;
IDGEN_API void idgen_clock_mono_init(idgen_clock_mono *clock);

/* Monotonic nanoseconds (CLOCK_MONOTONIC), for deadlines and intervals. */
IDGEN_API int64_t idgen_monotonic_ns(void);
/* Wall-clock Unix nanoseconds (CLOCK_REALTIME). */
IDGEN_API int64_t idgen_wall_ns(void);

#ifdef __cplusplus
}
#endif
#endif
