/* test_server_grace_concurrency.c: server/grace.h, the reload's reclamation: an object
 * is freed only once every online thread has passed a quiescent point since it was
 * retired, offline threads hold nothing back, the room is bounded; then readers on
 * their own threads check every object they load while the main thread publishes and
 * retires 5000 (a freed object read would show as torn: under ASan/TSan, as an
 * error). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "server/grace.h"

#define WORDS 16

typedef struct obj {
  uint64_t w[WORDS]; /* all equal: a torn or reused object is not */
} obj;

static obj *obj_new(uint64_t v) {
  obj *o = malloc(sizeof *o);
  assert_non_null(o);
  for (size_t i = 0; i < WORDS; i++)
    o->w[i] = v;
  return o;
}

static void held_back_until_quiescent(void **state) {
  (void)state;
  idgen__grace *g = NULL;
  assert_int_equal(idgen__grace_new(&g, 2, 3), 0);
  /* Both offline: freed at once. */
  assert_int_equal(idgen__grace_retire(g, obj_new(1)), 0);
  assert_int_equal(idgen__grace_collect(g), 0);
  idgen__grace_online(g, 0);
  assert_int_equal(idgen__grace_retire(g, obj_new(2)), 0);
  assert_int_equal(idgen__grace_collect(g), 1); /* thread 0 may hold it */
  idgen__grace_online(g, 1);                    /* came later: holds nothing older */
  assert_int_equal(idgen__grace_collect(g), 1);
  idgen__grace_quiescent(g, 0);
  assert_int_equal(idgen__grace_collect(g), 0);
  /* The bound: 3 slots; a fourth waits for room. */
  for (uint64_t v = 3; v < 6; v++)
    assert_int_equal(idgen__grace_retire(g, obj_new(v)), 0);
  assert_int_equal(idgen__grace_room(g), 0);
  obj *extra = obj_new(6);
  assert_int_equal(idgen__grace_retire(g, extra), -1);
  assert_int_equal(idgen__grace_wait_room(g, 1, 5), -1); /* nobody passed a point */
  idgen__grace_quiescent(g, 0);
  assert_int_equal(idgen__grace_collect(g), 3); /* thread 1 still may hold them */
  idgen__grace_offline(g, 1);
  assert_int_equal(idgen__grace_wait_room(g, 3, 5), 0);
  assert_int_equal(idgen__grace_retire(g, extra), 0);
  idgen__grace_free(g); /* frees extra */
}

typedef struct shared {
  idgen__grace *g;
  _Atomic(obj *) current;
  _Atomic int stop;
  _Atomic uint64_t bad, reads;
} shared;

typedef struct reader {
  shared *s;
  size_t index;
  pthread_t thread;
} reader;

static void *read_loop(void *arg) {
  reader *r = arg;
  shared *s = r->s;
  idgen__grace_online(s->g, r->index);
  uint64_t reads = 0, bad = 0;
  while (!atomic_load(&s->stop)) {
    for (int turn = 0; turn < 64; turn++) { /* one "loop turn": several requests */
      const obj *o = atomic_load_explicit(&s->current, memory_order_acquire);
      for (size_t i = 1; i < WORDS; i++)
        bad += o->w[i] != o->w[0];
      reads++;
    }
    idgen__grace_quiescent(s->g, r->index);
  }
  idgen__grace_offline(s->g, r->index);
  atomic_fetch_add(&s->bad, bad);
  atomic_fetch_add(&s->reads, reads);
  return NULL;
}

static void readers_never_see_a_freed_object(void **state) {
  (void)state;
  enum { READERS = 2, PUBLISH = 5000, ROOM = 8 };
  shared s = {0};
  assert_int_equal(idgen__grace_new(&s.g, READERS, ROOM), 0);
  atomic_init(&s.current, obj_new(0));
  reader r[READERS];
  for (size_t i = 0; i < READERS; i++) {
    r[i] = (reader){.s = &s, .index = i};
    assert_int_equal(pthread_create(&r[i].thread, NULL, read_loop, &r[i]), 0);
  }
  for (uint64_t v = 1; v <= PUBLISH; v++) {
    assert_int_equal(idgen__grace_wait_room(s.g, 1, 10000), 0);
    obj *old = atomic_exchange_explicit(&s.current, obj_new(v), memory_order_acq_rel);
    assert_int_equal(idgen__grace_retire(s.g, old), 0);
    assert_true(idgen__grace_room(s.g) <= ROOM);
  }
  atomic_store(&s.stop, 1);
  for (size_t i = 0; i < READERS; i++)
    pthread_join(r[i].thread, NULL);
  assert_int_equal(idgen__grace_collect(s.g), 0); /* every reader offline */
  print_message("readers: %llu reads, %d objects published\n",
                (unsigned long long)atomic_load(&s.reads), PUBLISH);
  assert_int_equal(atomic_load(&s.bad), 0);
  free(atomic_load(&s.current));
  idgen__grace_free(s.g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(held_back_until_quiescent),
      cmocka_unit_test(readers_never_see_a_freed_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
