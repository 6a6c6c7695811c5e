/* claim.c: host-wide claims: abstract Unix sockets bound by their holders. Two processes
 * of one network namespace cannot both bind one name, whatever their users and state
 * directories, and the kernel frees the name when the holder's last descriptor closes
 * (it exits or dies). Abstract names live in a network namespace: processes in
 * different ones (containers with their own network) do not see each other's claims.
 * - a worker ID: "idgen/<namespace>/worker/<N>" ("idgen/<namespace>/dc/<D>/worker/<N>"
 *   under a datacenter), held by one process;
 * - a shared claim (idgen__claim_share): slots "<base>/0" ... "<base>/<n-1>", one per
 *   process, for a thing several processes may use together as long as they agree
 *   (the segment file backend: one file per name on a host). */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "host/host.h"
#include "idgen/lease.h"

/* The address of the claim name: a NUL, then the name (no terminator: abstract names
 * count every byte of the length given), cut to what sun_path holds. */
static socklen_t named_addr(const char *name, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n > sizeof sa->sun_path - 2)
    n = sizeof sa->sun_path - 2;
  memcpy(sa->sun_path + 1, name, n);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* A worker ID's claim name. Huge numbers under a 63-byte namespace are cut: one ID
 * still has one name; two may share one. */
static void worker_name(const char *ns, int64_t dc, uint64_t worker, char *out,
                        size_t outlen) {
  char where[32] = "";
  if (dc >= 0)
    snprintf(where, sizeof where, "dc/%lld/", (long long)dc);
  snprintf(out, outlen, "idgen/%s/%sworker/%llu", ns, where, (unsigned long long)worker);
}

int idgen__claim_take_named(idgen__claim *c, const char *name) {
  struct sockaddr_un sa;
  socklen_t len = named_addr(name, &sa);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -errno;
  /* Listening lets another process connect and learn the holder's pid (SO_PEERCRED).
   * Each such probe keeps one slot of this backlog until the holder drains it
   * (idgen__claim_drain) or exits, and a probe that finds it full learns no pid: the
   * largest backlog the host allows, since a shared claim is probed at every start of
   * every other holder. */
  if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, SOMAXCONN)) {
    int e = errno;
    close(fd);
    return -e;
  }
  c->fd = fd;
  return 0;
}

int idgen__claim_take(idgen__claim *c, const char *ns, int64_t dc, uint64_t worker) {
  char name[160];
  worker_name(ns, dc, worker, name, sizeof name);
  return idgen__claim_take_named(c, name);
}

