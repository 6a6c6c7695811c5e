/* core_internal.h: what the core shares with the rest of libidgen: the unit of time the
 * clocks and generators convert by, and the process's fork generation. */
#ifndef IDGEN_CORE_INTERNAL_H
#define IDGEN_CORE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define NS_PER_MS INT64_C(1000000)

/* An internal function or variable that libidgen.so exports for libidgen-etcd.so (the
 * etcd provider, built from the same sources and version): not API, since no header
 * under include/ declares it. tests/integration/headers.sh checks that these alone are
 * exported besides the idgen_ API. */
#if defined(IDGEN_BUILDING)
#define IDGEN__EXPORT __attribute__((visibility("default")))
#else
#define IDGEN__EXPORT
/* A failed call's message, printf-formatted into err[0..errlen) when err is given (the
 * caller's buffer, left alone when NULL or 0 bytes); returns rc, the call's error. The
 * one formatter of layout, lease and segment configuration errors. */
int idgen__fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

/* The one piece of process-wide state in libidgen: bumped in the child of every fork()
 * (a pthread_atfork child handler), so that anything armed or seeded before a fork can
 * tell, with one plain load and no system call, that it now runs in a copy of the
 * process. glibc does not cache getpid(), so comparing pids would cost a system call
 * per ID. Read it with idgen__fork_generation. */
IDGEN__EXPORT extern _Atomic uint64_t idgen__fork_gen;

/* Registers (once per process) the child handler that bumps the fork generation. Every
 * constructor that keeps state a fork must not share calls it before it reads the
 * generation. Thread-safe. */
IDGEN__EXPORT void idgen__fork_watch(void);

/* The number of fork()s this process's ancestry went through since the watch began: a
 * value that changes in the child of every fork. A relaxed load suffices: the child
 * handler runs in the child's only thread before fork() returns there. */
static inline uint64_t idgen__fork_generation(void) {
  return atomic_load_explicit(&idgen__fork_gen, memory_order_relaxed);
}

/* A failed call's message, printf-formatted into err[0..errlen) when err is given (the
 * caller's buffer, left alone when NULL or 0 bytes); returns rc, the call's error. The
 * one formatter of layout, lease and segment configuration errors. */
int idgen__fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
