/* fake_lease.h: a scripted lease provider for tests of the keeper: a TTL above 0, and
 * the result and duration of each acquire, keepalive, HWM write and release chosen per
 * call. It keeps the HWM per worker ID as a store would, and counts every call. Link
 * it (the idgen_test_doubles library); every function is thread-safe. */
#ifndef IDGEN_FAKE_LEASE_H
#define IDGEN_FAKE_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/lease.h"

typedef enum fake_op {
  FAKE_ACQUIRE,
  FAKE_KEEPALIVE,
  FAKE_WRITE_HWM,
  FAKE_RELEASE,
  FAKE_OPS
} fake_op;

#define FAKE_BLOCK (-1) /* a delay_ms: wait until fake_lease_unblock */

/* One call's behaviour. */
typedef struct fake_call {
  int rc;           /* what it returns: 0 or a negative IDGEN_E* */
  int64_t delay_ms; /* real time it takes before returning (a stall), or FAKE_BLOCK */
  int store_anyway; /* a write or release that fails still reaches the store (an
                       ambiguous timeout); 0: a failed call stores nothing */
} fake_call;

typedef struct fake_lease fake_lease;

/* A provider whose acquire grants worker with the HWM the store holds for it (hwm_ms
 * to begin with) and ttl_ms (0: it cannot expire); fenced. Every call succeeds at once
 * until scripted otherwise. Free it with idgen_lease_free(fake_lease_base(f)). */
fake_lease *fake_lease_new(uint64_t worker, int64_t hwm_ms, int64_t ttl_ms);
idgen_lease *fake_lease_base(fake_lease *f);

/* Queues how the next n calls of op behave, after any still queued; once the queue
 * runs out, calls behave as the default (0 at once until set). */
void fake_lease_script(fake_lease *f, fake_op op, const fake_call *calls, size_t n);
void fake_lease_set_default(fake_lease *f, fake_op op, fake_call call);
/* The worker ID the next acquire grants. */
void fake_lease_set_worker(fake_lease *f, uint64_t worker);
/* Lets every call waiting on FAKE_BLOCK return, now and later ones at once. */
void fake_lease_unblock(fake_lease *f);

/* How many calls of op have started so far. */
uint64_t fake_lease_calls(fake_lease *f, fake_op op);
/* Waits (real time) until at least n calls of op have started: 0, or -1 when
 * timeout_ms passed first. */
int fake_lease_wait_calls(fake_lease *f, fake_op op, uint64_t n, int64_t timeout_ms);

/* Waits (real time) until keeper is in state want: 0, or -1 (saying on stderr which
 * state it is in) when timeout_ms passed first. For any keeper, whatever its provider. */
int fake_keeper_wait_state(idgen_keeper *keeper, idgen_keeper_state want,
                           int64_t timeout_ms);

/* The HWM the store holds for worker now: what the next holder would read. */
int64_t fake_lease_hwm(fake_lease *f, uint64_t worker);
/* The highest HWM ever stored for worker. */
int64_t fake_lease_max_hwm(fake_lease *f, uint64_t worker);
/* 1 while the worker ID is held (acquired and not released or lost). */
int fake_lease_held(fake_lease *f);

#endif
