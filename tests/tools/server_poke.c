/* server_poke.c: a raw TCP client for the server's hostile-input tests (loopback only).
 *   send PORT [-h] [-t MS]      send stdin, -h: half-close after; print the reply, and on
 *                               stderr how it ended ("end: eof", "end: reset", "end:
 * silence") random PORT BYTES SEED      send BYTES pseudo-random bytes, print the reply
 *   idle PORT N MS              hold N idle connections for MS; print how many opened, then
 *                               how many the server closed meanwhile
 *   endless PORT MS             send a request line without end for MS, print the reply
 *   heads PORT N LINES BYTES MS [-p PID]
 *                               N connections each send a request line and LINES headers
 *                               of BYTES bytes, never the blank line that ends the head;
 *                               print "sent" once all is sent or refused, then after MS
 *                               "431=A closed=C open=O rss_kib=R": answered 431, closed
 *                               without one, still open, and the server's RSS just before
 *                               these connections close (with -p)
 *   fetch PORT N MS [-a TOKEN] CMD...
 *                               N RESP connections each send AUTH TOKEN (with -a) and the
 *                               commands, pipelined, and read every reply; print
 * "replies=R" once all arrived, hold them idle for MS, then print "closed=C": how many the
 * server closed meanwhile trickle PORT WRITES US      send stdin in WRITES writes, US
 * microseconds apart; print the reply */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Prints what arrives until EOF, reset or ms of silence; returns how it ended. */
static const char *drain(int fd, int ms) {
  char buf[65536];
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
      return "silence";
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0)
      return "eof";
    if (n < 0)
      return "reset";
    fwrite(buf, 1, (size_t)n, stdout);
  }
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads all of stdin into a new buffer. */
static char *slurp(size_t *len) {
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, stdin)) > 0) {
    n += got;
    if (n == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger)
        free(buf);
      buf = bigger;
    }
  }
  *len = n;
  return buf;
}

static long rss_kib(const char *pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%s/status", pid);
  FILE *f = fopen(path, "r");
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6))
      kib = atol(line + 6);
  if (f)
    fclose(f);
  return kib;
}

static int mode_send(int port, int argc, char **argv) {
  int half = 0, ms = 2000, tell = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "-h"))
      half = 1;
    else if (!strcmp(argv[i], "-e"))
      tell = 1;
    else if (!strcmp(argv[i], "-t") && i + 1 < argc)
      ms = atoi(argv[++i]);
  }
  size_t len;
  char *data = slurp(&len);
  int fd = dial(port);
  if (!data || fd < 0)
    return 1;
  /* Read while writing: a server that answers a long input as it reads it would stall
   * a client that reads only at the end. */
  fcntl(fd, F_SETFL, O_NONBLOCK);
  size_t at = 0;
  const char *end = NULL;
  char buf[65536];
  while (at < len && !end) {
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
    if (poll(&p, 1, ms) <= 0) {
      end = "silence";
      break;
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0)
        fwrite(buf, 1, (size_t)n, stdout);
      else if (n == 0)
        end = "eof";
      else if (errno != EAGAIN)
        end = "reset";
      continue;
    }
    ssize_t w = write(fd, data + at, len - at);
    if (w > 0)
      at += (size_t)w;
    else if (w < 0 && errno != EAGAIN)
      break; /* the server closed: what it sent is read below */
  }
  fcntl(fd, F_SETFL, 0);
  if (half && !end)
    shutdown(fd, SHUT_WR);
  if (!end)
    end = drain(fd, ms);
  if (tell)
    fprintf(stderr, "end: %s\n", end);
  close(fd);
  free(data);
  return 0;
}

