/* quota.c: GCRA on one atomic TAT per token.
 *
 * Why nothing overflows: interval_ns <= 1e9 (rate >= 1), burst <= 1e9, so
 * tolerance_ns <= 1e18. A request passes only if k <= burst, so its cost k * interval_ns
 * <= tolerance_ns. now_ns is clamped to 2^63 (~9.22e18); a TAT that passed is at most
 * now + tolerance <= 2^63 + 1e18 < 2^64 (~1.84e19), and a TAT is only ever written by
 * a pass or by idgen__quota_rescale (now + at most the new tolerance). */
#include "server/quota.h"

int idgen__quota_init(idgen__quota *q, uint64_t rate, uint64_t burst) {
  if (rate == 0) {
    *q = (idgen__quota){0, 0, 0, 0};
    return 0;
  }
  if (rate > IDGEN__QUOTA_RATE_MAX || burst > IDGEN__QUOTA_BURST_MAX)
    return -1;
  if (burst == 0)
    burst = rate;
  uint64_t interval = UINT64_C(1000000000) / rate;
  *q = (idgen__quota){rate, burst, interval, burst * interval};
  return 0;
}

idgen__quota_verdict idgen__quota_take(const idgen__quota *q, _Atomic uint64_t *tat,
                                       uint64_t now_ns, uint64_t k, uint64_t *retry_ns) {
  if (!q->interval_ns)
    return IDGEN__QUOTA_OK;
  if (k > q->burst)
    return IDGEN__QUOTA_OVER_BURST;
  if (now_ns > IDGEN__QUOTA_NOW_MAX)
    now_ns = IDGEN__QUOTA_NOW_MAX;
  uint64_t cost = k * q->interval_ns, room = q->tolerance_ns - cost;
  uint64_t old = atomic_load_explicit(tat, memory_order_relaxed);
  for (;;) {
    uint64_t base = old > now_ns ? old : now_ns;
    uint64_t debt = base - now_ns; /* how far ahead of now the bucket is booked */
    if (debt > room) {
      *retry_ns = debt - room;
      return IDGEN__QUOTA_OVER;
    }
    /* base + cost = now + debt + cost <= now + tolerance: no overflow. */
    if (atomic_compare_exchange_weak_explicit(tat, &old, base + cost, memory_order_relaxed,
                                              memory_order_relaxed))
      return IDGEN__QUOTA_OK;
  }
}

uint64_t idgen__mul_div(uint64_t a, uint64_t b, uint64_t c) {
  /* The 128-bit product hi:lo from 32-bit halves, then a long division by c; hi < c
   * because a <= c. */
  uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
  uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffu) + (p2 & 0xffffffffu);
  uint64_t lo = (p0 & 0xffffffffu) | (mid << 32);
  uint64_t hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
  uint64_t q = 0, r = hi;
  for (int i = 63; i >= 0; i--) {
    uint64_t carry = r >> 63;
    r = (r << 1) | ((lo >> i) & 1);
    q <<= 1;
    if (carry || r >= c) {
      r -= c;
      q |= 1;
    }
  }
  return q;
}

uint64_t idgen__quota_rescale(uint64_t tat, uint64_t now_ns, const idgen__quota *from,
                              const idgen__quota *to) {
  if (now_ns > IDGEN__QUOTA_NOW_MAX)
    now_ns = IDGEN__QUOTA_NOW_MAX;
  if (!to->interval_ns || !from->interval_ns)
    return now_ns; /* a new quota starts full */
  uint64_t debt = tat > now_ns ? tat - now_ns : 0;
  if (debt > from->tolerance_ns)
    debt = from->tolerance_ns;
  return now_ns + idgen__mul_div(debt, to->tolerance_ns, from->tolerance_ns);
}

uint64_t idgen__quota_retry_after_s(uint64_t retry_ns) {
  uint64_t s = retry_ns / 1000000000u + (retry_ns % 1000000000u != 0);
  return s ? s : 1;
}
