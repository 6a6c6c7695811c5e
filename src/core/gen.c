/* gen.c: the Snowflake generator: one CAS on a packed (time, used) word per reservation,
 * clock-back policies, and the lease's fences (worker, deadline, cap). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "idgen/gen.h"

#define CACHE_LINE 64

/* The state word packs the newest time unit issued and how many sequence numbers of
 * its run are used: ticks << (seq_bits + 1) | used, used in 0..2^seq_bits. A run is a
 * stretch of units sharing one sequence counter: one unit, or several when
 * seq_reset_threshold keeps counting across them. time_bits + seq_bits + 1 <= 64. */
struct idgen_gen {
  _Alignas(CACHE_LINE) _Atomic uint64_t state;

  /* Read by every call, written only by the lease: its own cache line. */
  _Alignas(CACHE_LINE) _Atomic uint64_t arm_seq; /* seqlock: odd while re-arming */
  _Atomic uint64_t worker;
  _Atomic int refusal; /* 0, or the sticky IDGEN_ENOTARMED / ELEASE / ECAP / EFORKED */
  _Atomic uint64_t fork_gen; /* the process's fork generation when last armed */
  _Atomic uint64_t cap_ticks;
  _Atomic int64_t cap_ms;
  _Atomic int64_t deadline_ns;

  /* Constant after idgen_gen_new or idgen_gen_init. */
  idgen_layout layout;
  idgen_clock *clock;
  idgen_policy policy;
  int64_t spin_ns, broken_ns, cap_wait_ns;
  uint64_t seq_limit; /* 2^seq_bits */
  uint64_t seq_threshold;
  uint64_t max_ticks;
  int64_t epoch_ns, unit_ns;
  unsigned used_bits; /* seq_bits + 1 */
  int process_shared; /* one memory for every process: no fork check */
  int owned;          /* made by idgen_gen_new: idgen_gen_free frees it */

  /* Counters, apart from the hot words. */
  _Alignas(CACHE_LINE) _Atomic uint64_t issued_closed; /* IDs of runs already closed */
  _Atomic uint64_t seq_waits, clock_back, clock_back_waited, clock_back_logical,
      clock_back_failed, cap_waits, refused_lease, refused_cap, refused_unarmed,
      refused_forked;
};

int idgen_policy_parse(const char *name, idgen_policy *out) {
  static const char *const names[] = {"fail", "wait", "logical"};
  for (int i = 0; i < 3; i++)
    if (name && !strcmp(name, names[i])) {
      *out = (idgen_policy)i;
      return 0;
    }
  return IDGEN_EINVAL;
}

const char *idgen_policy_name(idgen_policy policy) {
  switch (policy) {
  case IDGEN_POLICY_FAIL:
    return "fail";
  case IDGEN_POLICY_WAIT:
    return "wait";
  case IDGEN_POLICY_LOGICAL:
    return "logical";
  }
  return "unknown";
}

void idgen_gen_config_init(idgen_gen_config *config, idgen_clock *clock) {
  memset(config, 0, sizeof *config);
  idgen_layout_preset("snowflake", &config->layout);
  config->clock = clock;
  config->policy = IDGEN_POLICY_WAIT;
  config->armed = 1;
  config->cap_ms = IDGEN_NO_CAP;
  config->deadline_ns = IDGEN_NO_DEADLINE;
}

static inline uint64_t pack(const idgen_gen *gen, uint64_t ticks, uint64_t used) {
  return ticks << gen->used_bits | used;
}
static inline uint64_t state_ticks(const idgen_gen *gen, uint64_t state) {
  return state >> gen->used_bits;
}
static inline uint64_t state_used(const idgen_gen *gen, uint64_t state) {
  return state & ((UINT64_C(1) << gen->used_bits) - 1);
}

/* Clock ns -> ticks, for a clock at or past the epoch. Division by a constant is a
 * multiply; by a variable it costs as much as the rest of an ID. */
