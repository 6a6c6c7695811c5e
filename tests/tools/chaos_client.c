/* chaos_client.c: a fault-campaign client. It asks one `idgen serve` replica for IDs in a
 * loop, over HTTP or the Redis protocol, single IDs and batches, and records every ID it
 * receives (and every request that got none) in the format `idgen check` reads:
 *   <unix ms received> <replica> <id>            (with --name: <replica> <id> <name>)
 *   <unix ms> <replica> ERR <kind>
 * With --name it asks a named generator (?name=N, ID N, IDS N count): a segment one's
 * numbers are checked with `idgen check --integers`, per replica and name.
 * The history is flushed every 100 ms, so it can be read while it grows. Plain sockets
 * with poll() deadlines, so a paused or dead replica costs one timeout and
 * a late answer can never be read as the answer to a later request (the connection is
 * closed after any failure).
 * Usage: chaos_client (--http | --resp) HOST:PORT --replica NAME --out FILE [options] */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <arpa/inet.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

typedef struct client {
  int resp; /* 0: HTTP, 1: RESP */
  struct sockaddr_in addr;
  const char *host_port;
  const char *replica;
  const char *name; /* --name: the generator asked; NULL: the default */
  int fd;
  int64_t timeout_ms;
  char *buf; /* response bytes */
  size_t len, cap;
  uint64_t *ids;
  size_t nids, ids_cap;
  char kind[40]; /* the error kind of the last failed request */
} client;

/* Failure outcomes of one request; the kind text says which. */
enum { OK = 0, FAIL = -1 };

static int fail(client *c, const char *kind) {
  snprintf(c->kind, sizeof c->kind, "%s", kind);
  if (c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
  return FAIL;
}

/* Waits for fd to be ready for events before the deadline. */
static int wait_fd(client *c, short events, int64_t deadline) {
  for (;;) {
    if (stop_flag)
      return fail(c, "stopped");
    int64_t left = deadline - mono_ms();
    if (left <= 0)
      return fail(c, "timeout");
    struct pollfd p = {c->fd, events, 0};
    int n = poll(&p, 1, left > 100 ? 100 : (int)left);
    if (n > 0)
      return OK;
    if (n < 0 && errno != EINTR)
      return fail(c, "poll");
  }
}

static int connect_to(client *c, int64_t deadline) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0)
    return fail(c, "socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c->fd, (struct sockaddr *)&c->addr, sizeof c->addr) == 0)
    return OK;
  if (errno == ECONNREFUSED)
    return fail(c, "refused");
  if (errno != EINPROGRESS)
    return fail(c, "connect");
  if (wait_fd(c, POLLOUT, deadline) < 0)
    return FAIL;
  int err = 0;
  socklen_t elen = sizeof err;
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen);
  if (err)
    return fail(c, err == ECONNREFUSED ? "refused" : "connect");
  return OK;
}

static int send_all(client *c, const char *p, size_t n, int64_t deadline) {
  while (n > 0) {
    ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(c, POLLOUT, deadline) < 0)
        return FAIL;
    } else {
      return fail(c, "send");
    }
  }
  return OK;
}

/* Reads more bytes into c->buf; FAIL on timeout, error or end of stream. */
static int read_more(client *c, int64_t deadline) {
  if (c->cap - c->len < 65536) {
    size_t cap = c->cap ? c->cap * 2 : 1 << 18;
    char *b = realloc(c->buf, cap);
    if (!b)
      return fail(c, "nomem");
    c->buf = b;
    c->cap = cap;
  }
  for (;;) {
    ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
    if (r > 0) {
      c->len += (size_t)r;
      c->buf[c->len] = '\0';
      return OK;
    }
    if (r == 0)
      return fail(c, "closed");
    if (errno != EAGAIN && errno != EINTR)
      return fail(c, errno == ECONNRESET ? "reset" : "recv");
    if (wait_fd(c, POLLIN, deadline) < 0)
      return FAIL;
  }
}

static int push_id(client *c, uint64_t id) {
  if (c->nids == c->ids_cap) {
    size_t cap = c->ids_cap ? c->ids_cap * 2 : 8192;
    uint64_t *ids = realloc(c->ids, cap * sizeof *ids);
    if (!ids)
      return fail(c, "nomem");
    c->ids = ids;
    c->ids_cap = cap;
  }
  c->ids[c->nids++] = id;
  return OK;
}

/* Reads a decimal u64 at p (at least one digit, at most 20); returns the end or NULL. */
static const char *read_u64(const char *p, const char *end, uint64_t *out) {
  uint64_t v = 0;
  const char *s = p;
  while (p < end && *p >= '0' && *p <= '9' && p - s < 20) {
    uint64_t d = (uint64_t)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return NULL;
    v = v * 10 + d;
    p++;
  }
  if (p == s)
    return NULL;
  *out = v;
  return p;
}

