/* backend_file.c: the embedded segment backend, for one host: one file per name holding
 * its max, rewritten in place and fsync'd under an exclusive lock before any number of
 * the new block is handed out, so processes sharing the file get disjoint blocks. The
 * lock fences only what names the same file, so a name is also claimed host-wide (one
 * file per name and namespace on a host), and a state directory remembers which
 * sequences it made (segment-NAME.created), so that a removed or emptied file is never
 * made again at 1 but by `idgen segment init`. That record also keeps the highest max
 * handed out (written before the file's, under both locks, with each block), which
 * init --start-after must not go below unless forced. segment-NAME:YYYYMMDD.newest keeps
 * the newest period any process of the directory entered: a period's file is made only
 * under its lock, at or above it, so none below is made again once its files are gone. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/host.h"
#include "segment/segment.h"

#define DIGITS 20 /* the max, zero-padded: every record of a name has the same length */

typedef struct file_backend {
  idgen__segment_backend base;
  char path[IDGEN_SEGMENT_DSN_MAX];
  int is_dir; /* path is a directory holding segment-NAME files */
  int64_t timeout_ms;
  /* The host-wide claim (idgen__segment_file_claim), and what the claim's other holders
   * look for in /proc/PID/fd to see that they use the same file: the directory (dir
   * form) and the file, kept open while the claim is held; -1 when not. */
  idgen__claim claim;
  int dir_fd, file_fd;
  uint64_t start_after; /* init: the max a made file starts at */
  int force;            /* init: start_after may lie below the record's highest */
} file_backend;

/* Processes that may hold one name's claim together (they share one file). */
#define CLAIM_SLOTS 64

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

/* An empty file is no record: idgen makes a file whole before it gives it its name
 * (make_file), so an empty one was emptied, and the max it held is lost. */
