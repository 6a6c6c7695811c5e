/* test_gen.c: the generator on a fake clock: every policy against steps back, sequence
 * exhaustion, batches, the cap and deadline fences, arming, and the counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"

#define MS INT64_C(1000000)
#define T0_MS INT64_C(1780272000000) /* 2026-06-01 */

typedef struct fixture {
  idgen_clock_fake clock;
  idgen_gen *gen;
  idgen_layout layout;
} fixture;

static fixture *make(idgen_policy policy, const char *layout) {
  fixture *f = calloc(1, sizeof *f);
  idgen_clock_fake_init(&f->clock, T0_MS * MS);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &f->clock.base);
  assert_int_equal(idgen_layout_parse(layout, strlen(layout), 0, &c.layout, NULL, 0), 0);
  c.policy = policy;
  c.worker = 5;
  assert_int_equal(idgen_gen_new(&f->gen, &c), 0);
  f->layout = c.layout;
  return f;
}

static void destroy(fixture *f) {
  idgen_gen_free(f->gen);
  free(f);
}

static idgen_parts parts(fixture *f, uint64_t id) {
  idgen_parts p;
  assert_int_equal(idgen_decompose(&f->layout, id, &p), 0);
  return p;
}

static uint64_t next_ok(fixture *f) {
  uint64_t id;
  int rc = idgen_gen_next(f->gen, &id);
  if (rc != 0)
    fail_msg("idgen_gen_next: %s", idgen_err_name(rc));
  return id;
}

static void test_basic(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
  uint64_t a = next_ok(f), b = next_ok(f);
  assert_true(b > a);
  idgen_parts p = parts(f, a);
  assert_int_equal(p.time_ms, T0_MS);
  assert_int_equal(p.worker, 5);
  assert_int_equal(p.seq, 0);
  assert_int_equal(parts(f, b).seq, 1);
  idgen_clock_fake_advance(&f->clock, MS);
  idgen_parts q = parts(f, next_ok(f));
  assert_int_equal(q.time_ms, T0_MS + 1);
  assert_int_equal(q.seq, 0);
  idgen_gen_stats s;
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.issued, 3);
  assert_int_equal(s.last_ms, T0_MS + 1);
  assert_int_equal(idgen_gen_last_ms(f->gen), T0_MS + 1);
  destroy(f);
}

static const int64_t steps_ms[] = {1, 200, 3000, 3600000};

static void test_policy_fail(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof steps_ms / sizeof steps_ms[0]; i++) {
    fixture *f = make(IDGEN_POLICY_FAIL, "snowflake");
    uint64_t before = next_ok(f), id = 0;
    idgen_clock_fake_advance(&f->clock, -steps_ms[i] * MS);
    assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ECLOCKBACK);
    assert_int_equal(id, 0);                               /* output untouched */
    idgen_clock_fake_advance(&f->clock, steps_ms[i] * MS); /* back to the same ms */
    uint64_t after = next_ok(f);
    assert_true(after > before);
    idgen_gen_stats s;
    idgen_gen_stats_get(f->gen, &s);
    assert_int_equal(s.clock_back_failed, 1);
    destroy(f);
  }
}

static void test_policy_wait(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof steps_ms / sizeof steps_ms[0]; i++) {
    fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
    uint64_t before = next_ok(f), id;
    idgen_clock_fake_advance(&f->clock, -steps_ms[i] * MS);
    int rc = idgen_gen_next(f->gen, &id);
    idgen_gen_stats s;
    idgen_gen_stats_get(f->gen, &s);
    if (steps_ms[i] <= 500) { /* within the broken threshold: waits it out */
      assert_int_equal(rc, 0);
      assert_true(id > before);
      assert_true(parts(f, id).time_ms >= T0_MS);
      assert_int_equal(s.clock_back_waited, 1);
      /* the fake clock moved on by the wait */
      assert_true(idgen_clock_now_ns(&f->clock.base) >= T0_MS * MS);
    } else {
      assert_int_equal(rc, IDGEN_ECLOCKBACK);
      assert_int_equal(s.clock_back_failed, 1);
    }
    destroy(f);
  }
}