static int mode_random(int port, int argc, char **argv) {
  if (argc < 2)
    return 2;
  long bytes = atol(argv[0]);
  unsigned long long x = strtoull(argv[1], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
  int fd = dial(port);
  if (fd < 0)
    return 1;
  char buf[4096];
  while (bytes > 0) {
    size_t chunk = bytes < (long)sizeof buf ? (size_t)bytes : sizeof buf;
    for (size_t i = 0; i < chunk; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      buf[i] = (char)(x >> 24);
    }
    if (write_all(fd, buf, chunk) < 0)
      break;
    bytes -= (long)chunk;
  }
  drain(fd, 1000);
  close(fd);
  return 0;
}

/* 1 if the server closed fd (EOF or reset) without sending anything more. */
static int closed_by_server(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char c;
  return poll(&p, 1, 0) == 1 && read(fd, &c, 1) <= 0;
}

/* Holds the connections for ms, then closes them; returns how many the server closed
 * meanwhile. */
static int hold(int *fds, int n, long ms) {
  sleep_ms(ms);
  int closed = 0;
  for (int i = 0; i < n; i++) {
    if (fds[i] < 0)
      continue;
    closed += closed_by_server(fds[i]);
    close(fds[i]);
  }
  return closed;
}

static int mode_idle(int port, int argc, char **argv) {
  if (argc < 2)
    return 2;
  int n = atoi(argv[0]), ms = atoi(argv[1]);
  int *fds = calloc((size_t)n, sizeof *fds);
  int opened = 0;
  for (int i = 0; i < n; i++) {
    fds[i] = dial(port);
    if (fds[i] >= 0)
      opened++;
  }
  printf("%d\n", opened);
  fflush(stdout);
  printf("%d\n", hold(fds, n, ms));
  free(fds);
  return 0;
}

static int mode_endless(int port, int argc, char **argv) {
  if (argc < 1)
    return 2;
  long ms = atol(argv[0]);
  int fd = dial(port);
  if (fd < 0)
    return 1;
  write_all(fd, "GET /", 5);
  char chunk[1024];
  memset(chunk, 'a', sizeof chunk);
  long start = now_ms(), sent = 0;
  while (now_ms() - start <= ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
    if (poll(&p, 1, 50) > 0) {
      if (p.revents & (POLLIN | POLLHUP | POLLERR))
        break; /* the server answered or closed */
      if (write_all(fd, chunk, sizeof chunk) < 0)
        break;
      sent += (long)sizeof chunk;
    }
  }
  fprintf(stderr, "sent %ld bytes\n", sent);
  drain(fd, 1000);
  close(fd);
  return 0;
}

/* ---- heads: many request heads that never end ---- */

typedef struct head_conn {
  int fd;
  size_t sent;
  int answered, closed;
  char reply[16];
  size_t got;
} head_conn;

/* Reads what the server sent; marks the connection answered or closed. */
static void head_read(head_conn *c) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n > 0) {
      size_t keep = sizeof c->reply - c->got;
      memcpy(c->reply + c->got, buf, (size_t)n < keep ? (size_t)n : keep);
      c->got += (size_t)n < keep ? (size_t)n : keep;
      c->answered = 1;
      continue;
    }
    if (n == 0 || errno != EAGAIN) {
      c->closed = 1;
      close(c->fd);
      c->fd = -1;
    }
    return;
  }
}

