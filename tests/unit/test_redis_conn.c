/* test_redis_conn.c: the Redis client's own socket (src/redis/conn.c) against a scripted
 * peer on loopback: a reply cut into single bytes is read whole, a peer that never
 * answers is given up at the deadline, a peer that drops the first command says "a TLS
 * port?", a TLS client meeting a plain peer says "not a TLS port?", and the TLS
 * context names the option of a file it cannot use. For libidgen-client's use: a read
 * that timed out says so and keeps the connection (the reply read later), and a context
 * made with other names says them. The TLS refusals of a real redis-server are
 * tests/integration/lease_redis_tls.sh's, of `idgen serve` client_tls.sh's. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "idgen/clock.h"
#include "redis/conn.h"

typedef enum { PEER_DRIP, PEER_MUTE, PEER_DROP, PEER_SLOW } peer_kind;

typedef struct peer {
  int listen_fd;
  int port;
  peer_kind kind;
  pthread_t thread;
  char got[256]; /* what the peer read before it acted */
} peer;

/* Reads until a whole "*1\r\n$4\r\nPING\r\n" came (or the client went). */
static void read_command(int fd, char *got, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap && !strstr(got, "PING\r\n")) {
    ssize_t r = read(fd, got + n, cap - 1 - n);
    if (r <= 0)
      break;
    n += (size_t)r;
    got[n] = '\0';
  }
}

static void *peer_run(void *arg) {
  peer *p = arg;
  int fd = accept(p->listen_fd, NULL, NULL);
  if (fd < 0)
    return NULL;
  if (p->kind == PEER_DRIP) {
    read_command(fd, p->got, sizeof p->got);
    static const char reply[] = "+PONG\r\n";
    for (size_t i = 0; i < sizeof reply - 1; i++) {
      assert_int_equal(write(fd, reply + i, 1), 1);
      usleep(2000);
    }
  } else if (p->kind == PEER_DROP) {
    read_command(fd, p->got, sizeof p->got);
  } else if (p->kind == PEER_SLOW) { /* answers 200 ms late, then waits for the close */
    read_command(fd, p->got, sizeof p->got);
    usleep(200000);
    assert_int_equal(write(fd, "+PONG\r\n", 7), 7);
    char buf[512];
    while (read(fd, buf, sizeof buf) > 0) {
    }
  } else { /* mute: read whatever comes until the client goes */
    char buf[512];
    while (read(fd, buf, sizeof buf) > 0) {
    }
  }
  close(fd);
  return NULL;
}

static void peer_start(peer *p, peer_kind kind) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(p->listen_fd >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(p->listen_fd, 4), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(p->listen_fd, (struct sockaddr *)&a, &len), 0);
  p->port = ntohs(a.sin_port);
  assert_int_equal(pthread_create(&p->thread, NULL, peer_run, p), 0);
}

static void peer_stop(peer *p) {
  pthread_join(p->thread, NULL);
  close(p->listen_fd);
}

static int64_t in_ms(int64_t ms) {
  return idgen_monotonic_ns() + ms * 1000000;
}

static redisReply *ping(idgen__redis_conn *c, int64_t deadline_ns) {
  char *cmd = NULL;
  const char *argv[] = {"PING"};
  int len = redisFormatCommandArgv(&cmd, 1, argv, NULL);
  assert_true(len > 0);
  redisReply *rep = idgen__redis_conn_call(c, cmd, (size_t)len, deadline_ns);
  redisFreeCommand(cmd);
  return rep;
}

static void test_reply_in_pieces(void **state) {
  (void)state;
  peer p;
  peer_start(&p, PEER_DRIP);
  idgen__redis_conn *c = NULL;
  char err[256] = "";
  assert_int_equal(idgen__redis_conn_open(&c, "127.0.0.1", p.port, NULL, 0, in_ms(5000),
                                          err, sizeof err),
                   0);
  redisReply *rep = ping(c, in_ms(5000));
  assert_non_null(rep);
  assert_int_equal(rep->type, REDIS_REPLY_STATUS);
  assert_string_equal(rep->str, "PONG");
  freeReplyObject(rep);
  idgen__redis_conn_close(c, 0);
  peer_stop(&p);
  assert_string_equal(p.got, "*1\r\n$4\r\nPING\r\n");
}

static void test_mute_peer_times_out(void **state) {
  (void)state;
  peer p;
  peer_start(&p, PEER_MUTE);
  idgen__redis_conn *c = NULL;
  char err[256] = "";
  assert_int_equal(idgen__redis_conn_open(&c, "127.0.0.1", p.port, NULL, 0, in_ms(5000),
                                          err, sizeof err),
                   0);
  assert_null(ping(c, in_ms(50)));
  assert_string_equal(idgen__redis_conn_error(c), "timed out");
  idgen__redis_conn_close(c, 0);
  peer_stop(&p);
}