static void test_policy_logical(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof steps_ms / sizeof steps_ms[0]; i++) {
    fixture *f = make(IDGEN_POLICY_LOGICAL, "snowflake");
    uint64_t prev = next_ok(f);
    idgen_clock_fake_advance(&f->clock, -steps_ms[i] * MS);
    /* keeps counting from the last ms, past the 4096 of that ms, never blocking */
    for (int n = 0; n < 5000; n++) {
      uint64_t id = next_ok(f);
      assert_true(id > prev);
      prev = id;
    }
    assert_int_equal(parts(f, prev).time_ms, T0_MS + 1);
    idgen_gen_stats s;
    idgen_gen_stats_get(f->gen, &s);
    assert_true(s.clock_back_logical >= 1);
    assert_int_equal(s.clock_back_failed, 0);
    destroy(f);
  }
}

static void test_sequence_exhaustion(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
  uint64_t prev = 0;
  for (int n = 0; n < 4096; n++) {
    uint64_t id = next_ok(f);
    assert_true(id > prev || n == 0);
    assert_int_equal(parts(f, id).time_ms, T0_MS);
    prev = id;
  }
  uint64_t id = next_ok(f); /* spins: the fake clock advances to the next ms */
  idgen_parts p = parts(f, id);
  assert_int_equal(p.time_ms, T0_MS + 1);
  assert_int_equal(p.seq, 0);
  idgen_gen_stats s;
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.seq_waits, 1);
  assert_int_equal(s.issued, 4097);
  destroy(f);
}

static void test_batch_spans_units(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
  next_ok(f);
  enum { N = 10000 };
  uint64_t *ids = calloc(N, sizeof *ids);
  assert_int_equal(idgen_gen_next_batch(f->gen, ids, N), N);
  for (int i = 1; i < N; i++)
    assert_true(ids[i] > ids[i - 1]);
  assert_int_equal(parts(f, ids[0]).seq, 1);
  assert_int_equal(parts(f, ids[4094]).time_ms, T0_MS);
  assert_int_equal(parts(f, ids[4095]).time_ms, T0_MS + 1);
  assert_int_equal(parts(f, ids[N - 1]).time_ms, T0_MS + 2);
  idgen_gen_stats s;
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.issued, N + 1);
  assert_int_equal(idgen_gen_next_batch(f->gen, ids, 0), 0);
  free(ids);
  destroy(f);
}

static void test_cap(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
  assert_int_equal(idgen_gen_arm(f->gen, 7, 0, T0_MS + 2, IDGEN_NO_DEADLINE), 0);
  assert_int_equal(parts(f, next_ok(f)).worker, 7);
  idgen_clock_fake_advance(&f->clock, 2 * MS);
  assert_int_equal(parts(f, next_ok(f)).time_ms, T0_MS + 2); /* at the cap: fine */
  idgen_clock_fake_advance(&f->clock, MS);
  uint64_t id = 0;
  assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ECAP); /* waited, then refused */
  assert_int_equal(id, 0);
  /* sticky: even with the clock back under the cap */
  idgen_clock_fake_set(&f->clock, (T0_MS + 2) * MS);
  assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ECAP);
  idgen_gen_set_cap(f->gen, T0_MS + 1000);
  assert_true(parts(f, next_ok(f)).time_ms <= T0_MS + 1000);
  idgen_gen_stats s;
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.refused_cap, 2);
  assert_true(s.cap_waits >= 1);
  assert_int_equal(s.cap_ms, T0_MS + 1000);
  idgen_gen_set_cap(f->gen, T0_MS); /* never lowered */
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.cap_ms, T0_MS + 1000);
  destroy(f);
}

static void test_cap_raised_while_waiting(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_LOGICAL, "snowflake");
  assert_int_equal(idgen_gen_arm(f->gen, 1, 0, T0_MS, IDGEN_NO_DEADLINE), 0);
  uint64_t ids[4096];
  assert_int_equal(idgen_gen_next_batch(f->gen, ids, 4096), 4096);
  /* LOGICAL would move on to T0+1 ms, above the cap: refused, batch returns nothing */
  uint64_t id;
  assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ECAP);
  /* the wait moved the fake clock on by cap_wait_ns (50 ms) */
  idgen_gen_set_cap(f->gen, T0_MS + 1000);
  idgen_parts p = parts(f, next_ok(f));
  assert_true(p.time_ms > T0_MS && p.time_ms <= T0_MS + 1000);
  destroy(f);
}

