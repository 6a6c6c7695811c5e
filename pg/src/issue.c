/* issue.c: IDs from the shared generator for SQL calls, the wait for the lease after a
 * start, and the ERROR that tells why none is issued. */
#include "idgen_pg.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#define WAIT_STEP_MS 10

/* SQLSTATE by kind: a refusal while the lease is not held is the state of the server
 * (class 55, object not in prerequisite state), as is a clock found behind; a layout
 * past its end is a limit. */
static int sqlstate_of(int rc) {
  switch (rc) {
  case IDGEN_ETIMEEND:
    return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
  case IDGEN_ENOMEM:
    return ERRCODE_OUT_OF_MEMORY;
  default:
    return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
  }
}

void idgen_pg_not_loaded(void) {
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("idgen: no generator: the idgen library was not loaded at server "
                  "start"),
           errhint("Add idgen to shared_preload_libraries and restart the server.")));
}

void idgen_pg_error(int rc) {
  if (RecoveryInProgress())
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("idgen: %s", idgen_strerror(rc)),
             errdetail("This server is in recovery: a standby issues no ID; its lease "
                       "starts when it is promoted.")));
  idgen_pg_status st;
  idgen_pg_status_get(&st);
  ereport(ERROR,
          (errcode(sqlstate_of(rc)), errmsg("idgen: %s", idgen_strerror(rc)),
           errdetail("Lease %s: %s%s%s.", idgen_lease_kind_name(idgen_pg_lease.kind),
                     st.state, st.last_error[0] ? "; last error: " : "", st.last_error),
           errhint("SELECT * FROM idgen_status() shows the lease; the lease worker "
                   "arms the generator again once it holds a worker ID.")));
}

/* After a start, until the lease worker first arms the generator (it may wait past the
 * HWM of the last run, some seconds), a call waits rather than fails. */
static bool starting(void) {
  if (pg_atomic_read_u32(&idgen_pg_shm->ever_held) || RecoveryInProgress())
    return false;
  idgen_pg_status st;
  idgen_pg_status_get(&st);
  return strcmp(st.state, "refused") != 0 && strcmp(st.state, "stopped") != 0;
}

void idgen_pg_issue(uint64_t *ids, size_t n) {
  if (!idgen_pg_gen)
    idgen_pg_not_loaded();
  size_t done = 0;
  int waited_ms = 0;
  while (done < n) {
    int64_t got = idgen_gen_next_batch(idgen_pg_gen, ids + done, n - done);
    if (got > 0) {
      done += (size_t)got;
      continue;
    }
    if (got != IDGEN_ENOTARMED || waited_ms >= idgen_pg_start_wait_ms || !starting())
      idgen_pg_error((int)got);
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, WAIT_STEP_MS,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
    waited_ms += WAIT_STEP_MS;
  }
}
