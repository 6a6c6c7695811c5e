/* server.c: `idgen serve`'s process: listening sockets (SO_REUSEPORT, one per thread),
 * the threads and their loops, signals, and the graceful stop. */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "server/api.h"
#include "server/log.h"
#include "server/netloop.h"
#include "server/reload.h"
#include "server/service.h"

typedef struct worker {
  pthread_t thread;
  size_t index;
  idgen__svc *svc;
  idgen__grace *grace; /* marked between two turns of the loop (server/grace.h) */
  int http_fd, resp_fd, health_fd;
  idgen__tls *tls; /* both listeners', or NULL */
  int started;
} worker;

static _Atomic int stop_requested;

/* Fails if something already answers on the address: SO_REUSEPORT would otherwise let
 * a second server (maybe with the same worker ID) share the port silently. */
static int someone_listens(const struct sockaddr *sa, socklen_t len) {
  int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  int rc = connect(fd, sa, len);
  close(fd);
  return rc == 0;
}

int idgen__sockaddr_is_loopback(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family != AF_INET6)
    return 0;
  const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* Opens n listening sockets on one address with SO_REUSEPORT; port 0 picks a free port
 * once and shares it. Writes the bound "addr:port" into bound. Warns when the address
 * reaches beyond this machine and no token guards it. */
static int open_listeners(const char *what, const char *spec, int token_set, int *fds,
                          size_t n, size_t stride, char *bound, size_t boundlen) {
  char host[256];
  uint16_t port;
  if (idgen__parse_hostport(spec, host, sizeof host, &port) < 0) {
    idgen__log("error", "listen", "%s: '%s' is not ADDR:PORT", what, spec);
    return -1;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
  struct addrinfo *ai = NULL;
  char portstr[8];
  snprintf(portstr, sizeof portstr, "%u", port);
  int gai = getaddrinfo(host, portstr, &hints, &ai);
  if (gai != 0) {
    idgen__log("error", "listen", "%s: '%s': %s (a numeric address is needed)", what, host,
               gai_strerror(gai));
    return -1;
  }
  struct sockaddr_storage addr;
  socklen_t addrlen = (socklen_t)ai->ai_addrlen;
  memcpy(&addr, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  if (port != 0 && someone_listens((struct sockaddr *)&addr, addrlen)) {
    idgen__log("error", "listen", "%s: %s is already in use", what, spec);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&addr, addrlen) < 0 || listen(fd, 1024) < 0) {
      idgen__log("error", "listen", "%s: %s: %s", what, spec, strerror(errno));
      if (fd >= 0)
        close(fd);
      for (size_t j = 0; j < i; j++)
        close(*(int *)((char *)fds + j * stride));
      return -1;
    }
    if (i == 0) {
      addrlen = sizeof addr;
      getsockname(fd, (struct sockaddr *)&addr, &addrlen);
    }
    *(int *)((char *)fds + i * stride) = fd;
  }
  char ip[INET6_ADDRSTRLEN] = "?";
  unsigned p = 0;
  if (addr.ss_family == AF_INET6) {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
    inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof ip);
    p = ntohs(a6->sin6_port);
    snprintf(bound, boundlen, "[%s]:%u", ip, p);
  } else {
    struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
    inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof ip);
    p = ntohs(a4->sin_port);
    snprintf(bound, boundlen, "%s:%u", ip, p);
  }
  if (!token_set && !idgen__sockaddr_is_loopback((struct sockaddr *)&addr))
    idgen__log("warn", "config",
               "%s %s listens beyond loopback and no --auth-token-file is set: anyone who "
               "reaches it can take IDs",
               what, bound);
  return 0;
}

