/* conn.c: the Redis client's socket, plain or TLS, each step bounded by a deadline (see
 * conn.h for why the client owns it rather than hiredis). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "redis/conn.h"

const idgen__conn_names idgen__redis_names = {"--redis-cacert", "--redis-cert",
                                              "--redis-key", " then rediss://"};

struct idgen__redis_conn {
  int fd;
  SSL *ssl;            /* NULL: plain */
  int has_cert;        /* ssl shows a client certificate */
  int timed_out;       /* the last failure was a deadline passing, nothing else */
  redisReader *reader; /* hiredis's reply parser, fed what the socket gives */
  void (*reader_free)(redisReader *);
  const idgen__conn_names *names;
  uint64_t replies; /* replies read on this connection */
  char why[256];    /* the last failure */
};

/* CLOCK_MONOTONIC, as idgen_monotonic_ns (libidgen-client has no libidgen to call). */
static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conn_fail(idgen__redis_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void conn_fail(idgen__redis_conn *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
}

/* ---- the TLS context ---- */

/* OpenSSL's reason for the last error of this thread's queue (the queue is cleared). */
static const char *ssl_reason(char *buf, size_t len) {
  unsigned long e, last = 0;
  while ((e = ERR_get_error()))
    last = e;
  if (!last)
    return "no reason given";
  const char *r = ERR_reason_error_string(last);
  if (r)
    return r;
  ERR_error_string_n(last, buf, len);
  return buf;
}

/* A file an option names, readable now (OpenSSL would say only "system lib"). */
static int file_readable(const char *opt, const char *path, char *err, size_t errlen) {
  FILE *f = path && *path ? fopen(path, "r") : NULL;
  if (path && *path && !f) {
    snprintf(err, errlen, "%s %.200s: %s", opt, path, strerror(errno));
    return -1;
  }
  if (f)
    fclose(f);
  return 0;
}

struct ssl_ctx_st *idgen__redis_tls_new(const char *cacert, const char *cert,
                                        const char *key, char *err, size_t errlen) {
  return idgen__conn_tls_new(&idgen__redis_names, cacert, cert, key, err, errlen);
}

struct ssl_ctx_st *idgen__conn_tls_new(const idgen__conn_names *names, const char *cacert,
                                       const char *cert, const char *key, char *err,
                                       size_t errlen) {
  char buf[256];
  if (file_readable(names->cacert, cacert, err, errlen) ||
      file_readable(names->cert, cert, err, errlen) ||
      file_readable(names->key, key, err, errlen))
    return NULL;
  ERR_clear_error();
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) {
    snprintf(err, errlen, "TLS: %s", ssl_reason(buf, sizeof buf));
    return NULL;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  /* A redis-server that closes without close_notify is an end of stream like any other:
   * the reply reader already tells a cut reply. */
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_app_data(ctx, (void *)names); /* for the connections' messages */
  const char *opt = NULL, *file = NULL;
  if (cacert && *cacert) {
    if (SSL_CTX_load_verify_locations(ctx, cacert, NULL) != 1)
      opt = names->cacert, file = cacert;
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    opt = "the system's CA store", file = "";
  }
  if (!opt && cert && *cert) {
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
      opt = names->cert, file = cert;
    else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
      opt = names->key, file = key;
    else if (SSL_CTX_check_private_key(ctx) != 1)
      opt = names->key, file = key;
  }
  if (opt) {
    snprintf(err, errlen, "%s %.200s: %s", opt, file, ssl_reason(buf, sizeof buf));
    SSL_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}

void idgen__redis_tls_free(struct ssl_ctx_st *tls) {
  SSL_CTX_free(tls);
}

/* ---- waiting ---- */

/* Waits until fd is ready for events or the deadline passes: 0, or -1 with why set. */
static int wait_fd(idgen__redis_conn *c, short events, int64_t deadline_ns) {
  for (;;) {
    int64_t left_ns = deadline_ns - mono_ns();
    if (left_ns <= 0) {
      conn_fail(c, "timed out");
      c->timed_out = 1;
      return -1;
    }
    struct pollfd p = {c->fd, events, 0};
    int n = poll(&p, 1, (int)((left_ns + 999999) / 1000000));
    if (n > 0)
      return 0;
    if (n < 0 && errno != EINTR) {
      conn_fail(c, "poll: %s", strerror(errno));
      return -1;
    }
  }
}

/* SSL_write and the handshake write with write(2), which raises SIGPIPE on a reset
 * connection; a CLI does not ignore it. Blocked around each call, and one raised by
 * the call is taken off the thread's pending set. */
typedef struct {
  sigset_t old;
  int was_pending;
} pipe_guard;

static void pipe_block(pipe_guard *g) {
  sigset_t set, pending;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, &g->old);
  sigpending(&pending);
  g->was_pending = sigismember(&pending, SIGPIPE);
}

static void pipe_restore(pipe_guard *g) {
  sigset_t set, pending;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  sigpending(&pending);
  if (!g->was_pending && sigismember(&pending, SIGPIPE)) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* After an SSL call returned ret <= 0: 1 to wait for the events it needs and call again,
 * 0 for a clean end of stream (why set), -1 for a failure (why set). step names it. */
static int tls_step(idgen__redis_conn *c, int ret, const char *step, int64_t deadline_ns) {
  int saved = errno;
  int e = SSL_get_error(c->ssl, ret);
  char buf[256];
  if (e == SSL_ERROR_SYSCALL && ret < 0 && saved == EINTR) {
    ERR_clear_error();
    return 1;
  }
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    ERR_clear_error();
    if (!wait_fd(c, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_ns))
      return 1;
    snprintf(buf, sizeof buf, "%s", c->why);
    conn_fail(c, "TLS %s: %s", step, buf);
    return -1;
  }
  if (e == SSL_ERROR_ZERO_RETURN && !strcmp(step, "read"))
    return 0; /* close_notify: an end of stream */
  long verify = SSL_get_verify_result(c->ssl);
  if (e == SSL_ERROR_SSL && verify != X509_V_OK) {
    ERR_clear_error();
    conn_fail(c, "TLS %s: certificate verify failed: %s", step,
              X509_verify_cert_error_string(verify));
    return -1;
  }
  if (e == SSL_ERROR_SSL) {
    unsigned long last = ERR_peek_last_error();
    int reason = ERR_GET_REASON(last);
    /* TLS 1.3: the server refuses a client without a certificate after the handshake,
     * with an alert the first read meets. */
    int no_cert = !c->has_cert && (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
                                   reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE);
    /* A plain server that answers a ClientHello (a RESP error line) is no TLS record. */
    int plain = reason == SSL_R_WRONG_VERSION_NUMBER && !strcmp(step, "handshake");
    conn_fail(c, "TLS %s: %s%s%s%s", step, ssl_reason(buf, sizeof buf),
              no_cert ? "; no client certificate given ("
              : plain ? " (not a TLS port?)"
                      : "",
              no_cert ? c->names->cert : "", no_cert ? ")" : "");
    return -1;
  }
  ERR_clear_error();
  /* A plain port drops (or resets) a ClientHello. A server that wants a client
   * certificate drops a client without one after the handshake; the alert that says so
   * is often lost to the reset. */
  char no_cert[96];
  snprintf(no_cert, sizeof no_cert, "; no client certificate given (%s)", c->names->cert);
  const char *hint = !strcmp(step, "handshake")    ? " (not a TLS port?)"
                     : !c->has_cert && !c->replies ? no_cert
                                                   : "";
  if (e == SSL_ERROR_SYSCALL && ret < 0 && saved) {
    conn_fail(c, "TLS %s: %s%s", step, strerror(saved), hint);
    return -1;
  }
  if (!strcmp(step, "read"))
    return 0; /* an end of stream: the caller says so */
  conn_fail(c, "TLS %s: the server closed the connection%s", step, hint);
  return -1;
}

/* ---- connecting ---- */

static int connect_addr(idgen__redis_conn *c, const struct addrinfo *ai,
                        int64_t deadline_ns) {
  c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 ai->ai_protocol);
  if (c->fd < 0) {
    conn_fail(c, "socket: %s", strerror(errno));
    return -1;
  }
  if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) < 0) {
    if (errno != EINPROGRESS) {
      conn_fail(c, "connect: %s", strerror(errno));
      goto fail;
    }
    if (wait_fd(c, POLLOUT, deadline_ns)) {
      snprintf(c->why, sizeof c->why, "connect: timed out");
      goto fail;
    }
    int so = 0;
    socklen_t len = sizeof so;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so, &len) < 0)
      so = errno;
    if (so) {
      conn_fail(c, "connect: %s", strerror(so));
      goto fail;
    }
  }
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return 0;
fail:
  close(c->fd);
  c->fd = -1;
  return -1;
}

