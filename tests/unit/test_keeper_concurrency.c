/* test_keeper_concurrency.c: the keeper, state by state, against the scripted provider
 * (tests/unit/fake_lease.h) with a TTL above 0, while a thread draws IDs: the deadline
 * reached, a keepalive that stalls past it, a lease lost and won again, a fenced write
 * refused, and idgen_keeper_stop arriving in each state. After every test no ID was
 * issued above a HWM the provider stored. Runs under TSan; asserts no timing. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fake_lease.h"
#include "idgen.h"
#include "idgen/lease.h"

#define WAIT_MS 20000 /* the longest any condition may take on a loaded machine */
#define TTL_MS 1000   /* deadline = last keepalive sent + 1000 - 333 ms */
#define WORKERS 4

typedef struct rig {
  idgen_clock_mono clock;
  idgen_gen *gen;
  fake_lease *fake;
  idgen_keeper *keeper;
  pthread_t drawer;
  int drawing;
  atomic_int stop_drawing;
  _Atomic int64_t max_issued_ms[WORKERS]; /* newest time issued, per worker */
  atomic_uint_fast64_t issued;
} rig;

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void note_issued(rig *r, uint64_t id) {
  idgen_parts p;
  assert_int_equal(idgen_decompose(idgen_gen_layout(r->gen), id, &p), 0);
  assert_true(p.worker < WORKERS);
  int64_t old = atomic_load(&r->max_issued_ms[p.worker]);
  while (p.time_ms > old &&
         !atomic_compare_exchange_weak(&r->max_issued_ms[p.worker], &old, p.time_ms))
    ;
  atomic_fetch_add(&r->issued, 1);
}

static void *draw(void *arg) {
  rig *r = arg;
  while (!atomic_load(&r->stop_drawing)) {
    uint64_t id;
    if (idgen_gen_next(r->gen, &id) == 0)
      note_issued(r, id);
    sleep_ms(1);
  }
  return NULL;
}

/* A generator, the fake provider granting worker 1 (its store holding hwm_ms), and a
 * keeper: HWM every 50 ms,
 * cap = now + 3 s (so that a stalled keeper meets its deadline before its cap), retries
 * every 50 ms. Does not start drawing. */
static rig *rig_new_hwm(int64_t ttl_ms, int64_t hwm_ms) {
  rig *r = calloc(1, sizeof *r);
  assert_non_null(r);
  idgen_clock_mono_init(&r->clock);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &r->clock.base);
  gc.armed = 0;
  assert_int_equal(idgen_gen_new(&r->gen, &gc), 0);
  r->fake = fake_lease_new(1, hwm_ms, ttl_ms);
  assert_non_null(r->fake);
  idgen_keeper_config kc;
  memset(&kc, 0, sizeof kc);
  kc.lease = fake_lease_base(r->fake);
  kc.gen = r->gen;
  kc.ahead_ms = 3000;
  kc.hwm_interval_ms = 50;
  kc.retry_ms = 50;
  assert_int_equal(idgen_keeper_new(&r->keeper, &kc), 0);
  return r;
}

static rig *rig_new(int64_t ttl_ms) {
  return rig_new_hwm(ttl_ms, 0);
}

static void start_drawing(rig *r) {
  assert_int_equal(pthread_create(&r->drawer, NULL, draw, r), 0);
  r->drawing = 1;
}

static void stop_drawing(rig *r) {
  if (!r->drawing)
    return;
  atomic_store(&r->stop_drawing, 1);
  pthread_join(r->drawer, NULL);
  r->drawing = 0;
}

/* No ID was issued above the highest HWM stored for its worker. */
static void assert_under_stored_hwm(rig *r) {
  for (uint64_t w = 0; w < WORKERS; w++) {
    int64_t issued = atomic_load(&r->max_issued_ms[w]);
    if (issued > fake_lease_max_hwm(r->fake, w))
      fail_msg("worker %llu: issued %lld above the highest stored HWM %lld",
               (unsigned long long)w, (long long)issued,
               (long long)fake_lease_max_hwm(r->fake, w));
  }
}

static void rig_free(rig *r) {
  stop_drawing(r);
  idgen_keeper_free(r->keeper);
  assert_under_stored_hwm(r);
  idgen_lease_free(fake_lease_base(r->fake));
  idgen_gen_free(r->gen);
  free(r);
}

