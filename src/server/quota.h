/* quota.h: a token's quota, IDs per second with a burst, as GCRA (the generic cell rate
 * algorithm): one theoretical arrival time (TAT) per token in an _Atomic uint64_t, moved
 * by CAS, shared by every connection and thread. Integer nanoseconds only: with the
 * limits below no sum or product can overflow (quota.c says why). */
#ifndef IDGEN_SERVER_QUOTA_H
#define IDGEN_SERVER_QUOTA_H

#include <stdatomic.h>
#include <stdint.h>

#define IDGEN__QUOTA_RATE_MAX UINT64_C(1000000) /* IDs/s: an interval of 1000 ns at least  \
                                                 */
#define IDGEN__QUOTA_BURST_MAX UINT64_C(1000000000) /* IDs */
/* The largest now_ns taken (2^63: CLOCK_MONOTONIC for 292 years); later ones count as it.
 */
#define IDGEN__QUOTA_NOW_MAX (UINT64_C(1) << 63)

/* A quota's parameters; interval_ns 0: no quota (every request passes, nothing is read). */
typedef struct idgen__quota {
  uint64_t rate, burst;  /* as configured */
  uint64_t interval_ns;  /* 1e9 / rate: the time one ID costs */
  uint64_t tolerance_ns; /* burst * interval_ns: how far ahead of now the TAT may be */
} idgen__quota;

/* rate 0: no quota. Else rate 1..IDGEN__QUOTA_RATE_MAX and burst 1..IDGEN__QUOTA_BURST_MAX
 * (0: the default, one second of the rate). Returns 0, or -1 (q untouched). */
int idgen__quota_init(idgen__quota *q, uint64_t rate, uint64_t burst);

typedef enum idgen__quota_verdict {
  IDGEN__QUOTA_OK,        /* charged: issue */
  IDGEN__QUOTA_OVER,      /* not charged: *retry_ns until the same request would pass */
  IDGEN__QUOTA_OVER_BURST /* k > burst: no wait will ever let it pass */
} idgen__quota_verdict;

/* Charges k IDs at now_ns to the bucket *tat (0 at start: full). Thread-safe, lock-free
 * (one CAS, retried while another thread moves the TAT). */
idgen__quota_verdict idgen__quota_take(const idgen__quota *q, _Atomic uint64_t *tat,
                                       uint64_t now_ns, uint64_t k, uint64_t *retry_ns);

/* Inline: the hot path of a token without quota is one test. */
static inline idgen__quota_verdict idgen__quota_charge(const idgen__quota *q,
                                                       _Atomic uint64_t *tat,
                                                       uint64_t (*now)(void), uint64_t k,
                                                       uint64_t *retry_ns) {
  if (!q || !q->interval_ns)
    return IDGEN__QUOTA_OK;
  return idgen__quota_take(q, tat, now(), k, retry_ns);
}

/* The TAT that leaves the bucket as full, as a fraction of its burst, under `to` as tat
 * left it under `from` (a reload that changed rate or burst). A bucket gaining a quota
 * starts full; one losing it does not matter. Main thread; exact integer arithmetic. */
uint64_t idgen__quota_rescale(uint64_t tat, uint64_t now_ns, const idgen__quota *from,
                              const idgen__quota *to);

/* Retry-After: retry_ns in whole seconds, rounded up, 1 at least. */
uint64_t idgen__quota_retry_after_s(uint64_t retry_ns);

/* a * b / c rounded down, for a <= c (so the result is <= b), without 128-bit types. */
uint64_t idgen__mul_div(uint64_t a, uint64_t b, uint64_t c);

#endif
