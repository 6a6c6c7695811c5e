/* loop_h2o.c: every h2o call of the server lives here (h2o 2.2.5, evloop backend): the
 * event loop, the HTTP/1 listener handing parsed requests to api.c, and the RESP listener
 * feeding bytes to resp.c, with connection limits and idle timeouts. */
#ifndef H2O_USE_LIBUV
#define H2O_USE_LIBUV 0 /* the .pc file omits it */
#endif
#include <h2o.h>
#include <h2o/http1.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/netloop.h"
#include "server/resp.h"

typedef struct resp_conn resp_conn;

typedef struct http_handler {
  h2o_handler_t super;
  idgen__net *net;
} http_handler;

struct idgen__net {
  idgen__net_config cfg;
  h2o_globalconf_t globalconf;
  h2o_context_t ctx;
  h2o_accept_ctx_t accept_ctx;
  h2o_evloop_t *loop;
  h2o_socket_t *http_listener, *resp_listener;
  h2o_timeout_t resp_idle;
  h2o_timeout_t resp_linger; /* how long a closing connection drains its input */
  resp_conn *resp_head;      /* every RESP connection, for shutdown */
  size_t open;               /* this thread's connections */
  int stopping;
};

struct resp_conn {
  idgen__net *net;
  h2o_socket_t *sock;
  idgen__resp_session session;
  idgen__buf out;
  h2o_timeout_entry_t idle;
  resp_conn *prev, *next;
  int writing, closing, lingering;
};

/* ---- connection accounting ---- */

static int admit(idgen__net *net) {
  uint64_t before = atomic_fetch_add(net->cfg.conns, 1);
  if (before >= net->cfg.max_conns) {
    atomic_fetch_sub(net->cfg.conns, 1);
    atomic_fetch_add_explicit(&net->cfg.tctx->m->conns_refused, 1, memory_order_relaxed);
    return 0;
  }
  atomic_fetch_add_explicit(&net->cfg.tctx->m->conns_accepted, 1, memory_order_relaxed);
  net->open++;
  return 1;
}

static void release(idgen__net *net) {
  atomic_fetch_sub(net->cfg.conns, 1);
  net->open--;
}

static void tune(h2o_socket_t *sock) {
  int one = 1;
  setsockopt(h2o_socket_get_fd(sock), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- HTTP ---- */

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  idgen__net *net = ((http_handler *)self)->net;
  idgen__tctx *t = net->cfg.tctx;
  idgen__http_req r;
  memset(&r, 0, sizeof r);
  r.method = req->input.method.base;
  r.method_len = req->input.method.len;
  r.path = req->input.path.base;
  r.path_len = req->input.path.len;
  if (req->input.query_at != SIZE_MAX) {
    r.path_len = req->input.query_at;
    r.query = req->input.path.base + req->input.query_at + 1;
    r.query_len = req->input.path.len - req->input.query_at - 1;
  }
  r.request_line_bytes = req->input.method.len + 1 + req->input.path.len + 9;
  for (size_t i = 0; i < req->headers.size; i++) {
    const h2o_header_t *h = req->headers.entries + i;
    r.header_bytes += h->name->len + h->value.len + 4;
  }
  ssize_t a = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
  if (a >= 0) {
    r.authorization = req->headers.entries[a].value.base;
    r.authorization_len = req->headers.entries[a].value.len;
  }
  idgen__http_res res;
  idgen__api_http(t, &r, &res);
  req->res.status = res.status;
  req->res.reason = res.reason;
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 res.content_type, strlen(res.content_type));
  if (res.retry_after_s > 0) {
    char *v = h2o_mem_alloc_pool(&req->pool, 16);
    int n = snprintf(v, 16, "%d", res.retry_after_s);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL, v,
                   (size_t)n);
  }
  if (res.allow)
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL,
                   H2O_STRLIT("GET, HEAD"));
  if (res.www_authenticate)
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_WWW_AUTHENTICATE, NULL,
                   H2O_STRLIT("Bearer"));
  if (res.close || net->stopping)
    req->http1_is_persistent = 0;
  req->res.content_length = t->out.len;
  h2o_send_inline(req, t->out.data ? t->out.data : "", t->out.len);
  return 0;
}