static void test_dropped_first_command(void **state) {
  (void)state;
  peer p;
  peer_start(&p, PEER_DROP);
  idgen__redis_conn *c = NULL;
  char err[256] = "";
  assert_int_equal(idgen__redis_conn_open(&c, "127.0.0.1", p.port, NULL, 0, in_ms(5000),
                                          err, sizeof err),
                   0);
  assert_null(ping(c, in_ms(5000)));
  assert_non_null(
      strstr(idgen__redis_conn_error(c), "before any reply (a TLS port? then rediss://)"));
  idgen__redis_conn_close(c, 0);
  peer_stop(&p);
}

static void test_tls_to_a_plain_peer(void **state) {
  (void)state;
  char err[256] = "";
  struct ssl_ctx_st *tls = idgen__redis_tls_new(NULL, NULL, NULL, err, sizeof err);
  assert_non_null(tls);
  /* the peer reads the ClientHello as a command that never ends, then the deadline */
  peer p;
  peer_start(&p, PEER_MUTE);
  idgen__redis_conn *c = NULL;
  assert_int_equal(
      idgen__redis_conn_open(&c, "127.0.0.1", p.port, tls, 0, in_ms(100), err, sizeof err),
      -1);
  assert_string_equal(err, "TLS handshake: timed out");
  peer_stop(&p);
  /* one that drops it: the server closed the connection during the handshake */
  peer_start(&p, PEER_DROP);
  assert_int_equal(
      idgen__redis_conn_open(&c, "127.0.0.1", p.port, tls, 0, in_ms(5000), err, sizeof err),
      -1);
  assert_non_null(strstr(err, "TLS handshake: "));
  assert_non_null(strstr(err, "(not a TLS port?)"));
  peer_stop(&p);
  idgen__redis_tls_free(tls);
}

static void test_tls_files(void **state) {
  (void)state;
  char err[256] = "";
  assert_null(idgen__redis_tls_new("/nonexistent/ca.pem", NULL, NULL, err, sizeof err));
  assert_string_equal(err, "--redis-cacert /nonexistent/ca.pem: No such file or directory");
  assert_null(
      idgen__redis_tls_new(NULL, "/etc/hostname", "/etc/hostname", err, sizeof err));
  assert_non_null(strstr(err, "--redis-cert /etc/hostname: "));
  /* no listener: the connect fails with the system's reason */
  idgen__redis_conn *c = NULL;
  assert_int_equal(
      idgen__redis_conn_open(&c, "127.0.0.1", 1, NULL, 0, in_ms(1000), err, sizeof err),
      -1);
  assert_string_equal(err, "connect: Connection refused");
}

static void test_read_timed_out_keeps_the_connection(void **state) {
  (void)state;
  peer p;
  peer_start(&p, PEER_SLOW);
  idgen__redis_conn *c = NULL;
  char err[256];
  assert_int_equal(idgen__redis_conn_open(&c, "127.0.0.1", p.port, NULL, 0, in_ms(5000),
                                          err, sizeof err),
                   0);
  char *cmd = NULL;
  const char *argv[] = {"PING"};
  int len = redisFormatCommandArgv(&cmd, 1, argv, NULL);
  assert_int_equal(idgen__redis_conn_send(c, cmd, (size_t)len, in_ms(5000)), 0);
  redisFreeCommand(cmd);
  assert_null(idgen__redis_conn_read(c, in_ms(20)));
  assert_true(idgen__redis_conn_timed_out(c));
  redisReply *rep = idgen__redis_conn_read(c, in_ms(5000));
  assert_non_null(rep);
  assert_false(idgen__redis_conn_timed_out(c));
  assert_string_equal(rep->str, "PONG");
  freeReplyObject(rep);
  idgen__redis_conn_close(c, 0);
  peer_stop(&p);
}

static void test_tls_names(void **state) {
  (void)state;
  static const idgen__conn_names names = {"tls.ca_file", "tls.cert_file", "tls.key_file",
                                          " then X"};
  char err[256];
  assert_null(
      idgen__conn_tls_new(&names, "/nonexistent/ca.pem", NULL, NULL, err, sizeof err));
  assert_string_equal(err, "tls.ca_file /nonexistent/ca.pem: No such file or directory");
  /* A plain client whose first command is dropped says the caller's hint. */
  peer p;
  peer_start(&p, PEER_DROP);
  idgen__conn_how how = {NULL, NULL, NULL, &names};
  idgen__redis_conn *c = NULL;
  assert_int_equal(idgen__conn_open(&c, "127.0.0.1", p.port, NULL, 0, &how, in_ms(5000),
                                    err, sizeof err),
                   0);
  assert_null(ping(c, in_ms(5000)));
  assert_non_null(
      strstr(idgen__redis_conn_error(c), "before any reply (a TLS port? then X)"));
  idgen__redis_conn_close(c, 0);
  peer_stop(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reply_in_pieces),
      cmocka_unit_test(test_mute_peer_times_out),
      cmocka_unit_test(test_dropped_first_command),
      cmocka_unit_test(test_tls_to_a_plain_peer),
      cmocka_unit_test(test_tls_files),
      cmocka_unit_test(test_read_timed_out_keeps_the_connection),
      cmocka_unit_test(test_tls_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