static inline uint64_t to_ticks(const idgen_gen *gen, int64_t now_ns) {
  uint64_t ms = (uint64_t)(now_ns - gen->epoch_ns) / (uint64_t)NS_PER_MS;
  switch (gen->layout.unit_ms) {
  case 1:
    return ms;
  case 10:
    return ms / 10;
  default:
    return ms / 1000;
  }
}

/* Unix ms -> the last tick at or below it; clamps outside the layout's range. */
static uint64_t ticks_at_or_below(const idgen_gen *gen, int64_t unix_ms) {
  if (unix_ms < gen->layout.epoch_ms)
    return 0;
  uint64_t ticks = (uint64_t)(unix_ms - gen->layout.epoch_ms) / gen->layout.unit_ms;
  return ticks > gen->max_ticks ? gen->max_ticks : ticks;
}

/* Raises the state to an empty run in the unit after floor_ms, so nothing at or below
 * floor_ms is issued. */
static void raise_floor(idgen_gen *gen, int64_t floor_ms) {
  if (floor_ms <= 0 || floor_ms < gen->layout.epoch_ms)
    return;
  uint64_t floor = pack(gen, ticks_at_or_below(gen, floor_ms) + 1, 0);
  uint64_t state = atomic_load(&gen->state);
  while (state < floor && !atomic_compare_exchange_weak(&gen->state, &state, floor))
    ;
}

static uint64_t cap_to_ticks(const idgen_gen *gen, int64_t cap_ms) {
  if (cap_ms == IDGEN_NO_CAP)
    return UINT64_MAX;
  if (cap_ms < gen->layout.epoch_ms)
    return 0; /* below the epoch: tick 0 is the most it may issue; nothing is safer */
  return ticks_at_or_below(gen, cap_ms);
}

/* Checks a config as idgen_gen_new and idgen_gen_init both need it. */
static int check_config(const idgen_gen_config *config, idgen_layout *layout) {
  if (!config || !config->clock)
    return IDGEN_EINVAL;
  *layout = config->layout;
  if (idgen_layout_validate(layout, 0, NULL, 0) < 0)
    return IDGEN_ELAYOUT;
  if (config->policy != IDGEN_POLICY_FAIL && config->policy != IDGEN_POLICY_WAIT &&
      config->policy != IDGEN_POLICY_LOGICAL)
    return IDGEN_EINVAL;
  if (config->armed && config->worker > idgen_layout_max_worker(layout))
    return IDGEN_ERANGE;
  int64_t now_ms = idgen_clock_now_ns(config->clock) / NS_PER_MS;
  uint64_t ticks;
  return idgen_layout_ticks(layout, now_ms, &ticks);
}

/* Fills a generator in memory at hand from a checked config. */
static void setup(idgen_gen *gen, const idgen_gen_config *config,
                  const idgen_layout *layout, int owned) {
  memset(gen, 0, sizeof *gen);
  gen->layout = *layout;
  gen->clock = config->clock;
  gen->policy = config->policy;
  gen->spin_ns = config->spin_ns > 0 ? config->spin_ns : NS_PER_MS;
  gen->broken_ns = config->broken_ns > 0 ? config->broken_ns : 500 * NS_PER_MS;
  gen->cap_wait_ns = config->cap_wait_ns == 0  ? 50 * NS_PER_MS
                     : config->cap_wait_ns < 0 ? 0
                                               : config->cap_wait_ns;
  gen->seq_limit = UINT64_C(1) << layout->seq_bits;
  gen->seq_threshold = config->seq_reset_threshold;
  gen->max_ticks = (UINT64_C(1) << layout->time_bits) - 1;
  gen->epoch_ns = layout->epoch_ms * NS_PER_MS;
  gen->unit_ns = (int64_t)layout->unit_ms * NS_PER_MS;
  gen->used_bits = layout->seq_bits + 1u;
  gen->process_shared = config->process_shared != 0;
  gen->owned = owned;
  idgen__fork_watch();
  atomic_init(&gen->state, 0);
  atomic_init(&gen->arm_seq, 0);
  atomic_init(&gen->worker, 0);
  atomic_init(&gen->refusal, IDGEN_ENOTARMED);
  atomic_init(&gen->fork_gen, idgen__fork_generation());
  atomic_init(&gen->cap_ticks, 0);
  atomic_init(&gen->cap_ms, 0);
  atomic_init(&gen->deadline_ns, 0);
  if (config->armed)
    idgen_gen_arm(gen, config->worker, config->floor_ms, config->cap_ms,
                  config->deadline_ns);
}

