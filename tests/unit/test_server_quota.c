/* test_server_quota.c: the tokens' quotas: GCRA's arithmetic on a clock the test sets
 * (rate, burst, retry, over_burst, the overflow edges, rescaling, many threads on one
 * bucket), then the service: HTTP 429 + Retry-After and 400 over_burst with no ID made,
 * a reload from a new configuration keeping each bucket, and replaced token sets freed
 * once no thread holds them. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server/quota.h"
#include "server/resp.h"
#include "server/tokens.h"
#include "server_fixture.h"

#define S UINT64_C(1000000000)

static void test_init(void **state) {
  (void)state;
  idgen__quota q;
  assert_int_equal(idgen__quota_init(&q, 0, 0), 0);
  assert_int_equal(q.interval_ns, 0);
  assert_int_equal(idgen__quota_init(&q, 10, 0), 0);
  assert_int_equal(q.burst, 10); /* the default: one second of the rate */
  assert_int_equal(q.interval_ns, 100000000);
  assert_int_equal(q.tolerance_ns, S);
  assert_int_equal(idgen__quota_init(&q, IDGEN__QUOTA_RATE_MAX, IDGEN__QUOTA_BURST_MAX), 0);
  assert_int_equal(q.interval_ns, 1000);
  assert_int_equal(idgen__quota_init(&q, 1, IDGEN__QUOTA_BURST_MAX), 0);
  assert_int_equal(q.tolerance_ns, UINT64_C(1000000000000000000));
  assert_int_equal(idgen__quota_init(&q, IDGEN__QUOTA_RATE_MAX + 1, 1), -1);
  assert_int_equal(idgen__quota_init(&q, 1, IDGEN__QUOTA_BURST_MAX + 1), -1);
}

static void test_rate_and_burst(void **state) {
  (void)state;
  idgen__quota q;
  idgen__quota_init(&q, 10, 5); /* 100 ms an ID, 5 at once */
  _Atomic uint64_t tat = 0;
  uint64_t now = 1000 * S, retry = 0;
  for (int i = 0; i < 5; i++)
    assert_int_equal(idgen__quota_take(&q, &tat, now, 1, &retry), IDGEN__QUOTA_OK);
  assert_int_equal(idgen__quota_take(&q, &tat, now, 1, &retry), IDGEN__QUOTA_OVER);
  assert_int_equal(retry, 100000000); /* one ID's time */
  assert_int_equal(idgen__quota_take(&q, &tat, now, 3, &retry), IDGEN__QUOTA_OVER);
  assert_int_equal(retry, 300000000);
  assert_int_equal(atomic_load(&tat), now + S / 2); /* a refusal charges nothing */
  /* 99 ms later: still none; at 100 ms one. */
  assert_int_equal(idgen__quota_take(&q, &tat, now + 99999999, 1, &retry),
                   IDGEN__QUOTA_OVER);
  assert_int_equal(retry, 1);
  assert_int_equal(idgen__quota_take(&q, &tat, now + S / 10, 1, &retry), IDGEN__QUOTA_OK);
  /* Over the burst: never, even from a full bucket. */
  assert_int_equal(idgen__quota_take(&q, &tat, now + 100 * S, 6, &retry),
                   IDGEN__QUOTA_OVER_BURST);
  assert_int_equal(idgen__quota_take(&q, &tat, now + 100 * S, 5, &retry), IDGEN__QUOTA_OK);
  /* Idle time refills up to the burst, not beyond. */
  assert_int_equal(idgen__quota_take(&q, &tat, now + 1000 * S, 5, &retry), IDGEN__QUOTA_OK);
  assert_int_equal(idgen__quota_take(&q, &tat, now + 1000 * S, 1, &retry),
                   IDGEN__QUOTA_OVER);
  /* No quota: anything passes, the TAT untouched. */
  idgen__quota none;
  idgen__quota_init(&none, 0, 0);
  _Atomic uint64_t untouched = 7;
  assert_int_equal(idgen__quota_take(&none, &untouched, now, 1000000, &retry),
                   IDGEN__QUOTA_OK);
  assert_int_equal(atomic_load(&untouched), 7);
  /* Over a long run the rate holds: 10/s for 100 s of 1 ms steps, 5 first. */
  _Atomic uint64_t run = 0;
  uint64_t passed = 0;
  for (uint64_t t = 0; t < 100000; t++)
    passed += idgen__quota_take(&q, &run, now + t * 1000000, 1, &retry) == IDGEN__QUOTA_OK;
  assert_true(passed >= 1000 && passed <= 1005);
}

