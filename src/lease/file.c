/* file.c: the one-host providers. "file" takes the smallest free worker ID of its space;
 * "static" and "k8s" a fixed one (no cross-host fence). Each holds its ID by two fences:
 * a host-wide claim (an abstract socket per namespace and ID, whatever the state
 * directory or user) and a lock on worker-N in the state directory (dc-D/worker-N under
 * a datacenter), whose record holds the HWM, fsync'd before the cap rises. A holder
 * whose worker-N was removed or replaced gives the ID up; a worker-N with no history
 * makes its new holder wait (see fresh_hwm). Under a two-field layout an ID's other
 * name (split or whole) is claimed and checked too (see take_alias). */
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
  char root[IDGEN_LEASE_PATH_MAX]; /* the state directory */
  char dir[IDGEN_LEASE_PATH_MAX];  /* where our worker files are: root or root/dc-<D> */
  char ns[IDGEN_LEASE_NAME_MAX];
  idgen_lease_space space;
  int64_t fixed; /* the static/k8s claimed value, or -1 for "file" */
  char host[IDGEN_LEASE_NAME_MAX];
  char region[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int64_t fresh_wait_ms;    /* ahead + one HWM interval: see fresh_hwm */
  idgen__claim claim;       /* claim.fd >= 0 while held */
  idgen__claim alias_claim; /* the other name's claim (two-field layouts) */
  idgen__hwm_file f;        /* f.fd >= 0 while held */
  uint64_t worker;          /* the claimed value held */
  uint64_t fork_gen;        /* the fork generation when it was opened */
  int readonly;             /* opened to look only: nothing is made or written */
} file_lease;

/* A worker file: root/worker-<w>, or root/dc-<dc>/worker-<w> under a datacenter. */
static void path_of(const char *root, int64_t dc, uint64_t w, char *out, size_t outlen) {
  if (dc >= 0)
    snprintf(out, outlen, "%s/dc-%lld/worker-%llu", root, (long long)dc,
             (unsigned long long)w);
  else
    snprintf(out, outlen, "%s/worker-%llu", root, (unsigned long long)w);
}

static void worker_path(const file_lease *fl, uint64_t w, char *out, size_t outlen) {
  path_of(fl->root, fl->space.datacenter, w, out, outlen);
}

static int held(const file_lease *fl) {
  return fl->f.fd >= 0;
}

/* Gives the ID up: the lock and the claims (the kernel would drop them at exit). */
static void let_go(file_lease *fl) {
  idgen__hwm_file_close(&fl->f);
  idgen__claim_drop(&fl->alias_claim);
  idgen__claim_drop(&fl->claim);
}

