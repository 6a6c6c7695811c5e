/* keeper.c: a thread that keeps a worker-ID lease and feeds the generator its worker,
 * deadline and cap. It waits with relative timeouts only (poll), so it works under
 * libfaketime, whose absolute monotonic waits are broken. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "lease/lease_internal.h"

static const char *const state_names[] = {[IDGEN_KEEPER_ACQUIRING] = "acquiring",
                                          [IDGEN_KEEPER_WAITING_HWM] = "waiting-hwm",
                                          [IDGEN_KEEPER_HELD] = "held",
                                          [IDGEN_KEEPER_LOST] = "lost",
                                          [IDGEN_KEEPER_STOPPED] = "stopped"};

struct idgen_keeper {
  idgen_keeper_config cfg;
  idgen_lease *lease;
  idgen_gen *gen;
  pthread_t thread;
  int thread_started;
  int wake_fd;
  atomic_int stop;
  _Atomic idgen_keeper_state state;
  atomic_uint_fast64_t renewals, renewal_failures, lease_lost, hwm_writes, acquisitions,
      skipped;
  _Atomic int64_t worker, hwm_ms, floor_ms;
  uint64_t fork_gen;  /* the fork generation when it was made */
  pthread_mutex_t mu; /* guards err and the stop sequence */
  char err[IDGEN_LEASE_WHY_MAX];
  int stopped;
  /* the keeper thread's own */
  idgen_lease_grant grant;
  int64_t last_ok_ns; /* when the last successful keepalive (or grant) was sent */
  int64_t next_ka_ns, next_hwm_ns;
};

static int64_t now_ns(idgen_keeper *k) {
  return idgen_gen_now_ns(k->gen);
}
static int64_t ms_of(int64_t ns) {
  return ns / NS_PER_MS;
}

static void set_error(idgen_keeper *k, int rc) {
  pthread_mutex_lock(&k->mu);
  const char *why = idgen_lease_why(k->lease);
  snprintf(k->err, sizeof k->err, "%s", why[0] ? why : idgen_strerror(rc));
  pthread_mutex_unlock(&k->mu);
}

/* Sleeps up to ns (relative), waking early on stop. */
static void nap(idgen_keeper *k, int64_t ns) {
  if (ns <= 0)
    return;
  int ms = ns / NS_PER_MS > 60000 ? 60000 : (int)(ns / NS_PER_MS) + 1;
  struct pollfd p = {.fd = k->wake_fd, .events = POLLIN};
  poll(&p, 1, ms);
}

static int64_t ttl_ns(const idgen_keeper *k) {
  return k->grant.ttl_ms * NS_PER_MS;
}

static int64_t deadline_of(const idgen_keeper *k) {
  if (k->grant.ttl_ms <= 0)
    return IDGEN_NO_DEADLINE;
  return k->last_ok_ns + ttl_ns(k) - k->cfg.margin_ms * NS_PER_MS;
}

static int do_keepalive(idgen_keeper *k) {
  if (k->grant.ttl_ms <= 0)
    return 0;
  int64_t t = now_ns(k);
  int rc = idgen_lease_keepalive(k->lease);
  if (rc == 0) {
    atomic_fetch_add(&k->renewals, 1);
    k->last_ok_ns = t;
    k->next_ka_ns = t + ttl_ns(k) / 3;
  } else {
    atomic_fetch_add(&k->renewal_failures, 1);
    set_error(k, rc);
    /* retry sooner than the period, but not in a tight loop */
    k->next_ka_ns = now_ns(k) + ttl_ns(k) / 6;
  }
  return rc;
}

static int do_hwm(idgen_keeper *k, int64_t *cap_out) {
  int64_t cap = ms_of(now_ns(k)) + k->cfg.ahead_ms;
  if (cap < atomic_load(&k->hwm_ms)) /* never lower a HWM we wrote */
    cap = atomic_load(&k->hwm_ms);
  int rc = idgen_lease_write_hwm(k->lease, cap);
  if (rc == 0) {
    atomic_fetch_add(&k->hwm_writes, 1);
    atomic_store(&k->hwm_ms, cap);
    *cap_out = cap;
  } else {
    atomic_fetch_add(&k->renewal_failures, 1);
    set_error(k, rc);
  }
  return rc;
}

