/* test_keeper.c: the keeper's fences one step at a time, on a fake clock that moves only
 * when a test moves it, against the scripted provider (fake_lease.h): a failed HWM write
 * never raises the cap, the first cap is written before the generator is armed, a HWM
 * is never lowered, the wait past the HWM and the floor, no arming inside the HWM's
 * millisecond, the deadline margin, the deadline counted from the keepalive's and the
 * acquire's send, a lease said lost, the final HWM at stop, and a call inside a
 * reservation when stop comes.
 * Each test waits for the keeper's next call to the provider (or a state), never for a
 * time, and asserts no timing: the keeper's thread naps in real time between steps and
 * reads the moved clock when it wakes. Runs under TSan (the keeper has a thread). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fake_lease.h"
#include "idgen.h"
#include "fake_clock.h"
#include "idgen/lease.h"

#define MS INT64_C(1000000)
#define T0_MS INT64_C(1780272000000) /* 2026-06-01 */
#define AHEAD_MS 3000                /* cap = now + 3 s */
/* deadline = the last keepalive sent + 1000 - 333 ms; a keepalive every 333 ms */
#define TTL_MS 1000
#define WAIT_MS 20000 /* the longest any condition may take on a loaded machine */
/* The bound for a step the keeper takes at once, with no nap before it: only a keeper
 * that skips the step reaches it, and fails in seconds instead of after WAIT_MS. A
 * failure detector, not a timing. */
#define AT_ONCE_MS 5000

/* A fake clock that can hold one thread's next read until told to go on: the generator
 * reads the clock between loading its armed state and its CAS, so a held read keeps a
 * call in the middle of its reservation. */
typedef struct gate_clock {
  idgen_clock base;
  idgen_clock_fake fake;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int hold_next; /* hold the next read made by holder */
  pthread_t holder;
  int holding; /* a read is held */
} gate_clock;

static int64_t gate_now(idgen_clock *base) {
  gate_clock *g = (gate_clock *)base;
  pthread_mutex_lock(&g->mu);
  if (g->hold_next && pthread_equal(pthread_self(), g->holder)) {
    g->hold_next = 0;
    g->holding = 1;
    pthread_cond_broadcast(&g->cv);
    while (g->holding)
      pthread_cond_wait(&g->cv, &g->mu);
  }
  pthread_mutex_unlock(&g->mu);
  return idgen_clock_now_ns(&g->fake.base);
}

static void gate_pass(idgen_clock *base, int64_t ns) {
  idgen_clock_fake_advance(&((gate_clock *)base)->fake, ns > 0 ? ns : 1);
}

static const idgen_clock_class gate_class = {gate_now, gate_pass, gate_pass};

/* The calling thread's next read of the clock will be held until gate_release. */
static void gate_hold_my_next_read(gate_clock *g) {
  pthread_mutex_lock(&g->mu);
  g->holder = pthread_self();
  g->hold_next = 1;
  pthread_mutex_unlock(&g->mu);
}

