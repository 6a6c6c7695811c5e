/* shared.c: the extension's shared memory: one generator for every backend (lock-free,
 * as in the library) and the lease worker's status under a lock; and its clock. */
#include "idgen_pg.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#define TRANCHE "idgen"

idgen_pg_shared *idgen_pg_shm = NULL;
idgen_gen *idgen_pg_gen = NULL;

static Size gen_offset(void) {
  return TYPEALIGN(IDGEN_GEN_ALIGN, sizeof(idgen_pg_shared));
}

/* Room for the struct, the generator, and the slack to align it: ShmemInitStruct
 * aligns to a cache line, but the generator's alignment is ours to keep. */
static Size shared_size(void) {
  return add_size(add_size(gen_offset(), idgen_gen_size()), IDGEN_GEN_ALIGN);
}

void idgen_pg_shmem_request(void) {
  RequestAddinShmemSpace(shared_size());
  RequestNamedLWLockTranche(TRANCHE, 1);
}

/* The generator's clock: CLOCK_MONOTONIC anchored to the wall clock (idgen_clock_mono),
 * in this library's static data. The postmaster anchors it when it makes shared memory,
 * before any fork; each process then keeps its own copy at the same address (Linux maps
 * a library loaded by shared_preload_libraries at the same place in every child the
 * postmaster forks, and PostgreSQL on Linux does not use EXEC_BACKEND), so the pointer
 * in the shared generator is valid in every backend. Each copy re-anchors forward on its
 * own when it finds the wall clock ahead (a forward step; never back), with no write to
 * shared memory: backends that disagree by a moment are what the generator's wait
 * policy absorbs. */
static idgen_clock_mono gen_clock;
static bool clock_ready = false;

idgen_clock *idgen_pg_clock(void) {
  if (!clock_ready) {
    idgen_clock_mono_init(&gen_clock);
    clock_ready = true;
  }
  return &gen_clock.base;
}

/* Runs in the postmaster at start and after every crash restart (a new segment: the
 * generator starts again unarmed, and the lease worker waits past its HWM before it
 * arms it). Backends are forked after it and inherit idgen_pg_shm and idgen_pg_gen. */
void idgen_pg_shmem_startup(void) {
  bool found;
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  idgen_pg_shared *shm = ShmemInitStruct("idgen", shared_size(), &found);
  char *mem = (char *)TYPEALIGN(IDGEN_GEN_ALIGN, (char *)shm + gen_offset());
  if (found) {
    idgen_pg_shm = shm;
    idgen_pg_gen = (idgen_gen *)mem;
    LWLockRelease(AddinShmemInitLock);
    return;
  }
  memset(shm, 0, sizeof *shm);
  clock_ready = false; /* anchor again, now */
  shm->lock = &(GetNamedLWLockTranche(TRANCHE))->lock;
  pg_atomic_init_u32(&shm->ever_held, 0);
  strlcpy(shm->status.state, "starting", sizeof shm->status.state);
  shm->status.worker = -1;

  idgen_gen_config config;
  idgen_gen_config_init(&config, idgen_pg_clock());
  config.layout = idgen_pg_layout;
  config.policy = idgen_pg_policy;
  config.armed = 0; /* the lease worker arms it once it holds a worker ID */
  config.process_shared = 1;
  idgen_gen *gen;
  int rc = idgen_gen_init(&gen, mem, (Size)((char *)shm + shared_size() - mem), &config);
  LWLockRelease(AddinShmemInitLock);
  if (rc < 0)
    ereport(FATAL, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("idgen: cannot make the generator: %s", idgen_strerror(rc)),
                    errhint("Check idgen.layout against the clock: its epoch and end.")));
  idgen_pg_shm = shm;
  idgen_pg_gen = gen;
}

void idgen_pg_status_get(idgen_pg_status *out) {
  LWLockAcquire(idgen_pg_shm->lock, LW_SHARED);
  memcpy(out, &idgen_pg_shm->status, sizeof *out);
  LWLockRelease(idgen_pg_shm->lock);
}

void idgen_pg_status_set(const idgen_pg_status *status) {
  LWLockAcquire(idgen_pg_shm->lock, LW_EXCLUSIVE);
  memcpy(&idgen_pg_shm->status, status, sizeof *status);
  LWLockRelease(idgen_pg_shm->lock);
}
