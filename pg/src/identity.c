/* identity.c: the static lease's guard against a copied data directory. The data
 * directory records which database system (system identifier), on which timeline, used
 * which worker ID, and where: on which host (its name and /etc/machine-id) and in which
 * directory (its real path and inode). A copy of another cluster's files, a standby
 * promoted (a new timeline), or a copy started as a primary on another host or in another
 * directory (pg_basebackup without -R: crash recovery keeps the system identifier and
 * the timeline) must not issue under the worker ID of the cluster it came from, which
 * may still be running: the static lease has no fence between hosts. */
#include "idgen_pg.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/fd.h"

#define IDENTITY_DIR "pg_idgen"
#define IDENTITY_FILE "identity"
#define MACHINE_ID_FILE "/etc/machine-id"
#define RECORD_MAX 8192

/* What a copy of the data directory cannot keep, in the record's order. */
enum { W_HOSTNAME, W_MACHINE_ID, W_DATA_DIR, W_DATA_INODE, NWHERE };
static const char *const where_key[NWHERE] = {"hostname", "machine_id", "data_directory",
                                              "data_directory_inode"};
static const char *const where_what[NWHERE] = {"host name", "machine ID", "data directory",
                                               "data directory inode"};

typedef struct identity {
  uint64 system_id;
  uint32 timeline;
  uint64 worker;
  bool has_where; /* false: a record of an older version, without them */
  char where[NWHERE][MAXPGPATH];
} identity;

/* This host's machine ID, "" when it has none. */
static void machine_id(char *out, size_t size) {
  out[0] = '\0';
  FILE *f = AllocateFile(MACHINE_ID_FILE, "r");
  if (!f)
    return;
  if (!fgets(out, (int)size, f))
    out[0] = '\0';
  FreeFile(f);
  out[strcspn(out, "\r\n")] = '\0';
}

static void where_now(identity *id) {
  struct utsname u;
  struct stat st;
  char real[PATH_MAX];
  strlcpy(id->where[W_HOSTNAME], uname(&u) == 0 ? u.nodename : "", MAXPGPATH);
  machine_id(id->where[W_MACHINE_ID], MAXPGPATH);
  /* The real path: a data directory started through a symbolic link is the same one. */
  strlcpy(id->where[W_DATA_DIR], realpath(DataDir, real) ? real : DataDir, MAXPGPATH);
  if (stat(DataDir, &st) != 0)
    ereport(ERROR,
            (errcode_for_file_access(), errmsg("could not stat \"%s\": %m", DataDir)));
  snprintf(id->where[W_DATA_INODE], MAXPGPATH, "%llu", (unsigned long long)st.st_ino);
  id->has_where = true;
}

/* A decimal number that is the whole value. */
static bool read_number(const char *value, uint64 *out) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(value, &end, 10);
  if (!*value || *end || errno)
    return false;
  *out = n;
  return true;
}

/* One "key value" line of the record into id, and its bit into *seen (the three
 * numbers 1, 2, 4; then one per where_key); false for an unknown key or a bad value. */
static bool read_field(identity *id, const char *key, const char *value, int *seen) {
  uint64 tli;
  if (strcmp(key, "system_identifier") == 0)
    return (*seen |= 1, read_number(value, &id->system_id));
  if (strcmp(key, "timeline") == 0) {
    *seen |= 2;
    if (!read_number(value, &tli) || tli > PG_UINT32_MAX)
      return false;
    id->timeline = (uint32)tli;
    return true;
  }
  if (strcmp(key, "worker") == 0)
    return (*seen |= 4, read_number(value, &id->worker));
  for (int w = 0; w < NWHERE; w++)
    if (strcmp(key, where_key[w]) == 0) {
      *seen |= 1 << (3 + w);
      return strlcpy(id->where[w], value, MAXPGPATH) < MAXPGPATH;
    }
  return false;
}

