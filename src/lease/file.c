/* file.c: the one-host providers. "file" takes the smallest free worker ID; "static" and
 * "k8s" a fixed one (no cross-host fence). Each holds its ID by two fences: a host-wide
 * claim (an abstract socket per namespace and ID, whatever the state directory or user)
 * and a lock on worker-N in the state directory, whose record holds the HWM, fsync'd
 * before the cap rises. A holder whose worker-N was removed or replaced gives the ID
 * up; a worker-N with no history makes its new holder wait (see fresh_hwm). */
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
  char ns[IDGEN_LEASE_NAME_MAX];
  uint64_t max_worker;
  int64_t fixed; /* the static/k8s worker ID, or -1 for "file" */
  char host[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int64_t fresh_wait_ms; /* ahead + one HWM interval: see fresh_hwm */
  idgen__claim claim;    /* claim.fd >= 0 while held */
  idgen__hwm_file f;     /* f.fd >= 0 while held */
  uint64_t worker;
  uint64_t fork_gen; /* the fork generation when it was opened */
  int readonly;      /* opened to look only: nothing is made or written */
} file_lease;

static void worker_path(const file_lease *fl, uint64_t w, char *out, size_t outlen) {
  snprintf(out, outlen, "%s/worker-%llu", fl->dir, (unsigned long long)w);
}

static int held(const file_lease *fl) {
  return fl->f.fd >= 0;
}

/* Gives the ID up: the lock and the claim (the kernel would drop both at exit). */
static void let_go(file_lease *fl) {
  idgen__hwm_file_close(&fl->f);
  idgen__claim_drop(&fl->claim);
}

static void self_record(const file_lease *fl, int64_t hwm_ms, idgen__record *rec) {
  idgen__record_self(rec, fl->host, fl->start_ms);
  rec->hwm_ms = hwm_ms;
  rec->wall_ms = idgen_wall_ns() / NS_PER_MS;
}

/* A provider opened before a fork() belongs to the parent: its lock and claim are
 * shared with it, and writing the HWM from the child would lower the parent's. */
static int refuse_in_child(file_lease *fl) {
  if (!idgen__lease_forked(fl->fork_gen))
    return 0;
  return idgen__why(&fl->base, IDGEN_EFORKED,
                    "this provider was opened by the parent process: open a new one");
}

/* The HWM of a worker file that has no history: it was never there, or it was removed
 * or replaced, maybe while its holder ran. That holder may still issue up to its cap,
 * which is at most the last HWM it persisted: at most `ahead` past the last write
 * that found its file in place, so at most ahead past the moment the file went (it
 * checks before every write, and computes the cap before it checks). A new holder
 * therefore waits past now + ahead, plus one HWM interval of margin, on this host's
 * clock; the same wait is persisted as the file's first record, so that a crash
 * during the wait leaves it for the next holder. */
static int64_t fresh_hwm(const file_lease *fl) {
  return idgen_wall_ns() / NS_PER_MS + fl->fresh_wait_ms;
}

/* Claims w host-wide, then locks its file and reads its HWM. 0 with *hwm_ms set;
 * -EWOULDBLOCK when another process holds w (claim or lock); IDGEN_EEMPTY /
 * IDGEN_EFORMAT for a record that is not whole (corrupt); another error. Holds
 * nothing on failure. */