static void *serve_thread(void *arg) {
  worker *w = arg;
  const idgen__serve_config *cfg = idgen__svc_config(w->svc);
  idgen__tctx t;
  idgen__net *net = NULL;
  if (idgen__tctx_init(&t, w->svc, w->index) < 0) {
    idgen__log("error", "thread", "thread %zu: out of memory", w->index);
    kill(getpid(), SIGTERM);
    return NULL;
  }
  idgen__net_config nc = {.tctx = &t,
                          .http_fd = w->http_fd,
                          .resp_fd = w->resp_fd,
                          .health_fd = w->health_fd,
                          .tls = w->tls};
  if (idgen__net_new(&net, &nc) < 0) {
    idgen__log("error", "thread", "thread %zu: cannot start its event loop", w->index);
    idgen__tctx_free(&t);
    kill(getpid(), SIGTERM);
    return NULL;
  }
  /* Between two turns no request holds a format a reload may replace. */
  idgen__grace_online(w->grace, w->index);
  while (!atomic_load(&stop_requested)) {
    idgen__net_run_once(net, 100);
    idgen__grace_quiescent(w->grace, w->index);
  }
  idgen__net_stop_accepting(net);
  int64_t deadline = idgen_monotonic_ns() / 1000000 + (int64_t)cfg->shutdown_timeout_ms;
  while (idgen__net_open(net) > 0 && idgen_monotonic_ns() / 1000000 < deadline) {
    idgen__net_run_once(net, 20);
    idgen__grace_quiescent(w->grace, w->index);
  }
  idgen__grace_offline(w->grace, w->index);
  size_t left = idgen__net_open(net);
  if (left)
    idgen__log("warn", "shutdown",
               "thread %zu: closing %zu connections still open after %llu ms", w->index,
               left, (unsigned long long)cfg->shutdown_timeout_ms);
  idgen__net_free(net);
  idgen__tctx_free(&t);
  return NULL;
}

static void raise_nofile(idgen__serve_config *cfg) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  /* --max-conns holds per listener: each may fill it. */
  uint64_t listeners = (cfg->http[0] ? 1u : 0u) + (cfg->resp[0] ? 1u : 0u) +
                       (cfg->health_listen[0] ? 1u : 0u);
  uint64_t room = rl.rlim_cur > 128 ? ((uint64_t)rl.rlim_cur - 128) / listeners : 1;
  if (room == 0)
    room = 1;
  if (cfg->max_conns > room) {
    idgen__log("warn", "config",
               "--max-conns %llu lowered to %llu: open-file limit is %llu for %llu "
               "listeners",
               (unsigned long long)cfg->max_conns, (unsigned long long)room,
               (unsigned long long)rl.rlim_cur, (unsigned long long)listeners);
    cfg->max_conns = room;
  }
}

/* One run of the server: what the start steps set up, for the stop steps to undo. */
typedef struct serve {
  idgen__serve_config *cfg;
  size_t nthreads;
  sigset_t signals; /* taken by the main thread alone, with sigwait */
  worker *workers;
  char http_bound[300], resp_bound[300], health_bound[300];
  idgen__svc *svc;
  idgen__reload *reload; /* SIGHUP's */
  idgen__tls *tls;       /* owned; NULL: plain text */
  size_t started;        /* threads running */
} serve;

static size_t thread_count(const idgen__serve_config *cfg) {
  if (cfg->threads)
    return (size_t)cfg->threads;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (size_t)cores : 1;
}

static void block_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, set, NULL);
  signal(SIGPIPE, SIG_IGN);
}

static int start_workers(serve *s) {
  s->workers = calloc(s->nthreads, sizeof *s->workers);
  if (!s->workers) {
    idgen__log("error", "start", "out of memory");
    return -1;
  }
  for (size_t i = 0; i < s->nthreads; i++)
    s->workers[i].http_fd = s->workers[i].resp_fd = s->workers[i].health_fd = -1;
  return 0;
}

