/* fork.c: the fork generation: how a generator, a random pool or a lease notices that it
 * was inherited by a forked child. */
#include <pthread.h>

#include "core/core_internal.h"

_Atomic uint64_t idgen__fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) {
  atomic_fetch_add_explicit(&idgen__fork_gen, 1, memory_order_relaxed);
}

static void fork_register(void) {
  (void)pthread_atfork(NULL, NULL, on_fork_child);
}

void idgen__fork_watch(void) {
  (void)pthread_once(&fork_once, fork_register);
}