static void test_overflow_edges(void **state) {
  (void)state;
  idgen__quota q;
  /* The largest tolerance (1e18 ns) at the largest now: the TAT below 2^64. */
  idgen__quota_init(&q, 1, IDGEN__QUOTA_BURST_MAX);
  _Atomic uint64_t tat = 0;
  uint64_t retry = 0, now = IDGEN__QUOTA_NOW_MAX;
  assert_int_equal(idgen__quota_take(&q, &tat, now, IDGEN__QUOTA_BURST_MAX, &retry),
                   IDGEN__QUOTA_OK);
  assert_int_equal(atomic_load(&tat), now + q.tolerance_ns);
  assert_int_equal(idgen__quota_take(&q, &tat, now, 1, &retry), IDGEN__QUOTA_OVER);
  assert_int_equal(retry, S);
  /* A later now counts as NOW_MAX: nothing wraps. */
  assert_int_equal(idgen__quota_take(&q, &tat, UINT64_MAX, 1, &retry), IDGEN__QUOTA_OVER);
  assert_int_equal(retry, S);
  /* A count far over the burst (a RANGE of 2^30, 2^40) is over_burst before any product. */
  assert_int_equal(idgen__quota_take(&q, &tat, now, UINT64_C(1) << 40, &retry),
                   IDGEN__QUOTA_OVER_BURST);
  assert_int_equal(idgen__quota_take(&q, &tat, now, UINT64_MAX, &retry),
                   IDGEN__QUOTA_OVER_BURST);
  /* The fastest rate, the most IDs at once. */
  idgen__quota_init(&q, IDGEN__QUOTA_RATE_MAX, IDGEN__QUOTA_BURST_MAX);
  atomic_store(&tat, 0);
  assert_int_equal(idgen__quota_take(&q, &tat, 0, IDGEN__QUOTA_BURST_MAX, &retry),
                   IDGEN__QUOTA_OK);
  assert_int_equal(atomic_load(&tat), UINT64_C(1000000000000));
  /* Retry-After rounds up to whole seconds, 1 at least. */
  assert_int_equal(idgen__quota_retry_after_s(0), 1);
  assert_int_equal(idgen__quota_retry_after_s(1), 1);
  assert_int_equal(idgen__quota_retry_after_s(S), 1);
  assert_int_equal(idgen__quota_retry_after_s(S + 1), 2);
  assert_int_equal(idgen__quota_retry_after_s(UINT64_MAX), UINT64_MAX / S + 1);
}

__extension__ typedef unsigned __int128 u128; /* the oracle only; quota.c has none */

