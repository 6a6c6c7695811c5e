/* lease_internal.h: what the providers share: their class, the holder record, why(), the
 * file and fixed constructors; host/host.h for the state dir and host-wide claims. */
#ifndef IDGEN_LEASE_INTERNAL_H
#define IDGEN_LEASE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "core/core_internal.h"
#include "host/host.h"
#include "idgen/lease.h"

/* A provider is a struct whose first field is a struct idgen_lease, whose first field
 * points at its class. Each function is the provider's side of the public call of the
 * same name (idgen/lease.h says what each does and returns); every call is made from
 * one thread at a time (the keeper's). On failure each leaves one line in why. */
typedef struct idgen_lease_class {
  const char *name;
  int (*acquire)(idgen_lease *lease, idgen_lease_grant *out);
  int (*keepalive)(idgen_lease *lease);
  int (*write_hwm)(idgen_lease *lease, int64_t hwm_ms);
  int (*release)(idgen_lease *lease, int64_t final_hwm_ms);
  int (*holders)(idgen_lease *lease, idgen_lease_holder *out, size_t max, size_t *count);
  void (*describe)(idgen_lease *lease, char *out, size_t outlen);
  void (*free)(idgen_lease *lease);
} idgen_lease_class;

/* Kept out of the public header: C++ has no _Atomic, and these are the library's. */
struct idgen_lease {
  const idgen_lease_class *vtable;
  char why[IDGEN_LEASE_WHY_MAX]; /* the last failure, one line */
  /* written by the thread calling the provider, read by any */
  _Atomic uint64_t latency_count, latency_sum_us;
  _Atomic uint64_t latency_buckets[IDGEN_LEASE_LATENCY_BUCKETS];
};

/* The record kept with a HWM (file contents, etcd values): JSON, one line. */
typedef struct idgen__record {
  int64_t hwm_ms;
  char host[IDGEN_HOLDER_HOST_MAX];
  int64_t pid;
  int64_t start_ms;
  int64_t wall_ms;
  int64_t datacenter;                /* -1: none (not written) */
  char region[IDGEN_LEASE_NAME_MAX]; /* "": none (not written) */
} idgen__record;

/* Writes the record as JSON (int64 values as strings, like etcd). Returns the length
 * or IDGEN_EBUFSIZE. */
IDGEN__EXPORT int idgen__record_format(const idgen__record *rec, char *out, size_t outlen);
/* Parses it back: trailing spaces, newlines and NULs are allowed; fields other than
 * hwm_ms read 0 ("" for strings, -1 for datacenter) when missing. An empty (or all-NUL)
 * input is IDGEN_EEMPTY; anything else that is not the JSON object with an hwm_ms,
 * IDGEN_EFORMAT. A record without its HWM is corrupt, never "HWM 0": reading it as 0 would
 * let a holder issue below the HWM the record once held. */
IDGEN__EXPORT int idgen__record_parse(const char *text, size_t len, idgen__record *out);
/* Fills host (gethostname or the override), pid, start_ms, datacenter and region with
 * this process's data. */
IDGEN__EXPORT void idgen__record_self(idgen__record *rec, const char *host_override,
                                      int64_t start_ms, int64_t datacenter,
                                      const char *region);

/* ---- space.c ---- */
/* The largest value of a field of bits bits. */
uint64_t idgen__space_field_max(uint8_t bits);
/* "worker IDs of namespace 'x'", "worker IDs 0-3 (--worker-id-range) of datacenter 1
 * in namespace 'x'": what a space holds, for "all N ... are taken". */
IDGEN__EXPORT void idgen__space_name(const idgen_lease_space *space, const char *ns,
                                     char *out, size_t outlen);
/* The number of claimable values, hi - lo + 1. */
IDGEN__EXPORT uint64_t idgen__space_size(const idgen_lease_space *space);
/* A worker ID's other name under a two-field layout (space->low_bits > 0): with a
 * datacenter, the whole worker ID (*dc = -1); without, its split (*dc = its high
 * field). Returns the number in that name; 0 and *dc = -2 for a one-field layout. */
IDGEN__EXPORT uint64_t idgen__space_alias(const idgen_lease_space *space, uint64_t claimed,
                                          int64_t *dc);