static void gate_wait_holding(gate_clock *g) {
  pthread_mutex_lock(&g->mu);
  while (!g->holding)
    pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

static void gate_release(gate_clock *g) {
  pthread_mutex_lock(&g->mu);
  g->holding = 0;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

typedef struct rig {
  gate_clock clock;
  idgen_gen *gen;
  fake_lease *fake;
  idgen_keeper *keeper;
} rig;

/* The clock at T0, an unarmed generator on it, and the fake provider granting worker 1
 * with hwm_ms in its store; no keeper yet (script the provider, then rig_start). */
static rig *rig_open(int64_t ttl_ms, int64_t hwm_ms) {
  rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->clock.base.vtable = &gate_class;
  idgen_clock_fake_init(&r->clock.fake, T0_MS * MS);
  pthread_mutex_init(&r->clock.mu, NULL);
  pthread_cond_init(&r->clock.cv, NULL);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &r->clock.base);
  gc.armed = 0;
  assert_int_equal(idgen_gen_new(&r->gen, &gc), 0);
  r->fake = fake_lease_new(1, hwm_ms, ttl_ms);
  assert_non_null(r->fake);
  return r;
}

/* The keeper, winning its ID now (at T0): HWM every interval_ms, retries every 100 ms. */
static void rig_start(rig *r, int64_t interval_ms) {
  idgen_keeper_config kc;
  memset(&kc, 0, sizeof kc);
  kc.lease = fake_lease_base(r->fake);
  kc.gen = r->gen;
  kc.ahead_ms = AHEAD_MS;
  kc.hwm_interval_ms = interval_ms;
  kc.retry_ms = 100;
  assert_int_equal(idgen_keeper_new(&r->keeper, &kc), 0);
}

static void rig_free(rig *r) {
  idgen_keeper_free(r->keeper);
  idgen_lease_free(fake_lease_base(r->fake));
  idgen_gen_free(r->gen);
  pthread_cond_destroy(&r->clock.cv);
  pthread_mutex_destroy(&r->clock.mu);
  free(r);
}

/* Sets the clock to T0 + ms (ms may be negative: a step back). */
static void clock_at(rig *r, int64_t ms) {
  idgen_clock_fake_set(&r->clock.fake, (T0_MS + ms) * MS);
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static idgen_keeper_stats stats(rig *r) {
  idgen_keeper_stats st;
  idgen_keeper_stats_get(r->keeper, &st);
  return st;
}

static idgen_gen_stats gen_stats(rig *r) {
  idgen_gen_stats st;
  idgen_gen_stats_get(r->gen, &st);
  return st;
}

static void wait_state(rig *r, idgen_keeper_state want) {
  assert_int_equal(fake_keeper_wait_state(r->keeper, want, WAIT_MS), 0);
}

static void wait_calls(rig *r, fake_op op, uint64_t n) {
  assert_int_equal(fake_lease_wait_calls(r->fake, op, n, WAIT_MS), 0);
}

/* Waits until the provider has seen n calls of op, or the keeper is in state other;
 * returns 1 for the calls, 0 for the state. For a step that a broken keeper would skip:
 * the test then fails at once instead of waiting for a call that never comes. */
static int wait_calls_or_state(rig *r, fake_op op, uint64_t n, idgen_keeper_state other) {
  for (int waited = 0;; waited++) {
    if (fake_lease_calls(r->fake, op) >= n)
      return 1;
    if (idgen_keeper_state_get(r->keeper) == other)
      return 0;
    assert_true(waited < WAIT_MS);
    sleep_ms(1);
  }
}

/* The generator's answer now; *time_ms is the ID's time when it issued one. */
static int next(rig *r, int64_t *time_ms) {
  uint64_t id;
  int rc = idgen_gen_next(r->gen, &id);
  if (rc == 0 && time_ms) {
    idgen_parts p;
    assert_int_equal(idgen_decompose(idgen_gen_layout(r->gen), id, &p), 0);
    *time_ms = p.time_ms;
  }
  return rc;
}

/* M8c: a HWM write that succeeds once, then fails. The cap stays at the HWM actually
 * written, and the generator refuses with IDGEN_ECAP once the clock passes it. */
static void test_failed_write_keeps_cap(void **state) {
  (void)state;
  rig *r = rig_open(0, 0); /* TTL 0: no keepalive, no deadline; the cap decides */
  rig_start(r, 100);
  wait_state(r, IDGEN_KEEPER_HELD); /* the first write: cap T0 + 3 s */
  assert_true(stats(r).hwm_ms == T0_MS + AHEAD_MS);
  fake_lease_set_default(r->fake, FAKE_WRITE_HWM, (fake_call){IDGEN_EUNAVAIL, 0, 0});
  clock_at(r, 100);
  wait_calls(r, FAKE_WRITE_HWM, 2); /* cap T0 + 3.1 s: refused */
  clock_at(r, 200);
  wait_calls(r, FAKE_WRITE_HWM, 3); /* the keeper dealt with write 2 before it */
  assert_true(gen_stats(r).cap_ms == T0_MS + AHEAD_MS);
  assert_true(stats(r).hwm_ms == T0_MS + AHEAD_MS);
  assert_true(fake_lease_max_hwm(r->fake, 1) == T0_MS + AHEAD_MS);
  assert_true(stats(r).renewal_failures >= 1);
  int64_t t = 0;
  clock_at(r, AHEAD_MS);
  assert_int_equal(next(r, &t), 0);
  assert_true(t == T0_MS + AHEAD_MS); /* at the cap: fine */
  clock_at(r, AHEAD_MS + 1);
  assert_int_equal(next(r, &t), IDGEN_ECAP);
  rig_free(r);
}

/* The first cap must be written before the generator is armed: a first write that
 * fails leaves the keeper waiting, the generator unarmed, until a write succeeds. */
static void test_first_write_failed_not_armed(void **state) {
  (void)state;
  rig *r = rig_open(0, 0);
  fake_lease_script(r->fake, FAKE_WRITE_HWM,
                    (fake_call[]){{IDGEN_EUNAVAIL, 0, 0}, {0, FAKE_BLOCK, 0}}, 2);
  rig_start(r, 100);
  assert_int_equal(wait_calls_or_state(r, FAKE_WRITE_HWM, 2, IDGEN_KEEPER_HELD), 1);
  assert_int_equal(idgen_keeper_state_get(r->keeper), IDGEN_KEEPER_WAITING_HWM);
  assert_int_equal(next(r, NULL), IDGEN_ENOTARMED);
  fake_lease_unblock(r->fake);
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_int_equal(next(r, NULL), 0);
  assert_int_equal(stats(r).hwm_writes, 1);
  rig_free(r);
}

/* A HWM the keeper wrote is never lowered, even when its clock steps back: here it
 * proves the lease again (lost, then a keepalive and a write) 10 s back in time. */
static void test_hwm_never_lowered(void **state) {
  (void)state;
  rig *r = rig_open(TTL_MS, 0);
  rig_start(r, 1000);
  wait_state(r, IDGEN_KEEPER_HELD); /* cap T0 + 3 s, deadline T0 + 667 ms */
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){IDGEN_EUNAVAIL, 0, 0});
  clock_at(r, 1500); /* past the deadline, with or without its margin */
  wait_state(r, IDGEN_KEEPER_LOST);
  clock_at(r, -10000);
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){0, 0, 0});
  wait_state(r, IDGEN_KEEPER_HELD); /* proved again: a write of now + 3 s = T0 - 7 s */
  assert_true(stats(r).hwm_writes >= 2);
  assert_true(fake_lease_hwm(r->fake, 1) == T0_MS + AHEAD_MS);
  assert_true(stats(r).hwm_ms == T0_MS + AHEAD_MS);
  rig_free(r);
}

