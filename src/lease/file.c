/* file.c: the one-host providers. "file" locks the smallest free worker-N file in the
 * state directory; "static" and "k8s" lock the file of a fixed ID (no cross-host
 * fence). Each keeps its HWM inside the locked file, fsync'd before the cap rises. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "lease/lease_internal.h"

typedef struct file_lease {
  idgen_lease base;
  char dir[IDGEN_LEASE_PATH_MAX];
  uint64_t max_worker;
  int64_t fixed; /* the static/k8s worker ID, or -1 for "file" */
  char host[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  idgen__hwm_file f; /* f.fd >= 0 while held */
  uint64_t worker;
  uint64_t fork_gen; /* the fork generation when it was opened */
} file_lease;

static void worker_path(const file_lease *fl, uint64_t w, char *out, size_t outlen) {
  snprintf(out, outlen, "%s/worker-%llu", fl->dir, (unsigned long long)w);
}

/* A provider opened before a fork() belongs to the parent: its lock is shared with it,
 * and writing the HWM from the child would lower the parent's. */
static int refuse_in_child(file_lease *fl) {
  if (!idgen__lease_forked(fl->fork_gen))
    return 0;
  return idgen__why(&fl->base, IDGEN_EFORKED,
                    "this provider was opened by the parent process: open a new one");
}

static int file_acquire(idgen_lease *l, idgen_lease_grant *out) {
  file_lease *fl = (file_lease *)l;
  char path[IDGEN_LEASE_PATH_MAX + 32];
  int rc = refuse_in_child(fl);
  if (rc)
    return rc;
  if (fl->f.fd < 0) {
    uint64_t first = fl->fixed >= 0 ? (uint64_t)fl->fixed : 0;
    uint64_t last = fl->fixed >= 0 ? (uint64_t)fl->fixed : fl->max_worker;
    int won = 0;
    for (uint64_t w = first; w <= last; w++) {
      worker_path(fl, w, path, sizeof path);
      rc = idgen__hwm_file_lock(&fl->f, path);
      if (rc == -EWOULDBLOCK)
        continue;
      if (rc)
        return idgen__why(l, rc, "%s: %s", path, strerror(-rc));
      fl->worker = w;
      won = 1;
      break;
    }
    if (!won) {
      if (fl->fixed >= 0)
        return idgen__why(l, IDGEN_ECONFLICT,
                          "worker ID %lld is already held by another process on this host "
                          "(%s)",
                          (long long)fl->fixed, path);
      return idgen__why(
          l, IDGEN_ENOWORKER,
          "all %llu worker IDs are taken: every worker-N file in %s is locked",
          (unsigned long long)fl->max_worker + 1, fl->dir);
    }
  }
  idgen__record rec;
  rc = idgen__hwm_file_read(&fl->f, &rec);
  if (rc) {
    worker_path(fl, fl->worker, path, sizeof path);
    idgen__hwm_file_close(&fl->f);
    return idgen__why(l, rc,
                      "%s: unreadable HWM record (%s); move the file away only if "
                      "no process used this worker ID in the last seconds",
                      path, idgen_strerror(rc));
  }
  out->worker = fl->worker;
  out->hwm_ms = rec.hwm_ms;
  out->ttl_ms = 0;
  out->fenced = fl->fixed < 0;
  return 0;
}

static int file_keepalive(idgen_lease *l) {
  file_lease *fl = (file_lease *)l;
  int rc = refuse_in_child(fl);
  if (rc)
    return rc;
  return fl->f.fd >= 0 ? 0 : idgen__why(l, IDGEN_ELEASE, "no worker ID held");
}

static int file_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  file_lease *fl = (file_lease *)l;
  int rc = refuse_in_child(fl);
  if (rc)
    return rc;
  if (fl->f.fd < 0)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  idgen__record rec;
  idgen__record_self(&rec, fl->host, fl->start_ms);
  rec.hwm_ms = hwm_ms;
  rec.wall_ms = idgen_wall_ns() / NS_PER_MS;
  rc = idgen__hwm_file_write(&fl->f, &rec);
  if (rc)
    return idgen__why(l, rc, "%s: %s", fl->f.path, idgen_strerror(rc));
  return 0;
}

static int file_release(idgen_lease *l, int64_t final_hwm_ms) {
  file_lease *fl = (file_lease *)l;
  int rc = refuse_in_child(fl);
  if (rc || fl->f.fd < 0)
    return rc;
  if (final_hwm_ms > 0)
    rc = file_write_hwm(l, final_hwm_ms);
  idgen__hwm_file_close(&fl->f);
  return rc;
}

static int parse_worker_name(const char *name, uint64_t *out) {
  if (strncmp(name, "worker-", 7) || !name[7])
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(name + 7, &end, 10);
  if (errno || *end || name[7] < '0' || name[7] > '9')
    return -1;
  *out = v;
  return 0;
}

static int cmp_holder(const void *a, const void *b) {
  const idgen_lease_holder *x = a, *y = b;
  return x->worker < y->worker ? -1 : x->worker > y->worker;
}

