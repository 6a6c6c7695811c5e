/* backend_file.c: the embedded segment backend, for one host: one file per name holding
 * its max, rewritten in place and fsync'd under an exclusive lock before any number of
 * the new block is handed out, so processes sharing the file get disjoint blocks. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_internal.h"
#include "segment/segment.h"

#define DIGITS 20 /* the max, zero-padded: every record of a name has the same length */

typedef struct file_backend {
  idgen__segment_backend base;
  char path[IDGEN_SEGMENT_DSN_MAX];
  int is_dir; /* path is a directory holding segment-NAME files */
  int64_t timeout_ms;
} file_backend;

static void path_of(const file_backend *f, const char *name, char *out, size_t outlen) {
  if (f->is_dir)
    snprintf(out, outlen, "%s/segment-%s", f->path, name);
  else
    snprintf(out, outlen, "%s", f->path);
}

/* "<max, 20 digits> <name>\n". */
static int format_record(char *out, size_t outlen, uint64_t max, const char *name) {
  return snprintf(out, outlen, "%0*" PRIu64 " %s\n", DIGITS, max, name);
}

/* An empty file reads as max 0: it was created and never written, so no block of it
 * was ever handed out (a block is handed out only after its max is fsync'd). */
static int parse_record(file_backend *f, const char *path, const char *buf, size_t len,
                        const char *name, uint64_t *max) {
  if (len == 0) {
    *max = 0;
    return 0;
  }
  size_t nlen = strlen(name);
  uint64_t v = 0;
  int ok = len == DIGITS + 2 + nlen && buf[DIGITS] == ' ' && buf[len - 1] == '\n' &&
           !memcmp(buf + DIGITS + 1, name, nlen);
  for (size_t i = 0; ok && i < DIGITS; i++) {
    ok = buf[i] >= '0' && buf[i] <= '9' && v <= (UINT64_MAX - 9) / 10;
    v = v * 10 + (uint64_t)(buf[i] - '0');
  }
  if (!ok || v > IDGEN_SEGMENT_NUMBER_MAX)
    return idgen__segment_why(&f->base, IDGEN_EPROTO,
                              "file %s: not a segment record of '%s' (want '<20 digits> "
                              "%s'); fix or move it: it holds the sequence",
                              path, name, name);
  *max = v;
  return 0;
}

/* Opens path (creating it if create) and takes an exclusive OFD lock, waiting up to
 * the timeout; retries when the path was replaced meanwhile, so the lock is on the file
 * the path names. Returns the fd, or a negative error with why(); *created is set
 * when this call created the file. */
static int open_locked(file_backend *f, const char *path, int create, int *created) {
  int64_t deadline = idgen_monotonic_ns() + f->timeout_ms * 1000000;
  for (;;) {
    int fresh = 0;
    int fd = -1;
    if (create) {
      fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      fresh = fd >= 0;
    }
    if (fd < 0 && (!create || errno == EEXIST))
      fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == ENOENT)
        return idgen__segment_why(&f->base, -ENOENT,
                                  "file %s does not exist: run 'idgen segment init' first",
                                  path);
      return idgen__segment_why(&f->base, -e, "file %s: %s", path, strerror(e));
    }
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    /* An open-file-description lock: two opens conflict even within one process, and
     * the kernel drops it when the process dies. */
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
      struct stat a, b;
      if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
          a.st_dev == b.st_dev) {
        *created = fresh;
        return fd;
      }
      /* removed or replaced between open and lock: lock what the path names now */
    } else if (errno != EACCES && errno != EAGAIN) {
      int e = errno;
      close(fd);
      return idgen__segment_why(&f->base, -e, "file %s: lock: %s", path, strerror(e));
    }
    close(fd);
    if (idgen_monotonic_ns() > deadline)
      return idgen__segment_why(&f->base, IDGEN_ETIMEDOUT,
                                "file %s: still locked by another process after %lld ms",
                                path, (long long)f->timeout_ms);
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static int read_max(file_backend *f, int fd, const char *path, const char *name,
                    uint64_t *max) {
  char buf[DIGITS + IDGEN_SEGMENT_NAME_MAX + 8];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  if (n < 0)
    return idgen__segment_why(&f->base, -errno, "file %s: read: %s", path, strerror(errno));
  return parse_record(f, path, buf, (size_t)n, name, max);
}