/* Stop began: the thread arms nothing more. This keeps the stop prompt; what makes it
 * final is idgen_keeper_stop's disarm after the thread ended. */
static int stopping(idgen_keeper *k) {
  return atomic_load(&k->stop);
}

/* The lease is gone or may be: stop issuing, count it, and go on to `next` (acquiring
 * when the provider said the ID is gone; lost when only the deadline passed). */
static void lose(idgen_keeper *k, idgen_keeper_state next) {
  idgen_gen_disarm(k->gen);
  atomic_fetch_add(&k->lease_lost, 1);
  atomic_store(&k->state, next);
}

/* Sends the keepalive if one is due: 0 when sent and answered, KEEPALIVE_NOT_DUE, or the
 * provider's error; on IDGEN_ELEASE the lease is lost and the state moved on. */
enum { KEEPALIVE_NOT_DUE = 1 };
static int keepalive_if_due(idgen_keeper *k) {
  if (k->grant.ttl_ms <= 0 || now_ns(k) < k->next_ka_ns)
    return KEEPALIVE_NOT_DUE;
  int rc = do_keepalive(k);
  if (rc == IDGEN_ELEASE)
    lose(k, IDGEN_KEEPER_ACQUIRING);
  return rc;
}

/* After a won ID: refuse a HWM too far ahead of our clock. */
static int hwm_in_reach(idgen_keeper *k) {
  int64_t ahead = k->grant.hwm_ms - ms_of(now_ns(k));
  if (ahead > k->cfg.hwm_wait_max_ms)
    return idgen__why(k->lease, IDGEN_ETIMEDOUT,
                      "worker ID %llu's HWM is %lld ms ahead of this clock (bound %lld ms, "
                      "--hwm-wait-max): is this clock behind?",
                      (unsigned long long)k->grant.worker, (long long)ahead,
                      (long long)k->cfg.hwm_wait_max_ms);
  return 0;
}

static int acquire(idgen_keeper *k) {
  int64_t t = now_ns(k);
  idgen_lease_grant g;
  memset(&g, 0, sizeof g);
  int rc = idgen_lease_acquire(k->lease, &g);
  if (rc)
    return rc;
  k->grant = g;
  k->last_ok_ns = t;
  k->next_ka_ns = t + ttl_ns(k) / 3;
  rc = hwm_in_reach(k);
  if (rc) {
    idgen_lease_release(k->lease, 0); /* keep the HWM as it is */
    return rc;
  }
  atomic_fetch_add(&k->acquisitions, 1);
  if (g.skipped) { /* loudly: the why names the bad record, the caller logs it */
    atomic_fetch_add(&k->skipped, g.skipped);
    set_error(k, 0);
  }
  atomic_store(&k->worker, (int64_t)g.worker);
  atomic_store(&k->floor_ms, g.hwm_ms);
  atomic_store(&k->hwm_ms, g.hwm_ms);
  atomic_store(&k->state, IDGEN_KEEPER_WAITING_HWM);
  return 0;
}

static void step_acquiring(idgen_keeper *k) {
  int rc = acquire(k);
  if (rc) {
    set_error(k, rc);
    nap(k, k->cfg.retry_ms * NS_PER_MS);
  }
}

/* An ID is won: keep it alive until the clock is past its HWM, then write the first cap
 * and arm the generator. */