static int handshake(idgen__redis_conn *c, SSL_CTX *tls, const char *host,
                     int64_t deadline_ns) {
  ERR_clear_error();
  if (SSL_CTX_get_app_data(tls))
    c->names = SSL_CTX_get_app_data(tls);
  c->ssl = SSL_new(tls);
  if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1) {
    char buf[256];
    conn_fail(c, "TLS: %s", ssl_reason(buf, sizeof buf));
    return -1;
  }
  unsigned char ip[16];
  int is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
  /* The name checked is the URL's host (or the caller's server_name): an address against
   * the certificate's IP SANs, a name against its DNS SANs; SNI carries names only (RFC
   * 6066). */
  int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host)
                 : SSL_set1_host(c->ssl, host) && SSL_set_tlsext_host_name(c->ssl, host);
  if (ok != 1) {
    char buf[256];
    conn_fail(c, "TLS: host %.100s: %s", host, ssl_reason(buf, sizeof buf));
    return -1;
  }
  for (;;) {
    pipe_guard g;
    pipe_block(&g);
    ERR_clear_error();
    int ret = SSL_connect(c->ssl);
    pipe_restore(&g);
    if (ret == 1)
      return 0;
    if (tls_step(c, ret, "handshake", deadline_ns) != 1)
      return -1;
  }
}

