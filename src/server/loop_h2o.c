/* loop_h2o.c: every h2o call of the server lives here (h2o 2.2.5, evloop backend): one
 * event loop per thread, its two listeners, and their connections. A connection reads
 * its socket itself, into a buffer no larger than one request may be, and hands the
 * bytes to http1.c or resp.c; between requests it keeps no buffer at all. (h2o's own
 * HTTP/1 reader buffers a whole request head, up to its compiled 400 KB, before anyone
 * can refuse it, and it re-arms its own read callback after every response, so a
 * keep-alive connection would be out of reach of any limit set here.) */
#ifndef H2O_USE_LIBUV
#define H2O_USE_LIBUV 0 /* the .pc file omits it */
#endif
#include <h2o.h>

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http1.h"
#include "server/netloop.h"
#include "server/resp.h"

/* Freed connection memory after which the loop gives free pages back to the system:
 * glibc keeps freed chunks in its heap, so RSS would stay at an attack's peak. */
#define TRIM_AFTER_BYTES (4u << 20)
/* What a TLS connection holds besides its conn, mostly in OpenSSL and h2o (its SSL, a
 * record buffer, h2o's encrypted and decrypted input: 48 KiB measured mid-handshake),
 * counted as freed at its close so that the trim below sees it. */
#define TLS_CONN_BYTES (48u << 10)
/* How long a closing connection drains what the client still sends. */
#define LINGER_MS 1000
/* A read that brings fewer bytes than this to an unfinished request pauses reading, for
 * 1 ms, then 2, 4, ... up to 64 ms while the same request keeps trickling in: a request
 * sent a few bytes per packet then costs a wakeup per pause, not one per packet (a
 * wakeup costs 5 us of CPU here when the thread is busy, far more when it slept,
 * whatever the parser does). Clients send a request in one write: only a trickle
 * waits. */
#define TRICKLE_BYTES 64
#define TRICKLE_STEPS 7

typedef struct conn conn;

/* What differs between the two listeners' connections. */
typedef struct protocol {
  void (*init)(conn *c);
  /* As idgen__http1_feed / idgen__resp_feed. */
  size_t (*feed)(conn *c, const char *in, size_t len, idgen__buf *out, int *close);
  /* Arms the timer that bounds the wait for the client; answered: a response went out. */
  void (*wait)(conn *c, int answered);
  /* The handshake verified the client certificate c->cert (a team's, maybe). */
  void (*peer)(conn *c);
} protocol;

struct idgen__net {
  idgen__tctx *t;
  idgen__tls *tls; /* NULL: plain text */
  const idgen__serve_config *cfg;
  h2o_evloop_t *loop;
  h2o_socket_t *listener[LISTENER_COUNT];
  _Atomic uint64_t *conns[LISTENER_COUNT]; /* open, every thread together */
  size_t max_input[LISTENER_COUNT];        /* the most one request may need */
  h2o_timeout_t header_timeout, idle_timeout, auth_timeout, linger_timeout;
  h2o_timeout_t trickle_pause[TRICKLE_STEPS]; /* 1, 2, 4, ... 64 ms */
  char *scratch; /* reads land here while no request is unfinished */
  size_t scratch_len;
  idgen__buf out; /* responses are built here, then sent */
  conn *head;     /* every connection, for shutdown */
  size_t open;
  size_t freed_bytes; /* since the last trim */
  int stopping;
};

struct conn {
  idgen__net *net;
  h2o_socket_t *sock;
  idgen__listener listener;
  const protocol *proto;
  union {
    idgen__http1_session http;
    idgen__resp_session resp;
  } s;
  idgen__buf in;  /* an unfinished request, kept until the rest arrives */
  idgen__buf out; /* what the socket did not take at once */
  h2o_timeout_entry_t timer;
  h2o_timeout_t *timer_on;    /* the timeout the timer is linked to */
  h2o_timeout_entry_t resume; /* the end of a trickle pause */
  conn *prev, *next;
  unsigned trickles; /* pauses taken since the last answer */
  unsigned writing : 1, closing : 1, lingering : 1, eof : 1;
  unsigned tls : 1; /* h2o's socket reads, decrypts into sock->input, and encrypts */
  SSL_CTX *ssl_ctx; /* a reference, held to the close: h2o makes the SSL from it only
                       when the first bytes come, and keeps no reference of its own */
  const SSL *ssl;   /* h2o's, once its handshake is done (idgen__net_tls_info) */
  idgen__cert_names *cert; /* the client certificate verified; NULL: none */
};