/* Every thread's sockets, one per listener (SO_REUSEPORT). */
static int start_listeners(serve *s) {
  int token_set = idgen__serve_config_auth(s->cfg);
  snprintf(s->http_bound, sizeof s->http_bound, "off");
  snprintf(s->resp_bound, sizeof s->resp_bound, "off");
  snprintf(s->health_bound, sizeof s->health_bound, "off");
  if (s->cfg->http[0] &&
      open_listeners("--http", s->cfg->http, token_set, &s->workers[0].http_fd, s->nthreads,
                     sizeof(worker), s->http_bound, sizeof s->http_bound) < 0)
    return -1;
  if (s->cfg->resp[0] &&
      open_listeners("--resp", s->cfg->resp, token_set, &s->workers[0].resp_fd, s->nthreads,
                     sizeof(worker), s->resp_bound, sizeof s->resp_bound) < 0)
    return -1;
  /* Loopback only (config.c): no warning about a token to give. */
  if (s->cfg->health_listen[0] &&
      open_listeners("--health-listen", s->cfg->health_listen, 1, &s->workers[0].health_fd,
                     s->nthreads, sizeof(worker), s->health_bound,
                     sizeof s->health_bound) < 0)
    return -1;
  return 0;
}

/* The sockets of the threads from `from` on (a thread closes its own when it ends). */
static void close_listeners(serve *s, size_t from) {
  for (size_t i = from; i < s->nthreads; i++) {
    if (s->workers[i].http_fd >= 0)
      close(s->workers[i].http_fd);
    if (s->workers[i].resp_fd >= 0)
      close(s->workers[i].resp_fd);
    if (s->workers[i].health_fd >= 0)
      close(s->workers[i].health_fd);
  }
}

/* The generators (leases won, backends reached), then the start line of the log. */
static int start_service(serve *s) {
  const idgen__serve_config *cfg = s->cfg;
  char err[300];
  if (idgen__svc_new(&s->svc, cfg, s->nthreads, err, sizeof err) < 0) {
    idgen__log("error", "start", "%s", err);
    return -1;
  }
  if (idgen__reload_new(&s->reload, cfg, s->svc, s->nthreads) < 0) {
    idgen__log("error", "start", "out of memory");
    idgen__svc_free(s->svc);
    return -1;
  }
  char gens[512] = "";
  size_t ngens, at = 0;
  idgen__generator *const *all = idgen__svc_generators(s->svc, &ngens);
  for (size_t i = 0; i < ngens && at < sizeof gens; i++)
    at += (size_t)snprintf(gens + at, sizeof gens - at, "%s%s:%s", i ? "," : "",
                           all[i]->name, idgen__kind_name(idgen__generator_kind(all[i])));
  const idgen_layout *layout = idgen__svc_layout(s->svc);
  idgen__log("info", "start",
             "version=%s http=%s resp=%s health=%s tls=%s threads=%zu layout=%s lease=%s "
             "policy=%s max_conns=%llu/listener max_count=%llu auth=%s generators=%s",
             IDGEN_VERSION, s->http_bound, s->resp_bound, s->health_bound,
             idgen__tls_mode(s->tls), s->nthreads, layout ? layout->name : "-",
             idgen_lease_kind_name(cfg->lease.kind), cfg->policy,
             (unsigned long long)cfg->max_conns, (unsigned long long)cfg->max_count,
             !idgen__serve_config_auth(cfg) ? "none"
             : cfg->ntokens                 ? "tokens"
                                            : "token",
             gens);
  return 0;
}

/* The serving threads; one that cannot start stops the server (SIGTERM to itself). */
static void start_threads(serve *s) {
  atomic_store(&stop_requested, 0);
  for (size_t i = 0; i < s->nthreads; i++) {
    s->workers[i].index = i;
    s->workers[i].svc = s->svc;
    s->workers[i].grace = idgen__reload_grace(s->reload);
    s->workers[i].tls = s->tls;
    if (pthread_create(&s->workers[i].thread, NULL, serve_thread, &s->workers[i]) != 0) {
      idgen__log("error", "start", "cannot start thread %zu", i);
      kill(getpid(), SIGTERM);
      break;
    }
    s->workers[i].started = 1;
    s->started++;
  }
}