/* A previous holder left a HWM 2 s ahead. The keeper keeps the lease alive but writes
 * and arms nothing until the clock is past it; then it arms with that HWM as the
 * floor, so that even a clock stepping back after arming issues nothing at or below
 * it. Each fence holds without the other's help here. */
static void test_waits_past_hwm_and_keeps_floor(void **state) {
  (void)state;
  const int64_t hwm = T0_MS + 2000;
  rig *r = rig_open(TTL_MS, hwm);
  rig_start(r, 1000);
  clock_at(r, 400);
  wait_calls(r, FAKE_KEEPALIVE, 1);
  clock_at(r, 800);
  wait_calls(r, FAKE_KEEPALIVE, 2); /* a second step, still below the HWM */
  assert_int_equal(fake_lease_calls(r->fake, FAKE_WRITE_HWM), 0);
  assert_int_equal(idgen_keeper_state_get(r->keeper), IDGEN_KEEPER_WAITING_HWM);
  assert_int_equal(next(r, NULL), IDGEN_ENOTARMED);
  clock_at(r, 2001);
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_true(stats(r).floor_ms == hwm);
  clock_at(r, 1990); /* behind by 11 ms: the WAIT policy waits it out */
  int64_t t = 0;
  assert_int_equal(next(r, &t), 0);
  if (t <= hwm)
    fail_msg("issued at %lld, at or below the HWM read %lld", (long long)t, (long long)hwm);
  rig_free(r);
}

