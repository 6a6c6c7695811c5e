/* idgen_pg.h: what the extension's files share: the settings, the shared memory (one
 * clock, one generator, the lease worker's status) and the calls that issue IDs. */
#ifndef IDGEN_PG_H
#define IDGEN_PG_H

#include "postgres.h"

#include "port/atomics.h"
#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#include "idgen.h"
#include "idgen/etcd.h"
#include "idgen/opaque.h"
#include "idgen/lease.h"

/* ---- settings (module.c), read in every process; fixed at postmaster start but for
 * the ones marked */

extern idgen_layout idgen_pg_layout;      /* idgen.layout */
extern idgen_policy idgen_pg_policy;      /* idgen.policy */
extern idgen_lease_config idgen_pg_lease; /* idgen.lease, worker_id, etcd, ... */
extern int idgen_pg_start_wait_ms;        /* idgen.start_wait: any user, any time */
extern char *idgen_pg_opaque_key_file;    /* idgen.opaque_key_file: reload */

/* ---- shared memory and the clock (shared.c)
 * ---------------------------------------------------- */

#define IDGEN_PG_STATE_MAX 16
#define IDGEN_PG_ERROR_MAX 1024 /* a keeper's error, or why the lease refuses */

/* What the lease worker last published. */
typedef struct idgen_pg_status {
  char state[IDGEN_PG_STATE_MAX];  /* starting, a keeper state, refused, stopped */
  char lease[IDGEN_LEASE_WHY_MAX]; /* what the provider holds or would claim */
  char last_error[IDGEN_PG_ERROR_MAX];
  int64 worker; /* -1: none */
  int64 hwm_ms, floor_ms;
  uint64 renewals, renewal_failures, lease_lost, hwm_writes, acquisitions;
  int pid; /* the lease worker's */
} idgen_pg_status;

typedef struct idgen_pg_shared {
  LWLock *lock;               /* guards status */
  pg_atomic_uint32 ever_held; /* 1 once the lease armed the generator since start */
  idgen_pg_status status;
  /* the generator follows, at the next IDGEN_GEN_ALIGN boundary */
} idgen_pg_shared;

/* Set in the postmaster by the shmem startup hook, inherited by every backend; NULL
 * when the library was not loaded by shared_preload_libraries. */
extern idgen_pg_shared *idgen_pg_shm;
extern idgen_gen *idgen_pg_gen;

void idgen_pg_shmem_request(void);
void idgen_pg_shmem_startup(void);

/* The clock of the generator, UUIDs and ULIDs: this process's copy of the one the
 * postmaster anchored (or, loaded without preloading, anchored at first use). */
idgen_clock *idgen_pg_clock(void);

/* Copies the status under the lock. */
void idgen_pg_status_get(idgen_pg_status *out);
/* Replaces it under the lock (the lease worker). */
void idgen_pg_status_set(const idgen_pg_status *status);

/* ---- issuing (issue.c) ------------------------------------------------------------ */

/* Fills ids[0..n) from the shared generator. While the lease worker has not yet armed
 * it since start, waits up to idgen.start_wait; then, or on any other refusal, raises
 * an ERROR in class 55 that says what the lease is doing. */
void idgen_pg_issue(uint64_t *ids, size_t n);

/* The ERROR for a refusal of the generator: SQLSTATE by kind (class 55 for the lease),
 * and what the lease worker last published. */
void idgen_pg_error(int rc) pg_attribute_noreturn();
/* The ERROR when the library was not preloaded: there is no shared generator. */
void idgen_pg_not_loaded(void) pg_attribute_noreturn();

/* ---- the lease worker (lease_worker.c, identity.c) -------------------------------- */

void idgen_pg_register_worker(void);
PGDLLEXPORT void idgen_lease_main(Datum arg);

/* The static lease's guard against a copied data directory: NULL when this cluster may
 * use worker (the record, $PGDATA/pg_idgen/identity, is written if new or changed), else
 * a palloc'd reason that says what to do. */
char *idgen_pg_identity_check(uint64 worker);

/* Unix ms <-> timestamptz. */
TimestampTz idgen_pg_timestamp(int64 unix_ms);

#endif