/* One pwrite of a record as long as the last one: a crash leaves the old or the new. */
static int write_max(file_backend *f, int fd, const char *path, const char *name,
                     uint64_t max) {
  char buf[DIGITS + IDGEN_SEGMENT_NAME_MAX + 8];
  int len = format_record(buf, sizeof buf, max, name);
  ssize_t w = pwrite(fd, buf, (size_t)len, 0);
  if (w != len)
    return idgen__segment_why(&f->base, w < 0 ? -errno : -EIO, "file %s: write: %s", path,
                              w < 0 ? strerror(errno) : "short write");
  if (fdatasync(fd))
    return idgen__segment_why(&f->base, -errno, "file %s: fsync: %s", path,
                              strerror(errno));
  return 0;
}

/* fsyncs the directory that holds path, so that a new file survives a crash. */
static int sync_dir(file_backend *f, const char *path) {
  char dir[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync(fd)) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return idgen__segment_why(&f->base, -e, "directory %s: fsync: %s", dir, strerror(e));
  }
  close(fd);
  return 0;
}

static int file_init(idgen__segment_backend *b, const char *name, uint64_t step) {
  file_backend *f = (file_backend *)b;
  (void)step; /* the step is the generator's; the file keeps only the max */
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  path_of(f, name, path, sizeof path);
  char err[IDGEN_SEGMENT_WHY_MAX];
  int rc = f->is_dir ? idgen__state_dir_ready(f->path, err, sizeof err) : 0;
  if (rc)
    return idgen__segment_why(b, rc, "%s", err);
  int created = 0;
  int fd = open_locked(f, path, 1, &created);
  if (fd < 0)
    return fd;
  uint64_t max;
  rc = read_max(f, fd, path, name, &max);
  if (!rc && created)
    rc = write_max(f, fd, path, name, 0);
  if (!rc && created)
    rc = sync_dir(f, path);
  close(fd);
  return rc ? rc : !created;
}

static int file_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  file_backend *f = (file_backend *)b;
  (void)floor; /* one counter: each block lies above the last */
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  path_of(f, name, path, sizeof path);
  int created;
  int fd = open_locked(f, path, 0, &created);
  if (fd < 0)
    return fd;
  uint64_t max;
  int rc = read_max(f, fd, path, name, &max);
  if (!rc && max > IDGEN_SEGMENT_NUMBER_MAX - step)
    rc = idgen__segment_why(b, IDGEN_ERANGE,
                            "file %s: '%s' is at %" PRIu64 ": a block of %" PRIu64
                            " would pass 2^63 - 1",
                            path, name, max, step);
  if (!rc)
    rc = write_max(f, fd, path, name, max + step);
  close(fd); /* releases the lock */
  if (rc)
    return rc;
  *out = (idgen__segment_block){max + step, step, 1};
  return 0;
}

static void file_free(idgen__segment_backend *b) {
  free(b);
}

static const idgen__segment_backend_class file_class = {"file", file_init, file_fetch,
                                                        file_free};

int idgen__segment_file_new(idgen__segment_backend **out, const char *dsn,
                            int64_t timeout_ms, char *err, size_t errlen) {
  size_t len = strlen(dsn);
  struct stat st;
  int is_dir = dsn[len - 1] == '/' || (stat(dsn, &st) == 0 && S_ISDIR(st.st_mode));
  if (!is_dir) {
    /* a file path: its directory must exist */
    char dir[IDGEN_SEGMENT_DSN_MAX];
    snprintf(dir, sizeof dir, "%s", dsn);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
      *slash = '\0';
      if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "segment file %s: directory %s does not exist", dsn, dir);
        return IDGEN_EINVAL;
      }
    }
  }
  file_backend *f = calloc(1, sizeof *f);
  if (!f)
    return IDGEN_ENOMEM;
  f->base.vtable = &file_class;
  snprintf(f->path, sizeof f->path, "%s", dsn);
  while (is_dir && strlen(f->path) > 1 && f->path[strlen(f->path) - 1] == '/')
    f->path[strlen(f->path) - 1] = '\0';
  f->is_dir = is_dir;
  f->timeout_ms = timeout_ms;
  *out = &f->base;
  return 0;
}