static int mode_heads(int port, int argc, char **argv) {
  if (argc < 4)
    return 2;
  int n = atoi(argv[0]), lines = atoi(argv[1]), bytes = atoi(argv[2]);
  long ms = atol(argv[3]);
  const char *pid = argc >= 6 && !strcmp(argv[4], "-p") ? argv[5] : NULL;
  /* The head: request line, then header lines of exactly `bytes` bytes each. */
  size_t len = 0, cap = 64 + (size_t)lines * (size_t)bytes;
  char *head = malloc(cap);
  len += (size_t)snprintf(head, cap, "GET /v1/id HTTP/1.1\r\nHost: x\r\n");
  for (int i = 0; i < lines; i++) {
    int pre = snprintf(head + len, cap - len, "X-Pad-%03d: ", i);
    memset(head + len + pre, 'a', (size_t)(bytes - pre - 2));
    memcpy(head + len + bytes - 2, "\r\n", 2);
    len += (size_t)bytes;
  }
  head_conn *cs = calloc((size_t)n, sizeof *cs);
  struct pollfd *ps = calloc((size_t)n, sizeof *ps);
  for (int i = 0; i < n; i++) {
    cs[i].fd = dial(port);
    if (cs[i].fd < 0) {
      cs[i].closed = 1;
      continue;
    }
    fcntl(cs[i].fd, F_SETFL, O_NONBLOCK);
  }
  long start = now_ms();
  int busy = 1;
  while (busy && now_ms() - start < ms) {
    busy = 0;
    for (int i = 0; i < n; i++) {
      ps[i].fd = cs[i].fd >= 0 && cs[i].sent < len && !cs[i].answered ? cs[i].fd : -1;
      ps[i].events = POLLIN | POLLOUT;
      busy |= ps[i].fd >= 0;
    }
    if (!busy || poll(ps, (nfds_t)n, 100) <= 0)
      continue;
    for (int i = 0; i < n; i++) {
      if (ps[i].fd < 0 || !ps[i].revents)
        continue;
      if (ps[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        head_read(&cs[i]);
        continue;
      }
      ssize_t w = write(cs[i].fd, head + cs[i].sent, len - cs[i].sent);
      if (w > 0)
        cs[i].sent += (size_t)w;
      else if (w < 0 && errno != EAGAIN)
        head_read(&cs[i]);
    }
  }
  printf("sent\n");
  fflush(stdout);
  while (now_ms() - start < ms)
    sleep_ms(20);
  long rss = pid ? rss_kib(pid) : -1L;
  int answered = 0, closed = 0, open = 0;
  for (int i = 0; i < n; i++) {
    if (cs[i].fd >= 0)
      head_read(&cs[i]);
    if (cs[i].got >= 12 && !memcmp(cs[i].reply, "HTTP/1.1 431", 12))
      answered++;
    else if (cs[i].closed)
      closed++;
    else
      open++;
    if (cs[i].fd >= 0)
      close(cs[i].fd);
  }
  printf("431=%d closed=%d open=%d rss_kib=%ld\n", answered, closed, open, rss);
  free(ps);
  free(cs);
  free(head);
  return 0;
}

/* ---- fetch: RESP connections that take big replies, then idle ---- */

/* Counts whole RESP2 replies in a stream, without keeping them. */
typedef struct reply_counter {
  char line[64];
  size_t line_len;
  long long skip;       /* bulk bytes (and CRLF) still to pass */
  long long pending[4]; /* elements still due, per open array */
  int depth;
  long long replies;
} reply_counter;

static void element_done(reply_counter *rc) {
  while (rc->depth > 0 && --rc->pending[rc->depth - 1] == 0)
    rc->depth--;
  if (rc->depth == 0)
    rc->replies++;
}

static void count_replies(reply_counter *rc, const char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (rc->skip > 0) {
      size_t take = (size_t)rc->skip < n - i ? (size_t)rc->skip : n - i;
      rc->skip -= (long long)take;
      i += take;
      if (rc->skip == 0)
        element_done(rc);
      continue;
    }
    char c = p[i++];
    if (c != '\n') {
      if (rc->line_len < sizeof rc->line - 1)
        rc->line[rc->line_len++] = c;
      continue;
    }
    rc->line[rc->line_len] = 0;
    rc->line_len = 0;
    long long v = atoll(rc->line + 1);
    if (rc->line[0] == '$' && v >= 0)
      rc->skip = v + 2;
    else if (rc->line[0] == '*' && v > 0 && rc->depth < 4)
      rc->pending[rc->depth++] = v;
    else
      element_done(rc);
  }
}

