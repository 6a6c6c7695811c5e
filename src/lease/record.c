/* record.c: the holder record kept with a HWM, and the locked local files that hold it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease_internal.h"

/* A name as a JSON string's content: hostnames and region names never hold '"', '\\'
 * or control characters, so they are dropped rather than escaped. */
static void plain(const char *in, char *out, size_t outlen) {
  size_t j = 0;
  for (size_t i = 0; in[i] && j + 1 < outlen; i++)
    if (in[i] != '"' && in[i] != '\\' && (unsigned char)in[i] >= 0x20)
      out[j++] = in[i];
  out[j] = '\0';
}

int idgen__record_format(const idgen__record *rec, char *out, size_t outlen) {
  char host[IDGEN_HOLDER_HOST_MAX], region[IDGEN_LEASE_NAME_MAX], where[160] = "";
  plain(rec->host, host, sizeof host);
  plain(rec->region, region, sizeof region);
  if (rec->datacenter >= 0)
    snprintf(where, sizeof where, ",\"datacenter\":\"%" PRId64 "\"", rec->datacenter);
  if (region[0])
    snprintf(where + strlen(where), sizeof where - strlen(where), ",\"region\":\"%s\"",
             region);
  int n = snprintf(out, outlen,
                   "{\"hwm_ms\":\"%" PRId64 "\",\"host\":\"%s\",\"pid\":\"%" PRId64
                   "\",\"start_ms\":\"%" PRId64 "\",\"wall_ms\":\"%" PRId64 "\"%s}",
                   rec->hwm_ms, host, rec->pid, rec->start_ms, rec->wall_ms, where);
  if (n < 0 || (size_t)n >= outlen)
    return IDGEN_EBUFSIZE;
  return n;
}

/* An int64 that etcd-style JSON may carry as a string or a number. */
static int get_i64(json_t *obj, const char *key, int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    *out = 0;
    return 0;
  }
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end)
      return IDGEN_EFORMAT;
    *out = x;
    return 0;
  }
  return IDGEN_EFORMAT;
}

int idgen__record_parse(const char *text, size_t len, idgen__record *out) {
  while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\0'))
    len--;
  if (len == 0)
    return IDGEN_EEMPTY;
  json_error_t jerr;
  json_t *root = json_loadb(text, len, 0, &jerr);
  if (!root)
    return IDGEN_EFORMAT;
  idgen__record r;
  memset(&r, 0, sizeof r);
  int rc = IDGEN_EFORMAT;
  if (!json_is_object(root))
    goto done;
  if (get_i64(root, "hwm_ms", &r.hwm_ms) || get_i64(root, "pid", &r.pid) ||
      get_i64(root, "start_ms", &r.start_ms) || get_i64(root, "wall_ms", &r.wall_ms) ||
      get_i64(root, "datacenter", &r.datacenter))
    goto done;
  if (!json_object_get(root, "hwm_ms"))
    goto done;
  if (!json_object_get(root, "datacenter"))
    r.datacenter = -1;
  json_t *h = json_object_get(root, "host"), *g = json_object_get(root, "region");
  if ((h && !json_is_string(h)) || (g && !json_is_string(g)))
    goto done;
  if (h)
    snprintf(r.host, sizeof r.host, "%s", json_string_value(h));
  if (g)
    snprintf(r.region, sizeof r.region, "%s", json_string_value(g));
  if (r.hwm_ms < 0)
    goto done;
  *out = r;
  rc = 0;
done:
  json_decref(root);
  return rc;
}

void idgen__record_self(idgen__record *rec, const char *host_override, int64_t start_ms,
                        int64_t datacenter, const char *region) {
  memset(rec, 0, sizeof *rec);
  rec->datacenter = datacenter;
  snprintf(rec->region, sizeof rec->region, "%s", region ? region : "");
  if (host_override && *host_override)
    snprintf(rec->host, sizeof rec->host, "%s", host_override);
  else if (gethostname(rec->host, sizeof rec->host))
    snprintf(rec->host, sizeof rec->host, "unknown");
  rec->host[sizeof rec->host - 1] = '\0';
  rec->pid = (int64_t)getpid();
  rec->start_ms = start_ms;
}

int idgen__fsync_parent(const char *path) {
  char dir[IDGEN_LEASE_PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s", path);
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    dir[--n] = '\0';
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    slash[slash == dir] = '\0'; /* "/x" -> "/" */
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = fsync(fd) ? -errno : 0;
  close(fd);
  return rc;
}

/* 1 when path names the inode open as fd and it has a link, 0 when not, -errno. */
static int names_inode(int fd, const char *path) {
  struct stat held, named;
  if (fstat(fd, &held))
    return -errno;
  if (held.st_nlink == 0)
    return 0;
  if (stat(path, &named))
    return errno == ENOENT ? 0 : -errno;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

int idgen__hwm_file_lock(idgen__hwm_file *f, const char *path, int *created) {
  for (int attempt = 0; attempt < 8; attempt++) {
    /* Create it if missing, and know whether we did: a file we just created has no
     * history, one we found must hold a whole record. */
    int made = 1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
      made = 0;
      fd = open(path, O_RDWR | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue; /* removed since: try again */
    }
    if (fd < 0)
      return -errno;
    /* An open-file-description lock: two opens conflict even within one process, and
     * the kernel drops it when the last descriptor of this open closes. */
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl)) {
      int e = errno;
      close(fd);
      return e == EACCES || e == EAGAIN ? -EWOULDBLOCK : -e;
    }
    /* Removed or renamed over between the open and the lock: this lock would fence
     * nothing, since the next process opens whatever path names then. */
    int rc = names_inode(fd, path);
    if (rc <= 0) {
      close(fd);
      if (rc < 0)
        return rc;
      continue;
    }
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "%s", path);
    *created = made;
    return 0;
  }
  return -EAGAIN;
}

int idgen__hwm_file_check(idgen__hwm_file *f) {
  int rc = names_inode(f->fd, f->path);
  return rc > 0 ? 0 : rc < 0 ? rc : IDGEN_ELEASE;
}

static int read_all(int fd, idgen__record *out) {
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n < 0)
    return -errno;
  return idgen__record_parse(buf, (size_t)n, out);
}

int idgen__hwm_file_read(idgen__hwm_file *f, idgen__record *out) {
  return read_all(f->fd, out);
}

int idgen__hwm_file_write(idgen__hwm_file *f, const idgen__record *rec) {
  /* One small pwrite padded to a fixed size: it never straddles a page, so a crash
   * leaves the old or the new record. */
  char buf[512];
  int n = idgen__record_format(rec, buf, sizeof buf);
  if (n < 0)
    return n;
  memset(buf + n, ' ', sizeof buf - 1 - (size_t)n);
  buf[sizeof buf - 1] = '\n';
  ssize_t w = pwrite(f->fd, buf, sizeof buf, 0);
  if (w < 0)
    return -errno;
  if ((size_t)w != sizeof buf)
    return -EIO;
  if (fdatasync(f->fd))
    return -errno;
  return 0;
}

void idgen__hwm_file_close(idgen__hwm_file *f) {
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
}

int idgen__hwm_file_locked(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -errno;
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  int rc = fcntl(fd, F_OFD_GETLK, &fl) ? -errno : fl.l_type != F_UNLCK;
  close(fd);
  return rc;
}

int idgen__hwm_file_peek(const char *path, idgen__record *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = read_all(fd, out);
  close(fd);
  return rc;
}