static void step_waiting_hwm(idgen_keeper *k) {
  int64_t retry_ns = k->cfg.retry_ms * NS_PER_MS;
  if (keepalive_if_due(k) == IDGEN_ELEASE)
    return;
  if (k->grant.ttl_ms > 0 && now_ns(k) >= deadline_of(k)) {
    lose(k, IDGEN_KEEPER_ACQUIRING); /* cannot even keep it while waiting */
    return;
  }
  int64_t wait_ns = (k->grant.hwm_ms + 1) * NS_PER_MS - now_ns(k);
  if (wait_ns > 0) {
    int64_t to_ka = k->grant.ttl_ms > 0 ? k->next_ka_ns - now_ns(k) : wait_ns;
    nap(k, wait_ns < to_ka ? wait_ns : to_ka);
    return;
  }
  int64_t cap;
  int rc = do_hwm(k, &cap);
  if (rc == IDGEN_ELEASE) {
    lose(k, IDGEN_KEEPER_ACQUIRING);
    return;
  }
  if (rc) {
    nap(k, retry_ns / 4);
    return;
  }
  if (stopping(k))
    return;
  rc = idgen_gen_arm(k->gen, k->grant.worker, k->grant.hwm_ms, cap, deadline_of(k));
  if (rc) {
    idgen__why(k->lease, rc, "generator refused worker ID %llu: %s",
               (unsigned long long)k->grant.worker, idgen_strerror(rc));
    set_error(k, rc);
    idgen_lease_release(k->lease, 0);
    atomic_store(&k->state, IDGEN_KEEPER_ACQUIRING);
    nap(k, retry_ns);
    return;
  }
  k->next_hwm_ns = now_ns(k) + k->cfg.hwm_interval_ms * NS_PER_MS;
  atomic_store(&k->state, IDGEN_KEEPER_HELD);
}

/* Armed: keepalives move the deadline on, HWM writes raise the cap. */
static void step_held(idgen_keeper *k) {
  int64_t interval_ns = k->cfg.hwm_interval_ms * NS_PER_MS;
  int rc = keepalive_if_due(k);
  if (rc == IDGEN_ELEASE)
    return;
  if (rc == 0)
    idgen_gen_set_deadline(k->gen, deadline_of(k));
  /* The generator stops by itself at the deadline, and stays stopped even when a
   * keepalive that stalled past it succeeds later (a late deadline no longer reaches
   * it). Either way, find out whether the lease is gone or etcd was only unreachable,
   * and re-arm if it is still ours. */
  idgen_gen_stats gs;
  idgen_gen_stats_get(k->gen, &gs);
  if (gs.refusal == IDGEN_ELEASE || (k->grant.ttl_ms > 0 && now_ns(k) >= deadline_of(k))) {
    lose(k, IDGEN_KEEPER_LOST);
    return;
  }
  if (now_ns(k) >= k->next_hwm_ns) {
    int64_t cap;
    rc = do_hwm(k, &cap);
    if (rc == IDGEN_ELEASE) {
      lose(k, IDGEN_KEEPER_ACQUIRING);
      return;
    }
    if (rc == 0)
      idgen_gen_set_cap(k->gen, cap);
    k->next_hwm_ns += interval_ns;
    if (k->next_hwm_ns < now_ns(k))
      k->next_hwm_ns = now_ns(k) + interval_ns;
  }
  int64_t next = k->next_hwm_ns;
  if (k->grant.ttl_ms > 0) {
    if (k->next_ka_ns < next)
      next = k->next_ka_ns;
    if (deadline_of(k) < next)
      next = deadline_of(k);
  }
  nap(k, next - now_ns(k));
}

/* The deadline passed (the generator refuses): still ours? A keepalive and a fenced
 * HWM write prove it; then arm again. */
static void step_lost(idgen_keeper *k) {
  int64_t cap;
  int rc = do_keepalive(k);
  if (rc == IDGEN_ELEASE) {
    atomic_store(&k->state, IDGEN_KEEPER_ACQUIRING);
    return;
  }
  if (rc == 0) {
    rc = do_hwm(k, &cap);
    if (rc == IDGEN_ELEASE) {
      atomic_store(&k->state, IDGEN_KEEPER_ACQUIRING);
      return;
    }
    if (rc == 0 && now_ns(k) < deadline_of(k) && !stopping(k) &&
        idgen_gen_arm(k->gen, k->grant.worker, k->grant.hwm_ms, cap, deadline_of(k)) == 0) {
      k->next_hwm_ns = now_ns(k) + k->cfg.hwm_interval_ms * NS_PER_MS;
      atomic_store(&k->state, IDGEN_KEEPER_HELD);
      return;
    }
  }
  nap(k, k->cfg.retry_ms * NS_PER_MS / 4);
}

