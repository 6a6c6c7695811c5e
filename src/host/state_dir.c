/* state_dir.c: the state directory of the file, static and k8s providers (and of the
 * segment file backend): its default, mkdir -p with fsyncs, a check that it takes
 * files, and the fsync of a new entry's directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host.h"
#include "idgen/lease.h"

void idgen__default_state_dir(char *out, size_t outlen) {
  const char *xdg = getenv("XDG_STATE_HOME");
  const char *home = getenv("HOME");
  if (xdg && *xdg == '/')
    snprintf(out, outlen, "%s/idgen", xdg);
  else if (getuid() != 0 && home && *home == '/')
    snprintf(out, outlen, "%s/.local/state/idgen", home);
  else
    snprintf(out, outlen, "/var/lib/idgen");
}

int idgen__mkdir_p(const char *dir) {
  char path[IDGEN_LEASE_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s", dir);
  size_t len = strlen(path);
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char saved = *p;
    *p = '\0';
    if (mkdir(path, 0755) == 0) {
      int rc = idgen__fsync_parent(path); /* the new entry survives a crash */
      if (rc)
        return rc;
    } else if (errno != EEXIST) {
      return -errno;
    }
    *p = saved;
    if ((size_t)(p - path) >= len)
      return 0;
  }
}

int idgen__state_dir_ready(const char *dir, char *err, size_t errlen) {
  int rc = idgen__mkdir_p(dir);
  if (rc) {
    if (err && errlen)
      snprintf(err, errlen, "state dir %s: %s", dir, strerror(-rc));
    return rc;
  }
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
    if (err && errlen)
      snprintf(err, errlen, "state dir %s: not a directory", dir);
    return -ENOTDIR;
  }
  /* A name of its own per call: two threads of one server check one directory at once
   * (a segment's fetcher and the next generator's start), and a crash between the
   * create and the unlink leaves a file behind that a later process with the same PID
   * (PID 1 in a container) must not trip over. */
  char path[IDGEN_LEASE_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/.write-test-XXXXXX", dir);
  int fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (err && errlen)
      snprintf(err, errlen, "state dir %s: not writable: %s", dir, strerror(e));
    return -e;
  }
  close(fd);
  unlink(path);
  return 0;
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