static void on_http_close(void *data) {
  release(data);
}

static void on_http_accept(h2o_socket_t *listener, const char *err) {
  if (err)
    return;
  idgen__net *net = listener->data;
  for (int i = 0; i < 64; i++) {
    h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
    if (!sock)
      return;
    if (!admit(net)) {
      h2o_socket_close(sock);
      continue;
    }
    tune(sock);
    sock->on_close.cb = on_http_close;
    sock->on_close.data = net;
    h2o_accept(&net->accept_ctx, sock);
  }
}

/* ---- RESP ---- */

static void resp_read(h2o_socket_t *sock, const char *err);

static void resp_close(resp_conn *c) {
  idgen__net *net = c->net;
  h2o_timeout_unlink(&c->idle);
  if (c->prev)
    c->prev->next = c->next;
  else
    net->resp_head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  h2o_socket_close(c->sock);
  idgen__buf_free(&c->out);
  free(c);
  release(net);
}

static void resp_process(resp_conn *c);

/* A closing connection reads and drops what the client still sends, so that closing
 * with unread input does not reset the connection and destroy the last reply (an error
 * the client should see) before the client reads it. */
static void resp_linger_read(h2o_socket_t *sock, const char *err) {
  resp_conn *c = sock->data;
  if (err) {
    resp_close(c);
    return;
  }
  h2o_buffer_consume(&sock->input, sock->input->size);
}

static void resp_written(h2o_socket_t *sock, const char *err) {
  resp_conn *c = sock->data;
  c->writing = 0;
  idgen__buf_reset(&c->out);
  if (err) {
    resp_close(c);
    return;
  }
  if (c->closing) {
    c->lingering = 1;
    shutdown(h2o_socket_get_fd(sock), SHUT_WR);
    h2o_buffer_consume(&sock->input, sock->input->size);
    h2o_timeout_unlink(&c->idle);
    h2o_timeout_link(c->net->loop, &c->net->resp_linger, &c->idle);
    h2o_socket_read_start(sock, resp_linger_read);
    return;
  }
  h2o_socket_read_start(sock, resp_read);
  resp_process(c);
}

static void resp_process(resp_conn *c) {
  h2o_socket_t *sock = c->sock;
  if (c->writing)
    return;
  int close = 0;
  size_t used =
      idgen__resp_feed(&c->session, sock->input->bytes, sock->input->size, &c->out, &close);
  if (used)
    h2o_buffer_consume(&sock->input, used);
  if (c->out.failed) {
    resp_close(c);
    return;
  }
  if (c->out.len) {
    c->writing = 1;
    c->closing = close;
    h2o_socket_read_stop(sock);
    h2o_iovec_t buf = h2o_iovec_init(c->out.data, c->out.len);
    h2o_socket_write(sock, &buf, 1, resp_written);
    return;
  }
  if (close)
    resp_close(c);
}

static void resp_read(h2o_socket_t *sock, const char *err) {
  resp_conn *c = sock->data;
  if (err) {
    resp_close(c);
    return;
  }
  h2o_timeout_unlink(&c->idle);
  h2o_timeout_link(c->net->loop, &c->net->resp_idle, &c->idle);
  resp_process(c);
}

static void resp_idle(h2o_timeout_entry_t *entry) {
  resp_conn *c = (resp_conn *)((char *)entry - offsetof(resp_conn, idle));
  if (c->writing && !c->lingering) {
    /* A client that stopped reading: make the pending write fail, which closes. */
    c->closing = 1;
    shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
    return;
  }
  resp_close(c);
}

static void on_resp_accept(h2o_socket_t *listener, const char *err) {
  if (err)
    return;
  idgen__net *net = listener->data;
  for (int i = 0; i < 64; i++) {
    h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
    if (!sock)
      return;
    if (!admit(net)) {
      h2o_socket_close(sock);
      continue;
    }
    resp_conn *c = calloc(1, sizeof *c);
    if (!c) {
      h2o_socket_close(sock);
      release(net);
      continue;
    }
    tune(sock);
    c->net = net;
    c->sock = sock;
    c->idle.cb = resp_idle;
    idgen__resp_session_init(&c->session, net->cfg.tctx);
    c->next = net->resp_head;
    if (net->resp_head)
      net->resp_head->prev = c;
    net->resp_head = c;
    sock->data = c;
    h2o_timeout_link(net->loop, &net->resp_idle, &c->idle);
    h2o_socket_read_start(sock, resp_read);
  }
}