static void test_mul_div(void **state) {
  (void)state;
  assert_int_equal(idgen__mul_div(3, 7, 4), 5);
  assert_int_equal(idgen__mul_div(0, UINT64_MAX, 1), 0);
  assert_int_equal(idgen__mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
  assert_int_equal(idgen__mul_div(UINT64_MAX - 1, UINT64_MAX, UINT64_MAX), UINT64_MAX - 1);
  uint64_t x = 88172645463325252u; /* xorshift64 */
  for (int i = 0; i < 100000; i++) {
    uint64_t v[3];
    for (int k = 0; k < 3; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      v[k] = x >> (i % 64);
    }
    uint64_t c = v[2] | 1, a = v[0] % c, b = v[1];
    uint64_t want = (uint64_t)((u128)a * b / c);
    if (idgen__mul_div(a, b, c) != want)
      fail_msg("mul_div(%llu, %llu, %llu) = %llu, want %llu", (unsigned long long)a,
               (unsigned long long)b, (unsigned long long)c,
               (unsigned long long)idgen__mul_div(a, b, c), (unsigned long long)want);
  }
}

static void test_rescale(void **state) {
  (void)state;
  idgen__quota a, b, none;
  idgen__quota_init(&a, 10, 10); /* tolerance 1 s */
  idgen__quota_init(&b, 10, 20); /* 2 s */
  idgen__quota_init(&none, 0, 0);
  uint64_t now = 50 * S;
  /* Half used stays half used. */
  assert_int_equal(idgen__quota_rescale(now + S / 2, now, &a, &b), now + S);
  assert_int_equal(idgen__quota_rescale(now + S, now, &b, &a), now + S / 2);
  /* Empty stays empty, full stays full (an idle TAT in the past is full). */
  assert_int_equal(idgen__quota_rescale(now + S, now, &a, &b), now + 2 * S);
  assert_int_equal(idgen__quota_rescale(now - 7 * S, now, &a, &b), now);
  /* A quota gained starts full. */
  assert_int_equal(idgen__quota_rescale(now + 123, now, &none, &a), now);
  /* The largest tolerances, both ways, at the largest now. */
  idgen__quota big, small;
  idgen__quota_init(&big, 1, IDGEN__QUOTA_BURST_MAX);
  idgen__quota_init(&small, IDGEN__QUOTA_RATE_MAX, 1);
  uint64_t top = IDGEN__QUOTA_NOW_MAX;
  assert_int_equal(idgen__quota_rescale(top + big.tolerance_ns, top, &big, &small),
                   top + small.tolerance_ns);
  assert_int_equal(idgen__quota_rescale(top + small.tolerance_ns, top, &small, &big),
                   top + big.tolerance_ns);
  /* After a rescale the new burst applies: 20 - 10 left. */
  _Atomic uint64_t tat = idgen__quota_rescale(now + S / 2, now, &a, &b);
  uint64_t retry;
  assert_int_equal(idgen__quota_take(&b, &tat, now, 10, &retry), IDGEN__QUOTA_OK);
  assert_int_equal(idgen__quota_take(&b, &tat, now, 1, &retry), IDGEN__QUOTA_OVER);
}

/* Threads on one bucket at a standing clock: exactly the burst passes. */
static idgen__quota shared_q;
static _Atomic uint64_t shared_tat;
static _Atomic uint64_t shared_passed;

static void *hammer(void *arg) {
  (void)arg;
  uint64_t retry, mine = 0;
  for (int i = 0; i < 20000; i++)
    mine += idgen__quota_take(&shared_q, &shared_tat, 5 * S, 1, &retry) == IDGEN__QUOTA_OK;
  atomic_fetch_add(&shared_passed, mine);
  return NULL;
}

static void test_concurrent(void **state) {
  (void)state;
  idgen__quota_init(&shared_q, 1000, 5000);
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&th[i], NULL, hammer, NULL), 0);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(atomic_load(&shared_passed), 5000);
}

/* ---- The service ---------------------------------------------------------------- */

#define TOKEN_F "team-f-token-0123456789"
#define TOKEN_B "team-b-token-0123456789"
#define TOKEN_N "team-n-token-0123456789"
static char tokdir[] = "/tmp/idgen-quota-XXXXXX";
static char yaml[1024];

static void write_token(const char *name, const char *value) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", tokdir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(value, f);
    fclose(f);
  }
}

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(tokdir))
    return -1;
  write_token("f", TOKEN_F);
  write_token("b", TOKEN_B);
  write_token("n", TOKEN_N);
  snprintf(yaml, sizeof yaml,
           "tokens:\n"
           "  team-f: {file: %s/f, rate: 1, burst: 10}\n"
           "  team-b: {file: %s/b}\n",
           tokdir, tokdir);
  return fixture_start(yaml);
}

static int teardown(void **state) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tokdir);
  if (system(cmd) != 0)
    return -1;
  return fixture_down(state);
}

static int get(const char *token, const char *target, idgen__http_res *res) {
  char auth[128];
  snprintf(auth, sizeof auth, "Bearer %s", token);
  const char *q = strchr(target, '?');
  idgen__http_req req = {.method = "GET",
                         .method_len = 3,
                         .path = target,
                         .path_len = q ? (size_t)(q - target) : strlen(target),
                         .query = q ? q + 1 : NULL,
                         .query_len = q ? strlen(q + 1) : 0,
                         .authorization = auth,
                         .authorization_len = strlen(auth)};
  idgen__api_http(&fixture_t, &req, res);
  static char body[1 << 20];
  size_t n = res->body_len < sizeof body - 1 ? res->body_len : sizeof body - 1;
  memcpy(body, res->body, n);
  body[n] = 0;
  res->body = body;
  return res->status;
}