/* ---- the two protocols ---- */

static void http_init(conn *c) {
  idgen__http1_session_init(&c->s.http, c->net->t);
}
static size_t http_feed(conn *c, const char *in, size_t len, idgen__buf *out, int *close) {
  return idgen__http1_feed(&c->s.http, in, len, out, close);
}
static void http_peer(conn *c) {
  c->s.http.cert = c->cert;
}
/* --health-listen's: HTTP with the health routes alone (api.c). */
static void health_init(conn *c) {
  http_init(c);
  c->s.http.health = 1;
}
static void resp_init(conn *c) {
  idgen__resp_session_init(&c->s.resp, c->net->t);
}
static size_t resp_feed(conn *c, const char *in, size_t len, idgen__buf *out, int *close) {
  return idgen__resp_feed(&c->s.resp, in, len, out, close);
}

static void resp_peer(conn *c) {
  idgen__resp_session_cert(&c->s.resp, c->cert);
}

static void conn_wait(conn *c, h2o_timeout_t *timeout, int restart) {
  if (c->timer_on == timeout && !restart)
    return;
  h2o_timeout_unlink(&c->timer);
  h2o_timeout_link(c->net->loop, timeout, &c->timer);
  c->timer_on = timeout;
}

/* HTTP: --header-timeout to deliver a whole request, counted from when the connection
 * is ready for one (slow bytes do not extend it); the same bounds keep-alive idleness. */
static void http_wait(conn *c, int answered) {
  conn_wait(c, &c->net->header_timeout, answered);
}
/* RESP: --auth-timeout from the start until AUTH succeeds (no command extends it), then
 * --idle-timeout of silence. */
static void resp_wait(conn *c, int answered) {
  (void)answered;
  if (c->s.resp.authed)
    conn_wait(c, &c->net->idle_timeout, 1);
  else
    conn_wait(c, &c->net->auth_timeout, 0);
}

static const protocol protocols[LISTENER_COUNT] = {
    [LISTENER_HTTP] = {http_init, http_feed, http_wait, http_peer},
    [LISTENER_RESP] = {resp_init, resp_feed, resp_wait, resp_peer},
    [LISTENER_HEALTH] = {health_init, http_feed, http_wait, http_peer},
};

/* ---- connections ---- */

static void release_buf(idgen__net *net, idgen__buf *b) {
  net->freed_bytes += b->cap;
  idgen__buf_free(b);
}

static void conn_close(conn *c) {
  idgen__net *net = c->net;
  h2o_timeout_unlink(&c->timer);
  h2o_timeout_unlink(&c->resume);
  if (c->prev)
    c->prev->next = c->next;
  else
    net->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  h2o_socket_close(c->sock);
  SSL_CTX_free(c->ssl_ctx); /* after the socket: NULL is fine */
  free(c->cert);            /* NULL is fine too */
  release_buf(net, &c->in);
  release_buf(net, &c->out);
  net->freed_bytes +=
      sizeof *c + (c->tls ? TLS_CONN_BYTES : 0) + (c->cert ? sizeof *c->cert : 0);
  atomic_fetch_sub(net->conns[c->listener], 1);
  net->open--;
  free(c);
}

static void on_readable(h2o_socket_t *sock, const char *err);
static void on_written(h2o_socket_t *sock, const char *err);

static void read_on(conn *c) {
  if (!h2o_socket_is_reading(c->sock))
    h2o_socket_read_start(c->sock, on_readable);
}

/* Closing: the last response is out; the client may still be sending. Closing now,
 * with its bytes unread, would reset the connection and could destroy that response
 * before the client read it, so read and drop for a while first. */
