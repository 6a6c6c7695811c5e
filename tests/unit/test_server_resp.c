/* test_server_resp.c: the RESP2 parser and session: a command parses the same whatever
 * pieces it arrives in, bad length lines fail at once, HTTP-looking lines close without
 * running anything, wrong AUTHs close the connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/resp.h"
#include "server_fixture.h"

/* Appends to out[*o..outlen), truncating. */
__attribute__((format(printf, 4, 5))) static void put(char *out, size_t outlen, size_t *o,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + *o, outlen - *o, fmt, ap);
  va_end(ap);
  *o = n < 0 || (size_t)n >= outlen - *o ? outlen - 1 : *o + (size_t)n;
}

/* Parses every command of in[0..len) fed `step` bytes at a time; writes one line per
 * command ("argc arg0 arg1 ...") or "E <error>" into out. Returns the bytes consumed. */
static size_t parse_all(const char *in, size_t len, size_t step, char *out, size_t outlen) {
  idgen__resp_parser p;
  idgen__resp_parser_init(&p);
  size_t start = 0, avail = 0, o = 0;
  out[0] = 0;
  while (start < len) {
    avail = avail + step < len - start ? avail + step : len - start;
    idgen__resp_cmd cmd;
    size_t used = 0;
    const char *err = NULL;
    int rc = idgen__resp_parse(&p, in + start, avail, &cmd, &used, &err);
    if (rc == 0) {
      if (avail == len - start)
        break;
      continue;
    }
    if (rc < 0) {
      put(out, outlen, &o, "E %s\n", rc == IDGEN_RESP_HTTP ? "http" : err);
      return start;
    }
    put(out, outlen, &o, "%zu", cmd.argc);
    for (size_t i = 0; i < cmd.argc && i < IDGEN_RESP_MAX_ARGS; i++)
      put(out, outlen, &o, " %.*s", (int)cmd.argl[i], cmd.argv[i]);
    put(out, outlen, &o, "\n");
    start += used;
    avail -= used;
  }
  return start;
}

static void test_pieces_parse_the_same(void **state) {
  (void)state;
  static const char *const inputs[] = {
      "*2\r\n$3\r\nIDS\r\n$2\r\n10\r\n*1\r\n$4\r\nPING\r\nPING hello\r\n",
      "*0\r\n\r\n*-1\r\nID\n*3\r\n$0\r\n\r\n$1\r\na\r\n$10\r\n0123456789\r\n",
      ("*10\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$"
       "1\r\ng\r\n"
       "$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n"),
      "*1\r\n$4\r\nPING\r\n*1\r\n+bad\r\n",
  };
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    size_t len = strlen(inputs[i]);
    char whole[1024], pieces[1024];
    size_t used = parse_all(inputs[i], len, len, whole, sizeof whole);
    for (size_t step = 1; step < len; step++) {
      assert_int_equal(parse_all(inputs[i], len, step, pieces, sizeof pieces), used);
      assert_string_equal(pieces, whole);
    }
  }
}

static void test_length_lines_need_crlf(void **state) {
  (void)state;
  char out[256];
  /* A bare LF after the count or a bulk length: an error at once, not silence. */
  parse_all("*1\n", 3, 3, out, sizeof out);
  assert_string_equal(out, "E ERR Protocol error: invalid multibulk length\n");
  parse_all("*1\r\n$4\nPING\n", 12, 12, out, sizeof out);
  assert_string_equal(out, "E ERR Protocol error: invalid bulk length\n");
  parse_all("*12345678901234567\r\n", 20, 20, out, sizeof out);
  assert_string_equal(out, "E ERR Protocol error: invalid multibulk length\n");
  /* Inline commands may end in LF alone (telnet, nc). */
  parse_all("PING\n", 5, 5, out, sizeof out);
  assert_string_equal(out, "1 PING\n");
}