static int parse_record(file_backend *f, const char *path, const char *buf, size_t len,
                        const char *name, uint64_t *max) {
  if (len == 0)
    return idgen__segment_why(
        &f->base, IDGEN_EPROTO,
        "file %s is empty: its max is lost; put it back as it was "
        "('idgen segment init %s' starts again at 1, repeating numbers)",
        path, name);
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

/* dir form: the record that the state directory made name (its content says so). */
static void marker_of(const file_backend *f, const char *name, char *out, size_t outlen) {
  snprintf(out, outlen, "%s/segment-%s.created", f->path, name);
}

/* Makes path whole at max 0 before it has its name: the record goes to path.new, is
 * synced, then linked to path (which never exists empty or half written), then the
 * directory is synced. 0, 1 when path appeared meanwhile (left as it is), or an error. */
static int make_file(file_backend *f, const char *path, const char *name) {
  char tmp[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 24];
  snprintf(tmp, sizeof tmp, "%s.new", path);
  int created;
  int fd = open_locked(f, tmp, 1, &created); /* the lock: one maker at a time */
  if (fd < 0)
    return fd;
  int rc = ftruncate(fd, 0) ? idgen__segment_why(&f->base, -errno, "file %s: truncate: %s",
                                                 tmp, strerror(errno))
                            : write_max(f, fd, tmp, name, f->start_after);
  if (!rc && link(tmp, path))
    rc = errno == EEXIST ? 1
                         : idgen__segment_why(&f->base, -errno, "file %s: link: %s", path,
                                              strerror(errno));
  unlink(tmp); /* still locked: no other maker writes it in between */
  close(fd);
  return rc ? rc : sync_dir(f, path);
}

/* Writes the state directory's record that name was made here, and the highest max
 * handed out (every record of a name has the same length); syncs the directory too when
 * the record is new (a made file's directory sync covered it otherwise). */
static int mark_made(file_backend *f, int fd, const char *marker, const char *name,
                     uint64_t highest, int sync_parent) {
  char line[IDGEN_SEGMENT_NAME_MAX * 3 + 200];
  int n = snprintf(line, sizeof line,
                   "%0*" PRIu64 " segment-%s was made in this directory, its numbers "
                   "handed out up to the first field: without segment-%s they are lost, "
                   "and only 'idgen segment init --start-after N %s' makes it again\n",
                   DIGITS, highest, name, name, name);
  ssize_t w = pwrite(fd, line, (size_t)n, 0);
  if (w != n)
    return idgen__segment_why(&f->base, w < 0 ? -errno : -EIO, "file %s: write: %s", marker,
                              w < 0 ? strerror(errno) : "short write");
  if (fdatasync(fd) != 0)
    return idgen__segment_why(&f->base, -errno, "file %s: fsync: %s", marker,
                              strerror(errno));
  return sync_parent ? sync_dir(f, marker) : 0;
}

typedef enum {
  USE,   /* the sequence must exist */
  FIRST, /* idgen serve's default file: make it if this directory never made it */
  INIT,  /* idgen segment init: make it unless it exists (a record, even damaged) */
} make_mode;

/* The highest max a record of mark_made holds: 1 and *highest, or 0 for a record from
 * before it kept one (or none). */
static int made_highest(int fd, uint64_t *highest) {
  char buf[DIGITS + 1];
  if (pread(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf || buf[DIGITS] != ' ')
    return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < DIGITS; i++) {
    if (buf[i] < '0' || buf[i] > '9' || v > (UINT64_MAX - 9) / 10)
      return 0;
    v = v * 10 + (uint64_t)(buf[i] - '0');
  }
  *highest = v;
  return 1;
}

/* init over a lost file (removed, emptied) whose record names a higher max: refused. */
static int below_record(file_backend *f, int mfd, const char *path, const char *name) {
  uint64_t highest;
  if (mfd < 0 || f->force || !made_highest(mfd, &highest) || f->start_after >= highest)
    return 0;
  return idgen__segment_why(
      &f->base, IDGEN_EPROTO,
      "file %s is lost, and segment-%s.created says %" PRIu64 " was handed out: "
      "--start-after %" PRIu64 " is below it, refused (its numbers would repeat); "
      "--start-after %" PRIu64 ", or --force",
      path, name, highest, f->start_after, highest);
}

/* What the modes refuse: a missing file. */
static int missing(file_backend *f, const char *path, const char *name, int made) {
  if (!made)
    return idgen__segment_why(
        &f->base, -ENOENT, "file %s does not exist: run 'idgen segment init' first", path);
  return idgen__segment_why(
      &f->base, IDGEN_EPROTO,
      "file %s is gone, but %s: put it back as it was ('idgen segment "
      "init %s' starts again at 1, repeating numbers)",
      path,
      f->is_dir ? "this directory made it (segment-NAME.created)"
                : "it was there when this process started",
      name);
}

/* Brings name's file to where mode wants it, under the lock of the directory's record
 * (dir form), which serialises makers. The steps, and a crash after each: the record
 * is opened (empty: nothing was made yet); the file is made whole (make_file: a crash
 * leaves no file, or a file at 0); then the record says "made". A file at 0 without
 * the record was never handed a number from (every user comes through here first, and
 * writes the record before its first fetch), so making it again at 1 is right. 0 when
 * made, 1 when it existed, or an error. */
static int prepare(file_backend *f, const char *name, make_mode mode) {
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  char marker[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 32];
  path_of(f, name, path, sizeof path);
  int mfd = -1, made = 0, marker_new = 0;
  if (f->is_dir) {
    marker_of(f, name, marker, sizeof marker);
    mfd = open_locked(f, marker, 1, &marker_new);
    if (mfd < 0)
      return mfd;
    struct stat st;
    made = fstat(mfd, &st) == 0 && st.st_size > 0;
  }
  int rc, existed = 1, unused;
  int fd = open_locked(f, path, 0, &unused);
  if (fd >= 0) {
    struct stat st;
    uint64_t max;
    if (mode == INIT && fstat(fd, &st) == 0 && st.st_size == 0) {
      rc = below_record(f, mfd, path, name);
      if (!rc) /* emptied: init makes it again */
        rc = write_max(f, fd, path, name, f->start_after);
      existed = 0;
      made = made && rc; /* its record says start_after now */
    } else {
      rc = mode == INIT ? 0 : read_max(f, fd, path, name, &max);
    }
    close(fd);
  } else if (fd == -ENOENT && (mode == INIT || (mode == FIRST && !made))) {
    rc = mode == INIT ? below_record(f, mfd, path, name) : 0;
    if (rc)
      goto done;
    rc = make_file(f, path, name);
    made = made && rc; /* a file made again: its record says start_after now */
    existed = rc == 1;
    rc = rc == 1 ? 0 : rc;
    marker_new = 0; /* the made file's directory sync covered the record's name */
  } else {
    rc = fd == -ENOENT ? missing(f, path, name, made) : fd;
    if (marker_new)
      unlink(marker); /* ours, empty, still locked: leave nothing behind */
  }
  if (!rc && mfd >= 0 && !made)
    rc = mark_made(f, mfd, marker, name, f->start_after, marker_new);
done:
  if (mfd >= 0)
    close(mfd);
  if (!rc && f->claim.fd >= 0 && f->file_fd < 0)
    f->file_fd = open(path, O_RDONLY | O_CLOEXEC); /* for the claim's other holders */
  return rc ? rc : existed;
}

static int start_period(file_backend *f, const char *ns, const char *key, int init);

static int file_init(idgen__segment_backend *b, const char *name, uint64_t step,
                     uint64_t start_after, int force) {
  file_backend *f = (file_backend *)b;
  f->start_after = start_after;
  f->force = force;
  (void)step; /* the step is the generator's; the file keeps only the max */
  char err[IDGEN_SEGMENT_WHY_MAX];
  int rc = f->is_dir ? idgen__state_dir_ready(f->path, err, sizeof err) : 0;
  if (rc)
    return idgen__segment_why(b, rc, "%s", err);
  /* a period's key by its number alone: under the newest-period record, as a fetch's */
  if (f->is_dir && strchr(name, ':') && !start_after)
    return start_period(f, NULL, name, 1);
  return prepare(f, name, INIT);
}

/* The claim's other holder agrees when it has our file, or our directory, open. */
static int same_file(void *ctx, long pid) {
  const file_backend *f = ctx;
  const int fds[2] = {f->file_fd, f->dir_fd};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    if (fds[i] < 0 || fstat(fds[i], &st))
      continue;
    int rc = idgen__proc_fd_on(pid, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
    if (rc)
      return rc;
  }
  return 0;
}

/* The claim's name: "idgen/<namespace>/segment/<name>", or a hash of it when that
 * would not fit an abstract socket's name with its slot. */
static void claim_base(const char *ns, const char *name, char *out, size_t outlen) {
  int n = snprintf(out, outlen, "idgen/%s/segment/%s", ns, name);
  if (n > 0 && n <= 100)
    return;
  uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
  for (const char *p = out; *p; p++)
    h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
  snprintf(out, outlen, "idgen/segment-hash/%016" PRIx64, h);
}

int idgen__segment_file_claim(idgen__segment_backend *b, const char *ns, const char *name) {
  if (strcmp(b->vtable->name, "file"))
    return 0;
  file_backend *f = (file_backend *)b;
  if (f->claim.fd >= 0)
    return 0;
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  path_of(f, name, path, sizeof path);
  /* Open before the claim is taken: a holder must be recognisable while it holds it. */
  if (f->is_dir && f->dir_fd < 0)
    f->dir_fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f->file_fd < 0)
    f->file_fd = open(path, O_RDONLY | O_CLOEXEC);
  char base[IDGEN_LEASE_NAME_MAX + IDGEN_SEGMENT_NAME_MAX + 32];
  claim_base(ns, name, base, sizeof base);
  long other = -1;
  int rc = idgen__claim_share(&f->claim, base, CLAIM_SLOTS, same_file, f, &other);
  if (rc == 0)
    return 0;
  if (rc == -EADDRINUSE) {
    char who[IDGEN_SEGMENT_DSN_MAX + 64] = "another process", dir[IDGEN_SEGMENT_DSN_MAX];
    char tail[IDGEN_SEGMENT_NAME_MAX + 16];
    snprintf(tail, sizeof tail, "/segment-%s", name);
    if (other > 0 && idgen__proc_fd_find(other, tail, dir, sizeof dir) == 0)
      snprintf(who, sizeof who, "pid %ld from state dir %s", other, dir);
    else if (other > 0)
      snprintf(who, sizeof who, "pid %ld from another file (or as another user)", other);
    rc = idgen__segment_why(b, IDGEN_ECONFLICT,
                            "segment '%s' (namespace '%s') is served on this host by %s; "
                            "this process's file is %s: two files of one name hand out "
                            "the same numbers",
                            name, ns, who, path);
  } else if (rc == -EUSERS) {
    rc = idgen__segment_why(b, IDGEN_ECONFLICT,
                            "segment '%s' (namespace '%s'): %d processes on this host "
                            "serve it already",
                            name, ns, CLAIM_SLOTS);
  } else {
    rc =
        idgen__segment_why(b, rc, "segment '%s': host-wide claim: %s", name, strerror(-rc));
  }
  return rc;
}

