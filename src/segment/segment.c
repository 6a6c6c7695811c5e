/* segment.c: the segment generator: one CAS on a packed (block generation, offset) word
 * per reservation, two block slots (current and buffered, Leaf's double buffer), a
 * fetcher that leases the next block before the current one runs out, and the step
 * adapting to how long blocks last. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "segment/segment.h"

#define CACHE_LINE 64
/* pos = generation << OFF_BITS | offset: the offset counts the numbers of the current
 * block already handed out, so a block holds fewer than 2^OFF_BITS numbers. The
 * generation wraps after 2^32 blocks; a CAS could mistake a wrapped word for its own
 * only if a thread slept through four billion blocks between its load and its CAS. */
#define OFF_BITS 32
#define OFF_MASK ((UINT64_C(1) << OFF_BITS) - 1)
#define GEN_OF(w) ((w) >> OFF_BITS)
#define NS_PER_MS INT64_C(1000000)
/* Period changes one call may meet: a call crosses one bound, two on a clock stepped
 * meanwhile; more means the clock runs away or the bounds are wrong, never a reason to
 * lease and burn blocks on (issue 35). */
#define PERIOD_CHANGES_MAX 3

_Static_assert(IDGEN_SEGMENT_STEP_MAX < (UINT64_C(1) << OFF_BITS), "step fits the offset");

/* One block: numbers first, first + stride, ... (count of them). Written only by the
 * fetcher, under mu, while the slot is not the current one: see fill(). */
typedef struct slot {
  _Atomic uint64_t first, count, stride;
  _Atomic uint64_t prefetch_at; /* fetch the next block once this many are used */
  /* A period's block: handed out as base + n, only while the clock's ms lies in
   * [start_ms, end_ms). Without a period: base 0 and every time. */
  _Atomic uint64_t base;
  _Atomic int64_t start_ms, end_ms;
} slot;

static const int64_t latency_bounds_ms[] = IDGEN_LEASE_LATENCY_BOUNDS_MS;

struct idgen__segment {
  _Alignas(CACHE_LINE) _Atomic uint64_t pos; /* the current block is slots[gen & 1] */
  slot slots[2];

  /* Constant after idgen__segment_new. */
  idgen__segment_config cfg;
  char name[IDGEN_SEGMENT_NAME_MAX + 1]; /* cfg.name points here */
  int wake_fd;                           /* the fetcher's doorbell (thread mode) */
  pthread_t thread;
  int thread_started;

  pthread_mutex_t mu;
  pthread_cond_t fetched; /* broadcast after every fetch attempt */
  /* Guarded by mu. */
  int next_ready;    /* slots[(gen + 1) & 1] holds the buffered block */
  int fetching;      /* a fetch is in flight (mu is released during it) */
  int want;          /* a caller waits for a block */
  int failing;       /* the last fetch failed */
  int went_back;     /* a block at or below the floor came: no fetch any more */
  int period_full;   /* the current period is full: no fetch until the next one */
  uint64_t attempts; /* fetches tried */
  int stop;
  int64_t retry_at_ns;   /* clock time of the next try after a failure */
  int64_t last_fetch_ns; /* clock time of the last successful fetch; -1: none */
  uint64_t step;         /* the step of the last block (config step before any) */
  uint64_t last_max;     /* the highest number leased so far (of this period's key) */
  int last_rc;
  /* A period (cfg.period): the current one, its key and bounds; the key last started
   * in the backend (idgen__segment_key_start). */
  uint64_t period, period_mult, key_started;
  int64_t period_start_ms, period_end_ms;
  char key[IDGEN_SEGMENT_NAME_MAX + 1];
  char err[IDGEN_SEGMENT_WHY_MAX];

  /* Counters. */
  _Alignas(CACHE_LINE) _Atomic uint64_t issued_closed; /* numbers of blocks used up */
  _Atomic uint64_t blocks, backend_errors, refused, waits;
  _Atomic uint64_t step_now, last_max_now, next_left_now, period_now, period_dropped;
  _Atomic uint64_t period_burnt;
  _Atomic uint64_t period_changes; /* every change of period, even to the same number */
  _Atomic int backend_ok;
  _Atomic uint64_t latency_count, latency_sum_us;
  _Atomic uint64_t latency_buckets[IDGEN_LEASE_LATENCY_BUCKETS];
};