/* One function per state; the thread ends before the state becomes stopped. */
static void (*const steps[])(idgen_keeper *) = {
    [IDGEN_KEEPER_ACQUIRING] = step_acquiring,
    [IDGEN_KEEPER_WAITING_HWM] = step_waiting_hwm,
    [IDGEN_KEEPER_HELD] = step_held,
    [IDGEN_KEEPER_LOST] = step_lost,
};

static void *run(void *arg) {
  idgen_keeper *k = arg;
  while (!atomic_load(&k->stop))
    steps[atomic_load(&k->state)](k);
  return NULL;
}

int idgen_keeper_new(idgen_keeper **out, const idgen_keeper_config *config) {
  if (!out || !config || !config->lease || !config->gen)
    return IDGEN_EINVAL;
  idgen_keeper *k = calloc(1, sizeof *k);
  if (!k)
    return IDGEN_ENOMEM;
  k->cfg = *config;
  k->lease = config->lease;
  k->gen = config->gen;
  if (k->cfg.ahead_ms <= 0)
    k->cfg.ahead_ms = 3000;
  if (k->cfg.hwm_interval_ms <= 0)
    k->cfg.hwm_interval_ms = 1000;
  if (k->cfg.hwm_wait_max_ms <= 0)
    k->cfg.hwm_wait_max_ms = 30000;
  if (k->cfg.retry_ms <= 0)
    k->cfg.retry_ms = 1000;
  atomic_store(&k->worker, -1);
  idgen__fork_watch();
  k->fork_gen = idgen__fork_generation();
  pthread_mutex_init(&k->mu, NULL);
  k->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int rc = k->wake_fd < 0 ? -errno : 0;
  if (rc)
    goto fail_eventfd;
  rc = acquire(k);
  if (rc)
    goto fail_acquire;
  if (k->cfg.margin_ms <= 0) {
    int64_t third = k->grant.ttl_ms / 3;
    k->cfg.margin_ms = third < 2000 ? third : 2000;
  }
  if (k->grant.ttl_ms > 0 && k->cfg.margin_ms >= k->grant.ttl_ms - k->grant.ttl_ms / 3) {
    rc = idgen__why(k->lease, IDGEN_EINVAL, "lease margin %lld ms too long for TTL %lld ms",
                    (long long)k->cfg.margin_ms, (long long)k->grant.ttl_ms);
    goto fail_thread;
  }
  rc = -pthread_create(&k->thread, NULL, run, k);
  if (rc)
    goto fail_thread;
  k->thread_started = 1;
  *out = k;
  return 0;

fail_thread:
  idgen_lease_release(k->lease, 0);
fail_acquire:
  close(k->wake_fd);
fail_eventfd:
  pthread_mutex_destroy(&k->mu);
  free(k);
  return rc;
}

/* In a forked child the keeper is a copy: its thread does not exist there, its mutex
 * may have been held by a thread of the parent at the fork, and its lease is the
 * parent's. The child must neither join, lock nor release. */
static int forked(const idgen_keeper *k) {
  return idgen__fork_generation() != k->fork_gen;
}

int idgen_keeper_wait_ready(idgen_keeper *k, int64_t timeout_ms) {
  if (forked(k))
    return IDGEN_EFORKED;
  for (int64_t waited = 0;; waited += 10) {
    idgen_keeper_state st = atomic_load(&k->state);
    if (st == IDGEN_KEEPER_HELD)
      return 0;
    if (st == IDGEN_KEEPER_STOPPED || waited >= timeout_ms)
      return IDGEN_ETIMEDOUT;
    struct timespec ts = {0, 10 * 1000000};
    nanosleep(&ts, NULL);
  }
}

