/* fake_sync.h: fdatasync and fsync wrapped at link time, for the tests that count a
 * file's or a directory's syncs (link with -Wl,--wrap=fdatasync -Wl,--wrap=fsync and
 * the idgen_test_doubles library): each wrapper counts the calls on what it watches,
 * lets the test look at the file at each, and can fail them with an errno. */
#ifndef IDGEN_FAKE_SYNC_H
#define IDGEN_FAKE_SYNC_H

#include <sys/types.h>

typedef struct fake_sync_watch {
  dev_t dev; /* the file or directory watched (from stat) */
  ino_t ino;
  int any_dir;                    /* 1: every directory instead */
  int calls;                      /* its syncs so far */
  int fail_errno;                 /* fail them with this errno; 0: pass them on */
  void (*seen)(int fd, int call); /* NULL, or called at each (call: 1, 2, ...) first */
} fake_sync_watch;

/* Watches fdatasync, or fsync, calls with w from now on (NULL: none). Not thread-safe:
 * set it while no sync runs. */
void fake_sync_watch_fdatasync(fake_sync_watch *w);
void fake_sync_watch_fsync(fake_sync_watch *w);
/* Points w at the file or directory path names now (stat) and zeroes its count.
 * Returns 0, or -1 with errno set (w left alone). */
int fake_sync_watch_path(fake_sync_watch *w, const char *path);

#endif
