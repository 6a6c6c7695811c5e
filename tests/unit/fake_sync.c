/* fake_sync.c: the link-time wrappers of fdatasync and fsync (fake_sync.h). Pulled from
 * the test doubles' library only by a test that wraps them. */
#include "fake_sync.h"

#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>

int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
int __real_fsync(int fd);
int __wrap_fsync(int fd);

static fake_sync_watch *datasync_watch, *fsync_watch;

void fake_sync_watch_fdatasync(fake_sync_watch *w) {
  datasync_watch = w;
}

void fake_sync_watch_fsync(fake_sync_watch *w) {
  fsync_watch = w;
}

int fake_sync_watch_path(fake_sync_watch *w, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    return -1;
  w->dev = st.st_dev;
  w->ino = st.st_ino;
  w->calls = 0;
  return 0;
}

/* Counts a sync of fd if w watches it; -1 (errno set) if it is to fail. */
static int watched(fake_sync_watch *w, int fd) {
  struct stat st;
  if (!w || fstat(fd, &st) != 0)
    return 0;
  if (w->any_dir ? !S_ISDIR(st.st_mode) : st.st_dev != w->dev || st.st_ino != w->ino)
    return 0;
  w->calls++;
  if (w->seen)
    w->seen(fd, w->calls);
  if (w->fail_errno) {
    errno = w->fail_errno;
    return -1;
  }
  return 0;
}

int __wrap_fdatasync(int fd) {
  return watched(datasync_watch, fd) < 0 ? -1 : __real_fdatasync(fd);
}

int __wrap_fsync(int fd) {
  return watched(fsync_watch, fd) < 0 ? -1 : __real_fsync(fd);
}
