/* test_server_named.c: a service with named generators from a config file (snowflake,
 * segment on the file backend, uuid7, ulid) through the HTTP routes and RESP: ?name=
 * and ID/IDS NAME pick one, the old RESP forms keep their meaning, an unknown name is
 * 404 or -ERR, forms that do not fit a kind are refused, a segment generator whose
 * backend goes away serves its buffer, then 503 backend_unavailable, then numbers
 * again; /readyz, /v1/info, INFO and /metrics cover every generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "server/resp.h"
#include "server_fixture.h"

static const char config[] = "generators:\n"
                             "  events:\n"
                             "    kind: snowflake\n"
                             "    layout: js53\n"
                             "    worker_id: 4\n"
                             "    seq_reset_threshold: 255\n"
                             "  orders:\n"
                             "    kind: segment\n"
                             "    step: 10\n"
                             "    max_step: 40\n"
                             "    retry_ms: 50\n"
                             "  tokens: {kind: uuid7}\n"
                             "  sessions: {kind: ulid}\n";

static int setup(void **state) {
  (void)state;
  return fixture_start(config);
}

/* GET path?query with the token; returns the status, the body in fixture_t.out. */
static int get(const char *target) {
  const char *q = strchr(target, '?');
  char auth[64];
  snprintf(auth, sizeof auth, "Bearer %s", FIXTURE_TOKEN);
  idgen__http_req req = {.method = "GET",
                         .method_len = 3,
                         .path = target,
                         .path_len = q ? (size_t)(q - target) : strlen(target),
                         .query = q ? q + 1 : NULL,
                         .query_len = q ? strlen(q + 1) : 0,
                         .authorization = auth,
                         .authorization_len = strlen(auth)};
  idgen__http_res res;
  idgen__api_http(&fixture_t, &req, &res);
  idgen__buf_addc(&fixture_t.out, '\0');
  fixture_t.out.len--;
  return res.status;
}

static const char *body(void) {
  return fixture_t.out.data;
}

/* The decimal numbers of {"ids":[...]} or {"id":...} into out; returns how many. */
static size_t numbers(uint64_t *out, size_t max) {
  json_t *j = json_loads(body(), 0, NULL);
  assert_non_null(j);
  json_t *ids = json_object_get(j, "ids");
  size_t n = 0;
  if (!ids) {
    out[n++] = strtoull(json_string_value(json_object_get(j, "id")), NULL, 10);
  } else {
    for (size_t i = 0; i < json_array_size(ids) && n < max; i++)
      out[n++] = strtoull(json_string_value(json_array_get(ids, i)), NULL, 10);
  }
  json_decref(j);
  return n;
}

/* Waits until a generator is ready: a segment one's first block, a snowflake one's
 * clock past the HWM of its new worker file (its keeper thread). */
static void wait_ready(const char *name) {
  char path[64];
  snprintf(path, sizeof path, "/readyz?name=%s", name);
  for (int i = 0; i < 1000 && get(path) != 200; i++)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  assert_int_equal(get(path), 200);
}

static void test_by_name(void **state) {
  (void)state;
  wait_ready("orders");
  wait_ready("events");
  uint64_t n[64];
  assert_int_equal(get("/v1/id?name=orders"), 200);
  assert_int_equal(numbers(n, 64), 1);
  uint64_t first = n[0];
  /* 15 numbers across blocks of 10: consecutive, rising. */
  assert_int_equal(get("/v1/ids?name=orders&count=15"), 200);
  assert_int_equal(numbers(n, 64), 15);
  for (size_t i = 1; i < 15; i++)
    assert_true(n[i] > n[i - 1]);
  assert_true(n[0] > first);
  /* The default generator without a name, and by its name. */
  assert_int_equal(get("/v1/id"), 200);
  assert_int_equal(numbers(n, 64), 1);
  assert_true(n[0] > UINT64_C(1) << 40);
  assert_int_equal(get("/v1/id?name=default&format=friendly"), 200);
  /* events: js53, worker 4: decode with its layout. */
  assert_int_equal(get("/v1/id?name=events"), 200);
  assert_int_equal(numbers(n, 64), 1);
  assert_true(n[0] < UINT64_C(1) << 53);
  char path[96];
  snprintf(path, sizeof path, "/v1/decode/%llu?name=events", (unsigned long long)n[0]);
  assert_int_equal(get(path), 200);
  assert_non_null(strstr(body(), "\"layout\":\"js53\""));
  assert_non_null(strstr(body(), "\"worker\":4"));
  snprintf(path, sizeof path, "/v1/decode/%llu?name=orders", (unsigned long long)n[0]);
  assert_int_equal(get(path), 400);
  /* Text kinds: /v1/id answers a string of theirs; no format applies. */
  assert_int_equal(get("/v1/id?name=tokens"), 200);
  assert_non_null(strstr(body(), "\"id\":\""));
  assert_int_equal(strlen(body()), strlen("{\"id\":\"\"}\n") + 36);
  assert_int_equal(get("/v1/ids?name=sessions&count=3"), 200);
  assert_int_equal(strlen(body()), strlen("{\"ids\":[\"\",\"\",\"\"]}\n") + 3 * 26);
  assert_int_equal(get("/v1/id?name=tokens&format=hex"), 400);
  assert_non_null(strstr(body(), "\"bad_format\""));
}