static void test_deadline(void **state) {
  (void)state;
  fixture *f = make(IDGEN_POLICY_WAIT, "snowflake");
  int64_t now = idgen_gen_now_ns(f->gen);
  assert_int_equal(idgen_gen_arm(f->gen, 2, 0, IDGEN_NO_CAP, now + 5 * MS), 0);
  next_ok(f);
  idgen_gen_set_deadline(f->gen, now + 10 * MS); /* a renewal in time */
  idgen_clock_fake_advance(&f->clock, 7 * MS);
  next_ok(f);
  idgen_clock_fake_advance(&f->clock, 3 * MS);
  uint64_t id;
  assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ELEASE);
  /* sticky: a late renewal (cap raised, deadline moved) does not bring it back, only
   * arming does */
  idgen_gen_set_cap(f->gen, T0_MS + 5000);
  idgen_gen_set_deadline(f->gen, now + 1000 * MS);
  assert_int_equal(idgen_gen_next(f->gen, &id), IDGEN_ELEASE);
  assert_int_equal(idgen_gen_next_batch(f->gen, &id, 1), IDGEN_ELEASE);
  idgen_gen_stats held;
  idgen_gen_stats_get(f->gen, &held);
  assert_int_equal(held.refusal, IDGEN_ELEASE);
  assert_int_equal(held.armed, 0);
  assert_int_equal(idgen_gen_arm(f->gen, 3, 0, IDGEN_NO_CAP, now + 1000 * MS), 0);
  assert_int_equal(parts(f, next_ok(f)).worker, 3);
  idgen_gen_stats s;
  idgen_gen_stats_get(f->gen, &s);
  assert_int_equal(s.refused_lease, 3);
  destroy(f);
}

static void test_arming(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock.base);
  c.armed = 0;
  c.policy = IDGEN_POLICY_LOGICAL;
  idgen_gen *gen;
  assert_int_equal(idgen_gen_new(&gen, &c), 0);
  uint64_t id;
  assert_int_equal(idgen_gen_next(gen, &id), IDGEN_ENOTARMED);
  assert_int_equal(idgen_gen_arm(gen, 1024, 0, IDGEN_NO_CAP, IDGEN_NO_DEADLINE),
                   IDGEN_ERANGE);
  /* a floor (the HWM a new holder read) 2 s ahead of the clock */
  assert_int_equal(idgen_gen_arm(gen, 9, T0_MS + 2000, IDGEN_NO_CAP, IDGEN_NO_DEADLINE), 0);
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  idgen_parts p;
  idgen_decompose(&c.layout, id, &p);
  assert_true(p.time_ms > T0_MS + 2000);
  assert_int_equal(p.worker, 9);
  idgen_gen_disarm(gen);
  idgen_gen_set_cap(gen, T0_MS + 5000); /* a cap raise does not re-arm */
  assert_int_equal(idgen_gen_next(gen, &id), IDGEN_ENOTARMED);
  idgen_gen_free(gen);
  idgen_gen_free(NULL);

  /* WAIT cannot wait 2 s out: a floor far ahead fails until the clock passes it */
  c.policy = IDGEN_POLICY_WAIT;
  c.armed = 1;
  c.floor_ms = T0_MS + 2000;
  assert_int_equal(idgen_gen_new(&gen, &c), 0);
  assert_int_equal(idgen_gen_next(gen, &id), IDGEN_ECLOCKBACK);
  idgen_clock_fake_set(&clock, (T0_MS + 2001) * MS);
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  idgen_decompose(&c.layout, id, &p);
  assert_int_equal(p.time_ms, T0_MS + 2001);
  idgen_gen_free(gen);
}

/* A fake clock that runs an action from inside one now_ns read: the generator reads the
 * clock between loading its armed state (worker, cap, refusal) and its CAS, so the
 * action lands in the middle of a reservation, as a lease keeper's re-arm can. */
typedef struct rearming_clock {
  idgen_clock base;
  idgen_clock_fake fake;
  idgen_gen *gen;
  void (*action)(idgen_gen *gen); /* runs once, at the next read */
} rearming_clock;

static int64_t rearming_now(idgen_clock *base) {
  rearming_clock *c = (rearming_clock *)base;
  int64_t now = idgen_clock_now_ns(&c->fake.base);
  void (*action)(idgen_gen *) = c->action;
  c->action = NULL;
  if (action)
    action(c->gen);
  return now;
}

static void rearming_pass(idgen_clock *base, int64_t ns) {
  idgen_clock_fake_advance(&((rearming_clock *)base)->fake, ns > 0 ? ns : 1);
}

