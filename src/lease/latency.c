/* latency.c: the histogram of a provider's requests to its coordination service. */
#include <stdatomic.h>

#include "lease/lease_internal.h"

static const int64_t bounds_ms[] = IDGEN_LEASE_LATENCY_BOUNDS_MS;

void idgen__lease_observe(idgen_lease *lease, int64_t ns) {
  int64_t us = ns > 0 ? ns / 1000 : 0;
  size_t i = 0;
  while (i < sizeof bounds_ms / sizeof bounds_ms[0] && us > bounds_ms[i] * 1000)
    i++;
  atomic_fetch_add_explicit(&lease->latency_buckets[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&lease->latency_sum_us, (uint64_t)us, memory_order_relaxed);
  atomic_fetch_add_explicit(&lease->latency_count, 1, memory_order_relaxed);
}

void idgen_lease_latency_get(idgen_lease *lease, idgen_lease_latency *out) {
  idgen_lease_latency l;
  l.count = atomic_load(&lease->latency_count);
  l.sum_us = atomic_load(&lease->latency_sum_us);
  for (size_t i = 0; i < IDGEN_LEASE_LATENCY_BUCKETS; i++)
    l.buckets[i] = atomic_load(&lease->latency_buckets[i]);
  *out = l;
}