static void test_errors(void **state) {
  (void)state;
  assert_int_equal(get("/v1/id?name=nope"), 404);
  assert_non_null(strstr(body(), "\"code\":\"unknown_generator\""));
  assert_int_equal(get("/v1/ids?name=nope&count=2"), 404);
  assert_int_equal(get("/v1/id?name=orders&name=events"), 400);
  assert_int_equal(get("/v1/id?name="), 404);
  assert_int_equal(get("/v1/id?name=orders&format=friendly"), 400);
  assert_non_null(strstr(body(), "friendly needs a snowflake layout"));
  assert_int_equal(get("/v1/id?name=orders&format=opaque-hex"), 400);
  assert_non_null(strstr(body(), "generator 'orders' has no opaque_key_file"));
  assert_int_equal(get("/v1/uuid7?name=tokens"), 400);
  assert_int_equal(get("/readyz?name=nope"), 404);
}

/* The backend goes away (its file moved), and comes back. */
static void test_backend_outage(void **state) {
  (void)state;
  wait_ready("orders");
  char file[sizeof fixture_dir + 32], away[sizeof fixture_dir + 32];
  snprintf(file, sizeof file, "%s/segment-orders", fixture_dir);
  snprintf(away, sizeof away, "%s/segment-orders.away", fixture_dir);
  assert_int_equal(rename(file, away), 0);
  uint64_t n[64], last = 0;
  int served = 0, status = 200;
  for (int i = 0; i < 200 && status == 200; i++) { /* two blocks of 40 at most */
    status = get("/v1/id?name=orders");
    if (status == 200) {
      assert_int_equal(numbers(n, 64), 1);
      assert_true(n[0] > last);
      last = n[0];
      served++;
    }
  }
  assert_int_equal(status, 503);
  assert_non_null(strstr(body(), "\"code\":\"backend_unavailable\""));
  assert_true(served > 0);
  assert_int_equal(get("/readyz?name=orders"), 503);
  assert_non_null(strstr(body(), "\"orders\":{\"ready\":false"));
  assert_int_equal(get("/readyz"), 200); /* the default generator carries the service */
  assert_int_equal(get("/metrics"), 200);
  assert_non_null(strstr(body(), "idgen_generator_ready{generator=\"orders\"} 0\n"));
  assert_non_null(strstr(body(), "idgen_segment_backend_up{generator=\"orders\"} 0\n"));
  /* Back: numbers again by themselves, above every one before. */
  assert_int_equal(rename(away, file), 0);
  for (int i = 0; i < 500 && status != 200; i++) {
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    status = get("/v1/id?name=orders");
  }
  assert_int_equal(status, 200);
  assert_int_equal(numbers(n, 64), 1);
  assert_true(n[0] > last);
}

/* Inline RESP commands, one per line, on a fresh authenticated session: the replies. */
static const char *resp(const char *in) {
  static idgen__buf out;
  idgen__buf_reset(&out);
  idgen__resp_session sess;
  idgen__resp_session_init(&sess, &fixture_t);
  sess.authed = 1; /* as AUTH with the fixture's token would */
  idgen__svc_auth(fixture_t.svc, &fixture_t.hold, FIXTURE_TOKEN, strlen(FIXTURE_TOKEN),
                  &sess.grant);
  int close = 0;
  idgen__resp_feed(&sess, in, strlen(in), &out, &close);
  idgen__buf_addc(&out, 0);
  return out.data;
}

/* The grammar: ID [name] [form], IDS [name] count [form]; a count is all digits and a
 * form a format's name, which names never are, so the old forms mean what they did. */
