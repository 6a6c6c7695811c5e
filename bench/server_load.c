/* server_load.c (bench_server_load): an open-loop HTTP/1.1 load generator (wrk2 is not in
 * Debian). Requests are due at a fixed rate whether or not earlier ones have come back;
 * each latency runs from the instant the request was due, so a stall counts against every
 * request it delays (no coordinated omission).
 *
 *   bench_server_load --port P --rate R [--host 127.0.0.1] [--path /v1/id]
 *                     [--conns C] [--seconds S] [--warmup S]
 *
 * One thread, C keep-alive connections (default 32), one request in flight on each.
 * A request that falls due while every connection is busy waits for the first free one.
 * Requests due in the first --warmup seconds (default 1) are not counted. Prints one line:
 *   LOADRESULT rate=.. achieved=.. done=.. p50_us=.. p90_us=.. p99_us=.. p999_us=..
 *              max_us=.. errors=..
 * Exit 1 if the server fails or errors a request. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define BUF_BYTES 65536

typedef struct {
  int fd;
  int busy;
  int64_t due_ns; /* when the request in flight was due */
  size_t got;
  char buf[BUF_BYTES];
} conn;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Length of a complete response at the start of buf, 0 if incomplete, -1 if not 200. */
static long response_len(const char *buf, size_t n) {
  const char *end = memmem(buf, n, "\r\n\r\n", 4);
  if (!end)
    return 0;
  size_t head = (size_t)(end - buf) + 4;
  if (n < 12 || memcmp(buf + 9, "200", 3) != 0)
    return -1;
  size_t body = 0;
  for (const char *p = buf; p < end;) {
    const char *eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
    if (!eol)
      break;
    if ((size_t)(eol - p) > 15 && strncasecmp(p, "content-length:", 15) == 0) {
      body = (size_t)strtoul(p + 15, NULL, 10);
    }
    p = eol + 2;
  }
  return n >= head + body ? (long)(head + body) : 0;
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/v1/id";
  int port = 0, nconns = 32;
  double rate = 0, seconds = 10, warmup = 1;
  static const struct option opts[] = {{"host", required_argument, NULL, 'H'},
                                       {"port", required_argument, NULL, 'p'},
                                       {"path", required_argument, NULL, 'P'},
                                       {"rate", required_argument, NULL, 'r'},
                                       {"conns", required_argument, NULL, 'c'},
                                       {"seconds", required_argument, NULL, 't'},
                                       {"warmup", required_argument, NULL, 'w'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "H:p:P:r:c:t:w:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'H':
      host = optarg;
      break;
    case 'p':
      port = atoi(optarg);
      break;
    case 'P':
      path = optarg;
      break;
    case 'r':
      rate = atof(optarg);
      break;
    case 'c':
      nconns = atoi(optarg);
      break;
    case 't':
      seconds = atof(optarg);
      break;
    case 'w':
      warmup = atof(optarg);
      break;
    case 'h':
      puts("usage: bench_server_load --port P --rate R [--host H] [--path /v1/id] [--conns "
           "C]"
           " [--seconds S] [--warmup S]");
      return 0;
    default:
      return 2;
    }
  }
  if (port <= 0 || port > 65535 || !(rate > 0) || nconns < 1 || nconns > MAX_CONNS ||
      !(seconds > 0) || !(warmup >= 0)) {
    fprintf(stderr,
            "bench_server_load: need --port, --rate > 0, 1..%d conns, seconds > 0\n",
            MAX_CONNS);
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  char req[512];
  int req_len =
      snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "bench_server_load: --host must be an IPv4 address\n");
    return 2;
  }
  int ep = epoll_create1(0);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  conn *cs = calloc((size_t)nconns, sizeof *cs);
  if (ep < 0 || tfd < 0 || !cs)
    return 1;
  for (int i = 0; i < nconns; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
      fprintf(stderr, "bench_server_load: connect: %s\n", strerror(errno));
      return 1;
    }
    cs[i].fd = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  struct epoll_event tev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
  epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &tev);

  double interval_ns = 1e9 / rate;
  size_t total = (size_t)((warmup + seconds) * rate);
  size_t counted_from = (size_t)(warmup * rate);
  uint32_t *lat = malloc((total + 1) * sizeof *lat);
  if (!lat)
    return 1;
  size_t ncounted = 0, sent = 0, done = 0, errors = 0;
  int *idle = malloc((size_t)nconns * sizeof *idle);
  int nidle = nconns;
  for (int i = 0; i < nconns; i++)
    idle[i] = nconns - 1 - i;
  int64_t t0 = now_ns() + 1000000;
  int64_t first_counted_ns = t0 + (int64_t)((double)counted_from * interval_ns);
  while (done < total) {
    int64_t now = now_ns();
    /* Send every request that is due, while a connection is free. */
    while (sent < total && nidle > 0) {
      int64_t due = t0 + (int64_t)((double)sent * interval_ns);
      if (due > now)
        break;
      conn *c = &cs[idle[--nidle]];
      if (write(c->fd, req, (size_t)req_len) != req_len) {
        fprintf(stderr, "bench_server_load: write: %s\n", strerror(errno));
        return 1;
      }
      c->busy = 1;
      c->due_ns = due;
      c->got = 0;
      sent++;
    }
    if (sent < total && nidle > 0) {
      int64_t due = t0 + (int64_t)((double)sent * interval_ns);
      struct itimerspec its = {
          .it_value = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000}};
      timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
    }
    struct epoll_event evs[64];
    int n = epoll_wait(ep, evs, 64, 1000);
    if (n < 0 && errno != EINTR)
      return 1;
    for (int k = 0; k < n; k++) {
      if (evs[k].data.u32 == UINT32_MAX) {
        uint64_t ticks;
        ssize_t r = read(tfd, &ticks, sizeof ticks);
        (void)r;
        continue;
      }
      int i = (int)evs[k].data.u32;
      conn *c = &cs[i];
      ssize_t r = read(c->fd, c->buf + c->got, sizeof c->buf - c->got);
      if (r <= 0) {
        fprintf(stderr, "bench_server_load: connection %d closed\n", i);
        return 1;
      }
      c->got += (size_t)r;
      long len = response_len(c->buf, c->got);
      if (len < 0) {
        errors++;
        len = (long)c->got;
      }
      if (len == 0) {
        if (c->got == sizeof c->buf)
          return 1;
        continue;
      }
      int64_t end = now_ns();
      if (c->due_ns >= first_counted_ns) {
        int64_t us = (end - c->due_ns + 500) / 1000;
        lat[ncounted++] = (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us);
      }
      c->busy = 0;
      idle[nidle++] = i;
      done++;
    }
  }
  int64_t end = now_ns();
  qsort(lat, ncounted, sizeof *lat, cmp_u32);
  double elapsed = (double)(end - first_counted_ns) / 1e9;
  if (ncounted == 0)
    return 1;
  printf("LOADRESULT rate=%.0f achieved=%.1f done=%zu p50_us=%u p90_us=%u p99_us=%u "
         "p999_us=%u max_us=%u errors=%zu\n",
         rate, (double)ncounted / elapsed, ncounted, lat[ncounted / 2],
         lat[(ncounted * 90) / 100], lat[(ncounted * 99) / 100],
         lat[(ncounted * 999) / 1000], lat[ncounted - 1], errors);
  for (int i = 0; i < nconns; i++)
    close(cs[i].fd);
  free(lat);
  free(idle);
  free(cs);
  return errors ? 1 : 0;
}