static const idgen_clock_class rearming_class = {rearming_now, rearming_pass,
                                                 rearming_pass};

static void to_worker_9(idgen_gen *gen) {
  idgen_gen_arm(gen, 9, 0, IDGEN_NO_CAP, IDGEN_NO_DEADLINE);
}
static void to_floor_ahead(idgen_gen *gen) { /* same worker, a new holder's floor */
  idgen_gen_arm(gen, 5, T0_MS + 10, IDGEN_NO_CAP, IDGEN_NO_DEADLINE);
}
static void to_cap_behind(idgen_gen *gen) { /* same worker, a cap below the clock */
  idgen_gen_arm(gen, 5, 0, T0_MS - 1, IDGEN_NO_DEADLINE);
}
static void to_disarmed(idgen_gen *gen) {
  idgen_gen_disarm(gen);
}

/* A reservation made across a re-arm never counts: the call retries under the new
 * arming (its worker, floor, cap) or refuses, never issues under the old one. */
static void test_rearm_inside_reservation(void **state) {
  (void)state;
  static const struct {
    void (*action)(idgen_gen *);
    int batch;
  } cases[] = {{to_worker_9, 0},   {to_worker_9, 1}, {to_floor_ahead, 0},
               {to_cap_behind, 0}, {to_disarmed, 0}, {to_disarmed, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rearming_clock clock = {.base = {&rearming_class}};
    idgen_clock_fake_init(&clock.fake, T0_MS * MS);
    idgen_gen_config c;
    idgen_gen_config_init(&c, &clock.base);
    c.worker = 5;
    assert_int_equal(idgen_gen_new(&clock.gen, &c), 0);
    clock.action = cases[i].action;
    uint64_t ids[8] = {0};
    int64_t rc = cases[i].batch ? idgen_gen_next_batch(clock.gen, ids, 8)
                                : idgen_gen_next(clock.gen, ids);
    assert_null(clock.action); /* the re-arm did happen inside the call */
    idgen_parts p = {0};
    if (rc >= 0)
      assert_int_equal(idgen_decompose(&c.layout, ids[0], &p), 0);
    if (cases[i].action == to_worker_9) {
      assert_true(rc >= 0);
      for (int64_t k = 0; k < (cases[i].batch ? rc : 1); k++) {
        assert_int_equal(idgen_decompose(&c.layout, ids[k], &p), 0);
        assert_int_equal(p.worker, 9);
      }
    } else if (cases[i].action == to_floor_ahead) {
      assert_int_equal(rc, 0);
      assert_true(p.time_ms > T0_MS + 10);
    } else if (cases[i].action == to_cap_behind) {
      assert_int_equal(rc, IDGEN_ECAP);
    } else {
      assert_int_equal(rc, IDGEN_ENOTARMED);
    }
    idgen_gen_free(clock.gen);
  }
}

static void test_seq_reset_threshold(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock.base);
  c.seq_reset_threshold = 3;
  idgen_gen *gen;
  assert_int_equal(idgen_gen_new(&gen, &c), 0);
  uint64_t expected[] = {0, 1, 2, 3, 0, 1};
  for (size_t i = 0; i < 6; i++) {
    uint64_t id;
    assert_int_equal(idgen_gen_next(gen, &id), 0);
    idgen_parts p;
    idgen_decompose(&c.layout, id, &p);
    assert_int_equal(p.seq, expected[i]);
    assert_int_equal(p.time_ms, T0_MS + (int64_t)i);
    idgen_clock_fake_advance(&clock, MS);
  }
  idgen_gen_stats s;
  idgen_gen_stats_get(gen, &s);
  assert_int_equal(s.issued, 6);
  idgen_gen_free(gen);
}