static size_t find(const char *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (!strncasecmp(hay + i, needle, m))
      return i;
  return (size_t)-1;
}

/* The IDs of an HTTP body: {"id":"N"} or {"ids":["N",...]}. Exactly want of them. */
static int http_ids(client *c, const char *body, size_t n, size_t want) {
  size_t at = find(body, n, want == 0 ? "\"id\":" : "\"ids\":[");
  if (at == (size_t)-1)
    return fail(c, "bad_body");
  const char *p = body + at + (want == 0 ? 5 : 7), *end = body + n;
  size_t expect = want == 0 ? 1 : want;
  for (size_t i = 0; i < expect; i++) {
    if (i) {
      if (p >= end || *p != ',')
        return fail(c, "bad_body");
      p++;
    }
    uint64_t id;
    if (p >= end || *p != '"' || !(p = read_u64(p + 1, end, &id)) || p >= end || *p != '"')
      return fail(c, "bad_body");
    p++;
    if (push_id(c, id) < 0)
      return FAIL;
  }
  if (p >= end || *p != (want == 0 ? '}' : ']'))
    return fail(c, "bad_body"); /* more IDs than asked for */
  return OK;
}

/* The error code of a JSON error body {"error":{"code":"X",...}}, else http_<status>. */
static void http_error_kind(client *c, int status, const char *body, size_t n) {
  size_t at = find(body, n, "\"code\":\"");
  if (at != (size_t)-1) {
    const char *p = body + at + 8;
    size_t k = 0;
    char kind[32];
    while (p < body + n && *p != '"' && k + 1 < sizeof kind) {
      char ch = *p++;
      kind[k++] =
          (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ? ch : '_';
    }
    kind[k] = '\0';
    snprintf(c->kind, sizeof c->kind, "%s", k ? kind : "http_error");
  } else {
    snprintf(c->kind, sizeof c->kind, "http_%d", status);
  }
}

/* One HTTP request on a kept-alive connection; count 0 asks /v1/id, else /v1/ids. */
static int http_request(client *c, size_t count, int64_t deadline) {
  char req[256];
  int rn = count == 0
               ? snprintf(req, sizeof req, "GET /v1/id%s%s HTTP/1.1\r\nHost: %s\r\n\r\n",
                          c->name ? "?name=" : "", c->name ? c->name : "", c->host_port)
               : snprintf(req, sizeof req,
                          "GET /v1/ids?count=%zu%s%s HTTP/1.1\r\nHost: %s\r\n\r\n", count,
                          c->name ? "&name=" : "", c->name ? c->name : "", c->host_port);
  if (send_all(c, req, (size_t)rn, deadline) < 0)
    return FAIL;
  c->len = 0;
  size_t head_end;
  for (;;) {
    if (read_more(c, deadline) < 0)
      return FAIL;
    char *e = strstr(c->buf, "\r\n\r\n");
    if (e) {
      head_end = (size_t)(e - c->buf) + 4;
      break;
    }
    if (c->len > 16384)
      return fail(c, "bad_head");
  }
  int status = 0;
  if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
    return fail(c, "bad_head");
  size_t cl_at = find(c->buf, head_end, "\r\ncontent-length:");
  if (cl_at == (size_t)-1)
    return fail(c, "no_length"); /* the server always sets Content-Length */
  size_t body_len = (size_t)strtoull(c->buf + cl_at + 17, NULL, 10);
  int close_after = find(c->buf, head_end, "\r\nconnection: close") != (size_t)-1;
  while (c->len < head_end + body_len)
    if (read_more(c, deadline) < 0)
      return FAIL;
  if (c->len != head_end + body_len)
    return fail(c, "extra_bytes"); /* nothing was pipelined: a stray answer */
  const char *body = c->buf + head_end;
  int rc;
  if (status == 200) {
    rc = http_ids(c, body, body_len, count);
  } else {
    http_error_kind(c, status, body, body_len);
    rc = FAIL;
  }
  if (close_after && c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
  return rc;
}

/* Parses one RESP line starting at *pos: returns its length (without CRLF), or -1 if
 * the buffer does not hold all of it yet. */
static long resp_line(client *c, size_t pos) {
  char *e = memchr(c->buf + pos, '\r', c->len - pos);
  if (!e || (size_t)(e - c->buf) + 1 >= c->len)
    return -1;
  return e - (c->buf + pos);
}

/* One RESP request: count 0 sends ID [name], else IDS [name] count. */
static int resp_request(client *c, size_t count, int64_t deadline) {
  char req[256], num[24], name[128] = "";
  int named = c->name != NULL;
  if (named)
    snprintf(name, sizeof name, "$%zu\r\n%s\r\n", strlen(c->name), c->name);
  int rn;
  if (count == 0) {
    rn = snprintf(req, sizeof req, "*%d\r\n$2\r\nID\r\n%s", 1 + named, name);
  } else {
    int nl = snprintf(num, sizeof num, "%zu", count);
    rn = snprintf(req, sizeof req, "*%d\r\n$3\r\nIDS\r\n%s$%d\r\n%s\r\n", 2 + named, name,
                  nl, num);
  }
  if (send_all(c, req, (size_t)rn, deadline) < 0)
    return FAIL;
  c->len = 0;
  size_t pos = 0, want = count == 0 ? 1 : count, got = 0;
  int header_done = count == 0; /* ID answers one bulk string, IDS an array of them */
  for (;;) {
    long ln;
    while ((ln = resp_line(c, pos)) >= 0) {
      const char *l = c->buf + pos;
      size_t next = pos + (size_t)ln + 2;
      if (*l == '-') { /* "-TRYAGAIN clock_back: ..." or "-ERR ..." */
        const char *sp = memchr(l, ' ', (size_t)ln);
        size_t k = 0;
        char kind[32];
        if (sp && !strncmp(l, "-TRYAGAIN", 9))
          for (const char *q = sp + 1;
               q < l + ln && *q != ':' && *q != ' ' && k + 1 < sizeof kind; q++)
            kind[k++] = *q;
        kind[k] = '\0';
        /* An error reply is a whole answer: the connection stays usable. */
        snprintf(c->kind, sizeof c->kind, "%s", k ? kind : "resp_error");
        return next == c->len ? FAIL : fail(c, "extra_bytes");
      }
      if (!header_done) {
        if (*l != '*' || strtoull(l + 1, NULL, 10) != count)
          return fail(c, "bad_reply");
        header_done = 1;
        pos = next;
        continue;
      }
      if (*l != '$')
        return fail(c, "bad_reply");
      size_t blen = (size_t)strtoull(l + 1, NULL, 10);
      if (c->len < next + blen + 2)
        break; /* the bulk string is not all here */
      uint64_t id;
      const char *e = read_u64(c->buf + next, c->buf + next + blen, &id);
      if (!e || e != c->buf + next + blen || blen == 0)
        return fail(c, "bad_reply");
      if (push_id(c, id) < 0)
        return FAIL;
      pos = next + blen + 2;
      if (++got == want) {
        if (pos != c->len)
          return fail(c, "extra_bytes");
        return OK;
      }
    }
    if (read_more(c, deadline) < 0)
      return FAIL;
  }
}

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: chaos_client (--http | --resp) HOST:PORT --replica NAME --out FILE "
      "[options]\n"
      "  --batch N          IDs per batch request (default 1: single IDs only)\n"
      "  --single-every K   with --batch > 1, every K-th request asks one ID (default 0)\n"
      "  --count N          stop after N IDs (default: no bound)\n"
      "  --duration-ms N    stop after N ms (default: no bound; SIGTERM stops too)\n"
      "  --timeout-ms N     per request, connecting included (default 2000)\n"
      "  --error-sleep-ms N pause after a failed request (default 20)\n"
      "  --pause-ms N       pause after every request (default 0), to bound the rate\n"
      "  --name N           ask the generator named N (and write N after each ID)\n"
      "Prints a summary line on stderr at the end.\n");
}