static int take(file_lease *fl, uint64_t w, int64_t *hwm_ms) {
  char path[IDGEN_LEASE_PATH_MAX + 32];
  worker_path(fl, w, path, sizeof path);
  int rc = idgen__claim_take(&fl->claim, fl->ns, w);
  if (rc == -EADDRINUSE)
    return -EWOULDBLOCK;
  if (rc)
    return idgen__why(&fl->base, rc, "host-wide claim of worker ID %llu: %s",
                      (unsigned long long)w, strerror(-rc));
  int created = 0;
  rc = idgen__hwm_file_lock(&fl->f, path, &created);
  if (rc == -ENOENT) { /* the state directory itself was removed: make it again */
    rc = idgen__mkdir_p(fl->dir);
    if (rc == 0)
      rc = idgen__hwm_file_lock(&fl->f, path, &created);
  }
  if (rc) {
    idgen__claim_drop(&fl->claim);
    if (rc == -EWOULDBLOCK)
      return rc;
    return idgen__why(&fl->base, rc, "%s: %s", path, strerror(-rc));
  }
  idgen__record rec;
  if (created) {
    self_record(fl, fresh_hwm(fl), &rec);
    rc = idgen__hwm_file_write(&fl->f, &rec);
    if (rc == 0)
      rc = idgen__fsync_parent(path);
    if (rc) {
      unlink(path); /* ours, empty or half made: leave no corrupt file behind (while
                       still locked, so that nobody locks it in between) */
      let_go(fl);
      return idgen__why(&fl->base, rc, "%s: %s", path, idgen_strerror(rc));
    }
  } else if ((rc = idgen__hwm_file_read(&fl->f, &rec))) {
    let_go(fl);
    return idgen__why(&fl->base, rc,
                      "%s: unreadable HWM record (%s); move the file away only if no "
                      "process used worker ID %llu in the last seconds",
                      path, idgen_strerror(rc), (unsigned long long)w);
  }
  fl->worker = w;
  *hwm_ms = rec.hwm_ms;
  return 0;
}

static int file_acquire(idgen_lease *l, idgen_lease_grant *out) {
  file_lease *fl = (file_lease *)l;
  if (fl->readonly)
    return idgen__why(l, IDGEN_EINVAL, "opened read-only: it claims no worker ID");
  int rc = refuse_in_child(fl);
  if (rc)
    return rc;
  let_go(fl); /* acquire after a loss: whatever was held is gone */
  uint64_t first = fl->fixed >= 0 ? (uint64_t)fl->fixed : 0;
  uint64_t last = fl->fixed >= 0 ? (uint64_t)fl->fixed : fl->max_worker;
  uint32_t skipped = 0;
  char corrupt[IDGEN_LEASE_WHY_MAX] = "";
  for (uint64_t w = first; w <= last; w++) {
    int64_t hwm = 0;
    rc = take(fl, w, &hwm);
    if (rc == -EWOULDBLOCK)
      continue;
    if ((rc == IDGEN_EEMPTY || rc == IDGEN_EFORMAT) && fl->fixed < 0) {
      /* Everyone takes the smallest free ID: one bad record must not stop them all. */
      skipped++;
      snprintf(corrupt, sizeof corrupt, "%s", l->why);
      continue;
    }
    if (rc)
      return rc;
    out->worker = w;
    out->hwm_ms = hwm;
    out->ttl_ms = 0;
    out->fenced = fl->fixed < 0;
    out->skipped = skipped;
    if (skipped)
      idgen__why(l, 0, "%s: skipped", corrupt);
    return 0;
  }
  if (fl->fixed >= 0) {
    char who[IDGEN_LEASE_PATH_MAX + 64];
    idgen__claim_holder(fl->ns, (uint64_t)fl->fixed, who, sizeof who);
    return idgen__why(l, IDGEN_ECONFLICT,
                      "worker ID %lld of namespace '%s' is already held on this host by %s",
                      (long long)fl->fixed, fl->ns, who);
  }
  if (skipped)
    return idgen__why(l, IDGEN_ENOWORKER, "no worker ID free; %u skipped, the last: %s",
                      skipped, corrupt);
  return idgen__why(
      l, IDGEN_ENOWORKER,
      "all %llu worker IDs of namespace '%s' are taken on this host (state dir "
      "%s and any other)",
      (unsigned long long)fl->max_worker + 1, fl->ns, fl->dir);
}

/* 0 while the ID is held and its file is in place; else the ID is given up. */
static int still_held(file_lease *fl) {
  int rc = refuse_in_child(fl);
  if (rc)
    return rc;
  if (!held(fl))
    return idgen__why(&fl->base, IDGEN_ELEASE, "no worker ID held");
  rc = idgen__hwm_file_check(&fl->f);
  if (rc == 0)
    return 0;
  let_go(fl); /* and say the lease is gone: the keeper must not raise the cap again */
  if (rc == IDGEN_ELEASE)
    return idgen__why(&fl->base, rc,
                      "%s was removed or replaced while held: worker ID %llu given up",
                      fl->f.path, (unsigned long long)fl->worker);
  return idgen__why(&fl->base, IDGEN_ELEASE, "%s: %s: worker ID %llu given up", fl->f.path,
                    strerror(-rc), (unsigned long long)fl->worker);
}