/* The generator's size rounded up to whole cache lines (aligned_alloc wants a multiple
 * of the alignment). */
size_t idgen_gen_size(void) {
  return (sizeof(idgen_gen) + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
}

int idgen_gen_new(idgen_gen **out, const idgen_gen_config *config) {
  idgen_layout layout;
  int rc = out ? check_config(config, &layout) : IDGEN_EINVAL;
  if (rc < 0)
    return rc;
  idgen_gen *gen = aligned_alloc(CACHE_LINE, idgen_gen_size());
  if (!gen)
    return IDGEN_ENOMEM;
  setup(gen, config, &layout, 1);
  *out = gen;
  return 0;
}

int idgen_gen_init(idgen_gen **out, void *mem, size_t size,
                   const idgen_gen_config *config) {
  if (!out || !mem || (uintptr_t)mem % IDGEN_GEN_ALIGN)
    return IDGEN_EINVAL;
  if (size < idgen_gen_size())
    return IDGEN_EBUFSIZE;
  idgen_layout layout;
  int rc = check_config(config, &layout);
  if (rc < 0)
    return rc;
  setup(mem, config, &layout, 0);
  *out = mem;
  return 0;
}

void idgen_gen_free(idgen_gen *gen) {
  if (gen && gen->owned)
    free(gen);
}

/* Sets a sticky refusal unless another one is already set; returns the one in force. */
static int refuse(idgen_gen *gen, int err) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&gen->refusal, &expected, err))
    return err;
  return expected;
}

static void count_refusal(idgen_gen *gen, int err) {
  if (err == IDGEN_ELEASE)
    atomic_fetch_add_explicit(&gen->refused_lease, 1, memory_order_relaxed);
  else if (err == IDGEN_ECAP)
    atomic_fetch_add_explicit(&gen->refused_cap, 1, memory_order_relaxed);
  else if (err == IDGEN_ENOTARMED)
    atomic_fetch_add_explicit(&gen->refused_unarmed, 1, memory_order_relaxed);
  else if (err == IDGEN_EFORKED)
    atomic_fetch_add_explicit(&gen->refused_forked, 1, memory_order_relaxed);
}

/* Waits at the cap for the lease to raise it; on time out the refusal sticks. */
static int wait_for_cap(idgen_gen *gen, uint64_t ticks) {
  atomic_fetch_add_explicit(&gen->cap_waits, 1, memory_order_relaxed);
  int64_t waited = 0, step = NS_PER_MS;
  while (waited < gen->cap_wait_ns) {
    idgen_clock_sleep_ns(gen->clock, step);
    waited += step;
    if (ticks <= atomic_load(&gen->cap_ticks))
      return 0;
    if (atomic_load(&gen->refusal))
      break;
  }
  return refuse(gen, IDGEN_ECAP);
}

typedef struct reservation {
  uint64_t ticks, first_seq, count, worker;
} reservation;

/* reserve() is the hot path: each decision is a step of its own, always inlined, so the
 * split costs no call. A step returns STEP_GO (on to the next), STEP_RETRY (back to the
 * top of reserve's loop) or a negative error, which reserve returns. */
#define HOT static inline __attribute__((always_inline))
enum { STEP_GO = 0, STEP_RETRY = 1 };

/* One pass of reserve's loop: what it read, and the unit and first sequence number it
 * means to take. */