static void test_sizes(void **state) {
  (void)state;
  static char big[IDGEN_RESP_MAX_REQUEST + 16];
  char out[256];
  memset(big, 'a', sizeof big);
  parse_all(big, IDGEN_RESP_MAX_REQUEST, 4096, out, sizeof out);
  assert_string_equal(out, "E ERR Protocol error: too big inline request\n");
  int n = snprintf(big, sizeof big, "*1\r\n$%d\r\n", IDGEN_RESP_MAX_REQUEST - 9);
  parse_all(big, (size_t)n, (size_t)n, out, sizeof out);
  assert_string_equal(out, "E ERR Protocol error: request too large\n");
  /* The largest command accepted: exactly IDGEN_RESP_MAX_REQUEST bytes. */
  size_t data = IDGEN_RESP_MAX_REQUEST - 4 - 8 - 2; /* "*1\r\n", "$16370\r\n", CRLF */
  n = snprintf(big, sizeof big, "*1\r\n$%zu\r\n", data);
  memset(big + n, 'x', data);
  memcpy(big + n + data, "\r\n", 2);
  assert_int_equal((size_t)n + data + 2, IDGEN_RESP_MAX_REQUEST);
  assert_int_equal(parse_all(big, IDGEN_RESP_MAX_REQUEST, 1000, out, sizeof out),
                   IDGEN_RESP_MAX_REQUEST);
}

static void test_http_lines(void **state) {
  (void)state;
  char out[256];
  const char *post = "POST / HTTP/1.1\r\nHost: 127.0.0.1:6380\r\n\r\nIDS 10\r\n";
  assert_int_equal(parse_all(post, strlen(post), 5, out, sizeof out), 0);
  assert_string_equal(out, "E http\n");
  parse_all("host: x\r\n", 9, 9, out, sizeof out);
  assert_string_equal(out, "E http\n");
  /* Only a whole request line: a method word alone is an (unknown) command. */
  parse_all("GET key\r\nget / HTTP/1.1\r\n", 25, 25, out, sizeof out);
  assert_string_equal(out, "2 GET key\n3 get / HTTP/1.1\n");
}

/* Feeds in to a fresh session; returns the replies, sets *close. */
static const char *session(const char *in, int authed, int *close) {
  static idgen__buf out;
  idgen__buf_reset(&out);
  idgen__resp_session s;
  idgen__resp_session_init(&s, &fixture_t);
  s.authed = authed;
  idgen__resp_feed(&s, in, strlen(in), &out, close);
  idgen__buf_addc(&out, 0);
  return out.data;
}

static uint64_t commands_run(void) {
  uint64_t n = 0;
  for (size_t c = 0; c < RCMD_COUNT; c++)
    n += fixture_t.m->resp[c][0] + fixture_t.m->resp[c][1];
  return n;
}

static void test_cross_protocol_runs_nothing(void **state) {
  (void)state;
  int close = 0;
  uint64_t before = commands_run(), cross = fixture_t.m->resp_cross_protocol;
  const char *out = session(
      "POST /x HTTP/1.1\r\nContent-Length: 15\r\n\r\nIDS 10\r\nQUIT\r\n", 1, &close);
  assert_string_equal(out, "");
  assert_true(close);
  assert_int_equal(commands_run(), before);
  assert_int_equal(fixture_t.m->resp_cross_protocol, cross + 1);
}

static void test_wrong_auth_closes(void **state) {
  (void)state;
  int close = 0;
  uint64_t failures = fixture_t.m->auth_failures[LISTENER_RESP];
  const char *wrong = "WRONGPASS invalid username-password pair or user is disabled.\r\n";
  char want[512];
  snprintf(want, sizeof want, "-%s-%s", wrong, wrong);
  assert_string_equal(session("AUTH a\r\nAUTH b\r\n", 0, &close), want);
  assert_false(close);
  snprintf(want, sizeof want, "-%s-%s-%s", wrong, wrong, wrong);
  assert_string_equal(
      session("AUTH a\r\nAUTH b\r\nAUTH c\r\nAUTH d\r\nPING\r\n", 0, &close), want);
  assert_true(close);
  assert_int_equal(fixture_t.m->auth_failures[LISTENER_RESP], failures + 5);
  assert_string_equal(session("AUTH " FIXTURE_TOKEN "\r\nPING\r\n", 0, &close),
                      "+OK\r\n+PONG\r\n");
  assert_false(close);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pieces_parse_the_same),
      cmocka_unit_test(test_length_lines_need_crlf),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_http_lines),
      cmocka_unit_test(test_cross_protocol_runs_nothing),
      cmocka_unit_test(test_wrong_auth_closes),
  };
  return cmocka_run_group_tests(tests, fixture_up, fixture_down);
}