static int file_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  file_lease *fl = (file_lease *)l;
  DIR *d = opendir(fl->dir);
  if (!d)
    return idgen__why(l, -errno, "state dir %s: %s", fl->dir, strerror(errno));
  size_t n = 0;
  struct dirent *e;
  char path[IDGEN_LEASE_PATH_MAX + 300];
  while ((e = readdir(d))) {
    uint64_t w;
    if (parse_worker_name(e->d_name, &w))
      continue;
    if (fl->fixed >= 0 && w != (uint64_t)fl->fixed)
      continue;
    snprintf(path, sizeof path, "%s/%s", fl->dir, e->d_name);
    idgen__record rec;
    memset(&rec, 0, sizeof rec);
    int locked = idgen__hwm_file_locked(path);
    if (idgen__hwm_file_peek(path, &rec) && locked <= 0)
      continue;
    if (locked <= 0 && rec.hwm_ms == 0)
      continue;
    if (n < max) {
      idgen_lease_holder *h = &out[n];
      memset(h, 0, sizeof *h);
      h->worker = w;
      h->live = locked > 0 || (fl->f.fd >= 0 && fl->worker == w);
      snprintf(h->host, sizeof h->host, "%s", rec.host);
      h->pid = rec.pid;
      h->start_ms = rec.start_ms;
      h->wall_ms = rec.wall_ms;
      h->hwm_ms = rec.hwm_ms;
      h->ttl_left_ms = -1;
    }
    n++;
  }
  closedir(d);
  qsort(out, n < max ? n : max, sizeof *out, cmp_holder);
  *count = n;
  return 0;
}

static void file_describe(idgen_lease *l, char *out, size_t outlen) {
  file_lease *fl = (file_lease *)l;
  if (fl->fixed >= 0) {
    snprintf(out, outlen, "%s: worker ID %lld (no fence between hosts), local HWM in %s",
             l->vtable->name, (long long)fl->fixed, fl->dir);
    return;
  }
  char path[IDGEN_LEASE_PATH_MAX + 32];
  for (uint64_t w = 0; w <= fl->max_worker; w++) {
    worker_path(fl, w, path, sizeof path);
    if (idgen__hwm_file_locked(path) == 0) {
      snprintf(out, outlen, "file: state dir %s, would claim worker ID %llu of 0-%llu",
               fl->dir, (unsigned long long)w, (unsigned long long)fl->max_worker);
      return;
    }
  }
  snprintf(out, outlen, "file: state dir %s, all %llu worker IDs are taken", fl->dir,
           (unsigned long long)fl->max_worker + 1);
}

static void file_free(idgen_lease *l) {
  file_lease *fl = (file_lease *)l;
  idgen__hwm_file_close(&fl->f); /* in a forked child: its descriptor only */
  free(fl);
}

static const idgen_lease_class file_class = {"file",         file_acquire, file_keepalive,
                                             file_write_hwm, file_release, file_holders,
                                             file_describe,  file_free};
static const idgen_lease_class static_class = {"static",       file_acquire, file_keepalive,
                                               file_write_hwm, file_release, file_holders,
                                               file_describe,  file_free};
static const idgen_lease_class k8s_class = {"k8s",          file_acquire, file_keepalive,
                                            file_write_hwm, file_release, file_holders,
                                            file_describe,  file_free};

static int open_common(idgen_lease **out, const idgen_lease_config *c,
                       const idgen_lease_class *cls, uint64_t max_worker, int64_t fixed,
                       char *err, size_t errlen) {
  char dir[IDGEN_LEASE_PATH_MAX];
  if (c->state_dir[0])
    snprintf(dir, sizeof dir, "%s", c->state_dir);
  else
    idgen__default_state_dir(dir, sizeof dir);
  int rc = idgen__state_dir_ready(dir, err, errlen);
  if (rc)
    return rc;
  file_lease *fl = calloc(1, sizeof *fl);
  if (!fl)
    return IDGEN_ENOMEM;
  fl->base.vtable = cls;
  snprintf(fl->dir, sizeof fl->dir, "%s", dir);
  fl->max_worker = max_worker;
  fl->fixed = fixed;
  snprintf(fl->host, sizeof fl->host, "%s", c->hostname);
  fl->start_ms = idgen_wall_ns() / NS_PER_MS;
  fl->f.fd = -1;
  idgen__fork_watch();
  fl->fork_gen = idgen__fork_generation();
  *out = &fl->base;
  return 0;
}

int idgen__lease_file_new(idgen_lease **out, const idgen_lease_config *c,
                          uint64_t max_worker, char *err, size_t errlen) {
  return open_common(out, c, &file_class, max_worker, -1, err, errlen);
}

int idgen__lease_fixed_new(idgen_lease **out, const idgen_lease_config *c, uint64_t worker,
                           char *err, size_t errlen) {
  return open_common(out, c, c->kind == IDGEN_LEASE_K8S ? &k8s_class : &static_class,
                     worker, (int64_t)worker, err, errlen);
}
