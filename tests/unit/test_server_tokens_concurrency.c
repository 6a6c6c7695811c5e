/* test_server_tokens_concurrency.c: token sets replaced under readers. Three serving
 * threads authenticate, renew RESP-style grants kept across "requests" and read what
 * the grants point to, while the main thread reloads the tokens 300 times and frees the
 * replaced sets: no thread ever reads a freed set (ASan, TSan: the concurrency label),
 * and at most threads + 1 sets are alive at any time. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server/tokens.h"
#include "server_fixture.h"

#define READERS 3

static _Atomic int stop;
static _Atomic uint64_t renew_failed, started, rounds;

static void *reader(void *arg) {
  idgen__tctx t;
  if (idgen__tctx_init(&t, fixture_svc, (size_t)(uintptr_t)arg) < 0)
    return NULL;
  idgen__grant kept;
  if (!idgen__svc_auth(fixture_svc, &t.hold, FIXTURE_TOKEN, strlen(FIXTURE_TOKEN), &kept))
    return NULL;
  atomic_fetch_add(&started, 1);
  while (!atomic_load(&stop)) {
    atomic_fetch_add(&rounds, 1);
    /* an HTTP request: a fresh grant; a RESP command: the kept one renewed */
    idgen__grant g;
    if (!idgen__svc_auth(fixture_svc, &t.hold, FIXTURE_TOKEN, strlen(FIXTURE_TOKEN), &g) ||
        strcmp(idgen__svc_grant_name(&g), IDGEN__AUTH_TOKEN_NAME) != 0)
      atomic_fetch_add(&renew_failed, 1);
    if (!idgen__svc_grant_renew(fixture_svc, &t.hold, &kept) ||
        !idgen__svc_grant_covers(&kept, idgen__svc_default(fixture_svc)) ||
        strcmp(idgen__svc_grant_name(&kept), IDGEN__AUTH_TOKEN_NAME) != 0)
      atomic_fetch_add(&renew_failed, 1);
  }
  idgen__tctx_free(&t);
  return NULL;
}

static void test_reloads_under_readers(void **state) {
  (void)state;
  pthread_t th[READERS];
  for (size_t i = 0; i < READERS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(i + 1)), 0);
  uint64_t most = 0;
  while (atomic_load(&started) < READERS)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  for (int i = 0; i < 300; i++) {
    nanosleep(&(struct timespec){0, 1000000}, NULL); /* 1 ms: the readers go on */
    idgen__svc_tokens_reload(fixture_svc, NULL);
    if (i % 10 == 0)
      idgen__svc_watch(fixture_svc);
    uint64_t alive = idgen__svc_token_sets_alive(fixture_svc);
    most = alive > most ? alive : most;
  }
  atomic_store(&stop, 1);
  for (size_t i = 0; i < READERS; i++)
    pthread_join(th[i], NULL);
  idgen__svc_watch(fixture_svc);
  printf("%llu reader rounds; most sets alive at once: %llu (threads + 1 = %d)\n",
         (unsigned long long)atomic_load(&rounds), (unsigned long long)most, READERS + 2);
  assert_int_equal(atomic_load(&renew_failed), 0);
  assert_true(most <= READERS + 2); /* the readers and fixture_t, plus the one in force */
  assert_int_equal(idgen__svc_token_sets_alive(fixture_svc), 1);
}

static int setup(void **state) {
  (void)state;
  fixture_shards = READERS + 1;
  return fixture_start(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_reloads_under_readers)};
  return cmocka_run_group_tests(tests, setup, fixture_down);
}
