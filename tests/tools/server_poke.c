/* server_poke.c: a raw TCP client for the server's hostile-input tests (loopback only).
 *   server_poke send PORT [-h] [-t MS]   send stdin, -h: half-close after, print the reply
 *   server_poke random PORT BYTES SEED   send BYTES pseudo-random bytes, print the reply
 *   server_poke idle PORT N MS           hold N idle connections for MS, print how many
 * opened server_poke endless PORT MS          send a request line without end for MS, print
 * reply */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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

/* Prints what arrives until EOF, reset or ms of silence; returns bytes read. */
static long drain(int fd, int ms) {
  long total = 0;
  char buf[65536];
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
      break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0)
      break;
    fwrite(buf, 1, (size_t)n, stdout);
    total += n;
  }
  return total;
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

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: see the comment in tests/tools/server_poke.c\n");
    return 2;
  }
  int port = atoi(argv[2]);
  const char *mode = argv[1];
  if (!strcmp(mode, "send")) {
    int half = 0, ms = 2000;
    for (int i = 3; i < argc; i++) {
      if (!strcmp(argv[i], "-h"))
        half = 1;
      else if (!strcmp(argv[i], "-t") && i + 1 < argc)
        ms = atoi(argv[++i]);
    }
    int fd = dial(port);
    if (fd < 0)
      return 1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
      if (write_all(fd, buf, n) < 0)
        break;
    if (half)
      shutdown(fd, SHUT_WR);
    drain(fd, ms);
    close(fd);
    return 0;
  }
  if (!strcmp(mode, "random") && argc >= 5) {
    long bytes = atol(argv[3]);
    unsigned long long x = strtoull(argv[4], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
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
  if (!strcmp(mode, "idle") && argc >= 5) {
    int n = atoi(argv[3]), ms = atoi(argv[4]);
    int *fds = calloc((size_t)n, sizeof *fds);
    int opened = 0;
    for (int i = 0; i < n; i++) {
      fds[i] = dial(port);
      if (fds[i] >= 0)
        opened++;
    }
    printf("%d\n", opened);
    fflush(stdout);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    /* How many did the server close meanwhile (idle timeout, limits)? */
    int closed = 0;
    for (int i = 0; i < n; i++) {
      if (fds[i] < 0)
        continue;
      struct pollfd p = {.fd = fds[i], .events = POLLIN};
      char c;
      if (poll(&p, 1, 0) == 1 && read(fds[i], &c, 1) <= 0)
        closed++;
      close(fds[i]);
    }
    printf("%d\n", closed);
    free(fds);
    return 0;
  }
  if (!strcmp(mode, "endless") && argc >= 4) {
    int ms = atoi(argv[3]);
    int fd = dial(port);
    if (fd < 0)
      return 1;
    write_all(fd, "GET /", 5);
    char chunk[1024];
    memset(chunk, 'a', sizeof chunk);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long sent = 0;
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      long el =
          (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (el > ms)
        break;
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
  fprintf(stderr, "server_poke: bad arguments\n");
  return 2;
}