typedef struct attempt {
  uint64_t state;      /* the state word as read, before the clock */
  uint64_t last, used; /* its unit and how much of its run is used */
  int64_t now_ns;
  uint64_t now_ticks;
  uint64_t ticks, first; /* the unit to take numbers in, and the first of them */
} attempt;

/* Sets a sticky refusal (or finds the one in force), counts it and returns it. */
HOT int refuse_counted(idgen_gen *gen, int err) {
  err = refuse(gen, err);
  count_refusal(gen, err);
  return err;
}

/* Refusal: a sticky refusal (not armed, lease lost, cap, forked) is in force. */
HOT int step_refusal(idgen_gen *gen) {
  int refusal = atomic_load_explicit(&gen->refusal, memory_order_relaxed);
  if (refusal) {
    count_refusal(gen, refusal);
    return refusal;
  }
  return STEP_GO;
}

/* Fork: a forked child shares the parent's worker, cap and state: both would issue the
 * same IDs. It refuses until armed in the child (one load, no system call). A generator
 * in shared memory is one state for both: no copy, nothing to refuse (read only when
 * the generations differ, so private ones pay nothing for it). */
HOT int step_fork(idgen_gen *gen) {
  if (atomic_load_explicit(&gen->fork_gen, memory_order_relaxed) !=
          idgen__fork_generation() &&
      !gen->process_shared) {
    return refuse_counted(gen, IDGEN_EFORKED);
  }
  return STEP_GO;
}

/* Deadline: past the lease's deadline the lease may be gone; the refusal sticks. */
HOT int step_deadline(idgen_gen *gen, int64_t now_ns) {
  if (now_ns >= atomic_load_explicit(&gen->deadline_ns, memory_order_relaxed)) {
    return refuse_counted(gen, IDGEN_ELEASE);
  }
  return STEP_GO;
}

/* The clock in the last unit issued (or behind it under LOGICAL): go on in its run. A
 * full run waits for the next unit, or under LOGICAL and behind, moves on to it rather
 * than block. */
HOT int step_same_unit(idgen_gen *gen, attempt *a, int64_t *behind_since) {
  if (a->now_ticks < a->last && *behind_since < 0) {
    *behind_since = a->now_ns;
    atomic_fetch_add_explicit(&gen->clock_back, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&gen->clock_back_logical, 1, memory_order_relaxed);
  }
  a->ticks = a->last;
  a->first = a->used;
  if (a->used >= gen->seq_limit) {
    if (a->now_ticks < a->last) {
      a->ticks = a->last + 1;
      a->first = 0;
    } else {
      atomic_fetch_add_explicit(&gen->seq_waits, 1, memory_order_relaxed);
      int64_t next_unit = gen->epoch_ns + (int64_t)(a->last + 1) * gen->unit_ns;
      idgen_clock_spin_ns(gen->clock, next_unit - a->now_ns);
      return STEP_RETRY;
    }
  }
  return STEP_GO;
}

/* Clock behind: the clock is behind the last unit issued. FAIL, or a gap past
 * broken_ns, fails; otherwise wait the gap out and try again, failing once the clock
 * has been behind for broken_ns. */
HOT int step_behind(idgen_gen *gen, const attempt *a, int64_t *behind_since) {
  int64_t gap = gen->epoch_ns + (int64_t)a->last * gen->unit_ns - a->now_ns;
  if (*behind_since < 0) {
    *behind_since = a->now_ns;
    atomic_fetch_add_explicit(&gen->clock_back, 1, memory_order_relaxed);
  }
  if (gen->policy == IDGEN_POLICY_FAIL || gap > gen->broken_ns) {
    atomic_fetch_add_explicit(&gen->clock_back_failed, 1, memory_order_relaxed);
    return IDGEN_ECLOCKBACK;
  }
  if (gap + 1 <= gen->spin_ns)
    idgen_clock_spin_ns(gen->clock, gap + 1);
  else
    idgen_clock_sleep_ns(gen->clock, gap + 1);
  if (idgen_clock_now_ns(gen->clock) - *behind_since >= gen->broken_ns) {
    atomic_fetch_add_explicit(&gen->clock_back_failed, 1, memory_order_relaxed);
    return IDGEN_ECLOCKBACK;
  }
  return STEP_RETRY;
}

