/* fake_lease.c: the scripted lease provider of fake_lease.h. */
#include "fake_lease.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease/lease_internal.h"

#define QUEUE_MAX 64
#define WORKERS_MAX 1024

typedef struct queue {
  fake_call calls[QUEUE_MAX];
  size_t head, len;
  fake_call fallback;
} queue;

struct fake_lease {
  idgen_lease base;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled on every call started and on unblock */
  queue q[FAKE_OPS];
  uint64_t calls[FAKE_OPS];
  int unblocked;
  uint64_t next_worker, worker;
  int held;
  int64_t ttl_ms;
  int64_t hwm[WORKERS_MAX], max_hwm[WORKERS_MAX];
};

static const char *const op_names[FAKE_OPS] = {"acquire", "keepalive", "write_hwm",
                                               "release"};

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
    ;
}

/* Counts the call, takes its behaviour from the queue and lets its time pass (the lock
 * is not held while it does). Returns with the lock held. */
static fake_call begin(fake_lease *f, fake_op op) {
  pthread_mutex_lock(&f->mu);
  f->calls[op]++;
  queue *q = &f->q[op];
  fake_call c = q->fallback;
  if (q->len) {
    c = q->calls[q->head];
    q->head = (q->head + 1) % QUEUE_MAX;
    q->len--;
  }
  pthread_cond_broadcast(&f->cv);
  if (c.delay_ms == FAKE_BLOCK) {
    while (!f->unblocked)
      pthread_cond_wait(&f->cv, &f->mu);
  } else if (c.delay_ms > 0) {
    pthread_mutex_unlock(&f->mu);
    sleep_ms(c.delay_ms);
    pthread_mutex_lock(&f->mu);
  }
  return c;
}

static int finish(fake_lease *f, fake_op op, int rc) {
  if (rc == IDGEN_ELEASE)
    f->held = 0;
  pthread_mutex_unlock(&f->mu);
  if (rc)
    return idgen__why(&f->base, rc, "fake %s: %s", op_names[op], idgen_strerror(rc));
  return 0;
}

/* Stores hwm_ms for the worker held, as a fenced write would: only while held. */
static int store(fake_lease *f, const fake_call *c, int64_t hwm_ms) {
  int rc = c->rc;
  if (rc == 0 && !f->held)
    rc = IDGEN_ELEASE;
  if ((rc == 0 || c->store_anyway) && f->held) {
    f->hwm[f->worker] = hwm_ms;
    if (hwm_ms > f->max_hwm[f->worker])
      f->max_hwm[f->worker] = hwm_ms;
  }
  return rc;
}

static int fake_acquire(idgen_lease *l, idgen_lease_grant *out) {
  fake_lease *f = (fake_lease *)l;
  fake_call c = begin(f, FAKE_ACQUIRE);
  if (c.rc == 0) {
    f->worker = f->next_worker;
    f->held = 1;
    out->worker = f->worker;
    out->hwm_ms = f->hwm[f->worker];
    out->ttl_ms = f->ttl_ms;
    out->fenced = 1;
  }
  return finish(f, FAKE_ACQUIRE, c.rc);
}

static int fake_keepalive(idgen_lease *l) {
  fake_lease *f = (fake_lease *)l;
  fake_call c = begin(f, FAKE_KEEPALIVE);
  int rc = c.rc == 0 && !f->held ? IDGEN_ELEASE : c.rc;
  return finish(f, FAKE_KEEPALIVE, rc);
}

static int fake_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  fake_lease *f = (fake_lease *)l;
  fake_call c = begin(f, FAKE_WRITE_HWM);
  return finish(f, FAKE_WRITE_HWM, store(f, &c, hwm_ms));
}

static int fake_release(idgen_lease *l, int64_t final_hwm_ms) {
  fake_lease *f = (fake_lease *)l;
  fake_call c = begin(f, FAKE_RELEASE);
  int rc = c.rc;
  if (f->held && final_hwm_ms > 0)
    rc = store(f, &c, final_hwm_ms);
  f->held = 0;
  return finish(f, FAKE_RELEASE, rc);
}