static void conn_linger(conn *c) {
  c->lingering = 1;
  shutdown(h2o_socket_get_fd(c->sock), SHUT_WR);
  release_buf(c->net, &c->in);
  conn_wait(c, &c->net->linger_timeout, 1);
  read_on(c);
}

static void on_resume(h2o_timeout_entry_t *entry) {
  read_on((conn *)((char *)entry - offsetof(conn, resume)));
}

static void on_timeout(h2o_timeout_entry_t *entry) {
  conn *c = (conn *)((char *)entry - offsetof(conn, timer));
  c->timer_on = NULL;
  if (c->writing && !c->lingering) {
    /* A client that stopped reading: make the pending write fail, which closes. */
    c->closing = 1;
    shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
    return;
  }
  conn_close(c);
}

/* Sends what the socket takes now; the rest waits in c->out (reading stops meanwhile).
 * Over TLS, all of it goes through h2o, which encrypts. Returns -1 if the connection
 * failed. */
static int conn_send(conn *c, const char *data, size_t len) {
  ssize_t n =
      c->tls ? 0 : send(h2o_socket_get_fd(c->sock), data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && errno != EAGAIN && errno != EINTR)
    return -1;
  size_t sent = n > 0 ? (size_t)n : 0;
  if (sent == len)
    return 0;
  idgen__buf_add(&c->out, data + sent, len - sent);
  if (c->out.failed)
    return -1;
  c->writing = 1;
  h2o_socket_read_stop(c->sock);
  h2o_iovec_t buf = h2o_iovec_init(c->out.data, c->out.len);
  h2o_socket_write(c->sock, &buf, 1, on_written);
  c->proto->wait(c, 1); /* the same bound for a client that stopped reading */
  return 0;
}

/* Drops the first n bytes of c->in; an empty buffer is freed. */
static void consume_in(conn *c, size_t n) {
  if (n == 0)
    return;
  if (n >= c->in.len) {
    release_buf(c->net, &c->in);
    return;
  }
  memmove(c->in.data, c->in.data + n, c->in.len - n);
  c->in.len -= n;
}

/* Answers what data[0..len) holds (the scratch buffer, or c->in), sends the responses,
 * keeps an unfinished request in c->in, and decides what the connection waits for;
 * trickle: the last read brought fewer than TRICKLE_BYTES. */
static void conn_run(conn *c, const char *data, size_t len, int in_scratch, int trickle) {
  idgen__net *net = c->net;
  int answered = 0;
  for (;;) {
    int close = 0;
    size_t used = len ? c->proto->feed(c, data, len, &net->out, &close) : 0;
    if (in_scratch) {
      if (used < len && !close)
        idgen__buf_add(&c->in, data + used, len - used);
    } else {
      consume_in(c, close ? c->in.len : used);
    }
    int failed = c->in.failed || net->out.failed;
    if (!failed && net->out.len) {
      failed = conn_send(c, net->out.data, net->out.len) < 0;
      answered = 1;
    }
    idgen__buf_reset(&net->out);
    if (failed) {
      conn_close(c);
      return;
    }
    if (close)
      c->closing = 1;
    if (c->writing)
      return; /* on_written goes on */
    if (close || used == 0 || c->in.len == 0)
      break;
    /* Requests left past the output high-water mark: answer them now. */
    data = c->in.data;
    len = c->in.len;
    in_scratch = 0;
  }
  if (c->closing) {
    conn_linger(c);
  } else if (c->eof) {
    conn_close(c); /* the client sent all it will: anything left can never finish */
  } else if (c->in.len >= net->max_input[c->listener]) {
    conn_close(c); /* a parser that neither finished nor refused a full request: a bug */
  } else {
    c->proto->wait(c, answered);
    if (answered)
      c->trickles = 0;
    if (trickle && c->in.len) {
      unsigned step = c->trickles < TRICKLE_STEPS ? c->trickles++ : TRICKLE_STEPS - 1;
      h2o_socket_read_stop(c->sock);
      h2o_timeout_link(net->loop, &net->trickle_pause[step], &c->resume);
    } else {
      read_on(c);
    }
  }
}

