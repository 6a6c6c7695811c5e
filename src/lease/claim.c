/* claim.c: the host-wide claim of a worker ID: an abstract Unix socket named
 * "idgen/<namespace>/worker/<N>" ("idgen/<namespace>/dc/<D>/worker/<N>" under a
 * datacenter), bound by its holder. Two processes of one namespace on
 * one host cannot both bind it, whatever their users and state directories, and the
 * kernel frees the name when the holder's last descriptor closes (it exits or dies).
 * Abstract names live in a network namespace: processes in different ones (containers
 * with their own network) do not see each other's claims. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lease/lease_internal.h"

/* The claim's address: a NUL, then the name (no terminator: abstract names count every
 * byte of the length given). */
static socklen_t claim_addr(const char *ns, int64_t dc, uint64_t worker,
                            struct sockaddr_un *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  char where[32] = "";
  if (dc >= 0)
    snprintf(where, sizeof where, "dc/%lld/", (long long)dc);
  int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "idgen/%s/%sworker/%llu", ns,
                   where, (unsigned long long)worker);
  if (n < 0 || (size_t)n >= sizeof sa->sun_path - 1)
    n = (int)sizeof sa->sun_path - 2; /* huge numbers under a 63-byte namespace: one ID
                                         still has one name; two may share one */
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int idgen__claim_take(idgen__claim *c, const char *ns, int64_t dc, uint64_t worker) {
  struct sockaddr_un sa;
  socklen_t len = claim_addr(ns, dc, worker, &sa);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  /* Listening lets a refused process connect and learn the holder's pid (SO_PEERCRED).
   * The holder never accepts: each such probe keeps one slot of this backlog until the
   * holder exits, and a probe that finds it full learns no pid. */
  if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 64)) {
    int e = errno;
    close(fd);
    return -e;
  }
  c->fd = fd;
  return 0;
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

/* The state directory of the worker file ([dc-<D>/]worker-<N>) that pid has open, from
 * /proc/<pid>/fd (readable for the same user or root only). 0, or -1 when it cannot be
 * known. */
static int holder_state_dir(pid_t pid, int64_t dc, uint64_t worker, char *out,
                            size_t outlen) {
  char fds[64], want[64], where[32] = "";
  snprintf(fds, sizeof fds, "/proc/%ld/fd", (long)pid);
  if (dc >= 0)
    snprintf(where, sizeof where, "/dc-%lld", (long long)dc);
  int wl = snprintf(want, sizeof want, "%s/worker-%llu", where, (unsigned long long)worker);
  DIR *d = opendir(fds);
  if (!d)
    return -1;
  int found = -1;
  struct dirent *e;
  while (found < 0 && (e = readdir(d))) {
    char target[IDGEN_LEASE_PATH_MAX + 64];
    ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
    if (n <= wl)
      continue;
    target[n] = '\0';
    char *tail = target + (n - wl);
    if (!strcmp(tail, want)) {
      *tail = '\0';
      snprintf(out, outlen, "%.*s", (int)(outlen > 0 ? outlen - 1 : 0), target);
      found = 0;
    }
  }
  closedir(d);
  return found;
}

void idgen__claim_holder(const char *ns, int64_t dc, uint64_t worker, char *out,
                         size_t outlen) {
  struct sockaddr_un sa;
  socklen_t len = claim_addr(ns, dc, worker, &sa);
  snprintf(out, outlen, "another process");
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return;
  struct ucred cred;
  socklen_t clen = sizeof cred;
  if (connect(fd, (struct sockaddr *)&sa, len) == 0 &&
      getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.pid > 0) {
    char dir[IDGEN_LEASE_PATH_MAX];
    if (holder_state_dir(cred.pid, dc, worker, dir, sizeof dir) == 0)
      snprintf(out, outlen, "pid %ld (state dir %s)", (long)cred.pid, dir);
    else
      snprintf(out, outlen, "pid %ld (uid %ld; its state dir is not readable here)",
               (long)cred.pid, (long)cred.uid);
  }
  close(fd);
}