int main(int argc, char **argv) {
  static const struct option options[] = {{"http", required_argument, NULL, 'H'},
                                          {"resp", required_argument, NULL, 'R'},
                                          {"replica", required_argument, NULL, 'r'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"batch", required_argument, NULL, 'b'},
                                          {"single-every", required_argument, NULL, 's'},
                                          {"count", required_argument, NULL, 'n'},
                                          {"duration-ms", required_argument, NULL, 'd'},
                                          {"timeout-ms", required_argument, NULL, 't'},
                                          {"error-sleep-ms", required_argument, NULL, 'e'},
                                          {"pause-ms", required_argument, NULL, 'p'},
                                          {"name", required_argument, NULL, 'N'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  client c;
  memset(&c, 0, sizeof c);
  c.fd = -1;
  c.timeout_ms = 2000;
  c.resp = -1;
  const char *out_path = NULL;
  size_t batch = 1;
  uint64_t single_every = 0, max_ids = UINT64_MAX;
  int64_t duration_ms = 0, error_sleep_ms = 20, pause_ms = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 'H':
    case 'R':
      c.resp = opt == 'R';
      c.host_port = optarg;
      break;
    case 'r':
      c.replica = optarg;
      break;
    case 'o':
      out_path = optarg;
      break;
    case 'b':
      batch = (size_t)strtoull(optarg, NULL, 10);
      break;
    case 's':
      single_every = strtoull(optarg, NULL, 10);
      break;
    case 'n':
      max_ids = strtoull(optarg, NULL, 10);
      break;
    case 'd':
      duration_ms = strtoll(optarg, NULL, 10);
      break;
    case 't':
      c.timeout_ms = strtoll(optarg, NULL, 10);
      break;
    case 'e':
      error_sleep_ms = strtoll(optarg, NULL, 10);
      break;
    case 'p':
      pause_ms = strtoll(optarg, NULL, 10);
      break;
    case 'N':
      c.name = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (c.resp < 0 || !c.replica || !out_path || batch == 0 || c.timeout_ms <= 0 ||
      strchr(c.replica, ' ') ||
      (c.name && (!*c.name || strlen(c.name) > 64 || strpbrk(c.name, " &?#%\r\n")))) {
    usage(stderr);
    return 2;
  }
  const char *colon = strrchr(c.host_port, ':');
  char host[64];
  if (!colon || (size_t)(colon - c.host_port) >= sizeof host) {
    fprintf(stderr, "chaos_client: bad address '%s'\n", c.host_port);
    return 2;
  }
  memcpy(host, c.host_port, (size_t)(colon - c.host_port));
  host[colon - c.host_port] = '\0';
  c.addr.sin_family = AF_INET;
  c.addr.sin_port = htons((uint16_t)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &c.addr.sin_addr) != 1) {
    fprintf(stderr, "chaos_client: bad address '%s'\n", c.host_port);
    return 2;
  }
  FILE *out = fopen(out_path, "w");
  if (!out) {
    fprintf(stderr, "chaos_client: cannot write '%s'\n", out_path);
    return 1;
  }
  static char obuf[1 << 20];
  setvbuf(out, obuf, _IOFBF, sizeof obuf);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: a blocked poll returns */
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  int64_t start = mono_ms(), flushed = start;
  uint64_t total = 0, errors = 0, requests = 0;
  char prefix[96];
  while (!stop_flag && total < max_ids &&
         (duration_ms <= 0 || mono_ms() - start < duration_ms)) {
    size_t count = batch == 1 || (single_every && requests % single_every == 0) ? 0 : batch;
    if (count && max_ids - total < count)
      count = (size_t)(max_ids - total) > 1 ? (size_t)(max_ids - total) : 0;
    requests++;
    int64_t deadline = mono_ms() + c.timeout_ms;
    c.nids = 0;
    int rc = c.fd < 0 ? connect_to(&c, deadline) : OK;
    if (rc == OK)
      rc = c.resp ? resp_request(&c, count, deadline) : http_request(&c, count, deadline);
    int64_t now = wall_ms();
    if (rc == OK) {
      int pl = snprintf(prefix, sizeof prefix, "%lld %s ", (long long)now, c.replica);
      char suffix[80];
      int sl = snprintf(suffix, sizeof suffix, "%s%s\n", c.name ? " " : "",
                        c.name ? c.name : "");
      for (size_t i = 0; i < c.nids; i++) {
        char digits[24];
        int k = 23;
        uint64_t v = c.ids[i];
        do {
          digits[k--] = (char)('0' + v % 10);
          v /= 10;
        } while (v);
        fwrite(prefix, 1, (size_t)pl, out);
        fwrite(digits + k + 1, 1, (size_t)(23 - k), out);
        fwrite(suffix, 1, (size_t)sl, out);
      }
      total += c.nids;
      if (pause_ms > 0)
        sleep_ms(pause_ms);
    } else {
      if (!strcmp(c.kind, "stopped"))
        break; /* SIGTERM mid-request: the answer, if any, is not recorded */
      fprintf(out, "%lld %s ERR %s\n", (long long)now, c.replica, c.kind);
      errors++;
      sleep_ms(error_sleep_ms);
    }
    /* Whole lines, at least every 100 ms, for a test that watches the history grow. */
    if (mono_ms() - flushed >= 100) {
      fflush(out);
      flushed = mono_ms();
    }
  }
  if (c.fd >= 0)
    close(c.fd);
  int bad = fclose(out) != 0;
  fprintf(stderr, "chaos_client %s: %llu IDs, %llu errors, %llu requests\n", c.replica,
          (unsigned long long)total, (unsigned long long)errors,
          (unsigned long long)requests);
  free(c.buf);
  free(c.ids);
  return bad;
}
