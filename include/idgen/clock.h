/* idgen/clock.h: clock sources, passed in, so tests can move time by hand. */
#ifndef IDGEN_CLOCK_H
#define IDGEN_CLOCK_H

#include <stdint.h>

#include "idgen/error.h"

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
 * back) when the wall clock is found ahead of it, checked every check_ns (default
 * 10 ms). A wall-clock step back does not reach it; a forward correction does. The
 * default for generators. All fields are atomics; now_ns is thread-safe. */
typedef struct idgen_clock_mono {
  idgen_clock base;
  _Atomic int64_t offset_ns;     /* wall - monotonic, raised only */
  _Atomic int64_t next_check_ns; /* monotonic time of the next wall-clock look */
  int64_t check_ns;
} idgen_clock_mono;
IDGEN_API void idgen_clock_mono_init(idgen_clock_mono *clock);

/* A clock that moves only when told: set, advance, or step back; spin_ns and sleep_ns
 * advance it by the time asked for, and every read advances it by auto_advance_ns
 * (0 unless set). Thread-safe. */
typedef struct idgen_clock_fake {
  idgen_clock base;
  _Atomic int64_t now_ns;
  int64_t auto_advance_ns;
} idgen_clock_fake;
IDGEN_API void idgen_clock_fake_init(idgen_clock_fake *clock, int64_t unix_ns);
IDGEN_API void idgen_clock_fake_set(idgen_clock_fake *clock, int64_t unix_ns);
IDGEN_API void idgen_clock_fake_advance(idgen_clock_fake *clock, int64_t ns);

/* Monotonic nanoseconds (CLOCK_MONOTONIC), for deadlines and intervals. */
IDGEN_API int64_t idgen_monotonic_ns(void);
/* Wall-clock Unix nanoseconds (CLOCK_REALTIME). */
IDGEN_API int64_t idgen_wall_ns(void);

#ifdef __cplusplus
}
#endif
#endif
