/* segment_mem.h: a segment backend in memory, for the unit tests: one counter, a stride,
 * a switch that makes every fetch fail, and a log of the steps and floors asked for.
 * Fetches come from one thread at a time (the generator's); fail may be flipped by any. */
#ifndef IDGEN_TEST_SEGMENT_MEM_H
#define IDGEN_TEST_SEGMENT_MEM_H

#include <stdatomic.h>
#include <string.h>

#include "segment/segment.h"

typedef struct mem_backend {
  idgen__segment_backend base;
  uint64_t max;
  uint64_t stride;
  _Atomic int fail; /* 0, or the error every fetch returns */
  int calls;
  uint64_t steps[64], floors[64];
} mem_backend;

static int mem_init(idgen__segment_backend *b, const char *name, uint64_t step,
                    uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  (void)b, (void)name, (void)step, (void)start_after;
  return 0;
}

static int mem_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                     uint64_t floor, idgen__segment_block *out) {
  mem_backend *m = (mem_backend *)b;
  (void)name;
  if (m->calls < 64) {
    m->steps[m->calls] = step;
    m->floors[m->calls] = floor;
  }
  m->calls++;
  int rc = atomic_load(&m->fail);
  if (rc)
    return idgen__segment_why(b, rc, "mem: down (%d)", rc);
  m->max += step * m->stride;
  *out = (idgen__segment_block){m->max, step, m->stride};
  return 0;
}

static void mem_free(idgen__segment_backend *b) {
  (void)b;
}

static const idgen__segment_backend_class mem_class = {"mem",    mem_init, mem_fetch,
                                                       mem_free, NULL,     NULL, NULL};

static inline void mem_setup(mem_backend *m) {
  memset(m, 0, sizeof *m);
  m->base.vtable = &mem_class;
  m->stride = 1;
}

#endif