static int fake_holders(idgen_lease *l, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  fake_lease *f = (fake_lease *)l;
  pthread_mutex_lock(&f->mu);
  *count = f->held ? 1 : 0;
  if (f->held && max > 0) {
    memset(out, 0, sizeof *out);
    out->worker = f->worker;
    out->live = 1;
    out->hwm_ms = f->hwm[f->worker];
    out->ttl_left_ms = -1;
  }
  pthread_mutex_unlock(&f->mu);
  return 0;
}

static void fake_describe(idgen_lease *l, char *out, size_t outlen) {
  (void)l;
  snprintf(out, outlen, "fake: scripted");
}

static void fake_free(idgen_lease *l) {
  fake_lease *f = (fake_lease *)l;
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

static const idgen_lease_class fake_class = {"fake",         fake_acquire, fake_keepalive,
                                             fake_write_hwm, fake_release, fake_holders,
                                             fake_describe,  fake_free};

fake_lease *fake_lease_new(uint64_t worker, int64_t hwm_ms, int64_t ttl_ms) {
  if (worker >= WORKERS_MAX)
    return NULL;
  fake_lease *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->base.vtable = &fake_class;
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  f->next_worker = worker;
  f->hwm[worker] = f->max_hwm[worker] = hwm_ms;
  f->ttl_ms = ttl_ms;
  return f;
}

idgen_lease *fake_lease_base(fake_lease *f) {
  return &f->base;
}

void fake_lease_script(fake_lease *f, fake_op op, const fake_call *calls, size_t n) {
  pthread_mutex_lock(&f->mu);
  queue *q = &f->q[op];
  for (size_t i = 0; i < n && q->len < QUEUE_MAX; i++) {
    q->calls[(q->head + q->len) % QUEUE_MAX] = calls[i];
    q->len++;
  }
  pthread_mutex_unlock(&f->mu);
}

void fake_lease_set_default(fake_lease *f, fake_op op, fake_call call) {
  pthread_mutex_lock(&f->mu);
  f->q[op].fallback = call;
  pthread_mutex_unlock(&f->mu);
}

void fake_lease_set_worker(fake_lease *f, uint64_t worker) {
  pthread_mutex_lock(&f->mu);
  if (worker < WORKERS_MAX)
    f->next_worker = worker;
  pthread_mutex_unlock(&f->mu);
}

void fake_lease_unblock(fake_lease *f) {
  pthread_mutex_lock(&f->mu);
  f->unblocked = 1;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

uint64_t fake_lease_calls(fake_lease *f, fake_op op) {
  pthread_mutex_lock(&f->mu);
  uint64_t n = f->calls[op];
  pthread_mutex_unlock(&f->mu);
  return n;
}

int fake_lease_wait_calls(fake_lease *f, fake_op op, uint64_t n, int64_t timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)(timeout_ms / 1000);
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&f->mu);
  int rc = 0;
  while (f->calls[op] < n && rc == 0)
    rc = pthread_cond_timedwait(&f->cv, &f->mu, &until);
  int ok = f->calls[op] >= n;
  pthread_mutex_unlock(&f->mu);
  return ok ? 0 : -1;
}

int fake_keeper_wait_state(idgen_keeper *keeper, idgen_keeper_state want,
                           int64_t timeout_ms) {
  for (int64_t waited = 0; idgen_keeper_state_get(keeper) != want; waited++) {
    if (waited >= timeout_ms) {
      fprintf(stderr, "keeper in state %s, not %s\n",
              idgen_keeper_state_name(idgen_keeper_state_get(keeper)),
              idgen_keeper_state_name(want));
      return -1;
    }
    sleep_ms(1);
  }
  return 0;
}

int64_t fake_lease_hwm(fake_lease *f, uint64_t worker) {
  pthread_mutex_lock(&f->mu);
  int64_t v = worker < WORKERS_MAX ? f->hwm[worker] : 0;
  pthread_mutex_unlock(&f->mu);
  return v;
}

int64_t fake_lease_max_hwm(fake_lease *f, uint64_t worker) {
  pthread_mutex_lock(&f->mu);
  int64_t v = worker < WORKERS_MAX ? f->max_hwm[worker] : 0;
  pthread_mutex_unlock(&f->mu);
  return v;
}

int fake_lease_held(fake_lease *f) {
  pthread_mutex_lock(&f->mu);
  int held = f->held;
  pthread_mutex_unlock(&f->mu);
  return held;
}