static void test_resp_grammar(void **state) {
  (void)state;
  wait_ready("orders");
  wait_ready("events");
  char want[128];
  /* ID orders, then IDS orders 3 hex: consecutive numbers. */
  const char *r = resp("ID orders\r\n");
  assert_int_equal(r[0], '$');
  uint64_t n = strtoull(strchr(r, '\n') + 1, NULL, 10);
  snprintf(want, sizeof want,
           "*3\r\n$16\r\n%016llx\r\n$16\r\n%016llx\r\n$16\r\n%016llx\r\n",
           (unsigned long long)n + 1, (unsigned long long)n + 2, (unsigned long long)n + 3);
  assert_string_equal(resp("IDS orders 3 hex\r\n"), want);
  snprintf(want, sizeof want, "$16\r\n%016llx\r\n", (unsigned long long)n + 4);
  assert_string_equal(resp("ID orders hex\r\n"), want);
  /* The old forms: a form alone is the default's form, a count alone its count. */
  assert_true(strlen(resp("ID hex\r\n")) == strlen("$16\r\n0123456789abcdef\r\n"));
  r = resp("IDS 2 base62\r\n");
  assert_int_equal(strncmp(r, "*2\r\n$11\r\n", 9), 0);
  r = resp("ID\r\n");
  assert_true(strtoull(strchr(r, '\n') + 1, NULL, 10) > UINT64_C(1) << 40);
  assert_non_null(strstr(resp("ID default friendly\r\n"), "-3-"));
  /* Text kinds. */
  r = resp("IDS sessions 2\r\n");
  assert_int_equal(strncmp(r, "*2\r\n$26\r\n", 9), 0);
  assert_int_equal(strncmp(resp("ID tokens\r\n"), "$36\r\n", 5), 0);
  /* Errors, each one line; the connection stays usable. */
  assert_string_equal(resp("ID nope\r\n"),
                      "-ERR unknown generator 'nope' (INFO lists them); not a format "
                      "either: " IDGEN__ID_FORMS "\r\n");
  assert_string_equal(resp("IDS nope 2\r\n"),
                      "-ERR unknown generator 'nope' (INFO lists them)\r\n");
  assert_string_equal(resp("IDS orders\r\n"),
                      "-ERR wrong number of arguments for 'ids' command\r\n");
  assert_string_equal(resp("ID orders hex x\r\n"),
                      "-ERR wrong number of arguments for 'id' command\r\n");
  assert_string_equal(resp("IDS orders 0\r\n"), "-ERR count must be from 1 to 4096\r\n");
  /* What the grammar before names refused, it refuses as it did: a lone IDS argument
   * that names no generator is a bad count, an all-digit ID argument a bad form. */
  assert_string_equal(resp("IDS abc\r\n"),
                      "-ERR value is not an integer or out of range\r\n");
  assert_string_equal(resp("IDS -1\r\n"),
                      "-ERR value is not an integer or out of range\r\n");
  assert_non_null(strstr(resp("ID 1\r\n"), "-ERR unknown format, want one of decimal, "));
  assert_non_null(strstr(resp("ID tokens hex\r\n"), "-ERR 'tokens' is a uuid7 generator"));
  assert_non_null(
      strstr(resp("ID orders friendly\r\n"), "-ERR friendly needs a snowflake"));
  assert_non_null(strstr(resp("ID orders opaque-hex\r\n"), "has no opaque_key_file"));
  /* INFO: a line per generator. */
  r = resp("INFO\r\n");
  assert_non_null(strstr(r, "# Generators\r\n"));
  assert_non_null(strstr(r, "gen_orders:kind=segment,ready=1,"));
  assert_non_null(strstr(r, "gen_events:kind=snowflake,ready=1,"));
  assert_non_null(strstr(r, "gen_tokens:kind=uuid7,ready=1,"));
}

static void test_info_and_metrics(void **state) {
  (void)state;
  assert_int_equal(get("/v1/info"), 200);
  json_t *j = json_loads(body(), 0, NULL);
  assert_non_null(j);
  json_t *gens = json_object_get(j, "generators");
  assert_int_equal(json_object_size(gens), 5);
  static const char *const kinds[][2] = {{"default", "snowflake"},
                                         {"events", "snowflake"},
                                         {"orders", "segment"},
                                         {"tokens", "uuid7"},
                                         {"sessions", "ulid"}};
  for (size_t i = 0; i < 5; i++) {
    json_t *g = json_object_get(gens, kinds[i][0]);
    assert_non_null(g);
    assert_string_equal(json_string_value(json_object_get(g, "kind")), kinds[i][1]);
  }
  json_t *events = json_object_get(gens, "events");
  assert_int_equal(json_integer_value(json_object_get(events, "worker_id")), 4);
  assert_int_equal(json_integer_value(json_object_get(events, "seq_reset_threshold")), 255);
  json_t *orders = json_object_get(gens, "orders");
  assert_string_equal(json_string_value(json_object_get(orders, "backend")), "file");
  assert_true(json_integer_value(json_object_get(orders, "blocks_fetched")) >= 1);
  assert_int_equal(json_integer_value(json_object_get(j, "worker_id")), 3);
  json_decref(j);
  assert_int_equal(get("/metrics"), 200);
  assert_non_null(
      strstr(body(), "idgen_generator_info{generator=\"orders\",kind=\"segment\"} 1"));
  assert_non_null(strstr(body(), "idgen_worker_id{generator=\"events\"} 4\n"));
  assert_non_null(strstr(body(),
                         "idgen_segment_fetch_duration_seconds_bucket{generator=\"orders\","
                         "backend=\"file\",le=\"+Inf\"}"));
  assert_non_null(
      strstr(body(), "idgen_segment_numbers_left{generator=\"orders\",block=\"next\"}"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_by_name),          cmocka_unit_test(test_errors),
      cmocka_unit_test(test_backend_outage),   cmocka_unit_test(test_resp_grammar),
      cmocka_unit_test(test_info_and_metrics),
  };
  return cmocka_run_group_tests(tests, setup, fixture_down);
}
