/* test_server_http1.c: the HTTP/1 framing: limits enforced while a head arrives (not
 * after), pieces answered like the whole, keep-alive and pipelining, bodies, HEAD, wrong
 * tokens closing the connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server/http1.h"
#include "server_fixture.h"

typedef struct fed {
  size_t used;
  int close;
  char out[16384];
} fed;

/* Feeds in[0..len) to a fresh session `step` bytes at a time, as a connection would:
 * what was not consumed comes again with the next bytes. */
static void feed(const char *in, size_t len, size_t step, fed *f) {
  idgen__http1_session s;
  idgen__http1_session_init(&s, &fixture_t);
  idgen__buf out = {0};
  size_t start = 0, avail = 0;
  f->close = 0;
  while (start < len && !f->close) {
    avail = avail + step < len - start ? avail + step : len - start;
    size_t used = idgen__http1_feed(&s, in + start, avail, &out, &f->close);
    start += used;
    avail -= used;
    if (used == 0 && avail == len - start)
      break;
  }
  f->used = start;
  snprintf(f->out, sizeof f->out, "%.*s", (int)out.len, out.data ? out.data : "");
  idgen__buf_free(&out);
}

static int starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p++)
    n++;
  return n;
}

/* The date header changes every second: compare responses without it. */
static void drop_dates(char *s) {
  for (char *d; (d = strstr(s, "date: "));) {
    char *end = strstr(d, "\r\n");
    memmove(d, end + 2, strlen(end + 2) + 1);
  }
}

