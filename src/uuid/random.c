/* random.c: the buffered, fork-safe kernel CSPRNG source. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "idgen/random.h"
#include "uuid/uuid_internal.h"

/* ---- the system source ------------------------------------------------------------ */

/* One page, mapped on its own so that MADV_WIPEONFORK zeroes exactly it in a child:
 * a zeroed pool is unlocked (glibc's PTHREAD_MUTEX_INITIALIZER is all zeros) and
 * unseeded, so the child refills before handing out a byte. */
typedef struct pool {
  pthread_mutex_t lock;
  uint64_t seeded;   /* 0 in a fresh or wiped pool */
  uint64_t fork_gen; /* fork generation at the last refill */
  size_t pos;        /* next unused byte of data; == sizeof data when empty */
  uint8_t data[];
} pool;

typedef struct system_source {
  idgen_random base;
  pool *pool;
  size_t map_bytes;
  size_t data_bytes;
} system_source;

/* getrandom until len bytes arrive; retries EINTR and short reads. */
static int kernel_random(void *buf, size_t len) {
  uint8_t *p = buf;
  while (len > 0) {
    ssize_t got = getrandom(p, len, 0);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    p += got;
    len -= (size_t)got;
  }
  return 0;
}

static int system_fill(idgen_random *random, void *buf, size_t len) {
  system_source *src = (system_source *)random;
  pool *pl = src->pool;
  uint8_t *out = buf;
  int rc = 0;
  pthread_mutex_lock(&pl->lock);
  uint64_t gen = idgen__fork_generation();
  if (!pl->seeded || pl->fork_gen != gen) {
    /* New, or the first use in a forked child: forget every buffered byte. */
    explicit_bzero(pl->data, src->data_bytes);
    pl->pos = src->data_bytes;
    pl->seeded = 1;
    pl->fork_gen = gen;
  }
  while (len > 0) {
    if (pl->pos == src->data_bytes) {
      if (len >= src->data_bytes) { /* a big request skips the buffer */
        rc = kernel_random(out, len);
        break;
      }
      rc = kernel_random(pl->data, src->data_bytes);
      if (rc < 0)
        break;
      pl->pos = 0;
    }
    size_t n = src->data_bytes - pl->pos;
    if (n > len)
      n = len;
    memcpy(out, pl->data + pl->pos, n);
    explicit_bzero(pl->data + pl->pos, n);
    pl->pos += n;
    out += n;
    len -= n;
  }
  pthread_mutex_unlock(&pl->lock);
  return rc;
}

static const idgen_random_class system_class = {system_fill};

int idgen_random_system_new(idgen_random **out) {
  if (!out)
    return IDGEN_EINVAL;
  idgen__fork_watch();
  /* Fail now, not at the first value, if the kernel has no getrandom. */
  uint8_t probe[1];
  int rc = kernel_random(probe, sizeof probe);
  if (rc < 0)
    return rc;
  explicit_bzero(probe, sizeof probe);

  system_source *src = calloc(1, sizeof *src);
  if (!src)
    return IDGEN_ENOMEM;
  long page = sysconf(_SC_PAGESIZE);
  src->map_bytes = page > 0 ? (size_t)page : 4096;
  if (src->map_bytes < 4096)
    src->map_bytes = 4096;
  void *map = mmap(NULL, src->map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    free(src);
    return IDGEN_ENOMEM;
  }
#ifdef MADV_WIPEONFORK
  (void)madvise(map, src->map_bytes, MADV_WIPEONFORK); /* the fork generation backs it up */
#endif
#ifdef MADV_DONTDUMP
  (void)madvise(map, src->map_bytes, MADV_DONTDUMP); /* keep future values out of cores */
#endif
  src->pool = map;
  src->data_bytes = src->map_bytes - sizeof(pool);
  pthread_mutex_init(&src->pool->lock, NULL);
  src->pool->pos = src->data_bytes;
  src->base.vtable = &system_class;
  *out = &src->base;
  return 0;
}

void idgen_random_system_free(idgen_random *random) {
  if (!random)
    return;
  system_source *src = (system_source *)random;
  pthread_mutex_destroy(&src->pool->lock);
  explicit_bzero(src->pool, src->map_bytes);
  munmap(src->pool, src->map_bytes);
  explicit_bzero(src, sizeof *src);
  free(src);
}