int idgen__redis_conn_open(idgen__redis_conn **out, const char *host, int port,
                           struct ssl_ctx_st *tls, int has_cert, int64_t deadline_ns,
                           char *err, size_t errlen) {
  return idgen__conn_open(out, host, port, tls, has_cert, NULL, deadline_ns, err, errlen);
}

static void reader_free_default(redisReader *r) {
  redisReaderFree(r);
}

int idgen__conn_open(idgen__redis_conn **out, const char *host, int port,
                     struct ssl_ctx_st *tls, int has_cert, const idgen__conn_how *how,
                     int64_t deadline_ns, char *err, size_t errlen) {
  idgen__redis_conn *c = calloc(1, sizeof *c);
  int own_reader = how && how->reader_new;
  if (!c || !(c->reader = own_reader ? how->reader_new() : redisReaderCreate())) {
    free(c);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  c->reader_free = own_reader ? how->reader_free : reader_free_default;
  c->fd = -1;
  c->has_cert = has_cert;
  c->names = how && how->names ? how->names : &idgen__redis_names;
  const char *verify_name =
      how && how->server_name && *how->server_name ? how->server_name : host;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int gai = getaddrinfo(host, service, &hints, &res);
  if (gai) {
    conn_fail(c, "%s", gai_strerror(gai));
  } else {
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
      if (!connect_addr(c, ai, deadline_ns))
        break;
    freeaddrinfo(res);
  }
  if (c->fd >= 0 && (!tls || !handshake(c, tls, verify_name, deadline_ns))) {
    *out = c;
    return 0;
  }
  snprintf(err, errlen, "%s", c->why);
  idgen__redis_conn_close(c, 0);
  return -1;
}

/* ---- one command ---- */

static int send_all(idgen__redis_conn *c, const char *buf, size_t len,
                    int64_t deadline_ns) {
  while (len) {
    ssize_t n;
    if (c->ssl) {
      pipe_guard g;
      pipe_block(&g);
      ERR_clear_error();
      n = SSL_write(c->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
      pipe_restore(&g);
      if (n <= 0) {
        if (tls_step(c, (int)n, "write", deadline_ns) != 1)
          return -1;
        continue;
      }
    } else {
      n = send(c->fd, buf, len, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          conn_fail(c, "write: %s", strerror(errno));
          return -1;
        }
        if (wait_fd(c, POLLOUT, deadline_ns))
          return -1;
        continue;
      }
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* A TLS port drops (or resets) a plain client's first command unanswered. */
static const char *plain_hint(idgen__redis_conn *c) {
  static _Thread_local char hint[96];
  snprintf(hint, sizeof hint, " before any reply (a TLS port?%s)", c->names->tls_hint);
  return !c->ssl && !c->replies ? hint : "";
}

/* Reads what the socket has into the reader: 0, or -1 with why set. */
static int recv_some(idgen__redis_conn *c, int64_t deadline_ns) {
  char buf[16384];
  for (;;) {
    ssize_t n;
    if (c->ssl) {
      ERR_clear_error();
      n = SSL_read(c->ssl, buf, sizeof buf);
      if (n <= 0) {
        int st = tls_step(c, (int)n, "read", deadline_ns);
        if (st == 1)
          continue;
        if (st == 0)
          n = 0; /* an end of stream, told below */
        else
          return -1;
      }
    } else {
      n = recv(c->fd, buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          conn_fail(c, "read: %s%s", strerror(errno), plain_hint(c));
          return -1;
        }
        if (wait_fd(c, POLLIN, deadline_ns))
          return -1;
        continue;
      }
    }
    if (n == 0) {
      int no_cert = c->ssl && !c->has_cert && !c->replies;
      conn_fail(c, "the server closed the connection%s%s%s",
                no_cert ? "; no client certificate given (" : "",
                no_cert ? c->names->cert : (c->ssl ? "" : plain_hint(c)),
                no_cert ? ")" : "");
      return -1;
    }
    if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
      conn_fail(c, "reply: %s", c->reader->errstr);
      return -1;
    }
    return 0;
  }
}

int idgen__redis_conn_send(idgen__redis_conn *c, const char *cmd, size_t len,
                           int64_t deadline_ns) {
  c->timed_out = 0;
  return send_all(c, cmd, len, deadline_ns);
}

struct redisReply *idgen__redis_conn_call(idgen__redis_conn *c, const char *cmd, size_t len,
                                          int64_t deadline_ns) {
  if (idgen__redis_conn_send(c, cmd, len, deadline_ns))
    return NULL;
  return idgen__redis_conn_read(c, deadline_ns);
}

struct redisReply *idgen__redis_conn_read(idgen__redis_conn *c, int64_t deadline_ns) {
  c->timed_out = 0;
  for (;;) {
    void *reply = NULL;
    if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
      conn_fail(c, "reply: %s", c->reader->errstr);
      return NULL;
    }
    if (reply) {
      c->replies++;
      return reply;
    }
    if (recv_some(c, deadline_ns))
      return NULL;
  }
}

const char *idgen__redis_conn_error(const idgen__redis_conn *c) {
  return c->why;
}

int idgen__redis_conn_timed_out(const idgen__redis_conn *c) {
  return c->timed_out;
}

int idgen__redis_conn_fd(const idgen__redis_conn *c) {
  return c->fd;
}

void idgen__redis_conn_close(idgen__redis_conn *c, int only_drop) {
  if (!c)
    return;
  if (c->ssl) {
    if (!only_drop) { /* close_notify, not waiting for the server's */
      pipe_guard g;
      pipe_block(&g);
      ERR_clear_error();
      SSL_shutdown(c->ssl);
      pipe_restore(&g);
    }
    SSL_free(c->ssl);
  }
  if (c->fd >= 0 && !only_drop)
    close(c->fd);
  if (c->reader)
    c->reader_free(c->reader);
  ERR_clear_error();
  free(c);
}
