/* identity.c: the static lease's guard against a copied data directory. The state dir
 * records which database system (system identifier), on which timeline, used which
 * worker ID. A copy of another cluster's files, or a standby promoted (a new timeline)
 * with the worker ID of the primary it was copied from, which may still be running,
 * must not issue under that ID: the static lease has no fence between hosts. */
#include "idgen_pg.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "storage/fd.h"

#define IDENTITY_FILE "identity"

typedef struct identity {
  uint64 system_id;
  uint32 timeline;
  uint64 worker;
} identity;

/* 1 read, 0 no file, -1 unreadable. */
static int read_identity(const char *path, identity *out) {
  FILE *f = AllocateFile(path, "r");
  if (!f)
    return errno == ENOENT ? 0 : -1;
  unsigned long long sys, worker;
  unsigned int tli;
  int n =
      fscanf(f, "system_identifier %llu\ntimeline %u\nworker %llu\n", &sys, &tli, &worker);
  FreeFile(f);
  if (n != 3)
    return -1;
  out->system_id = sys;
  out->timeline = tli;
  out->worker = worker;
  return 1;
}

/* Written whole to a temporary file, synced, then renamed over with durable_rename: a
 * crash leaves the old record or the new one. */
static void write_identity(const char *path, const identity *id) {
  char tmp[MAXPGPATH];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = AllocateFile(tmp, PG_BINARY_W);
  if (!f)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not create \"%s\": %m", tmp)));
  fprintf(f, "system_identifier %llu\ntimeline %u\nworker %llu\n",
          (unsigned long long)id->system_id, id->timeline, (unsigned long long)id->worker);
  if (fflush(f) != 0 || pg_fsync(fileno(f)) != 0) {
    int saved = errno;
    FreeFile(f);
    errno = saved;
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not write \"%s\": %m", tmp)));
  }
  if (FreeFile(f) != 0)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not close \"%s\": %m", tmp)));
  durable_rename(tmp, path, ERROR);
}

char *idgen_pg_identity_check(const char *state_dir, uint64 worker) {
  char path[MAXPGPATH];
  snprintf(path, sizeof path, "%s/%s", state_dir, IDENTITY_FILE);
  identity now = {GetSystemIdentifier(), GetWALInsertionTimeLine(), worker};
  identity was;
  int rc = read_identity(path, &was);
  if (rc < 0)
    return psprintf("%s is unreadable: remove it only if no other cluster uses worker ID "
                    "%llu",
                    path, (unsigned long long)worker);
  if (rc == 1 && was.system_id != now.system_id)
    return psprintf("%s belongs to database system %llu, this is %llu: these files were "
                    "copied from another cluster. Give this cluster a worker ID of its own "
                    "and an empty state directory (idgen.worker_id, idgen.state_dir)",
                    path, (unsigned long long)was.system_id,
                    (unsigned long long)now.system_id);
  if (rc == 1 && was.worker == now.worker && was.timeline != now.timeline)
    return psprintf(
        "this cluster moved from timeline %u to %u (a promoted standby, or a "
        "restore) with worker ID %llu, which the cluster it was copied from may "
        "still use: set idgen.worker_id to an ID of its own (or, if that cluster "
        "is gone for good, remove %s)",
        was.timeline, now.timeline, (unsigned long long)worker, path);
  if (rc == 0 || was.worker != now.worker || was.timeline != now.timeline)
    write_identity(path, &now);
  return NULL;
}