/* The deadline is the last keepalive sent + TTL - margin. Past it the generator refuses
 * by itself, while the keeper is still stuck in a keepalive; once the keepalive
 * answers, the keeper proves the lease again and re-arms. */
static void test_deadline_margin(void **state) {
  (void)state;
  rig *r = rig_open(TTL_MS, 0);
  rig_start(r, 1000);
  wait_state(r, IDGEN_KEEPER_HELD); /* deadline T0 + 1000 - 333 ms */
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){0, FAKE_BLOCK, 0}, 1);
  clock_at(r, 700);
  wait_calls(r, FAKE_KEEPALIVE, 1);
  assert_int_equal(next(r, NULL), IDGEN_ELEASE);
  fake_lease_unblock(r->fake);
  for (int waited = 0; stats(r).lease_lost < 1; waited++) {
    assert_true(waited < WAIT_MS);
    sleep_ms(1);
  }
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_int_equal(next(r, NULL), 0);
  rig_free(r);
}

/* Waits until the generator's deadline is no longer was_ns; returns the new one. */
static int64_t wait_deadline_moved(rig *r, int64_t was_ns) {
  for (int waited = 0; gen_stats(r).deadline_ns == was_ns; waited++) {
    assert_true(waited < WAIT_MS);
    sleep_ms(1);
  }
  return gen_stats(r).deadline_ns;
}

/* Issue 23, item 6: the deadline counts from the keepalive's send, not its reply. The
 * store renews the lease when the request reaches it, so a reply held back 260 ms has
 * already spent 260 ms of the TTL: counted from the reply, the deadline would move 260
 * ms past the lease. Here the keepalive is sent at T0 + 340 ms and answers at T0 + 600
 * ms: the deadline is 340 + 1000 - 333 ms, and the generator refuses from there on
 * (the next keepalive fails, so nothing moves it on legitimately). */
static void test_deadline_from_keepalive_send(void **state) {
  (void)state;
  rig *r = rig_open(TTL_MS, 0);
  rig_start(r, 10000);              /* no HWM write in the way */
  wait_state(r, IDGEN_KEEPER_HELD); /* deadline T0 + 667 ms */
  int64_t was = gen_stats(r).deadline_ns;
  assert_true(was == (T0_MS + 667) * MS);
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){0, FAKE_BLOCK, 0}, 1);
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){IDGEN_EUNAVAIL, 0, 0});
  clock_at(r, 340);
  wait_calls(r, FAKE_KEEPALIVE, 1); /* sent at T0 + 340 ms, held back */
  clock_at(r, 600);                 /* still before the old deadline */
  fake_lease_unblock(r->fake);      /* the reply comes at T0 + 600 ms */
  int64_t now = wait_deadline_moved(r, was);
  if (now != (T0_MS + 340 + 667) * MS)
    fail_msg("deadline T0 + %lld ms after a keepalive sent at T0 + 340 ms and answered at "
             "T0 + 600 ms, not T0 + 1007 ms",
             (long long)(now / MS - T0_MS));
  clock_at(r, 1010); /* past the deadline counted from the send */
  int64_t t = 0;
  int rc = next(r, &t);
  if (rc == 0)
    fail_msg("issued at T0 + %lld ms, past the deadline T0 + 1007 ms", (long long)(t - T0_MS));
  assert_true(rc == IDGEN_ELEASE || rc == IDGEN_ENOTARMED);
  rig_free(r);
}

