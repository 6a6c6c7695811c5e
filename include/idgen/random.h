/* idgen/random.h: random sources, passed in like clocks: the kernel CSPRNG, buffered,
 * or any struct whose first field points at an idgen_random_class (tests use a fake). */
#ifndef IDGEN_RANDOM_H
#define IDGEN_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idgen_random idgen_random;

/* A random source is a struct whose first field points at one of these. */
typedef struct idgen_random_class {
  /* Fills buf[0..len) with random bytes. Returns 0 or a negative error (a negated
   * errno from the kernel, or whatever a fake source is told to return); on failure
   * buf may hold some bytes but the caller must not use them. */
  int (*fill)(idgen_random *random, void *buf, size_t len);
} idgen_random_class;

struct idgen_random {
  const idgen_random_class *vtable;
};

static inline int idgen_random_fill(idgen_random *random, void *buf, size_t len) {
  return random->vtable->fill(random, buf, len);
}

/* The system source: the kernel CSPRNG (getrandom(2), flags 0: it blocks only until
 * the kernel pool is first initialised at boot), read 4 KiB at a time into a buffer so
 * that a 16-byte value costs no system call on average. Never rand().
 *
 * - Thread-safe: fill takes an internal mutex; one source may serve every thread.
 * - Fork-safe: the buffer (and its mutex) lives in a page marked MADV_WIPEONFORK, so a
 *   forked child finds it zeroed and refills from the kernel before its first byte; as
 *   a second guard (kernels before 4.14, or madvise refused) a pthread_atfork child
 *   handler bumps a process-wide fork generation that every fill checks. Parent and
 *   child never hand out the same buffered bytes.
 * - Bytes are wiped from the buffer (explicit_bzero) as they are handed out, and the
 *   whole buffer is wiped when the source is freed.
 *
 * Creates a source. IDGEN_EINVAL for out == NULL, IDGEN_ENOMEM, or a negated errno if
 * the kernel refuses (e.g. -ENOSYS without getrandom). */
IDGEN_API int idgen_random_system_new(idgen_random **out);
/* Wipes and frees a source made by idgen_random_system_new; NULL is fine. No other
 * call may be using it. */
IDGEN_API void idgen_random_system_free(idgen_random *random);

#ifdef __cplusplus
}
#endif
#endif