int idgen__segment_file_start(idgen__segment_backend *b, const char *ns, const char *name,
                              int may_make) {
  if (strcmp(b->vtable->name, "file"))
    return 1;
  file_backend *f = (file_backend *)b;
  char err[IDGEN_SEGMENT_WHY_MAX];
  int rc = f->is_dir && may_make ? idgen__state_dir_ready(f->path, err, sizeof err) : 0;
  if (rc)
    return idgen__segment_why(b, rc, "%s", err);
  rc = idgen__segment_file_claim(b, ns, name);
  if (rc)
    return rc;
  return prepare(f, name, f->is_dir && may_make ? FIRST : USE);
}

static int file_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  file_backend *f = (file_backend *)b;
  (void)floor; /* one counter: each block lies above the last */
  /* the other holders' probes since the last fetch */
  idgen__claim_drain(&f->claim);
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 16];
  char marker[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 32];
  path_of(f, name, path, sizeof path);
  marker_of(f, name, marker, sizeof marker);
  /* dir form: the record's lock first, as prepare takes them */
  int created, marker_new = 0,
               mfd = f->is_dir ? open_locked(f, marker, 1, &marker_new) : -1;
  if (mfd < 0 && f->is_dir)
    return mfd;
  int fd = open_locked(f, path, 0, &created);
  if (fd == -ENOENT) { /* removed under a running process: say it was there */
    struct stat st;
    int made = f->is_dir ? fstat(mfd, &st) == 0 && st.st_size > 0 : f->file_fd >= 0;
    if (marker_new)
      unlink(marker); /* ours, empty, still locked: leave nothing behind */
    if (mfd >= 0)
      close(mfd);
    return missing(f, path, name, made);
  }
  if (fd < 0) {
    if (mfd >= 0)
      close(mfd);
    return fd;
  }
  uint64_t max;
  int rc = read_max(f, fd, path, name, &max);
  if (!rc && max > IDGEN_SEGMENT_NUMBER_MAX - step)
    rc = idgen__segment_why(b, IDGEN_ERANGE,
                            "file %s: '%s' is at %" PRIu64 ": a block of %" PRIu64
                            " would pass 2^63 - 1",
                            path, name, max, step);
  /* The record's highest first: a crash between the two writes leaves it above the
   * file's max (a block lost), never below a number handed out. */
  if (!rc && mfd >= 0)
    rc = mark_made(f, mfd, marker, name, max + step, marker_new);
  if (!rc)
    rc = write_max(f, fd, path, name, max + step);
  close(fd); /* releases the locks */
  if (mfd >= 0)
    close(mfd);
  if (rc)
    return rc;
  *out = (idgen__segment_block){max + step, step, 1};
  return 0;
}

