/* test_etcd_http.c: the etcd client's auth against a scripted HTTP server on loopback:
 * the first request authenticates and every one carries the token; a reply refusing the
 * token (etcd 3.4's 401 "invalid auth token") is followed by a new token and the same
 * body once more, whose reply, a failed compare or a held one, is what the caller gets;
 * a second refusal is returned, not tried a third time; a wrong password fails before
 * the request is sent; other errors are not retried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "etcd/client.h"

#define SCRIPT_MAX 8

typedef struct reply {
  int status;
  const char *body;
} reply;

typedef struct seen {
  char path[64];
  char auth[64]; /* the Authorization header; "" when none */
  char body[512];
} seen;

static struct {
  int fd;
  int port;
  pthread_t thread;
  const reply *script;
  size_t nscript;
  seen got[SCRIPT_MAX];
  size_t ngot;
} srv;

/* Reads one request (head, then Content-Length bytes) from c into *s: 0, or -1. */
static int read_request(int c, seen *s) {
  char buf[4096];
  size_t n = 0;
  char *end = NULL;
  while (!end) {
    if (n + 1 >= sizeof buf)
      return -1;
    ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
    if (r <= 0)
      return -1;
    n += (size_t)r;
    buf[n] = '\0';
    end = strstr(buf, "\r\n\r\n");
  }
  size_t head = (size_t)(end - buf) + 4;
  size_t want = 0;
  memset(s, 0, sizeof *s);
  sscanf(buf, "POST %63s", s->path);
  for (char *line = strstr(buf, "\r\n"); line && line < end;
       line = strstr(line + 2, "\r\n")) {
    if (!strncasecmp(line + 2, "Content-Length:", 15))
      want = (size_t)strtoul(line + 17, NULL, 10);
    if (!strncasecmp(line + 2, "Authorization: ", 15))
      sscanf(line + 17, "%63[^\r]", s->auth);
  }
  while (n < head + want) {
    if (n + 1 >= sizeof buf)
      return -1;
    ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
    if (r <= 0)
      return -1;
    n += (size_t)r;
  }
  snprintf(s->body, sizeof s->body, "%.*s", (int)want, buf + head);
  return 0;
}

/* Answers each connection's one request with the script's next reply, then closes. */
static void *serve(void *arg) {
  (void)arg;
  for (;;) {
    int c = accept(srv.fd, NULL, NULL);
    if (c < 0)
      return NULL;
    seen s;
    if (read_request(c, &s) == 0 && srv.ngot < SCRIPT_MAX) {
      const reply *r = srv.ngot < srv.nscript ? &srv.script[srv.ngot]
                                              : &(reply){500, "{\"error\":\"unscripted\"}"};
      srv.got[srv.ngot++] = s;
      char out[1024];
      int len = snprintf(out, sizeof out,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                         r->status, strlen(r->body), r->body);
      if (write(c, out, (size_t)len) != len) /* not cmocka's: another thread */
        fprintf(stderr, "fake etcd: short write\n");
    }
    close(c);
  }
}

