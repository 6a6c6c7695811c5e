/* grace.h: when memory the serving threads may still read can be freed. A reload
 * publishes a new object with an atomic pointer and retires the old one here; each
 * serving thread marks a quiescent point between two turns of its event loop (where it
 * holds no pointer it loaded before), and a retired object is freed once every thread
 * has passed one since it was retired: quiescent-state-based reclamation, the scheme of
 * the Linux kernel's QSBR flavour of RCU. The main thread retires and collects; the
 * serving threads only mark. */
#ifndef IDGEN_SERVER_GRACE_H
#define IDGEN_SERVER_GRACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct idgen__grace idgen__grace;

/* nthreads serving threads (all offline at first), room for max_retired objects
 * waiting for their grace period. Returns 0 or IDGEN_ENOMEM. */
int idgen__grace_new(idgen__grace **out, size_t nthreads, size_t max_retired);
/* Frees every object still retired, then the whole; call once no thread serves. NULL
 * is fine. */
void idgen__grace_free(idgen__grace *g);

/* The serving thread `thread` starts reading published pointers (before its first
 * load of one). Thread-safe: each thread calls it for its own index only. */
void idgen__grace_online(idgen__grace *g, size_t thread);
/* Between two turns of the thread's loop: nothing it loaded before is in use. One
 * acquire load, and a release store when the epoch moved. */
void idgen__grace_quiescent(idgen__grace *g, size_t thread);
/* The thread reads no published pointer any more (it ends). */
void idgen__grace_offline(idgen__grace *g, size_t thread);

/* Main thread only, like the three below. The number of free slots: a reload that
 * would retire more objects than this must wait (idgen__grace_wait_room) or not
 * publish. */
size_t idgen__grace_room(const idgen__grace *g);
/* Retires p (malloc'd; free() frees it), already replaced by its successor in every
 * published pointer. Needs a free slot (idgen__grace_room() > 0): 0, or -1 when full
 * (p is not taken). */
int idgen__grace_retire(idgen__grace *g, void *p);
/* Frees the retired objects no thread can still hold. Returns how many wait. */
size_t idgen__grace_collect(idgen__grace *g);
/* Collects until room() >= need or timeout_ms passed (1 ms polls). 0, or -1. */
int idgen__grace_wait_room(idgen__grace *g, size_t need, int64_t timeout_ms);

#endif
