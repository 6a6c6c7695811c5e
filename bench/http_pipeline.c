/* http_pipeline.c (bench_http_pipeline): a fixed number of pipelined HTTP/1.1 requests on
 * one keep-alive connection, a fixed number in flight: the load bench/instr.sh counts
 * instructions under (wrk runs for a time, not a count, and redis-benchmark speaks RESP).
 *
 *   bench_http_pipeline --port P [--host 127.0.0.1] [--path /v1/id] [--requests N]
 *                       [--depth D] [--token T]
 *
 * Sends D requests (default 16), then one more for each response read, until N (default
 * 20000) have been answered. Every response must be a 200 with a content-length. Prints
 * one line (with --token, each request sends "Authorization: Bearer T"): PIPERESULT requests=.. depth=.. bytes=.. errors=..; exit 1 on an error. */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int usage(void) {
  fprintf(stderr,
          "usage: bench_http_pipeline --port P [--host H] [--path P] [--requests N] "
          "[--depth D] [--token T]\n");
  return 2;
}

/* The length of the one response at the start of b[0..n), or 0 if it is not all there;
 * -1 if it is no 200 with a content-length. */
static long response_len(const char *b, size_t n) {
  const char *end = memmem(b, n, "\r\n\r\n", 4);
  if (!end)
    return 0;
  size_t head = (size_t)(end - b) + 4;
  if (n < 12 || memcmp(b, "HTTP/1.1 200", 12) != 0)
    return -1;
  const char *cl = NULL;
  for (const char *p = b; p < end; p++)
    if ((*p == '\n') && (size_t)(end - p) > 16 &&
        strncasecmp(p + 1, "content-length:", 15) == 0)
      cl = p + 16;
  if (!cl)
    return -1;
  long body = strtol(cl, NULL, 10);
  return n >= head + (size_t)body ? (long)(head + (size_t)body) : 0;
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/v1/id", *token = NULL;
  long port = 0, requests = 20000, depth = 16;
  static const struct option opts[] = {{"port", 1, 0, 'p'},  {"host", 1, 0, 'H'},
                                       {"path", 1, 0, 'P'},  {"requests", 1, 0, 'n'},
                                       {"depth", 1, 0, 'd'}, {"token", 1, 0, 't'},
                                       {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (c) {
    case 'p':
      port = strtol(optarg, NULL, 10);
      break;
    case 'H':
      host = optarg;
      break;
    case 'P':
      path = optarg;
      break;
    case 'n':
      requests = strtol(optarg, NULL, 10);
      break;
    case 'd':
      depth = strtol(optarg, NULL, 10);
      break;
    case 't':
      token = optarg;
      break;
    default:
      return usage();
    }
  }
  if (optind != argc || port <= 0 || port > 65535 || requests <= 0 || depth <= 0)
    return usage();
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
    return usage();
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    perror("bench_http_pipeline: connect");
    return 1;
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char req[512];
  int rl = token ? snprintf(req, sizeof req,
                           "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n",
                           path, host, token)
                 : snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
  if (rl < 0 || (size_t)rl >= sizeof req)
    return usage();
  static char buf[1 << 16];
  size_t have = 0;
  long sent = 0, answered = 0, bytes = 0;
  while (answered < requests) {
    /* Top the pipeline up to depth requests in flight, in one write. */
    char out[sizeof req * 64];
    size_t ol = 0;
    while (sent < requests && sent - answered < depth && ol + (size_t)rl <= sizeof out) {
      memcpy(out + ol, req, (size_t)rl);
      ol += (size_t)rl;
      sent++;
    }
    for (size_t w = 0; w < ol;) {
      ssize_t k = write(fd, out + w, ol - w);
      if (k <= 0) {
        perror("bench_http_pipeline: write");
        return 1;
      }
      w += (size_t)k;
    }
    ssize_t k = read(fd, buf + have, sizeof buf - have);
    if (k <= 0) {
      fprintf(stderr, "bench_http_pipeline: the server closed after %ld answers\n",
              answered);
      return 1;
    }
    have += (size_t)k;
    bytes += k;
    long len;
    while (have > 0 && (len = response_len(buf, have)) != 0) {
      if (len < 0) {
        fprintf(stderr, "bench_http_pipeline: not a 200 with a length: %.80s\n", buf);
        printf("PIPERESULT requests=%ld depth=%ld bytes=%ld errors=1\n", answered, depth,
               bytes);
        return 1;
      }
      memmove(buf, buf + len, have - (size_t)len);
      have -= (size_t)len;
      answered++;
    }
  }
  close(fd);
  printf("PIPERESULT requests=%ld depth=%ld bytes=%ld errors=0\n", answered, depth, bytes);
  return 0;
}
