/* lease_worker.c: the background worker "idgen lease". It holds the worker ID through
 * libidgen's keeper (the claim, fenced HWM writes, deadline and cap of idgen serve),
 * which arms the shared generator, and publishes the lease's state for idgen_status()
 * and pg_stat_activity. */
#include "idgen_pg.h"

#include <pthread.h>
#include <signal.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/backend_status.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#define PUBLISH_MS 100 /* how often the keeper's state is copied to shared memory */
#define RETRY_MS 1000  /* between attempts to open the provider or win an ID */

static volatile sig_atomic_t stop_requested = false;
static idgen_lease *lease;
static idgen_keeper *keeper;
static idgen_pg_status status; /* what was published last */

void idgen_pg_register_worker(void) {
  BackgroundWorker bgw;
  memset(&bgw, 0, sizeof bgw);
  /* A database connection only to appear in pg_stat_activity (it opens none). */
  bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  /* A standby issues no ID: the lease starts when recovery ends (a promotion). */
  bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
  bgw.bgw_restart_time = 1;
  strlcpy(bgw.bgw_library_name, "idgen", BGW_MAXLEN);
  strlcpy(bgw.bgw_function_name, "idgen_lease_main", BGW_MAXLEN);
  strlcpy(bgw.bgw_name, "idgen lease", BGW_MAXLEN);
  strlcpy(bgw.bgw_type, "idgen lease", BGW_MAXLEN);
  RegisterBackgroundWorker(&bgw);
}

static void on_sigterm(SIGNAL_ARGS) {
  int saved = errno;
  (void)postgres_signal_arg;
  stop_requested = true;
  SetLatch(MyLatch);
  errno = saved;
}

/* libidgen calls that may start threads (the keeper's, libcurl's) run with every signal
 * blocked: those threads inherit the mask, so PostgreSQL's handlers run only in this
 * thread, the only one that calls PostgreSQL. */
static void block_signals(sigset_t *old) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, old);
}

static void restore_signals(const sigset_t *old) {
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Sleeps up to ms on the latch; false once asked to stop. */
static bool nap(int ms) {
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms,
                  PG_WAIT_EXTENSION);
  ResetLatch(MyLatch);
  if (ConfigReloadPending) {
    ConfigReloadPending = false;
    ProcessConfigFile(PGC_SIGHUP);
  }
  return !stop_requested;
}

/* Publishes next in place of the status, logging what changed. */
static void publish(const idgen_pg_status *next) {
  bool state_changed =
      strcmp(next->state, status.state) != 0 || next->worker != status.worker;
  if (state_changed) {
    char activity[128];
    if (next->worker >= 0)
      snprintf(activity, sizeof activity, "%s worker %lld", next->state,
               (long long)next->worker);
    else
      snprintf(activity, sizeof activity, "%s", next->state);
    ereport(LOG, (errmsg("idgen lease: %s", activity)));
    pgstat_report_activity(STATE_RUNNING, activity);
  }
  if (next->last_error[0] && strcmp(next->last_error, status.last_error) != 0)
    ereport(LOG, (errmsg("idgen lease: %s", next->last_error)));
  status = *next;
  idgen_pg_status_set(&status);
  if (strcmp(status.state, idgen_keeper_state_name(IDGEN_KEEPER_HELD)) == 0)
    pg_atomic_write_u32(&idgen_pg_shm->ever_held, 1);
}

/* A state without a keeper: starting, acquiring (the provider did not open), refused,
 * stopped. */
static void publish_state(const char *state, const char *error) {
  idgen_pg_status next = status;
  strlcpy(next.state, state, sizeof next.state);
  strlcpy(next.last_error, error ? error : "", sizeof next.last_error);
  if (!keeper)
    next.worker = -1;
  publish(&next);
}

