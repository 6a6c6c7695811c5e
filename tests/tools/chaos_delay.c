/* chaos_delay.c: a TCP proxy on loopback that delays every chunk of bytes, both ways, by
 * the number of milliseconds in a control file (re-read every 100 ms), for the fault
 * campaign's "network delay to etcd" where tc netem is not available. Each direction of
 * each connection is one thread that timestamps what it reads and writes it on once its
 * time has come, so order is kept and the added latency is the delay (throughput is not
 * the point). Stops on SIGTERM.
 * Usage: chaos_delay --listen 127.0.0.1:PORT --to 127.0.0.1:PORT --delay-file FILE */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static _Atomic int64_t delay_ms;
static struct sockaddr_in upstream;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int parse_addr(const char *text, struct sockaddr_in *out) {
  const char *colon = strrchr(text, ':');
  char host[64];
  if (!colon || (size_t)(colon - text) >= sizeof host)
    return -1;
  memcpy(host, text, (size_t)(colon - text));
  host[colon - text] = '\0';
  memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons((uint16_t)atoi(colon + 1));
  return inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

/* One chunk in flight: the bytes and when they may go on. */
typedef struct chunk {
  struct chunk *next;
  int64_t due_ms;
  size_t len;
  char data[];
} chunk;

typedef struct pipe_dir {
  int from, to;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  chunk *head, *tail;
  int eof;
  _Atomic int *refs; /* shared by the two directions of a connection */
  int *fds;
} pipe_dir;

static void release(pipe_dir *d) {
  if (atomic_fetch_sub(d->refs, 1) == 1) {
    close(d->fds[0]);
    close(d->fds[1]);
    free(d->fds);
    free((void *)d->refs);
  }
}

/* Writer: waits for each chunk's time (relative sleeps only), then writes it. */
static void *writer(void *arg) {
  pipe_dir *d = arg;
  for (;;) {
    pthread_mutex_lock(&d->mu);
    while (!d->head && !d->eof)
      pthread_cond_wait(&d->cv, &d->mu);
    chunk *c = d->head;
    if (c) {
      d->head = c->next;
      if (!d->head)
        d->tail = NULL;
    }
    pthread_mutex_unlock(&d->mu);
    if (!c)
      break; /* eof and drained */
    int64_t wait = c->due_ms - mono_ms();
    if (wait > 0)
      sleep_ms(wait);
    size_t off = 0;
    while (off < c->len) {
      ssize_t w = send(d->to, c->data + off, c->len - off, MSG_NOSIGNAL);
      if (w <= 0)
        break;
      off += (size_t)w;
    }
    int failed = off < c->len;
    free(c);
    if (failed)
      break;
  }
  shutdown(d->to, SHUT_WR);
  shutdown(d->from, SHUT_RD);
  return NULL;
}

/* Reader: stamps each chunk with now + the delay and queues it for the writer. */
static void *reader(void *arg) {
  pipe_dir *d = arg;
  pthread_t w;
  pthread_create(&w, NULL, writer, d);
  char buf[65536];
  for (;;) {
    ssize_t r = recv(d->from, buf, sizeof buf, 0);
    if (r <= 0)
      break;
    chunk *c = malloc(sizeof *c + (size_t)r);
    if (!c)
      break;
    c->next = NULL;
    c->due_ms = mono_ms() + atomic_load(&delay_ms);
    c->len = (size_t)r;
    memcpy(c->data, buf, (size_t)r);
    pthread_mutex_lock(&d->mu);
    if (d->tail)
      d->tail->next = c;
    else
      d->head = c;
    d->tail = c;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
  }
  pthread_mutex_lock(&d->mu);
  d->eof = 1;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->mu);
  pthread_join(w, NULL);
  pthread_mutex_destroy(&d->mu);
  pthread_cond_destroy(&d->cv);
  release(d);
  free(d);
  return NULL;
}

static void start_dir(int from, int to, _Atomic int *refs, int *fds) {
  pipe_dir *d = calloc(1, sizeof *d);
  if (!d)
    return;
  d->from = from;
  d->to = to;
  d->refs = refs;
  d->fds = fds;
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &attr, reader, d);
  pthread_attr_destroy(&attr);
}

static void read_delay(const char *path) {
  FILE *f = fopen(path, "r");
  long long v;
  if (f && fscanf(f, "%lld", &v) == 1 && v >= 0)
    atomic_store(&delay_ms, (int64_t)v);
  if (f)
    fclose(f);
}

int main(int argc, char **argv) {
  static const struct option options[] = {{"listen", required_argument, NULL, 'l'},
                                          {"to", required_argument, NULL, 't'},
                                          {"delay-file", required_argument, NULL, 'd'},
                                          {NULL, 0, NULL, 0}};
  struct sockaddr_in listen_addr;
  const char *delay_file = NULL;
  int have_listen = 0, have_to = 0, opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    if (opt == 'l')
      have_listen = parse_addr(optarg, &listen_addr) == 0;
    else if (opt == 't')
      have_to = parse_addr(optarg, &upstream) == 0;
    else if (opt == 'd')
      delay_file = optarg;
    else
      return 2;
  }
  if (!have_listen || !have_to || !delay_file) {
    fprintf(stderr, "usage: chaos_delay --listen 127.0.0.1:PORT --to 127.0.0.1:PORT "
                    "--delay-file FILE\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (ls < 0 || bind(ls, (struct sockaddr *)&listen_addr, sizeof listen_addr) < 0 ||
      listen(ls, 64) < 0) {
    perror("chaos_delay: listen");
    return 1;
  }
  read_delay(delay_file);
  int64_t next_read = mono_ms() + 100;
  while (!stop_flag) {
    struct pollfd p = {ls, POLLIN, 0};
    int n = poll(&p, 1, 100);
    if (mono_ms() >= next_read) {
      read_delay(delay_file);
      next_read = mono_ms() + 100;
    }
    if (n <= 0)
      continue;
    int in = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (in < 0)
      continue;
    int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (out < 0 || connect(out, (struct sockaddr *)&upstream, sizeof upstream) < 0) {
      close(in);
      if (out >= 0)
        close(out);
      continue;
    }
    setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    _Atomic int *refs = malloc(sizeof *refs);
    int *fds = malloc(2 * sizeof *fds);
    if (!refs || !fds) {
      close(in);
      close(out);
      free((void *)refs);
      free(fds);
      continue;
    }
    atomic_init(refs, 2);
    fds[0] = in;
    fds[1] = out;
    start_dir(in, out, refs, fds);
    start_dir(out, in, refs, fds);
  }
  close(ls);
  return 0;
}