/* ---- the loop ---- */

static h2o_socket_t *listen_on(idgen__net *net, int fd, h2o_socket_cb cb) {
  h2o_socket_t *sock = h2o_evloop_socket_create(net->loop, fd, H2O_SOCKET_FLAG_DONT_READ);
  sock->data = net;
  h2o_socket_read_start(sock, cb);
  return sock;
}

int idgen__net_new(idgen__net **out, const idgen__net_config *cfg) {
  idgen__net *net = calloc(1, sizeof *net);
  if (!net)
    return IDGEN_ENOMEM;
  net->cfg = *cfg;
  h2o_config_init(&net->globalconf);
  net->globalconf.server_name = h2o_iovec_init(H2O_STRLIT("idgen"));
  net->globalconf.max_request_entity_size = 1024; /* no route takes a body */
  net->globalconf.http1.req_timeout = cfg->header_timeout_ms;
  net->globalconf.http1.upgrade_to_http2 = 0;
  h2o_hostconf_t *host = h2o_config_register_host(
      &net->globalconf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
  http_handler *handler = (http_handler *)h2o_create_handler(path, sizeof *handler);
  handler->super.on_req = on_req;
  handler->net = net;

  net->loop = h2o_evloop_create();
  h2o_context_init(&net->ctx, net->loop, &net->globalconf);
  net->accept_ctx.ctx = &net->ctx;
  net->accept_ctx.hosts = net->globalconf.hosts;
  h2o_timeout_init(net->loop, &net->resp_idle, cfg->idle_timeout_ms);
  h2o_timeout_init(net->loop, &net->resp_linger, 1000);
  if (cfg->http_fd >= 0)
    net->http_listener = listen_on(net, cfg->http_fd, on_http_accept);
  if (cfg->resp_fd >= 0)
    net->resp_listener = listen_on(net, cfg->resp_fd, on_resp_accept);
  *out = net;
  return 0;
}

void idgen__net_run_once(idgen__net *net, int max_wait_ms) {
  h2o_evloop_run(net->loop, max_wait_ms);
}

void idgen__net_stop_accepting(idgen__net *net) {
  if (net->stopping)
    return;
  net->stopping = 1;
  if (net->http_listener) {
    h2o_socket_read_stop(net->http_listener);
    h2o_socket_close(net->http_listener);
    net->http_listener = NULL;
  }
  if (net->resp_listener) {
    h2o_socket_read_stop(net->resp_listener);
    h2o_socket_close(net->resp_listener);
    net->resp_listener = NULL;
  }
  /* Idle RESP connections have nothing in flight: close them now. */
  for (resp_conn *c = net->resp_head, *next; c; c = next) {
    next = c->next;
    if (!c->writing && (c->lingering || c->sock->input->size == 0))
      resp_close(c);
  }
}

size_t idgen__net_open(const idgen__net *net) {
  return net->open;
}

void idgen__net_free(idgen__net *net) {
  if (!net)
    return;
  idgen__net_stop_accepting(net);
  while (net->resp_head)
    resp_close(net->resp_head);
  /* Let the loop finish disposing of the closed sockets. */
  h2o_evloop_run(net->loop, 0);
  if (net->open > 0) {
    /* HTTP connections past the shutdown bound: h2o 2.2.5 cannot dispose of a context
     * that still has them, and the process is about to exit, which closes them. */
    return;
  }
  h2o_timeout_dispose(net->loop, &net->resp_idle);
  h2o_timeout_dispose(net->loop, &net->resp_linger);
  h2o_context_dispose(&net->ctx);
  h2o_config_dispose(&net->globalconf);
  h2o_evloop_destroy(net->loop);
  free(net);
}