/* idgen_token_sets_alive as /metrics shows it. */
static long alive_metric(void) {
  idgen__http_res res;
  get(TOKEN_F, "/metrics", &res);
  const char *at = strstr(res.body, "\nidgen_token_sets_alive ");
  return at ? strtol(at + 24, NULL, 10) : -1;
}

static uint64_t issued_now(void) {
  idgen__generator *g = idgen__svc_default(fixture_svc);
  return g->vtable->issued(g);
}

static void test_http_quota(void **state) {
  (void)state;
  idgen__http_res res;
  uint64_t before = issued_now();
  /* team-f: 10 at once, then 429 with Retry-After, and no ID made. */
  assert_int_equal(get(TOKEN_F, "/v1/ids?count=11", &res), 400);
  assert_non_null(strstr(res.body, "\"over_burst\""));
  assert_int_equal(issued_now(), before);
  assert_int_equal(get(TOKEN_F, "/v1/ids?count=10", &res), 200);
  assert_int_equal(issued_now(), before + 10);
  assert_int_equal(get(TOKEN_F, "/v1/ids?count=3", &res), 429);
  assert_non_null(strstr(res.body, "\"over_quota\""));
  assert_true(res.retry_after_s >= 2 && res.retry_after_s <= 3); /* 3 IDs at 1/s */
  assert_int_equal(get(TOKEN_F, "/v1/id", &res), 429);
  assert_int_equal(get(TOKEN_F, "/v1/uuid7", &res), 429);
  assert_int_equal(issued_now(), before + 10);
  /* team-b has no quota. */
  for (int i = 0; i < 50; i++)
    assert_int_equal(get(TOKEN_B, "/v1/ids?count=100", &res), 200);
  /* Metrics by token, and the status series. */
  assert_int_equal(get(TOKEN_B, "/metrics", &res), 200);
  assert_non_null(strstr(res.body, "idgen_token_quota_total{token=\"team-f\"} 4\n"));
  assert_non_null(strstr(res.body, "idgen_token_ids_total{token=\"team-f\"} 10\n"));
  assert_non_null(strstr(res.body, "idgen_token_ids_total{token=\"team-b\"} 5000\n"));
  assert_non_null(strstr(res.body, "idgen_token_requests_total{token=\"team-f\"} 5\n"));
  assert_non_null(
      strstr(res.body, "idgen_http_requests_total{route=\"/v1/ids\",status=\"429\"} 1\n"));
  assert_non_null(
      strstr(res.body, "idgen_http_requests_total{route=\"/v1/ids\",status=\"400\"} 1\n"));
  assert_null(strstr(res.body, TOKEN_F));
}

static void test_resp_quota(void **state) {
  (void)state;
  idgen__resp_session s;
  idgen__resp_session_init(&s, &fixture_t);
  assert_int_equal(
      idgen__svc_auth(fixture_svc, &fixture_t.hold, TOKEN_F, strlen(TOKEN_F), &s.grant), 1);
  s.authed = 1;
  idgen__resp_cmd c = {.argc = 1, .argv = {"ID"}, .argl = {2}};
  idgen__buf out = {0};
  int error, close;
  uint64_t before = issued_now();
  idgen__resp_run(&s, &c, &out, &error, &close);
  assert_int_equal(error, 1);
  assert_memory_equal(out.data, "-BUSY token 'team-f'", 20);
  assert_int_equal(issued_now(), before);
  idgen__buf_reset(&out);
  idgen__resp_cmd big = {.argc = 2, .argv = {"IDS", "11"}, .argl = {3, 2}};
  idgen__resp_run(&s, &big, &out, &error, &close);
  assert_memory_equal(out.data, "-ERR over_burst", 15);
  idgen__buf_free(&out);
}

static idgen__serve_config with_tokens(idgen__token_spec *specs, size_t n) {
  idgen__serve_config c = fixture_cfg;
  c.tokens = specs;
  c.ntokens = n;
  return c;
}

static idgen__token_spec spec(const char *name, const char *file, uint64_t rate,
                              uint64_t burst) {
  idgen__token_spec t = {.all_generators = 1, .rate = rate, .burst = burst, .line = 1};
  snprintf(t.name, sizeof t.name, "%s", name);
  snprintf(t.file, sizeof t.file, "%s/%s", tokdir, file);
  return t;
}