static void publish_keeper(void) {
  idgen_keeper_stats ks;
  idgen_keeper_stats_get(keeper, &ks);
  idgen_pg_status next = status;
  strlcpy(next.state, idgen_keeper_state_name(ks.state), sizeof next.state);
  idgen_keeper_last_error(keeper, next.last_error, sizeof next.last_error);
  next.worker = ks.worker;
  next.hwm_ms = ks.hwm_ms;
  next.floor_ms = ks.floor_ms;
  next.renewals = ks.renewals;
  next.renewal_failures = ks.renewal_failures;
  next.lease_lost = ks.lease_lost;
  next.hwm_writes = ks.hwm_writes;
  next.acquisitions = ks.acquisitions;
  publish(&next);
}

/* Graceful end, on every way out: the keeper disarms the generator, writes the final
 * HWM and releases the ID (etcd: revokes the lease at once). */
static void at_exit(int code, Datum arg) {
  (void)code;
  (void)arg;
  if (keeper) {
    idgen_keeper_stop(keeper);
    publish_keeper();
    idgen_keeper_free(keeper);
    keeper = NULL;
  }
  idgen_lease_free(lease);
  lease = NULL;
  publish_state("stopped", NULL);
}

/* Opens the provider; a provider that cannot reach its service is tried again every
 * second. false when asked to stop first, or refused for its configuration. */
static bool open_lease(void) {
  for (;;) {
    char err[IDGEN_LEASE_WHY_MAX];
    sigset_t old;
    block_signals(&old);
    int rc = idgen_lease_open(&lease, &idgen_pg_lease, &idgen_pg_layout, err, sizeof err);
    restore_signals(&old);
    if (rc == 0) {
      idgen_lease_describe(lease, status.lease, sizeof status.lease);
      return true;
    }
    if (rc == IDGEN_EINVAL) {
      publish_state("refused", err);
      return false;
    }
    publish_state(idgen_keeper_state_name(IDGEN_KEEPER_ACQUIRING), err);
    if (!nap(RETRY_MS))
      return false;
  }
}

/* Wins a worker ID and starts the keeper's thread; tried again every second (all IDs
 * taken, etcd down, a static ID held elsewhere on this host). */
static bool start_keeper(void) {
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &idgen_pg_lease);
  kc.lease = lease;
  kc.gen = idgen_pg_gen;
  for (;;) {
    sigset_t old;
    block_signals(&old);
    int rc = idgen_keeper_new(&keeper, &kc);
    restore_signals(&old);
    if (rc == 0)
      return true;
    keeper = NULL;
    const char *why = idgen_lease_why(lease);
    publish_state(idgen_keeper_state_name(IDGEN_KEEPER_ACQUIRING),
                  why[0] ? why : idgen_strerror(rc));
    if (!nap(RETRY_MS))
      return false;
  }
}

/* Refused for good (configuration, or a copied data directory): say so, and idle until
 * stopped rather than exit and be restarted every second. */
static void idle_refused(const char *why) {
  publish_state("refused", why);
  ereport(WARNING, (errmsg("idgen lease: refused: %s", why)));
  while (nap(RETRY_MS * 60))
    ;
}

/* Every way out exits with 1: the postmaster starts the worker again a second later
 * (after pg_terminate_backend, say), which wins a worker ID again and waits past its HWM.
 * At shutdown it is not started again. */
void idgen_lease_main(Datum arg) {
  (void)arg;
  pqsignal(SIGTERM, on_sigterm);
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  BackgroundWorkerUnblockSignals();
  BackgroundWorkerInitializeConnection(NULL, NULL, 0);
  memset(&status, 0, sizeof status);
  status.pid = MyProcPid;
  status.worker = -1;
  before_shmem_exit(at_exit, 0);
  publish_state("starting", NULL);

  if (!open_lease()) {
    if (!stop_requested)
      idle_refused(status.last_error);
    proc_exit(1);
  }
  if (idgen_pg_lease.kind == IDGEN_LEASE_STATIC) {
    char *why = idgen_pg_identity_check((uint64)idgen_pg_lease.worker_id);
    if (why) {
      idle_refused(why);
      proc_exit(1);
    }
  }
  if (!start_keeper())
    proc_exit(1);
  do
    publish_keeper();
  while (nap(PUBLISH_MS));
  proc_exit(1);
}