static int setup(void **state) {
  (void)state;
  memset(&srv, 0, sizeof srv);
  srv.fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  assert_int_equal(bind(srv.fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(srv.fd, 16), 0);
  assert_int_equal(getsockname(srv.fd, (struct sockaddr *)&a, &alen), 0);
  srv.port = ntohs(a.sin_port);
  assert_int_equal(pthread_create(&srv.thread, NULL, serve, NULL), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  shutdown(srv.fd, SHUT_RDWR);
  close(srv.fd);
  pthread_join(srv.thread, NULL);
  return 0;
}

/* A client of the scripted server, as user (NULL: none, password "pw"). */
static void client(idgen__etcd_http *h, const reply *script, size_t n, const char *user) {
  srv.script = script;
  srv.nscript = n;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char url[64], err[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
  assert_int_equal(idgen_lease_config_set(&c, "etcd", url, err, sizeof err), 0);
  if (user) {
    snprintf(c.etcd_user, sizeof c.etcd_user, "%s", user);
    snprintf(c.etcd_password, sizeof c.etcd_password, "pw");
  }
  assert_int_equal(idgen__etcd_http_init(h, &c, err, sizeof err), 0);
}

#define AUTH_OK(tok)                                                                       \
  { 200, "{\"header\":{\"revision\":\"1\"},\"token\":\"" tok "\"}" }
#define TOKEN_REFUSED                                                                      \
  {                                                                                        \
    401,                                                                                   \
        "{\"error\":\"etcdserver: invalid auth token\",\"message\":\"etcdserver: invalid " \
        "auth token\",\"code\":16}"                                                        \
  }
#define CAS "{\"compare\":[{\"key\":\"aw==\",\"mod_revision\":\"7\"}],\"success\":[]}"
#define CAS_FAILED "{\"header\":{\"revision\":\"9\"},\"responses\":[{}]}"
#define CAS_HELD "{\"header\":{\"revision\":\"9\"},\"succeeded\":true}"

/* The compare failed after a new token: the caller reads a failed compare. */
static void test_refused_token_then_failed_compare(void **state) {
  (void)state;
  static const reply script[] = {
      AUTH_OK("t1"), TOKEN_REFUSED, AUTH_OK("t2"), {200, CAS_FAILED}};
  idgen__etcd_http h;
  client(&h, script, 4, "idgen");
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/txn", CAS), 0);
  assert_int_equal(h.status, 200);
  assert_string_equal(h.body, CAS_FAILED);
  int done = 1;
  assert_int_equal(idgen__etcd_parse_txn(h.body, h.len, &done, 0, NULL, NULL), 0);
  assert_int_equal(done, 0);
  assert_int_equal(srv.ngot, 4);
  assert_string_equal(srv.got[0].path, "/v3/auth/authenticate");
  assert_non_null(strstr(srv.got[0].body, "\"name\":\"idgen\""));
  assert_string_equal(srv.got[0].auth, "");
  assert_string_equal(srv.got[1].path, "/v3/kv/txn");
  assert_string_equal(srv.got[1].auth, "t1");
  assert_string_equal(srv.got[1].body, CAS);
  assert_string_equal(srv.got[2].path, "/v3/auth/authenticate");
  assert_string_equal(srv.got[3].auth, "t2");
  assert_string_equal(srv.got[3].body, CAS); /* the same request, once more */
  assert_int_equal(h.reauths, 1);
  idgen__etcd_http_free(&h);
}

/* ... and a compare that held, held. The token is kept for the next request. */
static void test_refused_token_then_held_compare(void **state) {
  (void)state;
  static const reply script[] = {
      AUTH_OK("t1"), TOKEN_REFUSED, AUTH_OK("t2"), {200, CAS_HELD}, {200, CAS_HELD}};
  idgen__etcd_http h;
  client(&h, script, 5, "idgen");
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/txn", CAS), 0);
  int done = 0;
  assert_int_equal(idgen__etcd_parse_txn(h.body, h.len, &done, 0, NULL, NULL), 0);
  assert_int_equal(done, 1);
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/txn", CAS), 0);
  assert_int_equal(srv.ngot, 5);
  assert_string_equal(srv.got[4].path, "/v3/kv/txn");
  assert_string_equal(srv.got[4].auth, "t2");
  idgen__etcd_http_free(&h);
}

/* Refused twice: the refusal is the reply (an error the caller reads), not a third try. */
static void test_refused_twice(void **state) {
  (void)state;
  static const reply script[] = {AUTH_OK("t1"), TOKEN_REFUSED, AUTH_OK("t2"),
                                 TOKEN_REFUSED};
  idgen__etcd_http h;
  client(&h, script, 4, "idgen");
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/txn", CAS), 0);
  assert_int_equal(h.status, 401);
  char msg[160];
  assert_int_equal(idgen__etcd_error(h.body, h.len, NULL, msg, sizeof msg), 1);
  assert_string_equal(msg, "etcdserver: invalid auth token");
  assert_int_equal(srv.ngot, 4);
  idgen__etcd_http_free(&h);
}

/* A wrong password: IDGEN_EUNAVAIL naming the endpoint and etcd's reason; the request
 * itself is never sent. */
static void test_wrong_password(void **state) {
  (void)state;
  static const reply script[] = {
      {400, "{\"error\":\"etcdserver: authentication failed, invalid user ID or "
            "password\",\"code\":3}"}};
  idgen__etcd_http h;
  client(&h, script, 1, "idgen");
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/txn", CAS), IDGEN_EUNAVAIL);
  char want[128];
  snprintf(want, sizeof want,
           "etcd http://127.0.0.1:%d: authenticating as 'idgen': ", srv.port);
  assert_non_null(strstr(h.why, want));
  assert_non_null(strstr(h.why, "invalid user ID or password"));
  assert_int_equal(srv.ngot, 1);
  idgen__etcd_http_free(&h);
}

/* Other errors are the caller's: not retried, no new token. */
static void test_other_error_not_retried(void **state) {
  (void)state;
  static const reply script[] = {
      AUTH_OK("t1"), {403, "{\"error\":\"etcdserver: permission denied\",\"code\":7}"}};
  idgen__etcd_http h;
  client(&h, script, 2, "idgen");
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/range", "{}"), 0);
  assert_int_equal(h.status, 403);
  assert_int_equal(srv.ngot, 2);
  assert_int_equal(h.reauths, 0);
  idgen__etcd_http_free(&h);
}

/* Without a user: no authentication, no header; a 401 is only a reply. */
static void test_no_user(void **state) {
  (void)state;
  static const reply script[] = {TOKEN_REFUSED};
  idgen__etcd_http h;
  client(&h, script, 1, NULL);
  assert_int_equal(idgen__etcd_http_post(&h, "/v3/kv/range", "{}"), 0);
  assert_int_equal(h.status, 401);
  assert_int_equal(srv.ngot, 1);
  assert_string_equal(srv.got[0].auth, "");
  idgen__etcd_http_free(&h);
}

/* The files are read when the client is made: one line naming the option. */
static void test_unreadable_files(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  idgen__etcd_http h;
  assert_int_equal(
      idgen_lease_config_set(&c, "etcd", "https://127.0.0.1:1", err, sizeof err), 0);
  snprintf(c.etcd_cacert, sizeof c.etcd_cacert, "/nonexistent/ca.pem");
  assert_int_equal(idgen__etcd_http_init(&h, &c, err, sizeof err), IDGEN_EINVAL);
  assert_string_equal(err, "--etcd-cacert /nonexistent/ca.pem: No such file or directory");
  idgen__etcd_http_free(&h);
  c.etcd_cacert[0] = '\0';
  char path[] = "/tmp/idgen-pw-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "\n", 1), 1);
  close(fd);
  snprintf(c.etcd_user, sizeof c.etcd_user, "idgen");
  snprintf(c.etcd_password_file, sizeof c.etcd_password_file, "%s", path);
  assert_int_equal(idgen__etcd_http_init(&h, &c, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, ": empty"));
  idgen__etcd_http_free(&h);
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_int_equal(write(fd, "s3cret\r\n", 8), 8);
  close(fd);
  assert_int_equal(idgen__etcd_http_init(&h, &c, err, sizeof err), 0);
  assert_string_equal(h.password, "s3cret");
  idgen__etcd_http_free(&h);
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_int_equal(write(fd, "a\nb\n", 4), 4);
  close(fd);
  assert_int_equal(idgen__etcd_http_init(&h, &c, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, ": more than one line"));
  idgen__etcd_http_free(&h);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_refused_token_then_failed_compare, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_refused_token_then_held_compare, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_refused_twice, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_password, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_error_not_retried, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_user, setup, teardown),
      cmocka_unit_test(test_unreadable_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