void idgen__claim_drain(idgen__claim *c) {
  int fd;
  while (c->fd >= 0 && (fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
    close(fd); /* the listener is non-blocking: this ends when none is left */
}

void idgen__claim_drop(idgen__claim *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

int idgen__claim_held(const char *ns, int64_t dc, uint64_t worker) {
  idgen__claim c = {-1};
  int rc = idgen__claim_take(&c, ns, dc, worker);
  idgen__claim_drop(&c);
  return rc == -EADDRINUSE ? 1 : rc < 0 ? rc : 0;
}

int idgen__claim_peer(const char *name, long *pid, long *uid) {
  struct sockaddr_un sa;
  socklen_t len = named_addr(name, &sa);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -errno;
  struct ucred cred;
  socklen_t clen = sizeof cred;
  int rc = 0;
  if (connect(fd, (struct sockaddr *)&sa, len))
    rc = errno == ECONNREFUSED || errno == ENOENT ? -ENOENT : -errno;
  else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid <= 0)
    rc = -EAGAIN; /* connected: someone holds it, but who is not known */
  else {
    *pid = (long)cred.pid;
    *uid = (long)cred.uid;
  }
  close(fd);
  return rc;
}

int idgen__proc_fd_find(long pid, const char *suffix, char *out, size_t outlen) {
  char fds[64];
  snprintf(fds, sizeof fds, "/proc/%ld/fd", pid);
  size_t wl = strlen(suffix);
  DIR *d = opendir(fds);
  if (!d)
    return -1;
  int found = -1;
  struct dirent *e;
  while (found < 0 && (e = readdir(d))) {
    char target[IDGEN_LEASE_PATH_MAX + 128];
    ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
    if (n <= (ssize_t)wl)
      continue;
    target[n] = '\0';
    char *tail = target + ((size_t)n - wl);
    if (!strcmp(tail, suffix)) {
      *tail = '\0';
      snprintf(out, outlen, "%.*s", (int)(outlen > 0 ? outlen - 1 : 0), target);
      found = 0;
    }
  }
  closedir(d);
  return found;
}

int idgen__proc_fd_on(long pid, uint64_t dev, uint64_t ino) {
  char fds[64];
  snprintf(fds, sizeof fds, "/proc/%ld/fd", pid);
  DIR *d = opendir(fds);
  if (!d)
    return -errno;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    struct stat st;
    if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0)
      found = (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
  }
  closedir(d);
  return found;
}

void idgen__claim_holder(const char *ns, int64_t dc, uint64_t worker, char *out,
                         size_t outlen) {
  char name[160], want[64], where[32] = "";
  worker_name(ns, dc, worker, name, sizeof name);
  snprintf(out, outlen, "another process");
  long pid, uid;
  if (idgen__claim_peer(name, &pid, &uid))
    return;
  /* The state directory of the worker file ([dc-<D>/]worker-<N>) it has open, from
   * /proc/<pid>/fd (readable for the same user or root only). */
  if (dc >= 0)
    snprintf(where, sizeof where, "/dc-%lld", (long long)dc);
  snprintf(want, sizeof want, "%s/worker-%llu", where, (unsigned long long)worker);
  char dir[IDGEN_LEASE_PATH_MAX];
  if (idgen__proc_fd_find(pid, want, dir, sizeof dir) == 0)
    snprintf(out, outlen, "pid %ld (state dir %s)", pid, dir);
  else
    snprintf(out, outlen, "pid %ld (uid %ld; its state dir is not readable here)", pid,
             uid);
}

/* Looks at a slot's holder a few times, 10 ms apart: a holder can leave between the
 * probe that learns its pid and the look at its /proc/PID/fd (it drops its slot, then
 * closes its files and exits), and an empty slot, or one whose holder agrees, at any
 * look is no conflict. Only a holder that disagrees at every look is (*pid: it). */
#define SLOT_LOOKS 20
static int slot_conflicts(const char *name, int (*agree)(void *ctx, long pid), void *ctx,
                          long *pid) {
  for (int look = 0; look < SLOT_LOOKS; look++) {
    if (look)
      nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    long uid;
    *pid = -1;
    int rc = idgen__claim_peer(name, pid, &uid);
    if (rc == -ENOENT || (rc == 0 && agree(ctx, *pid) == 1))
      return 0;
  }
  return 1;
}

int idgen__claim_share(idgen__claim *c, const char *base, int slots,
                       int (*agree)(void *ctx, long pid), void *ctx, long *other) {
  char name[256];
  int mine = -1;
  for (int k = 0; k < slots && mine < 0; k++) {
    snprintf(name, sizeof name, "%s/%d", base, k);
    int rc = idgen__claim_take_named(c, name);
    if (rc == 0)
      mine = k;
    else if (rc != -EADDRINUSE)
      return rc;
  }
  if (mine < 0)
    return -EUSERS;
  /* Each side holds its slot before it looks at the others': of two that start
   * together, the later one to bind sees the other. */
  for (int k = 0; k < slots; k++) {
    if (k == mine)
      continue;
    snprintf(name, sizeof name, "%s/%d", base, k);
    long pid = -1;
    if (!slot_conflicts(name, agree, ctx, &pid))
      continue;
    idgen__claim_drop(c);
    *other = pid;
    return -EADDRINUSE;
  }
  return 0;
}