int idgen_keeper_stop(idgen_keeper *k) {
  if (forked(k))
    return IDGEN_EFORKED; /* the generator refuses in the child by itself */
  pthread_mutex_lock(&k->mu);
  if (k->stopped) {
    pthread_mutex_unlock(&k->mu);
    return 0;
  }
  k->stopped = 1;
  pthread_mutex_unlock(&k->mu);
  atomic_store(&k->stop, 1);
  idgen_gen_disarm(k->gen); /* stop issuing now, not after the step under way */
  uint64_t one = 1;
  if (write(k->wake_fd, &one, sizeof one) < 0) {
    /* the eventfd cannot be full here; the thread also sees the flag */
  }
  if (k->thread_started)
    pthread_join(k->thread, NULL);
  /* The thread has ended, so nothing arms the generator any more. But a step that was
   * under way when stop began (a HWM write, then an arm) may have armed it again after
   * the disarm above, with a cap it had just persisted. Disarm it for good, and only
   * then read last_ms: from this disarm on nothing issues, and last_ms read after it
   * covers every ID returned (idgen_gen_disarm says why, on any memory model). So the
   * final HWM is at or above every timestamp issued, and no generator is left armed
   * above the HWM the next holder reads. */
  idgen_gen_disarm(k->gen);
  int held = atomic_load(&k->state) == IDGEN_KEEPER_HELD;
  int64_t final = 0;
  if (held) {
    /* Everything issued under this ID is at or below last_ms; if nothing was, the
     * floor we read is still the HWM. */
    final = idgen_gen_last_ms(k->gen);
    if (final < k->grant.hwm_ms)
      final = k->grant.hwm_ms;
  }
  int rc = idgen_lease_release(k->lease, final);
  if (rc)
    set_error(k, rc);
  if (held && rc == 0)
    atomic_store(&k->hwm_ms, final);
  atomic_store(&k->worker, -1);
  atomic_store(&k->state, IDGEN_KEEPER_STOPPED);
  return rc;
}

void idgen_keeper_free(idgen_keeper *k) {
  if (!k)
    return;
  int child = forked(k);
  if (!child) {
    idgen_keeper_stop(k);
    pthread_mutex_destroy(&k->mu);
  }
  close(k->wake_fd);
  free(k);
}

idgen_keeper_state idgen_keeper_state_get(const idgen_keeper *k) {
  return atomic_load(&((idgen_keeper *)k)->state);
}

const char *idgen_keeper_state_name(idgen_keeper_state state) {
  if ((unsigned)state < sizeof state_names / sizeof state_names[0])
    return state_names[state];
  return "unknown";
}

void idgen_keeper_stats_get(const idgen_keeper *ck, idgen_keeper_stats *out) {
  idgen_keeper *k = (idgen_keeper *)ck;
  memset(out, 0, sizeof *out);
  out->renewals = atomic_load(&k->renewals);
  out->renewal_failures = atomic_load(&k->renewal_failures);
  out->lease_lost = atomic_load(&k->lease_lost);
  out->hwm_writes = atomic_load(&k->hwm_writes);
  out->acquisitions = atomic_load(&k->acquisitions);
  out->skipped = atomic_load(&k->skipped);
  idgen_gen_stats gs;
  idgen_gen_stats_get(k->gen, &gs);
  out->cap_waits = gs.cap_waits;
  out->worker = atomic_load(&k->worker);
  out->hwm_ms = atomic_load(&k->hwm_ms);
  out->floor_ms = atomic_load(&k->floor_ms);
  out->state = idgen_keeper_state_get(k);
}

void idgen_keeper_last_error(idgen_keeper *k, char *out, size_t outlen) {
  if (forked(k)) {
    snprintf(out, outlen, "%s", idgen_strerror(IDGEN_EFORKED));
    return;
  }
  pthread_mutex_lock(&k->mu);
  snprintf(out, outlen, "%s", k->err);
  pthread_mutex_unlock(&k->mu);
}