/* SIGHUP: the log reopened, --config read again (server/reload.h), then the tokens. */
static void reload(serve *s) {
  int r = idgen__log_reopen();
  idgen__log(r < 0 ? "warn" : "info", "log_reopen", "%s",
             r < 0 ? strerror(-r) : "reopened on SIGHUP");
  idgen__serve_config fresh;
  idgen__reload_status st = idgen__reload_run(s->reload, &fresh);
  /* The tokens come from the file read again only when its reload applied (all or
   * nothing); when it was refused or failed, the token files in force are read again,
   * as a secret's rotation does not wait for the rest of the file. */
  idgen__svc_tokens_reload(s->svc, st == IDGEN__RELOAD_APPLIED ? &fresh : NULL);
  idgen__serve_config_free(&fresh);
  /* The certificate and key, whatever became of the rest: a rotation stands alone. */
  char err[600];
  if (s->tls && idgen__tls_reload(s->tls, err, sizeof err) < 0)
    idgen__log("warn", "tls_reload", "kept the certificate in force: %s", err);
  else if (s->tls)
    idgen__log("info", "tls_reload",
               "certificate and key read again: new handshakes use them");
}

/* The main thread waits for SIGTERM or SIGINT, reloads on SIGHUP, and logs the
 * generators' changes of state meanwhile. */
static void wait_for_stop(serve *s) {
  for (;;) {
    idgen__svc_watch(s->svc);
    idgen__reload_tick(s->reload);
    struct timespec tick = {0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&s->signals, NULL, &tick);
    if (sig < 0)
      continue;
    if (sig == SIGHUP) {
      reload(s);
      continue;
    }
    idgen__log("info", "stop", "%s: stop accepting, finish in-flight work within %llu ms",
               sig == SIGINT ? "SIGINT" : "SIGTERM",
               (unsigned long long)s->cfg->shutdown_timeout_ms);
    return;
  }
}

/* /readyz turns 503, every thread finishes its connections and ends. */
static void stop_threads(serve *s) {
  idgen__svc_begin_shutdown(s->svc);
  atomic_store(&stop_requested, 1);
  for (size_t i = 0; i < s->nthreads; i++)
    if (s->workers[i].started)
      pthread_join(s->workers[i].thread, NULL);
}

/* Start steps, then the stop steps in reverse; a failed start step goes down the same
 * ladder from where it failed (uv_loop_init's shape). */
int idgen__serve_run(idgen__serve_config *cfg, idgen__tls *tls) {
  serve s = {.cfg = cfg, .tls = tls};
  idgen__log_set_level(cfg->log_level); /* checked with the configuration */
  int rc = idgen__log_open(cfg->log_file);
  if (rc < 0) {
    fprintf(stderr, "idgen serve: --log-file %s: %s\n", cfg->log_file, strerror(-rc));
    idgen__tls_free(tls);
    return 1;
  }
  raise_nofile(cfg);
  s.nthreads = thread_count(cfg);
  block_signals(&s.signals);
  if (start_workers(&s) < 0) {
    idgen__tls_free(tls);
    return 1;
  }
  if (start_listeners(&s) < 0 || start_service(&s) < 0)
    goto fail_listen;
  start_threads(&s);
  wait_for_stop(&s);
  stop_threads(&s);
  close_listeners(&s, s.started);
  idgen__svc_free(s.svc);       /* final HWMs, leases released, fetchers stopped */
  idgen__reload_free(s.reload); /* the formats retired by reloads */
  idgen__tls_free(s.tls);
  free(s.workers);
  idgen__log("info", "stopped", "clean exit");
  idgen__log_close();
  return 0;

fail_listen:
  close_listeners(&s, 0);
  idgen__tls_free(s.tls);
  free(s.workers);
  return 1;
}