static int mode_fetch(int port, int argc, char **argv) {
  if (argc < 3)
    return 2;
  int n = atoi(argv[0]);
  long ms = atol(argv[1]);
  int first = 2, unread = 0;
  const char *token = NULL;
  for (;;) {
    if (argc > first + 1 && !strcmp(argv[first], "-a")) {
      token = argv[first + 1];
      first += 2;
    } else if (argc > first && !strcmp(argv[first], "-n")) {
      unread = 1;
      first++;
    } else {
      break;
    }
  }
  char req[4096];
  size_t len = 0;
  long long want = argc - first;
  if (token) {
    len += (size_t)snprintf(req + len, sizeof req - len, "AUTH %s\r\n", token);
    want++;
  }
  for (int i = first; i < argc && len < sizeof req; i++)
    len += (size_t)snprintf(req + len, sizeof req - len, "%s\r\n", argv[i]);
  int *fds = calloc((size_t)n, sizeof *fds);
  reply_counter *rcs = calloc((size_t)n, sizeof *rcs);
  struct pollfd *ps = calloc((size_t)n, sizeof *ps);
  for (int i = 0; i < n; i++) {
    fds[i] = dial(port);
    if (fds[i] >= 0 && write_all(fds[i], req, len) < 0) {
      close(fds[i]);
      fds[i] = -1;
    }
  }
  long long total = 0;
  char buf[65536];
  while (!unread) {
    int waiting = 0;
    for (int i = 0; i < n; i++) {
      ps[i].fd = fds[i] >= 0 && rcs[i].replies < want ? fds[i] : -1;
      ps[i].events = POLLIN;
      waiting += ps[i].fd >= 0;
    }
    if (!waiting || poll(ps, (nfds_t)n, 5000) <= 0)
      break;
    for (int i = 0; i < n; i++) {
      if (ps[i].fd < 0 || !ps[i].revents)
        continue;
      ssize_t got = read(fds[i], buf, sizeof buf);
      if (got <= 0) {
        close(fds[i]);
        fds[i] = -1;
        continue;
      }
      count_replies(&rcs[i], buf, (size_t)got);
    }
  }
  for (int i = 0; i < n; i++)
    total += rcs[i].replies;
  printf("replies=%lld\n", total);
  fflush(stdout);
  printf("closed=%d\n", hold(fds, n, ms));
  free(ps);
  free(rcs);
  free(fds);
  return 0;
}

static int mode_trickle(int port, int argc, char **argv) {
  if (argc < 2)
    return 2;
  long writes = atol(argv[0]), us = atol(argv[1]);
  size_t len;
  char *data = slurp(&len);
  int fd = dial(port);
  if (!data || fd < 0 || writes < 1)
    return 1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  size_t at = 0;
  for (long i = 0; i < writes && at < len; i++) {
    size_t end = (size_t)((unsigned long long)len * (unsigned long long)(i + 1) /
                          (unsigned long long)writes);
    if (end > at && write_all(fd, data + at, end - at) < 0)
      break;
    at = end;
    struct timespec ts = {us / 1000000, us % 1000000 * 1000};
    nanosleep(&ts, NULL);
    /* What came back so far: a reset after the server closed would drop it. */
    char buf[4096];
    ssize_t got;
    while (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 0) == 1 &&
           (got = read(fd, buf, sizeof buf)) > 0)
      fwrite(buf, 1, (size_t)got, stdout);
  }
  drain(fd, 2000);
  close(fd);
  free(data);
  return 0;
}

static const struct {
  const char *name;
  int (*run)(int port, int argc, char **argv); /* argv: the words after PORT */
} modes[] = {{"send", mode_send},       {"random", mode_random}, {"idle", mode_idle},
             {"endless", mode_endless}, {"heads", mode_heads},   {"fetch", mode_fetch},
             {"trickle", mode_trickle}};

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* a write after the server closed fails, and is reported */
  if (argc >= 3)
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
      if (!strcmp(argv[1], modes[i].name)) {
        int rc = modes[i].run(atoi(argv[2]), argc - 3, argv + 3);
        if (rc == 2)
          fprintf(stderr, "server_poke %s: bad arguments (see tests/tools/server_poke.c)\n",
                  argv[1]);
        return rc;
      }
  fprintf(stderr, "usage: see the comment in tests/tools/server_poke.c\n");
  return 2;
}