static void on_written(h2o_socket_t *sock, const char *err) {
  conn *c = sock->data;
  c->writing = 0;
  release_buf(c->net, &c->out);
  if (err) {
    conn_close(c);
    return;
  }
  if (c->closing) {
    conn_linger(c);
    return;
  }
  c->proto->wait(c, 1);
  conn_run(c, c->in.data, c->in.len, 0, 0);
}

/* TLS: h2o read the socket and decrypted what it could into sock->input (maybe nothing,
 * a partial record). All of it is taken at once: h2o calls again only when the socket
 * has more, and SO_RCVBUF (start_tls) bounds how much one read brings. */
static void on_readable_tls(conn *c, h2o_socket_t *sock) {
  idgen__net *net = c->net;
  size_t n = sock->input->size;
  if (c->lingering || n == 0) {
    h2o_buffer_consume(&sock->input, n);
    return;
  }
  int in_scratch = c->in.len == 0 && n <= net->scratch_len;
  if (in_scratch)
    memcpy(net->scratch, sock->input->bytes, n);
  else
    idgen__buf_add(&c->in, sock->input->bytes, n);
  h2o_buffer_consume(&sock->input, n);
  if (c->in.failed) {
    conn_close(c);
    return;
  }
  int trickle = n < TRICKLE_BYTES;
  if (in_scratch)
    conn_run(c, net->scratch, n, 1, trickle);
  else
    conn_run(c, c->in.data, c->in.len, 0, trickle);
}

static void on_readable(h2o_socket_t *sock, const char *err) {
  conn *c = sock->data;
  idgen__net *net = c->net;
  if (err) {
    conn_close(c);
    return;
  }
  if (c->tls) {
    on_readable_tls(c, sock);
    return;
  }
  int fd = h2o_socket_get_fd(sock);
  if (c->lingering) {
    ssize_t n = read(fd, net->scratch, net->scratch_len);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      conn_close(c);
    return;
  }
  /* A new request lands in the scratch buffer; the rest of an unfinished one goes next
   * to its start in c->in, never past what one request may take. */
  int in_scratch = c->in.len == 0;
  size_t room = net->max_input[c->listener] - c->in.len;
  char *dst = in_scratch ? net->scratch : idgen__buf_reserve(&c->in, room);
  if (!dst) {
    conn_close(c);
    return;
  }
  ssize_t n = read(fd, dst, room);
  if (n < 0) {
    if (errno != EAGAIN && errno != EINTR)
      conn_close(c);
    return;
  }
  if (n == 0) {
    c->eof = 1;
    h2o_socket_read_stop(sock);
  } else if (!in_scratch) {
    c->in.len += (size_t)n;
  }
  int trickle = n > 0 && n < TRICKLE_BYTES;
  if (in_scratch)
    conn_run(c, net->scratch, (size_t)n, 1, trickle);
  else
    conn_run(c, c->in.data, c->in.len, 0, trickle);
}

/* ---- TLS ---- */

/* The handshake is over: the connection reads as any other (h2o may hold application
 * data that came with the handshake's last flight: it is taken now). */
static void on_handshake(h2o_socket_t *sock, const char *err) {
  conn *c = sock->data;
  if (err) {
    atomic_fetch_add_explicit(&c->net->t->m->tls_handshakes_failed[c->listener], 1,
                              memory_order_relaxed);
    conn_close(c);
    return;
  }
  idgen__cert_names names;
  if (c->ssl && idgen__tls_peer_names(c->ssl, &names)) {
    c->cert = malloc(sizeof *c->cert);
    if (!c->cert) {
      conn_close(c);
      return;
    }
    *c->cert = names;
    c->proto->peer(c);
    c->proto->wait(c, 0); /* RESP: granted by its certificate, it waits as authed */
  }
  read_on(c);
  if (sock->input->size)
    on_readable_tls(c, sock);
}

/* h2o's BIO holds its socket (h2o 2.2.5's setup_bio: BIO_set_data(bio, sock)), whose
 * data is the conn: the only way to the SSL, which h2o's API does not give. */