static void wait_state(rig *r, idgen_keeper_state want) {
  assert_int_equal(fake_keeper_wait_state(r->keeper, want, WAIT_MS), 0);
}

#define REFUSES 1 /* wait_gen: any refusal */

/* Waits until the generator answers want (0: it issues; REFUSES: any error). */
static void wait_gen(rig *r, int want) {
  for (int waited = 0;; waited += 2) {
    uint64_t id;
    int rc = idgen_gen_next(r->gen, &id);
    if (rc == 0)
      note_issued(r, id);
    if (rc == want || (want == REFUSES && rc < 0))
      return;
    if (waited > WAIT_MS)
      fail_msg("the generator answers %s, not %s", idgen_err_name(rc),
               idgen_err_name(want));
    sleep_ms(2);
  }
}

static void wait_calls(rig *r, fake_op op, uint64_t n) {
  assert_int_equal(fake_lease_wait_calls(r->fake, op, n, WAIT_MS), 0);
}

/* A rig whose keeper holds the lease while a thread draws IDs. */
static rig *rig_serving(void) {
  rig *r = rig_new(TTL_MS);
  wait_state(r, IDGEN_KEEPER_HELD);
  start_drawing(r);
  wait_gen(r, 0);
  return r;
}

static idgen_keeper_stats stats(rig *r) {
  idgen_keeper_stats st;
  idgen_keeper_stats_get(r->keeper, &st);
  return st;
}

static void wait_acquisitions(rig *r, uint64_t n) {
  for (int waited = 0; stats(r).acquisitions < n; waited += 2) {
    assert_true(waited < WAIT_MS);
    sleep_ms(2);
  }
}

/* Keepalives fail until the deadline passes: the generator stops by itself, the keeper
 * says lost; once keepalives answer again it re-proves the lease and re-arms. */
static void test_deadline_reached(void **state) {
  (void)state;
  rig *r = rig_serving();
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){IDGEN_EUNAVAIL, 0, 0});
  wait_gen(r, REFUSES); /* the generator's deadline or the keeper's disarm, first */
  wait_state(r, IDGEN_KEEPER_LOST);
  assert_true(stats(r).lease_lost >= 1);
  assert_true(stats(r).renewal_failures >= 1);
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){0, 0, 0});
  wait_gen(r, 0);
  assert_int_equal(stats(r).acquisitions, 1); /* the same lease, proved again */
  assert_int_equal(stats(r).worker, 1);
  rig_free(r);
}

/* A keepalive that stalls past the deadline and then succeeds: the generator refused at
 * the deadline and must be armed again (the late answer alone no longer reaches it). */
static void test_stalled_keepalive_rearms(void **state) {
  (void)state;
  rig *r = rig_serving();
  uint64_t before = fake_lease_calls(r->fake, FAKE_KEEPALIVE);
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){0, 2 * TTL_MS, 0}, 1);
  wait_calls(r, FAKE_KEEPALIVE, before + 1); /* the stall began */
  wait_gen(r, IDGEN_ELEASE);                 /* the deadline passed during it */
  wait_gen(r, 0);                            /* re-armed after it */
  wait_state(r, IDGEN_KEEPER_HELD);
  assert_true(stats(r).lease_lost >= 1);
  assert_int_equal(stats(r).acquisitions, 1);
  rig_free(r);
}

/* The provider says the lease is gone: the keeper stops the generator, wins an ID again
 * (worker 2 this time), waits past its HWM and arms with it. */
static void test_lost_then_reacquired(void **state) {
  (void)state;
  rig *r = rig_serving();
  fake_lease_set_worker(r->fake, 2);
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){IDGEN_ELEASE, 0, 0}, 1);
  wait_acquisitions(r, 2);
  wait_state(r, IDGEN_KEEPER_HELD);
  wait_gen(r, 0);
  idgen_keeper_stats st = stats(r);
  assert_int_equal(st.worker, 2);
  assert_true(st.lease_lost >= 1);
  stop_drawing(r);
  assert_true(atomic_load(&r->max_issued_ms[2]) > 0);
  rig_free(r);
}

