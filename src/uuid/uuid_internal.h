/* uuid_internal.h: what the random sources and the 128-bit generators share inside
 * libidgen (byte helpers, test hooks); fork detection is core/core_internal.h's. */
#ifndef IDGEN_UUID_INTERNAL_H
#define IDGEN_UUID_INTERNAL_H

#include <stdint.h>

#include "core/core_internal.h"
#include "idgen/uuid.h"

static inline uint64_t idgen__load_be64(const uint8_t *p) {
  return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
         (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
         (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static inline void idgen__store_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}

/* Test hooks: read or force a v7 generator's state (tick = ms << 12 | fraction). */
void idgen__uuid7_state(idgen_uuid7_gen *gen, uint64_t *tick, uint64_t *rand_b);
void idgen__uuid7_set_state(idgen_uuid7_gen *gen, uint64_t tick, uint64_t rand_b);

#endif