/* The same for the grant: the lease's TTL runs from the acquire's request (etcd's grant
 * is its first call), not from when the claim that follows answers. An acquire after a
 * loss, sent at T0 + 340 ms and answered at T0 + 600 ms, arms with the deadline
 * 340 + 1000 - 333 ms. */
static void test_deadline_from_grant_send(void **state) {
  (void)state;
  rig *r = rig_open(TTL_MS, 0);
  rig_start(r, 10000);
  wait_state(r, IDGEN_KEEPER_HELD);
  fake_lease_set_worker(r->fake, 2); /* no HWM in the store: armed at once when won */
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){IDGEN_ELEASE, 0, 0}, 1);
  fake_lease_script(r->fake, FAKE_ACQUIRE, &(fake_call){0, FAKE_BLOCK, 0}, 1);
  clock_at(r, 340);
  wait_calls(r, FAKE_ACQUIRE, 2); /* the lease lost at T0 + 340 ms, acquired again */
  clock_at(r, 600);
  fake_lease_unblock(r->fake);
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_int_equal(stats(r).worker, 2);
  int64_t now = gen_stats(r).deadline_ns;
  if (now != (T0_MS + 340 + 667) * MS)
    fail_msg("deadline T0 + %lld ms after an acquire sent at T0 + 340 ms and answered at "
             "T0 + 600 ms, not T0 + 1007 ms",
             (long long)(now / MS - T0_MS));
  rig_free(r);
}

/* Issue 23, item 8: the keeper arms only once the clock is past the HWM's millisecond,
 * not at it. The generator's floor would hide an arm at that millisecond (it issues
 * nothing at or below the floor), so this looks at the keeper itself: with the clock
 * held inside the HWM's millisecond it must keep waiting, unarmed, with no HWM written.
 * A TTL of 1 ms makes a keepalive due every third of a millisecond: each one shows
 * that the keeper has taken another step and decided again. */
static void test_arms_past_hwm_ms_not_at_it(void **state) {
  (void)state;
  rig *r = rig_open(1, T0_MS); /* the HWM is T0's millisecond; the clock is at it */
  rig_start(r, 1000);
  for (int k = 1; k <= 2; k++) {
    idgen_clock_fake_set(&r->clock.fake, T0_MS * MS + k * 400000); /* T0 + 0.4, 0.8 ms */
    if (!wait_calls_or_state(r, FAKE_KEEPALIVE, (uint64_t)k, IDGEN_KEEPER_HELD) ||
        idgen_keeper_state_get(r->keeper) != IDGEN_KEEPER_WAITING_HWM)
      fail_msg("armed by T0 + 0.%d ms, inside the HWM's millisecond T0", 4 * k);
  }
  assert_int_equal(fake_lease_calls(r->fake, FAKE_WRITE_HWM), 0);
  assert_int_equal(next(r, NULL), IDGEN_ENOTARMED);
  clock_at(r, 1); /* past it: armed, and the first ID is past the HWM */
  wait_state(r, IDGEN_KEEPER_HELD);
  int64_t t = 0;
  assert_int_equal(next(r, &t), 0);
  assert_true(t == T0_MS + 1);
  rig_free(r);
}

/* A keepalive says the lease is gone: the keeper disarms the generator at once (before
 * any deadline or HWM write would tell it), wins an ID again and arms with it. */
