/* clock.c: the wall, anchored-monotonic and fake clock sources. */
#include <errno.h>
#include <stdatomic.h>
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
 * offset forward; one found behind (a step back) is ignored. */
static int64_t mono_now(idgen_clock *base) {
  idgen_clock_mono *clock = (idgen_clock_mono *)base;
  int64_t mono = read_clock(CLOCK_MONOTONIC);
  int64_t offset = atomic_load_explicit(&clock->offset_ns, memory_order_relaxed);
  if (mono >= atomic_load_explicit(&clock->next_check_ns, memory_order_relaxed)) {
    atomic_store_explicit(&clock->next_check_ns, mono + clock->check_ns,
                          memory_order_relaxed);
    int64_t ahead = read_clock(CLOCK_REALTIME) - mono;
    while (ahead > offset && !atomic_compare_exchange_weak_explicit(
                                 &clock->offset_ns, &offset, ahead, memory_order_relaxed,
                                 memory_order_relaxed))
      ;
    if (ahead > offset)
      offset = ahead;
  }
  return mono + offset;
}

static const idgen_clock_class mono_class = {mono_now, real_spin, real_sleep};

void idgen_clock_mono_init(idgen_clock_mono *clock) {
  clock->base.vtable = &mono_class;
  clock->check_ns = 10 * 1000 * 1000;
  int64_t mono = idgen_monotonic_ns();
  atomic_init(&clock->offset_ns, idgen_wall_ns() - mono);
  atomic_init(&clock->next_check_ns, mono + clock->check_ns);
}

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

static const idgen_clock_class fake_class = {fake_now, fake_pass, fake_pass};

void idgen_clock_fake_init(idgen_clock_fake *clock, int64_t unix_ns) {
  clock->base.vtable = &fake_class;
  clock->auto_advance_ns = 0;
  atomic_init(&clock->now_ns, unix_ns);
}

void idgen_clock_fake_set(idgen_clock_fake *clock, int64_t unix_ns) {
  atomic_store(&clock->now_ns, unix_ns);
}

void idgen_clock_fake_advance(idgen_clock_fake *clock, int64_t ns) {
  atomic_fetch_add(&clock->now_ns, ns);
}
