/* space.c: the worker "space" a provider claims in (idgen_lease_space, made by
 * idgen_lease_space_of in config.c): its size, a worker ID's other name, its words. */
#include <stdint.h>
#include <stdio.h>

#include "lease/lease_internal.h"

uint64_t idgen__space_field_max(uint8_t bits) {
  return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

uint64_t idgen_lease_space_worker(const idgen_lease_space *s, uint64_t claimed) {
  if (s->datacenter < 0)
    return claimed;
  return (uint64_t)s->datacenter << s->bits | claimed;
}

uint64_t idgen__space_size(const idgen_lease_space *s) {
  return s->hi - s->lo + 1;
}

uint64_t idgen__space_alias(const idgen_lease_space *s, uint64_t claimed, int64_t *dc) {
  if (s->low_bits == 0) {
    *dc = -2;
    return 0;
  }
  if (s->datacenter >= 0) {
    *dc = -1;
    return idgen_lease_space_worker(s, claimed);
  }
  *dc = (int64_t)(claimed >> s->low_bits);
  return claimed & idgen__space_field_max(s->low_bits);
}

void idgen__space_name(const idgen_lease_space *s, const char *ns, char *out,
                       size_t outlen) {
  char range[64] = "", dc[64] = "";
  if (s->lo != 0 || s->hi != idgen__space_field_max(s->bits))
    snprintf(range, sizeof range, " %llu-%llu (--worker-id-range)",
             (unsigned long long)s->lo, (unsigned long long)s->hi);
  if (s->datacenter >= 0)
    snprintf(dc, sizeof dc, " of %s %lld in", s->dc_field, (long long)s->datacenter);
  snprintf(out, outlen, "worker IDs%s%s%s namespace '%s'", range, dc, dc[0] ? "" : " of",
           ns);
}