/* A fenced HWM write refused (another holder owns the ID): the cap never rises past
 * what was stored, the generator stops, and the keeper wins an ID again. */
static void test_fenced_write_refused(void **state) {
  (void)state;
  rig *r = rig_serving();
  fake_lease_set_worker(r->fake, 3);
  fake_lease_script(r->fake, FAKE_WRITE_HWM, &(fake_call){IDGEN_ELEASE, 0, 0}, 1);
  wait_acquisitions(r, 2);
  wait_state(r, IDGEN_KEEPER_HELD);
  wait_gen(r, 0);
  assert_int_equal(stats(r).worker, 3);
  assert_true(stats(r).lease_lost >= 1);
  rig_free(r); /* checks no ID of worker 1 passed its highest stored HWM */
}

/* ---- idgen_keeper_stop in each state ------------------------------------------- */

/* idgen_keeper_stop joins the keeper's thread after it set its stop flag and disarmed
 * the generator: the moment to let a blocked provider call return, so that the step
 * under way ends after stop began, whatever the scheduler does. Every pthread_join of
 * this program comes here (linked with -Wl,--wrap=pthread_join); the hook runs once. */
static fake_lease *_Atomic unblock_at_join;

int __real_pthread_join(pthread_t thread, void **ret);
int __wrap_pthread_join(pthread_t thread, void **ret);

int __wrap_pthread_join(pthread_t thread, void **ret) {
  fake_lease *f = atomic_exchange(&unblock_at_join, NULL);
  if (f)
    fake_lease_unblock(f);
  return __real_pthread_join(thread, ret);
}

/* Makes the next call of op block (FAKE_BLOCK); returns the count it will have when
 * it has started. */
static uint64_t block_next(rig *r, fake_op op) {
  uint64_t n = fake_lease_calls(r->fake, op);
  fake_lease_script(r->fake, op, &(fake_call){0, FAKE_BLOCK, 0}, 1);
  return n + 1;
}

/* IDs that the stopped keeper's generator and a next holder of worker w (armed with the
 * HWM the store holds now, as a new process would be) both issue, drawn in turns. */
static uint64_t next_holder_duplicates(rig *r, uint64_t w) {
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &r->clock.base);
  gc.worker = w;
  gc.floor_ms = fake_lease_hwm(r->fake, w);
  idgen_gen *next = NULL;
  assert_int_equal(idgen_gen_new(&next, &gc), 0);
  enum { N = 20000 };
  uint64_t *old_ids = calloc(N, sizeof *old_ids), *new_ids = calloc(N, sizeof *new_ids);
  size_t nold = 0, nnew = 0;
  for (size_t i = 0; i < N; i++) {
    if (idgen_gen_next(r->gen, &old_ids[nold]) == 0)
      nold++;
    if (idgen_gen_next(next, &new_ids[nnew]) == 0)
      nnew++;
  }
  uint64_t dups = 0;
  for (size_t i = 0, j = 0; i < nold && j < nnew;) /* both increase */
    if (old_ids[i] < new_ids[j])
      i++;
    else if (old_ids[i] > new_ids[j])
      j++;
    else
      dups++, i++, j++;
  print_message("after stop: the stopped generator issued %zu, the next holder %zu, "
                "both %llu\n",
                nold, nnew, (unsigned long long)dups);
  free(old_ids);
  free(new_ids);
  idgen_gen_free(next);
  return dups;
}

/* What must hold once idgen_keeper_stop returned, whatever step was in flight: the
 * generator refuses, nothing issued is above the HWM a next holder reads, and a next
 * holder starting from it shares no ID with this generator. */
static void assert_stopped(rig *r) {
  stop_drawing(r);
  assert_int_equal(idgen_keeper_state_get(r->keeper), IDGEN_KEEPER_STOPPED);
  assert_int_equal(fake_lease_held(r->fake), 0);
  uint64_t id;
  for (int i = 0; i < 50; i++) { /* stays refused: no late arm */
    assert_int_equal(idgen_gen_next(r->gen, &id), IDGEN_ENOTARMED);
    sleep_ms(1);
  }
  for (uint64_t w = 0; w < WORKERS; w++) {
    int64_t issued = atomic_load(&r->max_issued_ms[w]);
    if (issued > fake_lease_hwm(r->fake, w))
      fail_msg("worker %llu: issued %lld, but the HWM left is %lld", (unsigned long long)w,
               (long long)issued, (long long)fake_lease_hwm(r->fake, w));
  }
  assert_int_equal(next_holder_duplicates(r, 1), 0);
}