static void self_record(const file_lease *fl, int64_t hwm_ms, idgen__record *rec) {
  idgen__record_self(rec, fl->host, fl->start_ms, fl->space.datacenter, fl->region);
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

/* Under a two-field layout a worker ID has two names: the split one (dc-D/worker-N)
 * and the whole one (worker-ID); a holder uses one, by --datacenter, and a rolling
 * change of it runs both kinds at once. So a holder of one name also claims the other
 * host-wide, refuses while another process locks the other name's file (each side locks
 * its own file before it tests the other's, so of two racing, one sees the other), and
 * takes that file's HWM as a floor too. Called with our file locked; 0 with *floor_ms
 * (0: no such file); -EWOULDBLOCK; IDGEN_EEMPTY / IDGEN_EFORMAT (corrupt); an error.
 * Holds the alias claim on success. */
static int take_alias(file_lease *fl, uint64_t w, int64_t *floor_ms) {
  *floor_ms = 0;
  int64_t adc;
  uint64_t aw = idgen__space_alias(&fl->space, w, &adc);
  if (adc == -2)
    return 0; /* one NODE field: one name */
  int rc = idgen__claim_take(&fl->alias_claim, fl->ns, adc, aw);
  if (rc == -EADDRINUSE)
    return -EWOULDBLOCK;
  if (rc)
    return idgen__why(&fl->base, rc, "host-wide claim of worker ID %llu's other name: %s",
                      (unsigned long long)w, strerror(-rc));
  char path[IDGEN_LEASE_PATH_MAX + 64];
  path_of(fl->root, adc, aw, path, sizeof path);
  rc = idgen__hwm_file_locked(path);
  if (rc != 0) {
    idgen__claim_drop(&fl->alias_claim);
    return rc > 0 ? -EWOULDBLOCK : idgen__why(&fl->base, rc, "%s: %s", path, strerror(-rc));
  }
  idgen__record rec;
  rc = idgen__hwm_file_peek(path, &rec);
  if (rc == -ENOENT)
    return 0;
  if (rc) {
    idgen__claim_drop(&fl->alias_claim);
    return idgen__why(&fl->base, rc,
                      "%s: unreadable HWM record (%s); move the file away only if no "
                      "process used it in the last seconds",
                      path, idgen_strerror(rc));
  }
  *floor_ms = rec.hwm_ms;
  return 0;
}

/* Claims w host-wide, then locks its file and reads its HWM (and the other name's).
 * 0 with *hwm_ms set; -EWOULDBLOCK when another process holds w (claim or lock);
 * IDGEN_EEMPTY / IDGEN_EFORMAT for a record that is not whole (corrupt); another error.
 * Holds nothing on failure. */
static int take(file_lease *fl, uint64_t w, int64_t *hwm_ms) {
  char path[IDGEN_LEASE_PATH_MAX + 64];
  worker_path(fl, w, path, sizeof path);
  int rc = idgen__claim_take(&fl->claim, fl->ns, fl->space.datacenter, w);
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
  int64_t alias_floor = 0;
  rc = take_alias(fl, w, &alias_floor);
  if (rc) {
    if (created)
      unlink(path); /* ours and empty: leave nothing behind (still locked) */
    let_go(fl);
    return rc;
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
  *hwm_ms = rec.hwm_ms > alias_floor ? rec.hwm_ms : alias_floor;
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
  uint64_t first = fl->fixed >= 0 ? (uint64_t)fl->fixed : fl->space.lo;
  uint64_t last = fl->fixed >= 0 ? (uint64_t)fl->fixed : fl->space.hi;
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
    out->worker = idgen_lease_space_worker(&fl->space, w);
    out->hwm_ms = hwm;
    out->ttl_ms = 0;
    out->fenced = fl->fixed < 0;
    out->skipped = skipped;
    if (skipped)
      idgen__why(l, 0, "%s: skipped", corrupt);
    return 0;
  }
  char space[160];
  idgen__space_name(&fl->space, fl->ns, space, sizeof space);
  if (fl->fixed >= 0) {
    char who[IDGEN_LEASE_PATH_MAX + 64];
    idgen__claim_holder(fl->ns, fl->space.datacenter, (uint64_t)fl->fixed, who, sizeof who);
    return idgen__why(
        l, IDGEN_ECONFLICT, "worker ID %llu (of the %s) is already held on this host by %s",
        (unsigned long long)idgen_lease_space_worker(&fl->space, (uint64_t)fl->fixed),
        space, who);
  }
  if (skipped)
    return idgen__why(l, IDGEN_ENOWORKER, "no worker ID free; %u skipped, the last: %s",
                      skipped, corrupt);
  return idgen__why(l, IDGEN_ENOWORKER,
                    "all %llu %s are taken on this host (state dir %s and any other)",
                    (unsigned long long)idgen__space_size(&fl->space), space, fl->root);
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

static int cmp_holder(const void *a, const void *b) {
  const idgen_lease_holder *x = a, *y = b;
  if (x->datacenter != y->datacenter)
    return x->datacenter < y->datacenter ? -1 : 1;
  return x->worker < y->worker ? -1 : x->worker > y->worker;
}

/* "<prefix><digits>" -> the number, or -1. */
static int parse_suffix(const char *name, const char *prefix, uint64_t *out) {
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(name + n, &end, 10);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

/* Adds the worker files of dir (those of datacenter dc, -1: none) to out[*n...]. */
static void scan_dir(file_lease *fl, const char *dir, int64_t dc, idgen_lease_holder *out,
                     size_t max, size_t *n) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char path[IDGEN_LEASE_PATH_MAX + 300];
  while ((e = readdir(d))) {
    uint64_t w;
    if (parse_suffix(e->d_name, "worker-", &w))
      continue;
    if (fl->fixed >= 0 && (w != (uint64_t)fl->fixed || dc != fl->space.datacenter))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    idgen__record rec;
    memset(&rec, 0, sizeof rec);
    int locked = idgen__hwm_file_locked(path);
    if (idgen__hwm_file_peek(path, &rec) && locked <= 0)
      continue;
    if (locked <= 0 && rec.hwm_ms == 0)
      continue;
    if (*n < max) {
      idgen_lease_holder *h = &out[*n];
      memset(h, 0, sizeof *h);
      h->worker = w;
      h->datacenter = dc;
      h->live = locked > 0 || (held(fl) && fl->worker == w && fl->space.datacenter == dc);
      snprintf(h->host, sizeof h->host, "%s", rec.host);
      snprintf(h->region, sizeof h->region, "%s", rec.region);
      h->pid = rec.pid;
      h->start_ms = rec.start_ms;
      h->wall_ms = rec.wall_ms;
      h->hwm_ms = rec.hwm_ms;
      h->ttl_left_ms = -1;
    }
    (*n)++;
  }
  closedir(d);
}

static int file_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  file_lease *fl = (file_lease *)l;
  DIR *d = opendir(fl->root);
  if (!d && errno == ENOENT && fl->readonly) {
    *count = 0; /* nobody has served from it yet */
    return 0;
  }
  if (!d)
    return idgen__why(l, -errno, "state dir %s: %s", fl->root, strerror(errno));
  size_t n = 0;
  scan_dir(fl, fl->root, -1, out, max, &n);
  struct dirent *e;
  char sub[IDGEN_LEASE_PATH_MAX + 300];
  while ((e = readdir(d))) {
    uint64_t dc;
    if (parse_suffix(e->d_name, "dc-", &dc) || dc > INT64_MAX)
      continue;
    snprintf(sub, sizeof sub, "%s/%s", fl->root, e->d_name);
    scan_dir(fl, sub, (int64_t)dc, out, max, &n);
  }
  closedir(d);
  qsort(out, n < max ? n : max, sizeof *out, cmp_holder);
  *count = n;
  return 0;
}

static void file_describe(idgen_lease *l, char *out, size_t outlen) {
  file_lease *fl = (file_lease *)l;
  char space[160];
  idgen__space_name(&fl->space, fl->ns, space, sizeof space);
  if (fl->fixed >= 0) {
    snprintf(out, outlen,
             "%s: worker ID %llu (no fence between hosts), local HWM in %s, %s",
             l->vtable->name,
             (unsigned long long)idgen_lease_space_worker(&fl->space, (uint64_t)fl->fixed),
             fl->dir, space);
    return;
  }
  char path[IDGEN_LEASE_PATH_MAX + 64];
  for (uint64_t w = fl->space.lo; w <= fl->space.hi; w++) {
    worker_path(fl, w, path, sizeof path);
    if (idgen__claim_held(fl->ns, fl->space.datacenter, w) == 0 &&
        idgen__hwm_file_locked(path) == 0) {
      snprintf(out, outlen,
               "file: state dir %s, would claim %llu of the %s (worker ID %llu)", fl->root,
               (unsigned long long)w, space,
               (unsigned long long)idgen_lease_space_worker(&fl->space, w));
      return;
    }
    if (w == UINT64_MAX)
      break;
  }
  snprintf(out, outlen, "file: state dir %s, all %llu %s are taken", fl->root,
           (unsigned long long)idgen__space_size(&fl->space), space);
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
                       const idgen_lease_class *cls, const idgen_lease_space *space,
                       int64_t fixed, int readonly, char *err, size_t errlen) {
  char root[IDGEN_LEASE_PATH_MAX], dir[IDGEN_LEASE_PATH_MAX + 32];
  if (c->state_dir[0])
    snprintf(root, sizeof root, "%s", c->state_dir);
  else
    idgen__default_state_dir(root, sizeof root);
  if (space->datacenter >= 0)
    snprintf(dir, sizeof dir, "%s/dc-%lld", root, (long long)space->datacenter);
  else
    snprintf(dir, sizeof dir, "%s", root);
  if (strlen(dir) >= IDGEN_LEASE_PATH_MAX) {
    if (err && errlen)
      snprintf(err, errlen, "state dir %s: too long", dir);
    return IDGEN_EINVAL;
  }
  int rc = readonly ? 0 : idgen__state_dir_ready(dir, err, errlen);
  if (rc)
    return rc;
  file_lease *fl = calloc(1, sizeof *fl);
  if (!fl)
    return IDGEN_ENOMEM;
  fl->base.vtable = cls;
  snprintf(fl->root, sizeof fl->root, "%s", root);
  memcpy(fl->dir, dir, strlen(dir) + 1); /* fits: checked above (gcc's -O0 cannot see it) */
  snprintf(fl->ns, sizeof fl->ns, "%s", c->ns);
  fl->space = *space;
  fl->fixed = fixed;
  snprintf(fl->host, sizeof fl->host, "%s", c->hostname);
  snprintf(fl->region, sizeof fl->region, "%s", c->region);
  fl->start_ms = idgen_wall_ns() / NS_PER_MS;
  fl->fresh_wait_ms = c->ahead_ms + c->hwm_interval_ms;
  fl->f.fd = -1;
  fl->claim.fd = -1;
  fl->alias_claim.fd = -1;
  idgen__fork_watch();
  fl->fork_gen = idgen__fork_generation();
  fl->readonly = readonly;
  *out = &fl->base;
  return 0;
}

int idgen__lease_file_new(idgen_lease **out, const idgen_lease_config *c,
                          const idgen_lease_space *space, int readonly, char *err,
                          size_t errlen) {
  return open_common(out, c, &file_class, space, -1, readonly, err, errlen);
}

int idgen__lease_fixed_new(idgen_lease **out, const idgen_lease_config *c,
                           const idgen_lease_space *space, uint64_t claimed, int readonly,
                           char *err, size_t errlen) {
  return open_common(out, c, c->kind == IDGEN_LEASE_K8S ? &k8s_class : &static_class, space,
                     (int64_t)claimed, readonly, err, errlen);
}
