/* test_server_resp.c: the RESP parser and session: a command parses the same whatever
 * pieces it arrives in, bad length lines fail at once, HTTP-looking lines close without
 * running anything, wrong AUTHs close the connection (HELLO AUTH's too), HELLO 3 turns
 * replies to RESP3 (IDs staying strings), RESET forgets AUTH, CLIENT keeps a name and
 * library info. tests/integration/resp_vs_redis.sh checks the replies against Redis. */
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
  s.authed = authed; /* as AUTH with the fixture's token would */
  if (authed)
    idgen__svc_auth(fixture_t.svc, &fixture_t.hold, FIXTURE_TOKEN, strlen(FIXTURE_TOKEN),
                    &s.grant);
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

static int contains(const char *hay, const char *needle) {
  return strstr(hay, needle) != NULL;
}

static void test_hello_switches_protocol(void **state) {
  (void)state;
  int close = 0;
  const char *out = session("HELLO 3\r\nCLIENT GETNAME\r\nIDS 2\r\nUUID7 1\r\n"
                            "HELLO 2\r\nCLIENT GETNAME\r\n",
                            1, &close);
  assert_false(close);
  /* A map of seven pairs, then a RESP3 null, then IDS as an array of bulk strings:
   * never RESP3 numbers, which a JavaScript client would turn into floats. */
  assert_memory_equal(out, "%7\r\n$6\r\nserver\r\n$5\r\nidgen\r\n", 25);
  const char *after = strstr(out, "$7\r\nmodules\r\n*0\r\n_\r\n*2\r\n$");
  assert_non_null(after);
  assert_true(contains(after, "*14\r\n$6\r\nserver\r\n"));
  assert_true(contains(after, "$5\r\nproto\r\n:2\r\n"));
  assert_string_equal(out + strlen(out) - 5, "$-1\r\n");
  assert_false(contains(out, "\r\n:1")); /* no ID as an integer */
}

static void test_hello_errors_keep_protocol(void **state) {
  (void)state;
  int close = 0;
  assert_string_equal(session("HELLO 4\r\nHELLO x\r\nHELLO 3 SETNAME\r\n"
                              "HELLO 3 SETNAME a\x01b\r\nCLIENT GETNAME\r\n",
                              1, &close),
                      "-NOPROTO unsupported protocol version\r\n"
                      "-ERR Protocol version is not an integer or out of range\r\n"
                      "-ERR Syntax error in HELLO option 'SETNAME'\r\n"
                      "-ERR Client names cannot contain spaces, newlines or special "
                      "characters.\r\n$-1\r\n");
}

static void test_hello_auth_counts_failures(void **state) {
  (void)state;
  int close = 0;
  uint64_t failures = fixture_t.m->auth_failures[LISTENER_RESP];
  const char *wrong = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
  char want[512];
  snprintf(want, sizeof want, "%s%s%s", wrong, wrong, wrong);
  assert_string_equal(session("HELLO 3 AUTH default a\r\nHELLO 3 AUTH bob " FIXTURE_TOKEN
                              "\r\nAUTH x\r\nPING\r\n",
                              0, &close),
                      want);
  assert_true(close);
  assert_int_equal(fixture_t.m->auth_failures[LISTENER_RESP], failures + 3);
  const char *out =
      session("HELLO 3 AUTH default " FIXTURE_TOKEN " SETNAME app\r\nCLIENT GETNAME\r\n", 0,
              &close);
  assert_memory_equal(out, "%7\r\n", 4);
  assert_true(contains(out, "*0\r\n$3\r\napp\r\n"));
}

static void test_reset_forgets_auth(void **state) {
  (void)state;
  int close = 0;
  const char *out = session("AUTH " FIXTURE_TOKEN "\r\nCLIENT SETNAME n\r\nHELLO 3\r\n"
                            "RESET\r\nPING\r\nCLIENT GETNAME\r\nQUIT\r\n",
                            0, &close);
  const char *reset = strstr(out, "+RESET\r\n");
  assert_non_null(reset);
  assert_string_equal(reset, "+RESET\r\n-NOAUTH Authentication required.\r\n"
                             "-NOAUTH Authentication required.\r\n+OK\r\n");
  assert_true(close);
}

static void test_client_commands(void **state) {
  (void)state;
  int close = 0;
  char longname[IDGEN_RESP_NAME_MAX + 2];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  char in[512];
  snprintf(in, sizeof in,
           "CLIENT SETINFO lib-name redis-py\r\nCLIENT SETINFO LIB-VER 4.3.4\r\n"
           "CLIENT SETINFO colour red\r\nCLIENT SETNAME %s\r\nCLIENT INFO\r\n"
           "CLIENT ID\r\nCLIENT NOPE\r\nCLIENT SETNAME\r\n",
           longname);
  const char *out = session(in, 1, &close);
  assert_true(contains(out, "+OK\r\n+OK\r\n-ERR Unrecognized option 'colour'\r\n"
                            "-ERR Client names are at most 64 bytes here\r\n$"));
  assert_true(contains(out, " lib-name=redis-py lib-ver=4.3.4\n\r\n:"));
  assert_true(contains(out,
                       "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n"
                       "-ERR wrong number of arguments for 'client|setname' command\r\n"));
}

/* COMMAND COUNT counts the entries COMMAND lists, and every one of them runs: its name
 * is no unknown command. */
static void test_command_table(void **state) {
  (void)state;
  int close = 0;
  const char *out = session("COMMAND COUNT\r\n", 1, &close);
  assert_int_equal(out[0], ':');
  long count = strtol(out + 1, NULL, 10);
  assert_true(count >= 16);
  out = session("COMMAND\r\n", 1, &close);
  char want[32];
  snprintf(want, sizeof want, "*%ld\r\n*10\r\n", count);
  assert_memory_equal(out, want, strlen(want));
  static const char *const names[] = {
      "ID",   "IDS",  "RANGE", "UUID7", "UUID4", "ULID",   "DECODE",  "INFO",  "PING",
      "ECHO", "AUTH", "HELLO", "CLIENT", "SELECT", "COMMAND", "RESET", "QUIT"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(want, sizeof want, "COMMAND INFO %s\r\n", names[i]);
    out = session(want, 1, &close);
    assert_memory_equal(out, "*1\r\n*10\r\n", 9);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pieces_parse_the_same),
      cmocka_unit_test(test_length_lines_need_crlf),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_http_lines),
      cmocka_unit_test(test_cross_protocol_runs_nothing),
      cmocka_unit_test(test_wrong_auth_closes),
      cmocka_unit_test(test_hello_switches_protocol),
      cmocka_unit_test(test_hello_errors_keep_protocol),
      cmocka_unit_test(test_hello_auth_counts_failures),
      cmocka_unit_test(test_reset_forgets_auth),
      cmocka_unit_test(test_client_commands),
      cmocka_unit_test(test_command_table),
  };
  return cmocka_run_group_tests(tests, fixture_up, fixture_down);
}
