/* grace.c: quiescent-state-based reclamation for the reload's published objects. */
#include "server/grace.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "idgen/error.h"

#define OFFLINE UINT64_MAX /* a thread that reads nothing: it holds back no object */

/* One serving thread's mark, on a cache line of its own (each thread writes its own). */
typedef struct slot {
  _Alignas(64) _Atomic uint64_t seen; /* the epoch at its last quiescent point */
  uint64_t last;                      /* the thread's own copy of seen */
} slot;

typedef struct retired {
  void *p;
  uint64_t epoch; /* freed once every thread has seen this epoch */
} retired;

struct idgen__grace {
  _Atomic uint64_t epoch; /* moved by each retire */
  size_t nthreads;
  slot *slots;
  retired *list;
  size_t n, cap;
};

int idgen__grace_new(idgen__grace **out, size_t nthreads, size_t max_retired) {
  idgen__grace *g = calloc(1, sizeof *g);
  if (!g)
    return IDGEN_ENOMEM;
  g->nthreads = nthreads;
  g->cap = max_retired ? max_retired : 1;
  g->slots = aligned_alloc(64, (nthreads ? nthreads : 1) * sizeof *g->slots);
  g->list = calloc(g->cap, sizeof *g->list);
  if (!g->slots || !g->list) {
    free(g->slots);
    free(g->list);
    free(g);
    return IDGEN_ENOMEM;
  }
  atomic_init(&g->epoch, 1);
  for (size_t i = 0; i < nthreads; i++) {
    atomic_init(&g->slots[i].seen, OFFLINE);
    g->slots[i].last = OFFLINE;
  }
  *out = g;
  return 0;
}

void idgen__grace_free(idgen__grace *g) {
  if (!g)
    return;
  for (size_t i = 0; i < g->n; i++)
    free(g->list[i].p);
  free(g->list);
  free(g->slots);
  free(g);
}

void idgen__grace_online(idgen__grace *g, size_t thread) {
  slot *s = &g->slots[thread];
  s->last = atomic_load(&g->epoch);
  /* Sequentially consistent with the main thread's load of seen in collect: either it
   * sees this thread online, or this thread's next loads see what it published. */
  atomic_store(&s->seen, s->last);
  atomic_thread_fence(memory_order_seq_cst);
}

void idgen__grace_quiescent(idgen__grace *g, size_t thread) {
  slot *s = &g->slots[thread];
  uint64_t e = atomic_load_explicit(&g->epoch, memory_order_acquire);
  if (e != s->last) {
    s->last = e;
    atomic_store_explicit(&s->seen, e, memory_order_release);
  }
}

void idgen__grace_offline(idgen__grace *g, size_t thread) {
  g->slots[thread].last = OFFLINE;
  atomic_store_explicit(&g->slots[thread].seen, OFFLINE, memory_order_release);
}

size_t idgen__grace_room(const idgen__grace *g) {
  return g->cap - g->n;
}

int idgen__grace_retire(idgen__grace *g, void *p) {
  if (!p)
    return 0;
  if (g->n == g->cap)
    return -1;
  /* The new object is published before this: a thread that sees the new epoch at a
   * quiescent point sees the new pointer after it. */
  uint64_t e = atomic_fetch_add_explicit(&g->epoch, 1, memory_order_acq_rel) + 1;
  g->list[g->n++] = (retired){p, e};
  return 0;
}

/* The oldest epoch a thread may still read objects of. */
static uint64_t oldest_seen(const idgen__grace *g) {
  uint64_t min = OFFLINE;
  for (size_t i = 0; i < g->nthreads; i++) {
    uint64_t s = atomic_load(&g->slots[i].seen);
    if (s < min)
      min = s;
  }
  return min;
}

size_t idgen__grace_collect(idgen__grace *g) {
  if (!g->n)
    return 0;
  atomic_thread_fence(memory_order_seq_cst); /* the pointers stored before, seen after */
  uint64_t seen = oldest_seen(g);
  size_t kept = 0;
  for (size_t i = 0; i < g->n; i++) {
    if (g->list[i].epoch <= seen)
      free(g->list[i].p);
    else
      g->list[kept++] = g->list[i];
  }
  g->n = kept;
  return kept;
}

int idgen__grace_wait_room(idgen__grace *g, size_t need, int64_t timeout_ms) {
  for (int64_t waited = 0;; waited++) {
    idgen__grace_collect(g);
    if (idgen__grace_room(g) >= need)
      return 0;
    if (waited >= timeout_ms)
      return -1;
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
  }
}