int idgen__segment_file_is_dir(const idgen__segment_backend *b) {
  return !strcmp(b->vtable->name, "file") && ((const file_backend *)b)->is_dir;
}

static void file_free(idgen__segment_backend *b) {
  file_backend *f = (file_backend *)b;
  idgen__claim_drop(&f->claim);
  if (f->dir_fd >= 0)
    close(f->dir_fd);
  if (f->file_fd >= 0)
    close(f->file_fd);
  free(b);
}

/* "<period, 20 digits> <family>\n": the newest period of a family, in
 * segment-FAMILY.newest (an empty or new file: none yet). */
static int read_newest(file_backend *f, int fd, const char *path, const char *family,
                       uint64_t *newest) {
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size == 0) {
    *newest = 0;
    return 0;
  }
  return read_max(f, fd, path, family, newest);
}

/* A period key starts as idgen serve's default file does: made at 0 only if this
 * directory never made it (idgen__segment_file_start's may_make; init: prepare's INIT,
 * the claim taken by its caller), and only at or above the newest period of its family
 * (then raised to it, synced, before the file is made), all under the newest record's
 * lock. A period behind it is used if its file is there, and never made. */
static int start_period(file_backend *f, const char *ns, const char *key, int init) {
  char family[IDGEN_SEGMENT_NAME_MAX + 8];
  uint64_t number, newest;
  if (!idgen__segment_period_key(key, family, sizeof family, &number))
    return idgen__segment_why(&f->base, IDGEN_EINVAL, "file: %s is no period key", key);
  char path[IDGEN_SEGMENT_DSN_MAX + IDGEN_SEGMENT_NAME_MAX + 32];
  snprintf(path, sizeof path, "%s/segment-%s.newest", f->path, family);
  int fresh;
  int fd = open_locked(f, path, 1, &fresh);
  if (fd < 0)
    return fd;
  int rc = read_newest(f, fd, path, family, &newest);
  if (!rc && number < newest) { /* there, or refused: never made */
    rc = init ? prepare(f, key, USE) : idgen__segment_file_start(&f->base, ns, key, 0);
    if (rc == -ENOENT)
      rc = idgen__segment_behind(&f->base, key, newest, path);
  } else if (!rc) {
    if (number > newest || fresh)
      rc = write_max(f, fd, path, family, number);
    if (!rc && fresh)
      rc = sync_dir(f, path);
    if (!rc)
      rc = init ? prepare(f, key, INIT) : idgen__segment_file_start(&f->base, ns, key, 1);
  }
  close(fd);
  return rc;
}

static int file_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                          uint64_t step) {
  file_backend *f = (file_backend *)b;
  (void)step; /* a file records no step */
  if (!f->is_dir || !strchr(key, ':'))
    return idgen__segment_file_start(b, ns, key, 1);
  char err[IDGEN_SEGMENT_WHY_MAX];
  int rc = idgen__state_dir_ready(f->path, err, sizeof err);
  if (rc)
    return idgen__segment_why(b, rc, "%s", err);
  return start_period(f, ns, key, 0);
}

/* A period needs a file per period key: the directory form. */
static int file_period_check(idgen__segment_backend *b, const char *name,
                             idgen__period_kind kind) {
  (void)name, (void)kind;
  return ((file_backend *)b)->is_dir
             ? 0
             : idgen__segment_why(b, IDGEN_EINVAL,
                                  "the file backend needs a directory (one file per "
                                  "period), not a file");
}

static const idgen__segment_backend_class file_class = {
    "file", file_init, file_fetch, file_free, NULL, file_key_start, file_period_check};

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
  f->claim.fd = f->dir_fd = f->file_fd = -1;
  *out = &f->base;
  return 0;
}