/* The unit: a new unit starts a new run, unless the threshold keeps the counter going;
 * the same unit goes on in its run; a clock behind waits or fails. */
HOT int step_unit(idgen_gen *gen, attempt *a, int64_t *behind_since) {
  if (a->now_ticks > a->last) {
    int carry =
        gen->seq_threshold && a->used <= gen->seq_threshold && a->used < gen->seq_limit;
    a->ticks = a->now_ticks;
    a->first = carry ? a->used : 0;
    return STEP_GO;
  }
  if (a->now_ticks == a->last || gen->policy == IDGEN_POLICY_LOGICAL)
    return step_same_unit(gen, a, behind_since);
  return step_behind(gen, a, behind_since);
}

/* Cap: never past the layout's last unit, nor past the last persisted HWM; at the cap,
 * wait for the lease to raise it. */
HOT int step_cap(idgen_gen *gen, uint64_t ticks, uint64_t cap) {
  if (ticks > gen->max_ticks)
    return IDGEN_ETIMEEND;
  if (ticks > cap) {
    int err = wait_for_cap(gen, ticks);
    if (err < 0) {
      count_refusal(gen, err);
      return err;
    }
    return STEP_RETRY;
  }
  return STEP_GO;
}

/* The CAS: takes up to want numbers of the run in one compare-and-swap, and keeps them
 * only if no re-arm or disarm happened while they were taken. */
HOT int step_cas(idgen_gen *gen, uint64_t arm, const attempt *a, uint64_t want,
                 uint64_t *count_out) {
  uint64_t count = gen->seq_limit - a->first;
  if (count > want)
    count = want;
  uint64_t state = a->state, next = pack(gen, a->ticks, a->first + count);
  /* seq_cst, with the re-check below: see idgen_gen_disarm. */
  if (!atomic_compare_exchange_weak_explicit(&gen->state, &state, next,
                                             memory_order_seq_cst, memory_order_relaxed))
    return STEP_RETRY;
  if (a->first == 0) /* a new run closed the old one */
    atomic_fetch_add_explicit(&gen->issued_closed, a->used, memory_order_relaxed);
  /* The acquire fence orders the relaxed reads of worker and cap in reserve before the
   * re-check (a seqlock reader); the seq_cst load pairs with idgen_gen_disarm. */
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&gen->arm_seq, memory_order_seq_cst) != arm)
    return STEP_RETRY;
  *count_out = count;
  return STEP_GO;
}

/* Reserves up to want (>= 1) consecutive sequence numbers in one time unit with one
 * CAS. Returns 0 with *r filled, or a negative error. */