/* A bad value: its message into err, IDGEN_EINVAL returned (core/error.c). */
#define fail(err, errlen, ...) idgen__fail(IDGEN_EINVAL, err, errlen, __VA_ARGS__)

void idgen__segment_config_init(idgen__segment_config *c, const char *name,
                                idgen__segment_backend *backend, idgen_clock *clock) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->backend = backend;
  c->clock = clock;
  c->step = 1000;
  c->max_step = 100000;
  c->prefetch_pct = 20;
  c->period_ns = INT64_C(15) * 60 * 1000 * NS_PER_MS;
  c->retry_ns = 1000 * NS_PER_MS;
}

const char *idgen__segment_name(const idgen__segment *seg) {
  return seg->cfg.name;
}

static int64_t now_ns(idgen__segment *seg) {
  return idgen_clock_now_ns(seg->cfg.clock);
}

static void wake(idgen__segment *seg) {
  if (seg->wake_fd >= 0) {
    uint64_t one = 1;
    ssize_t w = write(seg->wake_fd, &one, sizeof one);
    (void)w; /* a full counter is still a pending wake-up */
  }
}

static void observe(idgen__segment *seg, int64_t ns) {
  int64_t us = ns > 0 ? ns / 1000 : 0;
  size_t i = 0;
  while (i < sizeof latency_bounds_ms / sizeof latency_bounds_ms[0] &&
         us > latency_bounds_ms[i] * 1000)
    i++;
  atomic_fetch_add_explicit(&seg->latency_buckets[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&seg->latency_sum_us, (uint64_t)us, memory_order_relaxed);
  atomic_fetch_add_explicit(&seg->latency_count, 1, memory_order_relaxed);
}

/* ---- The fetcher (mu held) --------------------------------------------------------- */

static slot *current(idgen__segment *seg, uint64_t *offset) {
  uint64_t w = atomic_load(&seg->pos);
  *offset = w & OFF_MASK;
  return &seg->slots[GEN_OF(w) & 1];
}

/* 0 if a fetch is due now, the ns until the retry pause ends, or -1 if none is due. */
static int64_t due_in(idgen__segment *seg) {
  if (seg->next_ready || seg->fetching || seg->stop || seg->went_back || seg->period_full)
    return -1;
  uint64_t off;
  slot *s = current(seg, &off);
  if (!seg->want && off < atomic_load(&s->prefetch_at))
    return -1;
  if (seg->failing) {
    int64_t left = seg->retry_at_ns - now_ns(seg);
    if (left > 0)
      return left;
  }
  return 0;
}

/* Leaf's rule: a block that lasted less than the period doubles the step (up to
 * max_step); one that lasted more than twice the period halves it (down to step). */
static uint64_t adapted_step(const idgen__segment *seg, int64_t now) {
  uint64_t step = seg->step;
  if (seg->last_fetch_ns < 0)
    return step;
  int64_t lasted = now - seg->last_fetch_ns;
  if (lasted < seg->cfg.period_ns)
    step = step * 2 < seg->cfg.max_step ? step * 2 : seg->cfg.max_step;
  else if (lasted / 2 >= seg->cfg.period_ns)
    step = step / 2 > seg->cfg.step ? step / 2 : seg->cfg.step;
  return step;
}

/* A block must lie above every number leased before: a backend whose counter went
 * back (a restored backup, a reset row) would hand out numbers again. *back is set when
 * it did: the refusal is then for good (see fetch_locked). */
static int check_block(idgen__segment *seg, const idgen__segment_block *b, uint64_t floor,
                       int *back) {
  idgen__segment_backend *be = seg->cfg.backend;
  if (b->max == 0 || b->count == 0 || b->stride == 0 || b->count > IDGEN_SEGMENT_STEP_MAX ||
      b->max > IDGEN_SEGMENT_NUMBER_MAX || (b->count - 1) > (b->max - 1) / b->stride)
    return idgen__segment_why(be, IDGEN_EPROTO,
                              "%s: malformed block (max %llu, count %llu, stride %llu)",
                              be->vtable->name, (unsigned long long)b->max,
                              (unsigned long long)b->count, (unsigned long long)b->stride);
  uint64_t first = b->max - (b->count - 1) * b->stride;
  if (first <= floor) {
    *back = 1;
    return idgen__segment_why(
        be, IDGEN_EPROTO,
        "%s: block %llu-%llu of '%s' is not above the last number leased (%llu): was "
        "the counter reset? refusing it until restarted",
        be->vtable->name, (unsigned long long)first, (unsigned long long)b->max,
        seg->cfg.name, (unsigned long long)floor);
  }
  return 0;
}

/* Puts a fetched block in the slot after the current one. That slot was last the
 * current block two generations ago; a reader of that generation that is still about
 * to CAS will fail its CAS, because pos has moved on since. */
static void fill(idgen__segment *seg, const idgen__segment_block *b) {
  slot *s = &seg->slots[(GEN_OF(atomic_load(&seg->pos)) + 1) & 1];
  uint64_t at = b->count * (uint64_t)seg->cfg.prefetch_pct / 100;
  atomic_store(&s->first, b->max - (b->count - 1) * b->stride);
  atomic_store(&s->stride, b->stride);
  atomic_store(&s->prefetch_at, at < b->count ? at : b->count - 1);
  atomic_store(&s->base, seg->period * seg->period_mult);
  atomic_store(&s->start_ms, seg->cfg.period ? seg->period_start_ms : INT64_MIN);
  atomic_store(&s->end_ms, seg->cfg.period ? seg->period_end_ms : INT64_MAX);
  atomic_store(&s->count, b->count);
  atomic_store(&seg->next_left_now, b->count);
  seg->next_ready = 1;
}

static int64_t now_ms(idgen__segment *seg) {
  int64_t ns = now_ns(seg);
  return ns >= 0 ? ns / NS_PER_MS : -((-ns + NS_PER_MS - 1) / NS_PER_MS);
}

/* Makes the current period the clock's (mu held). A period only moves forward: a clock
 * behind the current period's start (a step back across midnight) hands out nothing
 * until it is back (IDGEN_ECLOCKBACK), since the earlier key's numbers above its floor
 * may be handed out already. On a change every block of the old period is dropped, the
 * buffered one and the rest of the current one: the next CAS finds an empty block of
 * the new generation and fetches from the new key. */
static int sync_period(idgen__segment *seg) {
  if (!seg->cfg.period)
    return 0;
  int64_t now = now_ms(seg);
  if (now >= seg->period_start_ms && now < seg->period_end_ms)
    return 0;
  if (seg->period && now < seg->period_start_ms)
    return IDGEN_ECLOCKBACK;
  uint64_t number;
  int64_t start, end;
  int rc = idgen__period_of(seg->cfg.period, seg->cfg.tz, now, &number, &start, &end);
  if (rc < 0)
    return rc;
  /* A period entered must hold the clock, else the next check leaves it at once and a
   * caller changes period without end: refused, and nothing is fetched for it. */
  if (!(start <= now && now < end)) {
    snprintf(seg->err, sizeof seg->err,
             "segment '%s': period %llu [%lld, %lld) does not hold the clock (%lld ms): "
             "refused",
             seg->cfg.name, (unsigned long long)number, (long long)start, (long long)end,
             (long long)now);
    return IDGEN_EPERIOD;
  }
  seg->period = number;
  seg->period_start_ms = start;
  seg->period_end_ms = end;
  snprintf(seg->key, sizeof seg->key, "%s:%llu", seg->cfg.name, (unsigned long long)number);
  seg->last_max = 0; /* a new key: its own counter and floor */
  seg->went_back = 0;
  seg->period_full = 0;
  seg->failing = 0;
  seg->last_fetch_ns = -1;
  seg->step = seg->cfg.step;
  atomic_store(&seg->period_now, number);
  atomic_fetch_add(&seg->period_changes, 1);
  /* An empty block of the new period in the next slot (not the current one: fill's
   * rule), then pos moves to it; a reservation of the old generation fails its CAS. */
  slot *next = &seg->slots[(GEN_OF(atomic_load(&seg->pos)) + 1) & 1];
  atomic_store(&next->count, 0);
  atomic_store(&next->prefetch_at, 0);
  atomic_store(&next->base, number * seg->period_mult);
  atomic_store(&next->start_ms, start);
  atomic_store(&next->end_ms, end);
  uint64_t dropped = seg->next_ready ? atomic_load(&seg->next_left_now) : 0;
  seg->next_ready = 0; /* the buffered block of the old period: dropped */
  atomic_store(&seg->next_left_now, 0);
  uint64_t w = atomic_load(&seg->pos);
  while (!atomic_compare_exchange_weak(&seg->pos, &w, (GEN_OF(w) + 1) << OFF_BITS))
    ;
  slot *old = &seg->slots[GEN_OF(w) & 1];
  uint64_t count = atomic_load(&old->count), off = w & OFF_MASK;
  atomic_fetch_add(&seg->issued_closed, off < count ? off : count);
  atomic_fetch_add(&seg->period_dropped, dropped + (off < count ? count - off : 0));
  wake(seg);
  return 0;
}

/* Fetches one block: mu is released during the backend's call, with fetching set so
 * that nobody else fetches meanwhile. Returns 0 or the fetch's error. */
static int fetch_locked(idgen__segment *seg) {
  int rc = sync_period(seg);
  if (rc < 0) {
    seg->last_rc = rc;
    seg->failing = 1;
    seg->retry_at_ns = now_ns(seg) + seg->cfg.retry_ns;
    if (rc != IDGEN_EPERIOD) /* its reason is in err already */
      snprintf(seg->err, sizeof seg->err, "segment '%s': %s", seg->cfg.name,
               rc == IDGEN_ECLOCKBACK
                   ? "the clock is behind the current period: waiting for it"
                   : idgen_strerror(rc));
    pthread_cond_broadcast(&seg->fetched);
    return rc;
  }
  int64_t started = now_ns(seg);
  uint64_t step = adapted_step(seg, started);
  uint64_t floor = seg->last_max, period = seg->period, start_key = 0;
  char key[IDGEN_SEGMENT_NAME_MAX + 1];
  snprintf(key, sizeof key, "%s", seg->cfg.period ? seg->key : seg->cfg.name);
  if (seg->cfg.period && seg->key_started != period)
    start_key = 1;
  seg->fetching = 1;
  seg->attempts++;
  pthread_mutex_unlock(&seg->mu);

  idgen__segment_backend *be = seg->cfg.backend;
  idgen__segment_block b;
  int64_t t0 = idgen_monotonic_ns();
  int back = 0;
  rc = start_key
           ? idgen__segment_key_start(be, seg->cfg.ns ? seg->cfg.ns : "default", key, step)
           : 0;
  if (rc > 0)
    rc = 0;
  if (!rc)
    rc = be->vtable->fetch(be, key, step, floor, &b);
  observe(seg, idgen_monotonic_ns() - t0);
  if (!rc)
    rc = check_block(seg, &b, floor, &back);
  /* A period holds numbers up to 10^digits - 1: the part of a block past it is cut. */
  if (!rc && seg->cfg.period && b.max >= seg->period_mult) {
    uint64_t first = b.max - (b.count - 1) * b.stride;
    if (first >= seg->period_mult) {
      rc = idgen__segment_why(be, IDGEN_ERANGE,
                              "segment '%s': period %llu is full (%llu numbers)",
                              seg->cfg.name, (unsigned long long)period,
                              (unsigned long long)(seg->period_mult - 1));
    } else {
      b.count = (seg->period_mult - 1 - first) / b.stride + 1;
      b.max = first + (b.count - 1) * b.stride;
    }
  }

  pthread_mutex_lock(&seg->mu);
  seg->fetching = 0;
  if (start_key && (!rc || back))
    seg->key_started = period;
  /* The period changed during the fetch: its block belongs to the old key. Dropped. */
  if (seg->cfg.period && period != seg->period) {
    if (!rc)
      atomic_fetch_add(&seg->period_dropped, b.count);
    seg->last_rc = 0;
    pthread_cond_broadcast(&seg->fetched);
    return 0;
  }
  seg->last_rc = rc;
  /* A counter that went back lost its history: the numbers other processes handed out
   * above this one's floor are unknown, and retrying would climb into them (each try
   * takes a block). Refused until restarted (docs/segment.md). */
  if (back)
    seg->went_back = 1;
  /* Each fetch of a full period would take a block that can never be handed out. */
  if (rc == IDGEN_ERANGE && seg->cfg.period)
    seg->period_full = 1;
  if (rc) {
    seg->failing = 1;
    seg->retry_at_ns = now_ns(seg) + seg->cfg.retry_ns;
    snprintf(seg->err, sizeof seg->err, "%s", be->why[0] ? be->why : idgen_strerror(rc));
    atomic_fetch_add(&seg->backend_errors, 1);
    atomic_store(&seg->backend_ok, 0);
  } else {
    fill(seg, &b);
    seg->failing = 0;
    seg->err[0] = '\0';
    seg->step = step;
    seg->last_max = b.max;
    seg->last_fetch_ns = started;
    atomic_store(&seg->step_now, step);
    atomic_store(&seg->last_max_now, b.max);
    atomic_fetch_add(&seg->blocks, 1);
    atomic_store(&seg->backend_ok, 1);
  }
  pthread_cond_broadcast(&seg->fetched);
  return rc;
}

/* Sleeps up to ns (relative: absolute monotonic waits break under libfaketime), or
 * until woken; ns < 0 waits for a wake-up (checking every second all the same). */
static void nap(idgen__segment *seg, int64_t ns) {
  int ms = ns < 0 || ns / NS_PER_MS >= 1000 ? 1000 : (int)(ns / NS_PER_MS) + 1;
  struct pollfd p = {.fd = seg->wake_fd, .events = POLLIN};
  if (poll(&p, 1, ms) > 0) {
    uint64_t v;
    ssize_t r = read(seg->wake_fd, &v, sizeof v);
    (void)r;
  }
}

static void *fetcher(void *arg) {
  idgen__segment *seg = arg;
  pthread_mutex_lock(&seg->mu);
  while (!seg->stop) {
    /* Leaves an old period by itself too (at most a nap late): its buffered block is
     * dropped before the first call of the new period meets it. */
    if (seg->cfg.period && !seg->fetching)
      sync_period(seg);
    int64_t wait = due_in(seg);
    if (wait == 0) {
      fetch_locked(seg);
      continue;
    }
    pthread_mutex_unlock(&seg->mu);
    nap(seg, wait);
    pthread_mutex_lock(&seg->mu);
  }
  pthread_mutex_unlock(&seg->mu);
  return NULL;
}

int idgen__segment_run_fetcher(idgen__segment *seg) {
  pthread_mutex_lock(&seg->mu);
  int rc = 0;
  if (due_in(seg) == 0)
    rc = fetch_locked(seg) ? seg->last_rc : 1;
  pthread_mutex_unlock(&seg->mu);
  return rc;
}

/* ---- Handing out ------------------------------------------------------------------- */

/* The current block is used up (as seen in word w): move to the buffered block, or
 * wait for the fetch that brings it, or refuse. 0 to try again, or IDGEN_EBACKEND. */
static int next_block(idgen__segment *seg, uint64_t w) {
  pthread_mutex_lock(&seg->mu);
  int rc = 0, waited = 0;
  while (atomic_load(&seg->pos) == w) {
    if (seg->cfg.period && (rc = sync_period(seg)) < 0) {
      atomic_fetch_add(&seg->refused, 1);
      break;
    }
    if (seg->next_ready) {
      /* Nobody can CAS pos meanwhile: every reservation needs offset < count, and this
       * block has none left; other switchers hold mu. */
      atomic_fetch_add(&seg->issued_closed, w & OFF_MASK);
      atomic_store(&seg->pos, (GEN_OF(w) + 1) << OFF_BITS);
      atomic_store(&seg->next_left_now, 0);
      seg->next_ready = 0;
      seg->want = 0;
      wake(seg); /* a prefetch_pct of 0 makes the next fetch due at once */
      break;
    }
    if (seg->failing || seg->stop) {
      atomic_fetch_add(&seg->refused, 1);
      rc = IDGEN_EBACKEND;
      break;
    }
    if (!waited) {
      atomic_fetch_add(&seg->waits, 1);
      waited = 1;
    }
    if (seg->cfg.manual && !seg->fetching) {
      fetch_locked(seg); /* a failure is seen as failing on the next turn */
      continue;
    }
    seg->want = 1;
    wake(seg);
    pthread_cond_wait(&seg->fetched, &seg->mu);
  }
  pthread_mutex_unlock(&seg->mu);
  return rc;
}

/* Reserves up to n numbers of the current block with one CAS: *first and *stride
 * describe them; returns how many (0 when the block is used up, then *w is the word
 * that showed it). */
typedef struct window {
  uint64_t base;
  int64_t start_ms, end_ms;
} window;

static inline __attribute__((always_inline)) uint64_t reserve(idgen__segment *seg,
                                                              uint64_t n, uint64_t *first,
                                                              uint64_t *stride, uint64_t *w,
                                                              window *win) {
  for (;;) {
    uint64_t word = atomic_load(&seg->pos);
    slot *s = &seg->slots[GEN_OF(word) & 1];
    /* Read the slot before the CAS: once the CAS succeeds, pos was still in this
     * generation, so the slot had not been refilled when it was read (fill() writes
     * a slot only after pos has left the generation that used it). */
    uint64_t off = word & OFF_MASK;
    uint64_t count = atomic_load(&s->count), at = atomic_load(&s->prefetch_at);
    uint64_t f = atomic_load(&s->first), st = atomic_load(&s->stride);
    if (seg->cfg.period) {
      win->base = atomic_load(&s->base);
      win->start_ms = atomic_load(&s->start_ms);
      win->end_ms = atomic_load(&s->end_ms);
    }
    if (off >= count) {
      *w = word;
      return 0;
    }
    uint64_t k = count - off < n ? count - off : n;
    if (atomic_compare_exchange_weak(&seg->pos, &word, word + k)) {
      if (off < at && off + k >= at) /* the prefetch point was crossed */
        wake(seg);
      *first = f + off * st;
      *stride = st;
      return k;
    }
  }
}

/* A period's numbers reserved: handed out only if the clock, read after the
 * reservation, is still inside their period; else they are burnt (never handed out) and
 * the period is made the clock's. 1 if in, 0 to try again, or an error. */
static int in_period(idgen__segment *seg, const window *win, uint64_t k) {
  int64_t now = now_ms(seg);
  if (now >= win->start_ms && now < win->end_ms)
    return 1;
  atomic_fetch_add(&seg->period_burnt, k);
  pthread_mutex_lock(&seg->mu);
  int rc = sync_period(seg);
  pthread_mutex_unlock(&seg->mu);
  if (rc < 0)
    atomic_fetch_add(&seg->refused, 1);
  return rc < 0 ? rc : 0;
}

/* One turn of a call: refused once the period changed more than PERIOD_CHANGES_MAX
 * times since the call began (*seen: the count of changes it saw last). */
static int period_turn(idgen__segment *seg, uint64_t *seen, int *changes) {
  uint64_t now = atomic_load(&seg->period_changes);
  if (now == *seen)
    return 0;
  *seen = now;
  if (++*changes <= PERIOD_CHANGES_MAX)
    return 0;
  atomic_fetch_add(&seg->refused, 1);
  pthread_mutex_lock(&seg->mu);
  snprintf(seg->err, sizeof seg->err,
           "segment '%s': the period changed %d times in one call (period %llu now): "
           "refused, the clock or the period's bounds are wrong",
           seg->cfg.name, *changes, (unsigned long long)atomic_load(&seg->period_now));
  pthread_mutex_unlock(&seg->mu);
  return IDGEN_EPERIOD;
}

int idgen__segment_next(idgen__segment *seg, uint64_t *out) {
  uint64_t seen = atomic_load(&seg->period_changes);
  int changes = 0, prc;
  for (;;) {
    if (seg->cfg.period && (prc = period_turn(seg, &seen, &changes)) < 0)
      return prc;
    uint64_t first, stride, w;
    window win = {0, INT64_MIN, INT64_MAX};
    if (reserve(seg, 1, &first, &stride, &w, &win)) {
      if (seg->cfg.period) {
        int in = in_period(seg, &win, 1);
        if (in < 0)
          return in;
        if (!in)
          continue;
      }
      *out = win.base + first;
      return 0;
    }
    int rc = next_block(seg, w);
    if (rc)
      return rc;
  }
}

int64_t idgen__segment_next_batch(idgen__segment *seg, uint64_t *out, size_t n) {
  if (n > INT64_MAX)
    return IDGEN_EINVAL;
  size_t done = 0;
  uint64_t seen = atomic_load(&seg->period_changes);
  int changes = 0, prc;
  while (done < n) {
    if (seg->cfg.period && (prc = period_turn(seg, &seen, &changes)) < 0)
      return done ? (int64_t)done : prc;
    uint64_t first, stride, w;
    window win = {0, INT64_MIN, INT64_MAX};
    uint64_t k = reserve(seg, n - done, &first, &stride, &w, &win);
    if (k == 0) {
      int rc = next_block(seg, w);
      if (rc)
        return done ? (int64_t)done : rc;
      continue;
    }
    if (seg->cfg.period) {
      int in = in_period(seg, &win, k);
      if (in < 0)
        return done ? (int64_t)done : in;
      if (!in)
        continue;
    }
    for (uint64_t i = 0; i < k; i++)
      out[done++] = win.base + first + i * stride;
  }
  return (int64_t)done;
}

int idgen__segment_next_range(idgen__segment *seg, uint64_t n, uint64_t *first,
                              uint64_t *count, uint64_t *stride) {
  if (n == 0)
    return IDGEN_EINVAL;
  uint64_t seen = atomic_load(&seg->period_changes);
  int changes = 0, prc;
  for (;;) {
    if (seg->cfg.period && (prc = period_turn(seg, &seen, &changes)) < 0)
      return prc;
    uint64_t f, st, w;
    window win = {0, INT64_MIN, INT64_MAX};
    uint64_t k = reserve(seg, n, &f, &st, &w, &win);
    if (k == 0) {
      int rc = next_block(seg, w);
      if (rc)
        return rc;
      continue;
    }
    if (seg->cfg.period) { /* a range of a period as its numbers are: in it, or burnt */
      int in = in_period(seg, &win, k);
      if (in < 0)
        return in;
      if (!in)
        continue;
    }
    *first = win.base + f;
    *count = k;
    *stride = st;
    return 0;
  }
}

/* ---- Life cycle and stats ---------------------------------------------------------- */

int idgen__segment_new(idgen__segment **out, const idgen__segment_config *c, char *err,
                       size_t errlen) {
  if (!c->backend || !c->clock)
    return fail(err, errlen, "segment: a backend and a clock are required");
  if (!c->name || idgen__segment_name_check(c->name))
    return fail(err, errlen,
                "segment name '%s': use 1-%d of A-Z a-z 0-9 _ . - (not starting with '.')",
                c->name ? c->name : "", IDGEN_SEGMENT_NAME_MAX);
  if (c->step < 1 || c->step > IDGEN_SEGMENT_STEP_MAX)
    return fail(err, errlen, "segment '%s': step %llu is outside 1-%llu", c->name,
                (unsigned long long)c->step, (unsigned long long)IDGEN_SEGMENT_STEP_MAX);
  if (c->max_step < c->step || c->max_step > IDGEN_SEGMENT_STEP_MAX)
    return fail(err, errlen, "segment '%s': max_step %llu is outside step (%llu) to %llu",
                c->name, (unsigned long long)c->max_step, (unsigned long long)c->step,
                (unsigned long long)IDGEN_SEGMENT_STEP_MAX);
  if (c->prefetch_pct < 0 || c->prefetch_pct > 100)
    return fail(err, errlen, "segment '%s': prefetch %d%% is outside 0-100", c->name,
                c->prefetch_pct);
  if (c->period_ns <= 0 || c->retry_ns < 0)
    return fail(err, errlen, "segment '%s': the period must be positive", c->name);
  if (c->period && (!c->tz || strlen(c->name) > IDGEN_SEGMENT_PERIOD_NAME_MAX ||
                    strchr(c->name, ':') || c->period_digits > 10))
    return fail(err, errlen,
                "segment '%s': a period needs a timezone, a name of at most %d chars "
                "without ':', and 1-10 digits",
                c->name, IDGEN_SEGMENT_PERIOD_NAME_MAX);

  idgen__segment *seg = calloc(1, sizeof *seg);
  if (!seg)
    return IDGEN_ENOMEM;
  seg->cfg = *c;
  snprintf(seg->name, sizeof seg->name, "%s", c->name);
  seg->cfg.name = seg->name;
  seg->step = c->step;
  seg->last_fetch_ns = -1;
  if (!seg->cfg.period_digits)
    seg->cfg.period_digits = 6;
  seg->period_mult = 1;
  for (unsigned i = 0; c->period && i < seg->cfg.period_digits; i++)
    seg->period_mult *= 10;
  seg->wake_fd = -1;
  atomic_store(&seg->step_now, c->step);
  /* Generation 0 is an empty block: the first call, or the fetcher, fetches. */
  if (pthread_mutex_init(&seg->mu, NULL) || pthread_cond_init(&seg->fetched, NULL))
    goto fail_sync;
  if (!c->manual) {
    seg->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (seg->wake_fd < 0)
      goto fail_fd;
    if (pthread_create(&seg->thread, NULL, fetcher, seg))
      goto fail_thread;
    seg->thread_started = 1;
  }
  *out = seg;
  return 0;

fail_thread:
  close(seg->wake_fd);
fail_fd:
  pthread_cond_destroy(&seg->fetched);
  pthread_mutex_destroy(&seg->mu);
fail_sync:
  free(seg);
  return fail(err, errlen, "segment '%s': cannot start its fetcher", c->name);
}

void idgen__segment_free(idgen__segment *seg) {
  if (!seg)
    return;
  pthread_mutex_lock(&seg->mu);
  seg->stop = 1;
  pthread_cond_broadcast(&seg->fetched);
  pthread_mutex_unlock(&seg->mu);
  if (seg->thread_started) {
    wake(seg);
    pthread_join(seg->thread, NULL);
  }
  if (seg->wake_fd >= 0)
    close(seg->wake_fd);
  pthread_cond_destroy(&seg->fetched);
  pthread_mutex_destroy(&seg->mu);
  free(seg);
}

int idgen__segment_wait_ready(idgen__segment *seg, int64_t timeout_ms) {
  for (int64_t waited = 0;; waited += 10) {
    if (seg->cfg.manual)
      idgen__segment_run_fetcher(seg);
    pthread_mutex_lock(&seg->mu);
    int rc = atomic_load(&seg->blocks) > 0 ? 0 : seg->attempts > 0 ? seg->last_rc : 1;
    pthread_mutex_unlock(&seg->mu);
    if (rc <= 0)
      return rc;
    if (waited >= timeout_ms)
      return IDGEN_ETIMEDOUT;
    struct timespec ts = {0, 10 * NS_PER_MS};
    nanosleep(&ts, NULL);
  }
}

void idgen__segment_last_error(idgen__segment *seg, char *out, size_t outlen) {
  pthread_mutex_lock(&seg->mu);
  snprintf(out, outlen, "%s", seg->err);
  pthread_mutex_unlock(&seg->mu);
}

void idgen__segment_stats_get(idgen__segment *seg, idgen__segment_stats *out) {
  idgen__segment_stats s;
  memset(&s, 0, sizeof s);
  uint64_t off;
  slot *cur = current(seg, &off);
  uint64_t count = atomic_load(&cur->count);
  s.issued = atomic_load(&seg->issued_closed) + off;
  s.current_left = count > off ? count - off : 0;
  s.next_left = atomic_load(&seg->next_left_now);
  s.blocks_fetched = atomic_load(&seg->blocks);
  s.backend_errors = atomic_load(&seg->backend_errors);
  s.refused = atomic_load(&seg->refused);
  s.waits = atomic_load(&seg->waits);
  s.step = atomic_load(&seg->step_now);
  s.last_max = atomic_load(&seg->last_max_now);
  s.period = atomic_load(&seg->period_now);
  s.period_dropped = atomic_load(&seg->period_dropped);
  s.period_burnt = atomic_load(&seg->period_burnt);
  s.backend_ok = atomic_load(&seg->backend_ok);
  s.ready = s.current_left + s.next_left > 0 || s.backend_ok;
  s.fetch_latency.count = atomic_load(&seg->latency_count);
  s.fetch_latency.sum_us = atomic_load(&seg->latency_sum_us);
  for (size_t i = 0; i < IDGEN_LEASE_LATENCY_BUCKETS; i++)
    s.fetch_latency.buckets[i] = atomic_load(&seg->latency_buckets[i]);
  *out = s;
}