void idgen__net_tls_info(const SSL *ssl, int where, int ret) {
  (void)ret;
  if (!(where & SSL_CB_HANDSHAKE_DONE))
    return;
  BIO *bio = SSL_get_rbio(ssl);
  h2o_socket_t *sock = bio ? BIO_get_data(bio) : NULL;
  conn *c = sock ? sock->data : NULL;
  if (c && !c->ssl)
    c->ssl = ssl;
}

/* A socket receive buffer this size caps what h2o reads into memory at once, per TLS
 * connection (the kernel doubles it). */
#define TLS_RCVBUF (32 << 10)

static void start_tls(conn *c) {
  int rcvbuf = TLS_RCVBUF;
  setsockopt(h2o_socket_get_fd(c->sock), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  c->tls = 1;
  c->ssl_ctx = idgen__tls_ctx(c->net->tls);
  h2o_socket_ssl_handshake(c->sock, c->ssl_ctx, NULL, on_handshake);
}

/* ---- listeners ---- */

static int admit(idgen__net *net, idgen__listener which) {
  idgen__metrics *m = net->t->m;
  uint64_t before = atomic_fetch_add(net->conns[which], 1);
  if (before >= net->cfg->max_conns) {
    atomic_fetch_sub(net->conns[which], 1);
    atomic_fetch_add_explicit(&m->conns_refused[which], 1, memory_order_relaxed);
    return 0;
  }
  atomic_fetch_add_explicit(&m->conns_accepted[which], 1, memory_order_relaxed);
  net->open++;
  return 1;
}

static void accept_on(h2o_socket_t *listener, idgen__listener which) {
  idgen__net *net = listener->data;
  for (int i = 0; i < 64; i++) {
    h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
    if (!sock)
      return;
    if (!admit(net, which)) {
      h2o_socket_close(sock);
      continue;
    }
    conn *c = calloc(1, sizeof *c);
    if (!c) {
      h2o_socket_close(sock);
      atomic_fetch_sub(net->conns[which], 1);
      net->open--;
      continue;
    }
    c->net = net;
    c->sock = sock;
    c->listener = which;
    c->proto = &protocols[which];
    c->timer.cb = on_timeout;
    c->resume.cb = on_resume;
    c->proto->init(c);
    c->next = net->head;
    if (net->head)
      net->head->prev = c;
    net->head = c;
    sock->data = c;
    c->proto->wait(c, 1); /* over TLS, the handshake is inside the same bound */
    if (net->tls && which != LISTENER_HEALTH)
      start_tls(c);
    else {
      h2o_socket_dont_read(sock, 1); /* on_readable reads, as much as fits */
      read_on(c);
    }
  }
}

static void on_http_accept(h2o_socket_t *listener, const char *err) {
  if (!err)
    accept_on(listener, LISTENER_HTTP);
}
static void on_resp_accept(h2o_socket_t *listener, const char *err) {
  if (!err)
    accept_on(listener, LISTENER_RESP);
}

static void on_health_accept(h2o_socket_t *listener, const char *err) {
  if (!err)
    accept_on(listener, LISTENER_HEALTH);
}

static h2o_socket_t *listen_on(idgen__net *net, int fd, h2o_socket_cb cb) {
  h2o_socket_t *sock = h2o_evloop_socket_create(net->loop, fd, H2O_SOCKET_FLAG_DONT_READ);
  sock->data = net;
  h2o_socket_read_start(sock, cb);
  return sock;
}

/* ---- the loop ---- */

int idgen__net_new(idgen__net **out, const idgen__net_config *cfg) {
  idgen__net *net = calloc(1, sizeof *net);
  if (!net)
    return IDGEN_ENOMEM;
  net->t = cfg->tctx;
  net->tls = cfg->tls;
  net->cfg = idgen__svc_config(cfg->tctx->svc);
  net->max_input[LISTENER_HTTP] = idgen__http1_max_input(net->cfg);
  net->max_input[LISTENER_RESP] = IDGEN_RESP_MAX_REQUEST;
  net->max_input[LISTENER_HEALTH] = net->max_input[LISTENER_HTTP];
  net->scratch_len = net->max_input[LISTENER_HTTP] > net->max_input[LISTENER_RESP]
                         ? net->max_input[LISTENER_HTTP]
                         : net->max_input[LISTENER_RESP];
  net->scratch = malloc(net->scratch_len);
  if (!net->scratch) {
    free(net);
    return IDGEN_ENOMEM;
  }
  for (size_t l = 0; l < LISTENER_COUNT; l++)
    net->conns[l] = idgen__svc_conns(cfg->tctx->svc, (idgen__listener)l);
  net->loop = h2o_evloop_create();
  uint64_t idle = net->cfg->idle_timeout_ms;
  uint64_t auth = net->cfg->auth_timeout_ms < idle ? net->cfg->auth_timeout_ms : idle;
  h2o_timeout_init(net->loop, &net->header_timeout, net->cfg->header_timeout_ms);
  h2o_timeout_init(net->loop, &net->idle_timeout, idle);
  h2o_timeout_init(net->loop, &net->auth_timeout, auth);
  h2o_timeout_init(net->loop, &net->linger_timeout, LINGER_MS);
  for (unsigned i = 0; i < TRICKLE_STEPS; i++)
    h2o_timeout_init(net->loop, &net->trickle_pause[i], 1u << i);
  if (cfg->http_fd >= 0)
    net->listener[LISTENER_HTTP] = listen_on(net, cfg->http_fd, on_http_accept);
  if (cfg->resp_fd >= 0)
    net->listener[LISTENER_RESP] = listen_on(net, cfg->resp_fd, on_resp_accept);
  if (cfg->health_fd >= 0)
    net->listener[LISTENER_HEALTH] = listen_on(net, cfg->health_fd, on_health_accept);
  *out = net;
  return 0;
}

void idgen__net_run_once(idgen__net *net, int max_wait_ms) {
  h2o_evloop_run(net->loop, max_wait_ms);
  if (net->freed_bytes >= TRIM_AFTER_BYTES) {
    malloc_trim(0);
    net->freed_bytes = 0;
  }
}

void idgen__net_stop_accepting(idgen__net *net) {
  if (net->stopping)
    return;
  net->stopping = 1;
  for (size_t l = 0; l < LISTENER_COUNT; l++) {
    if (!net->listener[l])
      continue;
    h2o_socket_read_stop(net->listener[l]);
    h2o_socket_close(net->listener[l]);
    net->listener[l] = NULL;
  }
  /* Idle RESP connections have nothing in flight: close them now. HTTP ones get their
   * next answer with Connection: close, or the shutdown bound. */
  for (conn *c = net->head, *next; c; c = next) {
    next = c->next;
    if (c->lingering || (c->listener == LISTENER_RESP && !c->writing && c->in.len == 0))
      conn_close(c);
  }
}

size_t idgen__net_open(const idgen__net *net) {
  return net->open;
}

void idgen__net_free(idgen__net *net) {
  if (!net)
    return;
  idgen__net_stop_accepting(net);
  while (net->head)
    conn_close(net->head);
  /* Let the loop finish disposing of the closed sockets. */
  h2o_evloop_run(net->loop, 0);
  h2o_timeout_dispose(net->loop, &net->header_timeout);
  h2o_timeout_dispose(net->loop, &net->idle_timeout);
  h2o_timeout_dispose(net->loop, &net->auth_timeout);
  h2o_timeout_dispose(net->loop, &net->linger_timeout);
  for (unsigned i = 0; i < TRICKLE_STEPS; i++)
    h2o_timeout_dispose(net->loop, &net->trickle_pause[i]);
  h2o_evloop_destroy(net->loop);
  /* h2o keeps freed socket buffers (TLS connections use them) in a per-thread bin for
   * the next connection: this thread is done with them. */
  while (h2o_socket_buffer_prototype.allocator.cnt)
    free(h2o_mem_alloc_recycle(&h2o_socket_buffer_prototype.allocator, 0));
  idgen__buf_free(&net->out);
  free(net->scratch);
  free(net);
}