static void test_reload_config(void **state) {
  (void)state;
  idgen__http_res res;
  /* team-f was emptied by the tests before; a new configuration doubles its burst and
   * adds team-n: team-f's bucket stays empty (rescaled), team-n works, team-b is gone. */
  idgen__token_spec v[2] = {spec("team-f", "f", 1, 20), spec("team-n", "n", 0, 0)};
  idgen__serve_config c = with_tokens(v, 2);
  idgen__svc_tokens_reload(fixture_svc, &c);
  assert_int_equal(get(TOKEN_F, "/v1/id", &res), 429);
  assert_int_equal(get(TOKEN_N, "/v1/id", &res), 200);
  assert_int_equal(get(TOKEN_B, "/v1/id", &res), 401);
  /* A rate lifted: team-f passes at once; NULL reads the files of the set in force. */
  v[0] = spec("team-f", "f", 0, 0);
  c = with_tokens(v, 2);
  idgen__svc_tokens_reload(fixture_svc, &c);
  assert_int_equal(get(TOKEN_F, "/v1/ids?count=1000", &res), 200);
  idgen__svc_tokens_reload(fixture_svc, NULL);
  assert_int_equal(get(TOKEN_F, "/v1/ids?count=1000", &res), 200);
  /* A reload that fails (a missing file) keeps the set in force. */
  v[1] = spec("team-n", "missing", 0, 0);
  c = with_tokens(v, 2);
  idgen__svc_tokens_reload(fixture_svc, &c);
  assert_int_equal(get(TOKEN_N, "/v1/id", &res), 200);
}

/* A RESP connection's grant from an old set survives 200 reloads, its set freed behind
 * it: at most threads + 1 (here 1 + 1) sets are alive. */
static void test_sets_alive(void **state) {
  (void)state;
  idgen__svc_watch(fixture_svc);
  idgen__resp_session s;
  idgen__resp_session_init(&s, &fixture_t);
  assert_int_equal(
      idgen__svc_auth(fixture_svc, &fixture_t.hold, TOKEN_F, strlen(TOKEN_F), &s.grant), 1);
  s.authed = 1;
  assert_int_equal(idgen__svc_token_sets_alive(fixture_svc), 1);
  idgen__svc_tokens_reload(fixture_svc, NULL);
  /* The thread holds the old set (its hazard slot): both alive. */
  assert_int_equal(idgen__svc_token_sets_alive(fixture_svc), 2);
  for (int i = 0; i < 200; i++) {
    idgen__svc_tokens_reload(fixture_svc, NULL);
    assert_true(idgen__svc_token_sets_alive(fixture_svc) <= 2);
  }
  assert_int_equal(idgen__svc_token_sets_alive(fixture_svc), 2);
  /* The connection's next command renews its grant into the set in force. */
  idgen__resp_cmd id = {.argc = 1, .argv = {"ID"}, .argl = {2}};
  idgen__buf out = {0};
  int error, close;
  idgen__resp_run(&s, &id, &out, &error, &close);
  assert_int_equal(error, 0);
  idgen__svc_watch(fixture_svc);
  assert_int_equal(idgen__svc_token_sets_alive(fixture_svc), 1);
  assert_int_equal(alive_metric(), 1);
  /* A token changed on disk: the old grant is refused, NOAUTH. */
  write_token("f", "team-f-token-rotated-0123");
  idgen__svc_tokens_reload(fixture_svc, NULL);
  idgen__buf_reset(&out);
  idgen__resp_run(&s, &id, &out, &error, &close);
  assert_memory_equal(out.data, "-NOAUTH", 7);
  write_token("f", TOKEN_F);
  idgen__buf_free(&out);
}

int main(void) {
  const struct CMUnitTest pure[] = {
      cmocka_unit_test(test_init),           cmocka_unit_test(test_rate_and_burst),
      cmocka_unit_test(test_overflow_edges), cmocka_unit_test(test_mul_div),
      cmocka_unit_test(test_rescale),        cmocka_unit_test(test_concurrent),
  };
  const struct CMUnitTest service[] = {
      cmocka_unit_test(test_http_quota),
      cmocka_unit_test(test_resp_quota),
      cmocka_unit_test(test_reload_config),
      cmocka_unit_test(test_sets_alive),
  };
  int failed = cmocka_run_group_tests_name("quota", pure, NULL, NULL);
  return failed + cmocka_run_group_tests_name("service", service, setup, teardown);
}
