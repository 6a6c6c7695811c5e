/* clock.c: the wall and anchored-monotonic clock sources. */
#include <errno.h>
#include <time.h>

#include "idgen/clock.h"

#define NS_PER_S INT64_C(1000000000)

static int64_t read_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t idgen_monotonic_ns(void) {
  return read_clock(CLOCK_MONOTONIC);
}

int64_t idgen_wall_ns(void) {
  return read_clock(CLOCK_REALTIME);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Busy-waits on CLOCK_MONOTONIC: a sleep's wake-up latency (~60 us here) would eat
 * most of a millisecond's sequence budget. */
static void real_spin(idgen_clock *clock, int64_t ns) {
  (void)clock;
  int64_t until = idgen_monotonic_ns() + ns;
  do
    cpu_relax();
  while (idgen_monotonic_ns() < until);
}

/* Relative sleep, restarted on EINTR with what is left. */
static void real_sleep(idgen_clock *clock, int64_t ns) {
  (void)clock;
  if (ns <= 0)
    return;
  struct timespec left = {.tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S};
  while (nanosleep(&left, &left) == -1 && errno == EINTR)
    ;
}

static int64_t wall_now(idgen_clock *clock) {
  (void)clock;
  return idgen_wall_ns();
}

static const idgen_clock_class wall_class = {wall_now, real_spin, real_sleep};

void idgen_clock_wall_init(idgen_clock_wall *clock) {
  clock->base.vtable = &wall_class;
}

/* Monotonic time plus an offset that only grows: a wall clock found ahead pulls the
 * offset forward; one found behind (a step back) is ignored. The fields are plain int64_t
 * in the public struct (C++ and C99 include it), read and written with atomic builtins. */
static int64_t mono_now(idgen_clock *base) {
  idgen_clock_mono *clock = (idgen_clock_mono *)base;
  int64_t mono = read_clock(CLOCK_MONOTONIC);
  int64_t offset = __atomic_load_n(&clock->offset_ns_, __ATOMIC_RELAXED);
  if (mono >= __atomic_load_n(&clock->next_check_ns_, __ATOMIC_RELAXED)) {
    __atomic_store_n(&clock->next_check_ns_, mono + clock->check_ns_, __ATOMIC_RELAXED);
    int64_t ahead = read_clock(CLOCK_REALTIME) - mono;
    while (ahead > offset &&
           !__atomic_compare_exchange_n(&clock->offset_ns_, &offset, ahead, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      ;
    if (ahead > offset)
      offset = ahead;
  }
  return mono + offset;
}

static const idgen_clock_class mono_class = {mono_now, real_spin, real_sleep};

void idgen_clock_mono_init(idgen_clock_mono *clock) {
  clock->base.vtable = &mono_class;
  clock->check_ns_ = 10 * 1000 * 1000;
  int64_t mono = idgen_monotonic_ns();
  __atomic_store_n(&clock->offset_ns_, idgen_wall_ns() - mono, __ATOMIC_RELAXED);
  __atomic_store_n(&clock->next_check_ns_, mono + clock->check_ns_, __ATOMIC_RELAXED);
}