static void test_limits_while_arriving(void **state) {
  (void)state;
  static char in[600000];
  fed f;
  /* A request line without end: 414 once --max-request-line (2048) bytes are here. */
  size_t n = (size_t)snprintf(in, sizeof in, "GET /");
  memset(in + n, 'a', 400000);
  feed(in, n + 400000, 1000, &f);
  assert_true(starts(f.out, "HTTP/1.1 414 URI Too Long\r\n"));
  assert_true(f.close);
  assert_true(f.used <= 2048 + 1000);
  /* 99 headers of 4000 bytes, no blank line: 431 once --max-header-bytes (8192) are
   * here, not after 400 KB. */
  n = (size_t)snprintf(in, sizeof in, "GET /v1/id HTTP/1.1\r\n");
  for (int i = 0; i < 99; i++) {
    n += (size_t)snprintf(in + n, sizeof in - n, "X-Pad-%02d: ", i);
    memset(in + n, 'a', 3988);
    n += 3988;
    n += (size_t)snprintf(in + n, sizeof in - n, "\r\n");
  }
  feed(in, n, 1460, &f);
  assert_true(starts(f.out, "HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  assert_true(f.close);
  assert_true(f.used <= 21 + 8192 + 2 + 1460);
  assert_non_null(strstr(f.out, "\"code\":\"headers_too_large\""));
}

static void test_header_limit_exact(void **state) {
  (void)state;
  static char in[20000];
  fed f;
  /* Header section bytes, CRLFs included, up to the blank line: 8192 pass, 8193 not. */
  for (size_t size = 8191; size <= 8193; size++) {
    size_t n = (size_t)snprintf(in, sizeof in, "GET /healthz HTTP/1.1\r\nX: ");
    size_t pad = size - 3 - 2;
    memset(in + n, 'a', pad);
    n += pad;
    n += (size_t)snprintf(in + n, sizeof in - n, "\r\n\r\n");
    feed(in, n, n, &f);
    assert_true(starts(f.out, size <= 8192 ? "HTTP/1.1 200 OK" : "HTTP/1.1 431"));
  }
}

static void test_pieces_answer_the_same(void **state) {
  (void)state;
  const char *in = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                   "HEAD /healthz HTTP/1.1\r\n\r\n"
                   "GET /nope?x=1 HTTP/1.1\r\n\r\n"
                   "POST /v1/id HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
                   "GET http://idgen.example/healthz HTTP/1.1\r\n\r\n";
  size_t len = strlen(in);
  fed whole, pieces;
  feed(in, len, len, &whole);
  drop_dates(whole.out);
  assert_int_equal(whole.used, len);
  assert_false(whole.close);
  assert_int_equal(count(whole.out, "HTTP/1.1 200 OK"), 3);
  assert_int_equal(count(whole.out, "HTTP/1.1 404"), 1);
  assert_int_equal(count(whole.out, "HTTP/1.1 405"), 1);
  assert_int_equal(count(whole.out, "{\"status\":\"ok\"}"), 2); /* HEAD: no body */
  assert_int_equal(count(whole.out, "content-length: 16\r\n"), 3);
  for (size_t step = 1; step < len; step += 7) {
    feed(in, len, step, &pieces);
    drop_dates(pieces.out);
    assert_int_equal(pieces.used, len);
    assert_string_equal(pieces.out, whole.out);
  }
}

static void test_connection_rules(void **state) {
  (void)state;
  fed f;
  const char *in = "GET /healthz HTTP/1.0\r\n\r\n";
  feed(in, strlen(in), strlen(in), &f);
  assert_true(f.close);
  assert_non_null(strstr(f.out, "connection: close\r\n"));
  in = "GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n";
  feed(in, strlen(in), strlen(in), &f);
  assert_false(f.close);
  assert_non_null(strstr(f.out, "connection: keep-alive\r\n"));
  in = "GET /healthz HTTP/1.1\r\nConnection: foo, close\r\n\r\nGET /healthz "
       "HTTP/1.1\r\n\r\n";
  feed(in, strlen(in), strlen(in), &f);
  assert_true(f.close);
  assert_int_equal(count(f.out, "HTTP/1.1 200"), 1); /* nothing after Connection: close */
}

static void test_bodies_and_bad_heads(void **state) {
  (void)state;
  static const struct {
    const char *in;
    const char *status;
  } cases[] = {
      {"POST /v1/id HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", "HTTP/1.1 413"},
      {"POST /v1/id HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
       "HTTP/1.1 413"},
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
       "HTTP/1.1 400"},
      {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", "HTTP/1.1 400"},
      {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "HTTP/1.1 400"},
      {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/1.1 400"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fed f;
    feed(cases[i].in, strlen(cases[i].in), strlen(cases[i].in), &f);
    if (!starts(f.out, cases[i].status))
      fail_msg("case %zu: want %s, got %.40s", i, cases[i].status, f.out);
    assert_true(f.close);
  }
}

static void test_wrong_tokens_close(void **state) {
  (void)state;
  fed f;
  uint64_t failures = fixture_t.m->auth_failures[LISTENER_HTTP];
  const char *missing = "GET /v1/id HTTP/1.1\r\n\r\nGET /v1/id HTTP/1.1\r\n\r\n"
                        "GET /v1/id HTTP/1.1\r\n\r\nGET /v1/id HTTP/1.1\r\n\r\n";
  feed(missing, strlen(missing), strlen(missing), &f);
  assert_false(f.close); /* no token is no guess */
  assert_int_equal(count(f.out, "HTTP/1.1 401"), 4);
  char in[1024];
  size_t n = 0;
  for (int i = 0; i < 4; i++)
    n += (size_t)snprintf(in + n, sizeof in - n,
                          "GET /v1/id HTTP/1.1\r\nAuthorization: Bearer guess-%d\r\n\r\n",
                          i);
  feed(in, n, n, &f);
  assert_true(f.close);
  assert_int_equal(count(f.out, "HTTP/1.1 401"), IDGEN_HTTP1_MAX_AUTH_FAILURES);
  assert_int_equal(fixture_t.m->auth_failures[LISTENER_HTTP],
                   failures + IDGEN_HTTP1_MAX_AUTH_FAILURES);
  const char *right =
      "GET /v1/id HTTP/1.1\r\nAuthorization: Bearer " FIXTURE_TOKEN "\r\n\r\n";
  feed(right, strlen(right), strlen(right), &f);
  assert_true(starts(f.out, "HTTP/1.1 200 OK"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_limits_while_arriving),
      cmocka_unit_test(test_header_limit_exact),
      cmocka_unit_test(test_pieces_answer_the_same),
      cmocka_unit_test(test_connection_rules),
      cmocka_unit_test(test_bodies_and_bad_heads),
      cmocka_unit_test(test_wrong_tokens_close),
  };
  return cmocka_run_group_tests(tests, fixture_up, fixture_down);
}