static int file_keepalive(idgen_lease *l) {
  return still_held((file_lease *)l);
}

static int file_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  file_lease *fl = (file_lease *)l;
  int rc = still_held(fl);
  if (rc)
    return rc;
  idgen__record rec;
  self_record(fl, hwm_ms, &rec);
  rc = idgen__hwm_file_write(&fl->f, &rec);
  if (rc)
    return idgen__why(l, rc, "%s: %s", fl->f.path, idgen_strerror(rc));
  return 0;
}

static int file_release(idgen_lease *l, int64_t final_hwm_ms) {
  file_lease *fl = (file_lease *)l;
  int rc = refuse_in_child(fl);
  if (rc || !held(fl))
    return rc;
  if (final_hwm_ms > 0)
    rc = file_write_hwm(l, final_hwm_ms);
  let_go(fl);
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
  if (!d && errno == ENOENT && fl->readonly) {
    *count = 0; /* nobody has served from it yet */
    return 0;
  }
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
      h->live = locked > 0 || (held(fl) && fl->worker == w);
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
    snprintf(out, outlen,
             "%s: worker ID %lld (no fence between hosts), local HWM in %s, namespace '%s'",
             l->vtable->name, (long long)fl->fixed, fl->dir, fl->ns);
    return;
  }
  char path[IDGEN_LEASE_PATH_MAX + 32];
  for (uint64_t w = 0; w <= fl->max_worker; w++) {
    worker_path(fl, w, path, sizeof path);
    if (idgen__claim_held(fl->ns, w) == 0 && idgen__hwm_file_locked(path) == 0) {
      snprintf(out, outlen,
               "file: state dir %s, namespace '%s', would claim worker ID %llu of 0-%llu",
               fl->dir, fl->ns, (unsigned long long)w, (unsigned long long)fl->max_worker);
      return;
    }
  }
  snprintf(out, outlen, "file: state dir %s, namespace '%s', all %llu worker IDs are taken",
           fl->dir, fl->ns, (unsigned long long)fl->max_worker + 1);
}

static void file_free(idgen_lease *l) {
  file_lease *fl = (file_lease *)l;
  let_go(fl); /* in a forked child: its own descriptors only; the parent keeps its ID */
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
                       int readonly, char *err, size_t errlen) {
  char dir[IDGEN_LEASE_PATH_MAX];
  if (c->state_dir[0])
    snprintf(dir, sizeof dir, "%s", c->state_dir);
  else
    idgen__default_state_dir(dir, sizeof dir);
  int rc = readonly ? 0 : idgen__state_dir_ready(dir, err, errlen);
  if (rc)
    return rc;
  file_lease *fl = calloc(1, sizeof *fl);
  if (!fl)
    return IDGEN_ENOMEM;
  fl->base.vtable = cls;
  snprintf(fl->dir, sizeof fl->dir, "%s", dir);
  snprintf(fl->ns, sizeof fl->ns, "%s", c->ns);
  fl->max_worker = max_worker;
  fl->fixed = fixed;
  snprintf(fl->host, sizeof fl->host, "%s", c->hostname);
  fl->start_ms = idgen_wall_ns() / NS_PER_MS;
  fl->fresh_wait_ms = c->ahead_ms + c->hwm_interval_ms;
  fl->f.fd = -1;
  fl->claim.fd = -1;
  idgen__fork_watch();
  fl->fork_gen = idgen__fork_generation();
  fl->readonly = readonly;
  *out = &fl->base;
  return 0;
}

int idgen__lease_file_new(idgen_lease **out, const idgen_lease_config *c,
                          uint64_t max_worker, int readonly, char *err, size_t errlen) {
  return open_common(out, c, &file_class, max_worker, -1, readonly, err, errlen);
}

int idgen__lease_fixed_new(idgen_lease **out, const idgen_lease_config *c, uint64_t worker,
                           int readonly, char *err, size_t errlen) {
  return open_common(out, c, c->kind == IDGEN_LEASE_K8S ? &k8s_class : &static_class,
                     worker, (int64_t)worker, readonly, err, errlen);
}
