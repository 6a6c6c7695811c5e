/* lease_internal.h: what the providers share: constructors, the holder record, why(). */
#ifndef IDGEN_LEASE_INTERNAL_H
#define IDGEN_LEASE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/lease.h"

/* The record kept with a HWM (file contents, etcd values): JSON, one line. */
typedef struct idgen__record {
  int64_t hwm_ms;
  char host[IDGEN_HOLDER_HOST_MAX];
  int64_t pid;
  int64_t start_ms;
  int64_t wall_ms;
} idgen__record;

/* Writes the record as JSON (int64 values as strings, like etcd). Returns the length
 * or IDGEN_EBUFSIZE. */
int idgen__record_format(const idgen__record *rec, char *out, size_t outlen);
/* Parses it back: trailing spaces and newlines are allowed, missing fields read 0.
 * An empty input is IDGEN_EEMPTY; anything else that is not the JSON object,
 * IDGEN_EFORMAT. */
int idgen__record_parse(const char *text, size_t len, idgen__record *out);
/* Fills host (gethostname or the override), pid, start_ms with this process's data. */
void idgen__record_self(idgen__record *rec, const char *host_override, int64_t start_ms);

/* Sets lease->why, printf style; returns err so callers can `return why(...)`. */
int idgen__why(idgen_lease *lease, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Counts one request to the coordination service that took ns (idgen_lease_latency). */
void idgen__lease_observe(idgen_lease *lease, int64_t ns);

/* 1 when a provider was inherited across fork(): it belongs to the parent, and the
 * child must neither use nor release it (see idgen/lease.h). fork_gen is the fork
 * generation recorded when it was opened. */
int idgen__lease_forked(uint64_t fork_gen);

/* The default state directory: $XDG_STATE_HOME/idgen, $HOME/.local/state/idgen for a
 * user, /var/lib/idgen for root. */
void idgen__default_state_dir(char *out, size_t outlen);
/* mkdir -p dir and check that a file can be created in it. */
int idgen__state_dir_ready(const char *dir, char *err, size_t errlen);

/* The k8s ordinal: IDGEN_POD_INDEX if set (config->pod_index >= 0), else the digits
 * after the last '-' of the hostname. IDGEN_EINVAL with a reason otherwise. */
int idgen__k8s_ordinal(const idgen_lease_config *config, int64_t *out, char *err,
                       size_t errlen);

int idgen__lease_file_new(idgen_lease **out, const idgen_lease_config *config,
                          uint64_t max_worker, char *err, size_t errlen);
/* Static and k8s: a fixed worker ID with a local HWM file. */
int idgen__lease_fixed_new(idgen_lease **out, const idgen_lease_config *config,
                           uint64_t worker, char *err, size_t errlen);
int idgen__lease_etcd_new(idgen_lease **out, const idgen_lease_config *config,
                          uint64_t max_worker, char *err, size_t errlen);

/* Shared by file and fixed: a lock file holding a record. */
typedef struct idgen__hwm_file {
  int fd;
  char path[IDGEN_LEASE_PATH_MAX + 32];
} idgen__hwm_file;

/* Opens (creating) path and takes an exclusive OFD lock without waiting: 0, or
 * -EWOULDBLOCK when another open file holds it, or another negated errno. */
int idgen__hwm_file_lock(idgen__hwm_file *f, const char *path);
/* Reads the record (an empty file reads as hwm 0). */
int idgen__hwm_file_read(idgen__hwm_file *f, idgen__record *out);
/* Rewrites the record in place and fsyncs. */
int idgen__hwm_file_write(idgen__hwm_file *f, const idgen__record *rec);
void idgen__hwm_file_close(idgen__hwm_file *f);
/* 1 if some open file holds a lock on path, 0 if not, negative errno. */
int idgen__hwm_file_locked(const char *path);
/* Reads the record of path without locking. */
int idgen__hwm_file_peek(const char *path, idgen__record *out);

#endif