HOT int reserve(idgen_gen *gen, uint64_t want, reservation *r) {
  int64_t behind_since = -1; /* clock time when this call found the clock behind */
  for (;;) {
    uint64_t arm = atomic_load_explicit(&gen->arm_seq, memory_order_acquire);
    if (arm & 1) {
      idgen_clock_spin_ns(gen->clock, 0);
      continue;
    }
    int step = step_refusal(gen);
    if (step == STEP_GO)
      step = step_fork(gen);
    if (step < 0)
      return step;
    uint64_t worker = atomic_load_explicit(&gen->worker, memory_order_relaxed);
    uint64_t cap = atomic_load_explicit(&gen->cap_ticks, memory_order_relaxed);

    /* Read the state before the clock: then the clock is at or past any unit another
     * thread stored, and a lost race never looks like a step back. */
    attempt a;
    a.state = atomic_load_explicit(&gen->state, memory_order_acquire);
    a.now_ns = idgen_clock_now_ns(gen->clock);
    if ((step = step_deadline(gen, a.now_ns)) < 0)
      return step;
    if (a.now_ns < gen->epoch_ns)
      return IDGEN_EBEFOREEPOCH;
    a.now_ticks = to_ticks(gen, a.now_ns);
    a.last = state_ticks(gen, a.state);
    a.used = state_used(gen, a.state);

    uint64_t count = 0;
    step = step_unit(gen, &a, &behind_since);
    if (step == STEP_GO)
      step = step_cap(gen, a.ticks, cap);
    if (step == STEP_GO)
      step = step_cas(gen, arm, &a, want, &count);
    if (step == STEP_RETRY)
      continue;
    if (step < 0)
      return step;
    if (behind_since >= 0 && gen->policy == IDGEN_POLICY_WAIT)
      atomic_fetch_add_explicit(&gen->clock_back_waited, 1, memory_order_relaxed);
    r->ticks = a.ticks;
    r->first_seq = a.first;
    r->count = count;
    r->worker = worker;
    return 0;
  }
}

static inline uint64_t compose(const idgen_gen *gen, const reservation *r, uint64_t seq) {
  return r->ticks << gen->layout.time_shift | r->worker << gen->layout.node_shift |
         seq << gen->layout.seq_shift;
}

int idgen_gen_next(idgen_gen *gen, uint64_t *id) {
  reservation r = {0, 0, 0, 0};
  int rc = reserve(gen, 1, &r);
  if (rc < 0)
    return rc;
  *id = compose(gen, &r, r.first_seq);
  return 0;
}

int64_t idgen_gen_next_batch(idgen_gen *gen, uint64_t *ids, size_t n) {
  size_t done = 0;
  while (done < n) {
    reservation r = {0, 0, 0, 0};
    int rc = reserve(gen, n - done, &r);
    if (rc < 0)
      return done ? (int64_t)done : rc;
    for (uint64_t i = 0; i < r.count; i++)
      ids[done + i] = compose(gen, &r, r.first_seq + i);
    done += r.count;
  }
  return (int64_t)done;
}

/* Enters the arm seqlock (its word odd: every reservation under way retries); returns
 * the even value it left, to hand to arm_end. */
static uint64_t arm_begin(idgen_gen *gen) {
  uint64_t seq = atomic_load(&gen->arm_seq);
  for (;;) {
    if (!(seq & 1) && atomic_compare_exchange_weak(&gen->arm_seq, &seq, seq + 1))
      return seq;
    seq = atomic_load(&gen->arm_seq);
  }
}

static void arm_end(idgen_gen *gen, uint64_t seq) {
  atomic_store_explicit(&gen->arm_seq, seq + 2, memory_order_release);
}

int idgen_gen_arm(idgen_gen *gen, uint64_t worker, int64_t floor_ms, int64_t cap_ms,
                  int64_t deadline_ns) {
  if (worker > idgen_layout_max_worker(&gen->layout))
    return IDGEN_ERANGE;
  uint64_t seq = arm_begin(gen);
  atomic_store(&gen->worker, worker);
  atomic_store(&gen->cap_ms, cap_ms);
  atomic_store(&gen->cap_ticks, cap_to_ticks(gen, cap_ms));
  atomic_store(&gen->deadline_ns, deadline_ns);
  atomic_store(&gen->fork_gen, idgen__fork_generation());
  raise_floor(gen, floor_ms);
  atomic_store(&gen->refusal, 0);
  arm_end(gen, seq);
  return 0;
}