static void test_unit_and_range(void **state) {
  (void)state;
  /* Sonyflake: 10 ms units, 256 per unit */
  fixture *f = make(IDGEN_POLICY_WAIT, "sonyflake");
  idgen_parts p = parts(f, next_ok(f));
  assert_int_equal(p.time_ms, T0_MS);
  assert_int_equal(p.worker, 5);
  uint64_t ids[300];
  assert_int_equal(idgen_gen_next_batch(f->gen, ids, 300), 300);
  assert_int_equal(parts(f, ids[299]).time_ms, T0_MS + 10);
  destroy(f);

  idgen_clock_fake clock;
  idgen_gen_config c;
  idgen_gen *gen;
  /* time bits exhausted: refuses to start */
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config_init(&c, &clock.base);
  const char *tiny = "time:20@1s,worker:4,seq:8,epoch:2025-01-01";
  assert_int_equal(idgen_layout_parse(tiny, strlen(tiny), 0, &c.layout, NULL, 0), 0);
  assert_int_equal(idgen_gen_new(&gen, &c), IDGEN_ETIMEEND);
  /* before the epoch */
  idgen_clock_fake_init(&clock, INT64_C(1700000000000) * MS);
  idgen_gen_config_init(&c, &clock.base);
  assert_int_equal(idgen_gen_new(&gen, &c), IDGEN_EBEFOREEPOCH);
  /* bad config */
  c.clock = NULL;
  assert_int_equal(idgen_gen_new(&gen, &c), IDGEN_EINVAL);
  idgen_gen_config_init(&c, &clock.base);
  idgen_clock_fake_init(&clock, T0_MS * MS);
  c.worker = 1024;
  assert_int_equal(idgen_gen_new(&gen, &c), IDGEN_ERANGE);
  c.worker = 0;
  c.layout.fields[0].bits = 0;
  assert_int_equal(idgen_gen_new(&gen, &c), IDGEN_ELAYOUT);
}

/* A generator in caller memory: the checks on that memory, one that fails leaves it
 * untouched, and one made there issues as idgen_gen_new's and is not freed. */
static void test_init_in_place(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock.base);
  c.worker = 9;
  size_t size = idgen_gen_size();
  assert_true(size >= 64 && size % IDGEN_GEN_ALIGN == 0);
  unsigned char *mem = aligned_alloc(IDGEN_GEN_ALIGN, size + IDGEN_GEN_ALIGN);
  assert_non_null(mem);
  memset(mem, 0xa5, size + IDGEN_GEN_ALIGN);
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_init(&gen, mem + 8, size, &c), IDGEN_EINVAL); /* misaligned */
  assert_int_equal(idgen_gen_init(&gen, NULL, size, &c), IDGEN_EINVAL);
  assert_int_equal(idgen_gen_init(&gen, mem, size - 1, &c), IDGEN_EBUFSIZE);
  c.worker = 1024;
  assert_int_equal(idgen_gen_init(&gen, mem, size, &c), IDGEN_ERANGE);
  c.worker = 9;
  assert_null(gen);
  for (size_t i = 0; i < size + IDGEN_GEN_ALIGN; i++)
    assert_int_equal(mem[i], 0xa5);

  assert_int_equal(idgen_gen_init(&gen, mem, size, &c), 0);
  assert_ptr_equal(gen, mem);
  uint64_t a, b;
  assert_int_equal(idgen_gen_next(gen, &a), 0);
  assert_int_equal(idgen_gen_next(gen, &b), 0);
  assert_true(b > a);
  idgen_parts p;
  assert_int_equal(idgen_decompose(idgen_gen_layout(gen), b, &p), 0);
  assert_int_equal(p.worker, 9);
  assert_int_equal(p.seq, 1);
  idgen_gen_free(gen); /* the caller's memory: left alone (ASan would see a bad free) */
  assert_int_equal(idgen_gen_next(gen, &a), 0);
  assert_true(a > b);
  free(mem);
}

static void test_policy_names(void **state) {
  (void)state;
  idgen_policy p;
  assert_int_equal(idgen_policy_parse("logical", &p), 0);
  assert_int_equal(p, IDGEN_POLICY_LOGICAL);
  assert_string_equal(idgen_policy_name(IDGEN_POLICY_WAIT), "wait");
  assert_int_equal(idgen_policy_parse("Wait", &p), IDGEN_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic),
      cmocka_unit_test(test_policy_fail),
      cmocka_unit_test(test_policy_wait),
      cmocka_unit_test(test_policy_logical),
      cmocka_unit_test(test_sequence_exhaustion),
      cmocka_unit_test(test_batch_spans_units),
      cmocka_unit_test(test_cap),
      cmocka_unit_test(test_cap_raised_while_waiting),
      cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_arming),
      cmocka_unit_test(test_rearm_inside_reservation),
      cmocka_unit_test(test_seq_reset_threshold),
      cmocka_unit_test(test_unit_and_range),
      cmocka_unit_test(test_init_in_place),
      cmocka_unit_test(test_policy_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