/* 1 read, 0 no file, -1 unreadable (torn, or not a record). */
static int read_identity(const char *path, identity *out) {
  char buf[RECORD_MAX];
  FILE *f = AllocateFile(path, "r");
  if (!f)
    return errno == ENOENT ? 0 : -1;
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  bool failed = ferror(f) != 0;
  FreeFile(f);
  if (failed || len == sizeof buf - 1)
    return -1;
  buf[len] = '\0';
  identity id;
  memset(&id, 0, sizeof id);
  int seen = 0;
  for (char *line = buf, *next; *line; line = next) {
    next = strchr(line, '\n');
    if (!next)
      return -1; /* every line ends with a newline: the last one was cut */
    *next++ = '\0';
    char *value = strchr(line, ' ');
    if (!value)
      return -1;
    *value++ = '\0';
    if (!read_field(&id, line, value, &seen))
      return -1;
  }
  int all_where = ((1 << NWHERE) - 1) << 3;
  if ((seen & 7) != 7 || ((seen & all_where) != 0 && (seen & all_where) != all_where))
    return -1;
  id.has_where = (seen & all_where) != 0;
  *out = id;
  return 1;
}

/* Written whole to a temporary file, synced, then renamed over with durable_rename: a
 * crash leaves the old record or the new one (and perhaps the temporary file, which the
 * next write replaces). */
static void write_identity(const char *path, const identity *id) {
  char tmp[MAXPGPATH];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = AllocateFile(tmp, PG_BINARY_W);
  if (!f)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not create \"%s\": %m", tmp)));
  fprintf(f, "system_identifier %llu\ntimeline %u\nworker %llu\n",
          (unsigned long long)id->system_id, id->timeline, (unsigned long long)id->worker);
  for (int w = 0; w < NWHERE; w++)
    fprintf(f, "%s %s\n", where_key[w], id->where[w]);
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

/* The first of the things a copy cannot keep that is not what the record says, or -1. */
static int moved_field(const identity *was, const identity *now) {
  if (strcmp(was->where[W_HOSTNAME], now->where[W_HOSTNAME]) != 0)
    return W_HOSTNAME;
  if (strcmp(was->where[W_MACHINE_ID], now->where[W_MACHINE_ID]) != 0)
    return W_MACHINE_ID;
  if (strcmp(was->where[W_DATA_DIR], now->where[W_DATA_DIR]) != 0)
    return W_DATA_DIR;
  if (strcmp(was->where[W_DATA_INODE], now->where[W_DATA_INODE]) != 0)
    return W_DATA_INODE;
  return -1;
}

char *idgen_pg_identity_check(uint64 worker) {
  /* In the data directory whatever idgen.state_dir says: a copy of it carries it. */
  char dir[MAXPGPATH], path[MAXPGPATH];
  snprintf(dir, sizeof dir, "%s/%s", DataDir, IDENTITY_DIR);
  snprintf(path, sizeof path, "%s/%s", dir, IDENTITY_FILE);
  if (MakePGDirectory(dir) != 0 && errno != EEXIST)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not create \"%s\": %m", dir)));
  identity now = {GetSystemIdentifier(), GetWALInsertionTimeLine(), worker, false, {""}};
  where_now(&now);
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
  int moved =
      rc == 1 && was.worker == now.worker && was.has_where ? moved_field(&was, &now) : -1;
  if (moved >= 0)
    return psprintf(
        "this data directory was copied or moved: %s was written with %s \"%s\", this "
        "is \"%s\", and the cluster it was copied from may still issue under "
        "worker ID %llu. Set idgen.worker_id to an ID of its own; or, if that "
        "cluster is gone for good, remove %s. Then restart",
        path, where_what[moved], was.where[moved], now.where[moved],
        (unsigned long long)worker, path);
  if (rc == 0 || was.worker != now.worker || was.timeline != now.timeline || !was.has_where)
    write_identity(path, &now);
  return NULL;
}