static void test_keepalive_says_lost(void **state) {
  (void)state;
  rig *r = rig_open(TTL_MS, 0);
  rig_start(r, 1000);               /* no HWM write due before T0 + 1 s */
  wait_state(r, IDGEN_KEEPER_HELD); /* deadline T0 + 667 ms */
  fake_lease_set_worker(r->fake, 2);
  fake_lease_script(r->fake, FAKE_KEEPALIVE,
                    (fake_call[]){{IDGEN_ELEASE, 0, 0}, {0, FAKE_BLOCK, 0}}, 2);
  fake_lease_script(r->fake, FAKE_ACQUIRE, &(fake_call){0, FAKE_BLOCK, 0}, 1);
  clock_at(r, 340);
  wait_calls(r, FAKE_KEEPALIVE, 1);
  clock_at(r, 600); /* a keepalive retried after a failure would be due by now */
  /* The next call is the acquire, not another keepalive, and it comes at once: a keeper
   * that took the answer for a failed keepalive may retry one (a second keepalive) or,
   * when it read the clock after it moved, wait for a deadline this clock never reaches. */
  for (int waited = 0; fake_lease_calls(r->fake, FAKE_ACQUIRE) < 2; waited++) {
    assert_int_equal(fake_lease_calls(r->fake, FAKE_KEEPALIVE), 1);
    assert_true(waited < AT_ONCE_MS);
    sleep_ms(1);
  }
  assert_int_equal(next(r, NULL), IDGEN_ENOTARMED); /* before the deadline */
  assert_true(stats(r).lease_lost >= 1);
  fake_lease_unblock(r->fake);
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_int_equal(stats(r).worker, 2);
  uint64_t id;
  idgen_parts p;
  assert_int_equal(idgen_gen_next(r->gen, &id), 0);
  assert_int_equal(idgen_decompose(idgen_gen_layout(r->gen), id, &p), 0);
  assert_int_equal(p.worker, 2);
  rig_free(r);
}

/* The final HWM of a graceful stop is the last ms issued: not the floor read at start
 * (below what was issued), not the cap (it would make the next holder wait). */
static void test_final_hwm_is_last_issued(void **state) {
  (void)state;
  rig *r = rig_open(0, T0_MS - 1000);
  rig_start(r, 100);
  wait_state(r, IDGEN_KEEPER_HELD);
  clock_at(r, 5);
  int64_t t = 0;
  assert_int_equal(next(r, &t), 0);
  assert_true(t == T0_MS + 5);
  assert_int_equal(idgen_keeper_stop(r->keeper), 0);
  assert_true(fake_lease_hwm(r->fake, 1) == T0_MS + 5);
  rig_free(r);
}

typedef struct draw_call {
  rig *r;
  int rc;
  int64_t time_ms;
} draw_call;

static void *draw_held(void *arg) {
  draw_call *d = arg;
  gate_hold_my_next_read(&d->r->clock);
  d->rc = next(d->r, &d->time_ms);
  return NULL;
}

/* idgen_keeper_stop while a call is inside its reservation (its clock read held): the
 * final HWM is the last ms issued before, and the call, let go after stop returned
 * with the clock moved on, must refuse rather than issue above that HWM. */
static void test_stop_during_reservation(void **state) {
  (void)state;
  rig *r = rig_open(0, 0);
  rig_start(r, 100);
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_int_equal(next(r, NULL), 0); /* at T0 */
  draw_call d = {.r = r};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, draw_held, &d), 0);
  gate_wait_holding(&r->clock);
  assert_int_equal(idgen_keeper_stop(r->keeper), 0);
  assert_true(fake_lease_hwm(r->fake, 1) == T0_MS);
  clock_at(r, 500);
  gate_release(&r->clock);
  pthread_join(t, NULL);
  if (d.rc == 0)
    fail_msg("issued at %lld after stop left the HWM at %lld", (long long)d.time_ms,
             (long long)T0_MS);
  assert_int_equal(d.rc, IDGEN_ENOTARMED);
  rig_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_failed_write_keeps_cap),
      cmocka_unit_test(test_first_write_failed_not_armed),
      cmocka_unit_test(test_hwm_never_lowered),
      cmocka_unit_test(test_waits_past_hwm_and_keeps_floor),
      cmocka_unit_test(test_deadline_margin),
      cmocka_unit_test(test_deadline_from_keepalive_send),
      cmocka_unit_test(test_deadline_from_grant_send),
      cmocka_unit_test(test_arms_past_hwm_ms_not_at_it),
      cmocka_unit_test(test_keepalive_says_lost),
      cmocka_unit_test(test_final_hwm_is_last_issued),
      cmocka_unit_test(test_stop_during_reservation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