/* Once disarm returns, no reservation still under way returns an ID, and a read of the
 * state after it (idgen_gen_last_ms, in this thread or one ordered after it) covers
 * every ID returned: a final HWM read then is never below an issued timestamp.
 * This is the store-buffering pattern: disarm writes arm_seq (arm_begin's CAS) and the
 * caller then reads state; reserve writes state (its CAS) and then re-reads arm_seq.
 * With acquire and release orders both reads may miss both writes (allowed on ARM and
 * POWER): the caller would read a last_ms below an ID that reserve still returns. The
 * four accesses are seq_cst, so they sit in one total order S consistent with program
 * order: if reserve's CAS precedes the caller's read in S, the read sees it; otherwise
 * arm_begin's CAS, before that read, precedes reserve's re-check, which then sees an
 * arm_seq other than the one it started with and retries into the refusal. On x86 this
 * costs nothing: the CAS is a locked instruction and a seq_cst load a plain one. */
void idgen_gen_disarm(idgen_gen *gen) {
  uint64_t seq = arm_begin(gen);
  atomic_store(&gen->refusal, IDGEN_ENOTARMED);
  arm_end(gen, seq);
}

void idgen_gen_set_cap(idgen_gen *gen, int64_t cap_ms) {
  int64_t old = atomic_load(&gen->cap_ms);
  while (cap_ms > old && !atomic_compare_exchange_weak(&gen->cap_ms, &old, cap_ms))
    ;
  uint64_t ticks = cap_to_ticks(gen, cap_ms), old_ticks = atomic_load(&gen->cap_ticks);
  while (ticks > old_ticks &&
         !atomic_compare_exchange_weak(&gen->cap_ticks, &old_ticks, ticks))
    ;
  int expected = IDGEN_ECAP;
  atomic_compare_exchange_strong(&gen->refusal, &expected, 0);
}

void idgen_gen_set_deadline(idgen_gen *gen, int64_t deadline_ns) {
  if (atomic_load(&gen->refusal) != IDGEN_ELEASE)
    atomic_store(&gen->deadline_ns, deadline_ns);
}

int64_t idgen_gen_now_ns(idgen_gen *gen) {
  return idgen_clock_now_ns(gen->clock);
}

int64_t idgen_gen_last_ms(const idgen_gen *gen) {
  uint64_t state = atomic_load(&((idgen_gen *)gen)->state);
  if (state == 0)
    return 0;
  return gen->layout.epoch_ms +
         (int64_t)state_ticks(gen, state) * (int64_t)gen->layout.unit_ms;
}

const idgen_layout *idgen_gen_layout(const idgen_gen *gen) {
  return &gen->layout;
}

void idgen_gen_stats_get(const idgen_gen *cgen, idgen_gen_stats *out) {
  idgen_gen *gen = (idgen_gen *)cgen; /* atomics are read, never written, here */
  idgen_gen_stats s;
  memset(&s, 0, sizeof s);
  uint64_t state = atomic_load(&gen->state);
  uint64_t used = state_used(gen, state);
  s.issued = atomic_load(&gen->issued_closed) + used;
  s.seq_waits = atomic_load(&gen->seq_waits);
  s.clock_back = atomic_load(&gen->clock_back);
  s.clock_back_waited = atomic_load(&gen->clock_back_waited);
  s.clock_back_logical = atomic_load(&gen->clock_back_logical);
  s.clock_back_failed = atomic_load(&gen->clock_back_failed);
  s.cap_waits = atomic_load(&gen->cap_waits);
  s.refused_lease = atomic_load(&gen->refused_lease);
  s.refused_cap = atomic_load(&gen->refused_cap);
  s.refused_unarmed = atomic_load(&gen->refused_unarmed);
  s.refused_forked = atomic_load(&gen->refused_forked);
  s.worker = atomic_load(&gen->worker);
  s.refusal = atomic_load(&gen->refusal);
  if (s.refusal == 0 && !gen->process_shared &&
      atomic_load(&gen->fork_gen) != idgen__fork_generation())
    s.refusal = IDGEN_EFORKED; /* what the next call will say */
  s.armed = s.refusal == 0;
  s.cap_ms = atomic_load(&gen->cap_ms);
  s.deadline_ns = atomic_load(&gen->deadline_ns);
  s.last_ms = idgen_gen_last_ms(gen);
  *out = s;
}