/* ---- provider.c ---- */
/* Sets lease->why, printf style; returns err so callers can `return why(...)`. */
IDGEN__EXPORT int idgen__why(idgen_lease *lease, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Counts one request to the coordination service that took ns (idgen_lease_latency). */
IDGEN__EXPORT void idgen__lease_observe(idgen_lease *lease, int64_t ns);

/* The IDs an acquire passes over (etcd, zookeeper): those with an unreadable HWM record
 * (corrupt, the last one's why in last_corrupt) and those held under their other name
 * (other). */
typedef struct idgen__passed {
  uint64_t *ids; /* grown by idgen__pass_over; the caller frees it */
  size_t n, cap;
  size_t corrupt, other; /* how many of each */
  char last_corrupt[IDGEN_LEASE_WHY_MAX];
} idgen__passed;

/* Adds w to p->ids; IDGEN_ENOMEM (with why) when it cannot grow. */
IDGEN__EXPORT int idgen__pass_over(idgen_lease *lease, idgen__passed *p, uint64_t w);
/* IDGEN_ENOWORKER with "all N <space> are taken (provider)", or "none of the <space>
 * free (provider); K skipped, the last: ..." when some were passed over as corrupt. */
IDGEN__EXPORT int idgen__none_free(idgen_lease *lease, const idgen_lease_space *space,
                                   const char *ns, const char *provider,
                                   const idgen__passed *p);

/* 1 when a provider was inherited across fork(): it belongs to the parent, and the
 * child must neither use nor release it (see idgen/lease.h). fork_gen is the fork
 * generation recorded when it was opened. */
IDGEN__EXPORT int idgen__lease_forked(uint64_t fork_gen);

/* The etcd TLS and auth options against the endpoints (the TLS files only with
 * https://, a certificate with its key, a user with a password source, a password with
 * a user): 0, or IDGEN_EINVAL with one line in err. */
IDGEN__EXPORT int idgen__lease_etcd_access_check(const idgen_lease_config *config,
                                                 char *err, size_t errlen);

/* Reads the password file at path (the option --opt names it) into out (cap bytes, at
 * most IDGEN_LEASE_NAME_MAX * 4): its one line, the line end dropped. IDGEN_EINVAL with
 * "--opt path: why" in err for a file that cannot be read, is empty, too long, holds a
 * NUL byte or more than one line. */
IDGEN__EXPORT int idgen__password_file_read(const char *opt, const char *path, char *out,
                                            size_t cap, char *err, size_t errlen);
/* The Redis TLS and auth options against the URL url (--redis, or a segment DSN): the
 * TLS files only with rediss://, a certificate with its key, one user and one password
 * (idgen__redis_url_auth): 0, or IDGEN_EINVAL with one line in err. */
IDGEN__EXPORT int idgen__lease_redis_access_check(const idgen_lease_config *config,
                                                  const char *url, char *err,
                                                  size_t errlen);

/* The k8s ordinal: IDGEN_POD_INDEX if set (config->pod_index >= 0), else the digits
 * after the last '-' of the hostname. IDGEN_EINVAL with a reason otherwise. */
int idgen__k8s_ordinal(const idgen_lease_config *config, int64_t *out, char *err,
                       size_t errlen);

/* readonly (idgen_lease_open_readonly): neither make nor write to the state dir; a
 * missing one holds no IDs; acquire refuses. */
int idgen__lease_file_new(idgen_lease **out, const idgen_lease_config *config,
                          const idgen_lease_space *space, int readonly, char *err,
                          size_t errlen);
/* Static and k8s: a fixed claimed value with a local HWM file. */
int idgen__lease_fixed_new(idgen_lease **out, const idgen_lease_config *config,
                           const idgen_lease_space *space, uint64_t claimed, int readonly,
                           char *err, size_t errlen);

/* Shared by file and fixed: a lock file holding a record. */
typedef struct idgen__hwm_file {
  int fd;
  char path[IDGEN_LEASE_PATH_MAX + 32];
} idgen__hwm_file;

/* Opens path, creating it if missing (*created says so), and takes an exclusive OFD
 * lock without waiting; then checks that path still names the inode it locked (one
 * removed or renamed over in between is opened again). 0, -EWOULDBLOCK when another
 * open file holds the lock, or another negated errno. */
int idgen__hwm_file_lock(idgen__hwm_file *f, const char *path, int *created);
/* 0 while path still names the inode held and it has a link; IDGEN_ELEASE once it was
 * removed, renamed over or replaced (the lock then fences nothing: a newcomer can
 * create and lock a new file at path). */
int idgen__hwm_file_check(idgen__hwm_file *f);
/* Reads the record: IDGEN_EEMPTY or IDGEN_EFORMAT when it is not a whole one. */
int idgen__hwm_file_read(idgen__hwm_file *f, idgen__record *out);
/* Rewrites the record in place and fdatasyncs. */
int idgen__hwm_file_write(idgen__hwm_file *f, const idgen__record *rec);
void idgen__hwm_file_close(idgen__hwm_file *f);
/* 1 if some open file holds a lock on path, 0 if not, negative errno. */
int idgen__hwm_file_locked(const char *path);
/* Reads the record of path without locking. */
int idgen__hwm_file_peek(const char *path, idgen__record *out);

#endif