/* The call now in flight is blocked (FAKE_BLOCK): stop the keeper, the call returning
 * once stop waits for the keeper's thread; then check what must hold (assert_stopped)
 * and free the rig. */
static void check_stop_during_blocked_call(rig *r) {
  atomic_store(&unblock_at_join, r->fake);
  assert_int_equal(idgen_keeper_stop(r->keeper), 0);
  assert_null(atomic_load(&unblock_at_join)); /* the call did return during the join */
  assert_stopped(r);
  rig_free(r);
}

static int64_t wall_ms(void) {
  return idgen_wall_ns() / 1000000;
}

/* waiting-hwm, the first cap being written (the case: a previous holder left a
 * HWM; the write persists a cap above it and would arm after stop). */
static void test_stop_while_first_cap_written(void **state) {
  (void)state;
  rig *r = rig_new_hwm(TTL_MS, wall_ms() - 1000);
  wait_calls(r, FAKE_WRITE_HWM, block_next(r, FAKE_WRITE_HWM));
  check_stop_during_blocked_call(r);
}

/* waiting-hwm, napping until the clock passes a HWM 10 s ahead: the HWM stays. */
static void test_stop_while_waiting_for_hwm(void **state) {
  (void)state;
  int64_t hwm = wall_ms() + 10000;
  rig *r = rig_new_hwm(TTL_MS, hwm);
  assert_int_equal(idgen_keeper_state_get(r->keeper), IDGEN_KEEPER_WAITING_HWM);
  assert_int_equal(idgen_keeper_stop(r->keeper), 0);
  assert_stopped(r);
  assert_true(fake_lease_hwm(r->fake, 1) == hwm);
  rig_free(r);
}

/* held, a cap being raised. */
static void test_stop_while_cap_raised(void **state) {
  (void)state;
  rig *r = rig_serving();
  wait_calls(r, FAKE_WRITE_HWM, block_next(r, FAKE_WRITE_HWM));
  check_stop_during_blocked_call(r);
}

/* held, a keepalive in flight. */
static void test_stop_while_keepalive(void **state) {
  (void)state;
  rig *r = rig_serving();
  wait_calls(r, FAKE_KEEPALIVE, block_next(r, FAKE_KEEPALIVE));
  check_stop_during_blocked_call(r);
}

/* lost, the fenced write that proves the lease in flight (it would arm after stop). */
static void test_stop_while_lost(void **state) {
  (void)state;
  rig *r = rig_serving();
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){IDGEN_EUNAVAIL, 0, 0});
  wait_state(r, IDGEN_KEEPER_LOST);
  uint64_t n = block_next(r, FAKE_WRITE_HWM);
  fake_lease_set_default(r->fake, FAKE_KEEPALIVE, (fake_call){0, 0, 0});
  wait_calls(r, FAKE_WRITE_HWM, n);
  check_stop_during_blocked_call(r);
}

/* acquiring, winning an ID again after the lease was gone. */
static void test_stop_while_acquiring(void **state) {
  (void)state;
  rig *r = rig_serving();
  uint64_t n = block_next(r, FAKE_ACQUIRE);
  fake_lease_script(r->fake, FAKE_KEEPALIVE, &(fake_call){IDGEN_ELEASE, 0, 0}, 1);
  wait_calls(r, FAKE_ACQUIRE, n);
  check_stop_during_blocked_call(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deadline_reached),
      cmocka_unit_test(test_stalled_keepalive_rearms),
      cmocka_unit_test(test_lost_then_reacquired),
      cmocka_unit_test(test_fenced_write_refused),
      cmocka_unit_test(test_stop_while_first_cap_written),
      cmocka_unit_test(test_stop_while_waiting_for_hwm),
      cmocka_unit_test(test_stop_while_cap_raised),
      cmocka_unit_test(test_stop_while_keepalive),
      cmocka_unit_test(test_stop_while_lost),
      cmocka_unit_test(test_stop_while_acquiring),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
