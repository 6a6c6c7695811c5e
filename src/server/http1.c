/* http1.c: HTTP/1.x requests in, responses out: heads held to the configured limits as
 * they arrive, keep-alive and pipelining, bodies up to 1 KiB read and dropped. */
#include "server/http1.h"

#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/log.h"

/* picohttpparser, inside libh2o; Debian ships no picohttpparser.h. */
struct phr_header {
  const char *name; /* NULL for a folded continuation line */
  size_t name_len;
  const char *value;
  size_t value_len;
};
int phr_parse_request(const char *buf, size_t len, const char **method, size_t *method_len,
                      const char **path, size_t *path_len, int *minor_version,
                      struct phr_header *headers, size_t *num_headers, size_t last_len);

/* What the headers say about framing and the connection. */
typedef struct head_info {
  const char *authorization;
  size_t authorization_len;
  const char *user_agent; /* NULL: none */
  size_t user_agent_len;
  uint64_t content_length;
  int has_length, chunked, conn_close, conn_keep_alive, folded, bad_length;
} head_info;

void idgen__http1_session_init(idgen__http1_session *s, idgen__tctx *t) {
  const idgen__serve_config *cfg = idgen__svc_config(t->svc);
  memset(s, 0, sizeof *s);
  s->t = t;
  s->max_line = (size_t)cfg->max_request_line;
  s->max_headers = (size_t)cfg->max_header_bytes;
  s->date_s = -1;
}

size_t idgen__http1_max_input(const idgen__serve_config *cfg) {
  /* An empty line before the request, the line and its CRLF, the headers and the blank
   * line after them, the body. */
  return 2 + (size_t)cfg->max_request_line + 2 + (size_t)cfg->max_header_bytes + 2 +
         IDGEN_HTTP1_MAX_BODY;
}

static int name_is(const struct phr_header *h, const char *name) {
  size_t n = strlen(name);
  return h->name_len == n && strncasecmp(h->name, name, n) == 0;
}

/* 1 if the comma-separated list v[0..n) holds the token (case-insensitive). */
static int has_token(const char *v, size_t n, const char *token) {
  size_t tl = strlen(token), i = 0;
  while (i < n) {
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    size_t start = i;
    while (i < n && v[i] != ',')
      i++;
    size_t end = i;
    while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
      end--;
    if (end - start == tl && strncasecmp(v + start, token, tl) == 0)
      return 1;
  }
  return 0;
}

static void read_headers(const struct phr_header *h, size_t n, head_info *info) {
  memset(info, 0, sizeof *info);
  for (size_t i = 0; i < n; i++) {
    if (!h[i].name) {
      info->folded = 1; /* obsolete line folding: RFC 9112 says reject */
    } else if (name_is(&h[i], "content-length")) {
      uint64_t v = 0;
      int ok = h[i].value_len > 0 && h[i].value_len <= 18;
      for (size_t k = 0; ok && k < h[i].value_len; k++) {
        char c = h[i].value[k];
        ok = c >= '0' && c <= '9';
        v = v * 10 + (uint64_t)(c - '0');
      }
      if (!ok || (info->has_length && v != info->content_length))
        info->bad_length = 1;
      info->has_length = 1;
      info->content_length = v;
    } else if (name_is(&h[i], "transfer-encoding")) {
      info->chunked = 1;
    } else if (name_is(&h[i], "connection")) {
      info->conn_close |= has_token(h[i].value, h[i].value_len, "close");
      info->conn_keep_alive |= has_token(h[i].value, h[i].value_len, "keep-alive");
    } else if (name_is(&h[i], "user-agent") && !info->user_agent) {
      info->user_agent = h[i].value;
      info->user_agent_len = h[i].value_len;
    } else if (name_is(&h[i], "authorization") && !info->authorization) {
      info->authorization = h[i].value;
      info->authorization_len = h[i].value_len;
    }
  }
}

/* "Sun, 06 Nov 1994 08:49:37 GMT", formatted once a second. */
static const char *http_date(idgen__http1_session *s) {
  time_t now = time(NULL);
  if ((int64_t)now != s->date_s) {
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(s->date, sizeof s->date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    s->date_s = (int64_t)now;
  }
  return s->date;
}

/* The status line, the headers (lower case, as h2o wrote them), and the body unless the
 * request was HEAD. keep_alive_10: an HTTP/1.0 client asked to keep the connection. Put
 * together piece by piece, not through printf: this runs once a request. */
static void write_response(idgen__http1_session *s, const idgen__http_res *res, int head,
                           int keep_alive_10, int close, idgen__buf *out) {
  idgen__buf_reserve(out, 160 + res->body_len);
  idgen__buf_adds(out, "HTTP/1.1 ");
  idgen__buf_addu(out, (uint64_t)res->status);
  idgen__buf_addc(out, ' ');
  idgen__buf_adds(out, res->reason);
  idgen__buf_adds(out, "\r\ndate: ");
  idgen__buf_adds(out, http_date(s));
  idgen__buf_adds(out, "\r\nserver: idgen\r\ncontent-type: ");
  idgen__buf_adds(out, res->content_type);
  idgen__buf_adds(out, "\r\ncontent-length: ");
  idgen__buf_addu(out, res->body_len);
  idgen__buf_add(out, "\r\n", 2);
  if (close)
    idgen__buf_adds(out, "connection: close\r\n");
  else if (keep_alive_10)
    idgen__buf_adds(out, "connection: keep-alive\r\n");
  if (res->retry_after_s > 0) {
    idgen__buf_adds(out, "retry-after: ");
    idgen__buf_addu(out, (uint64_t)res->retry_after_s);
    idgen__buf_add(out, "\r\n", 2);
  }
  if (res->allow)
    idgen__buf_adds(out, "allow: GET, HEAD\r\n");
  if (res->www_authenticate)
    idgen__buf_adds(out, "www-authenticate: Bearer\r\n");
  idgen__buf_add(out, "\r\n", 2);
  if (!head && res->body_len)
    idgen__buf_add(out, res->body, res->body_len);
}

/* Answers with a refusal and closes: what follows in the stream cannot be framed. */
static size_t refuse(idgen__http1_session *s, int status, size_t len, idgen__buf *out,
                     int *close) {
  idgen__http_res res;
  idgen__caller_name none;
  idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
  idgen__caller_name_set(&none, "", 0);
  idgen__callers_count(s->t->callers, &none, &ref, 1);
  idgen__api_refuse(s->t, status, &res);
  write_response(s, &res, 0, 0, 1, out);
  *close = 1;
  return len;
}

/* An absolute-form target ("http://host/path") becomes its path. */
static void origin_form(const char **path, size_t *len) {
  const char *p = *path;
  size_t n = *len, skip;
  if (n >= 7 && strncasecmp(p, "http://", 7) == 0)
    skip = 7;
  else if (n >= 8 && strncasecmp(p, "https://", 8) == 0)
    skip = 8;
  else
    return;
  const char *slash = memchr(p + skip, '/', n - skip);
  if (slash) {
    *len = n - (size_t)(slash - p);
    *path = slash;
  } else {
    *path = "/";
    *len = 1;
  }
}

void idgen__http1_target(idgen__http_req *req, const char *target, size_t len) {
  const char *q = memchr(target, '?', len);
  req->path = target;
  req->path_len = q ? (size_t)(q - target) : len;
  req->query = q ? q + 1 : NULL;
  req->query_len = q ? len - req->path_len - 1 : 0;
}

static size_t count_lines(const char *p, size_t n) {
  size_t lines = 0;
  for (size_t i = 0; i < n; i++)
    lines += p[i] == '\n';
  return lines;
}

/* A request head as picohttpparser read it, and what its headers say. */
typedef struct head {
  const char *method, *path;
  size_t method_len, path_len, nh, len;
  int minor;
  struct phr_header h[IDGEN_HTTP1_MAX_HEADERS];
  head_info info;
} head;

/* What a step found: go on to the next, wait for more bytes, or refuse (the status). */
enum { GO_ON = -1, MORE = 0 };

/* The request line, held to --max-request-line as its bytes arrive; *headers_at gets the
 * offset after it. off: the empty line allowed before it. */
static int step_line(idgen__http1_session *s, const char *in, size_t len, size_t off,
                     head *hd, size_t *headers_at) {
  size_t avail = len - off;
  const char *nl =
      memchr(in + off, '\n', avail < s->max_line + 2 ? avail : s->max_line + 2);
  if (!nl) {
    if (avail >= s->max_line + 2)
      return 414;
    /* The first bytes of a request may already show it is none (TLS, random bytes). */
    hd->nh = IDGEN_HTTP1_MAX_HEADERS;
    if (s->scanned == 0 &&
        phr_parse_request(in, len, &hd->method, &hd->method_len, &hd->path, &hd->path_len,
                          &hd->minor, hd->h, &hd->nh, 0) == -1)
      return 400;
    s->scanned = len;
    return MORE;
  }
  size_t line_len = (size_t)(nl - (in + off));
  if (line_len && nl[-1] == '\r')
    line_len--;
  if (line_len > s->max_line)
    return 414;
  *headers_at = (size_t)(nl - in) + 1;
  return GO_ON;
}

/* The whole head, held to --max-header-bytes and IDGEN_HTTP1_MAX_HEADERS lines. */
static int step_head(idgen__http1_session *s, const char *in, size_t len, size_t headers_at,
                     head *hd) {
  hd->nh = IDGEN_HTTP1_MAX_HEADERS;
  int r = phr_parse_request(in, len, &hd->method, &hd->method_len, &hd->path, &hd->path_len,
                            &hd->minor, hd->h, &hd->nh, s->body_wait ? 0 : s->scanned);
  if (r == -2) {
    /* Incomplete: every byte after the request line belongs to the header section. */
    if (len - headers_at > s->max_headers + 2)
      return 431;
    s->scanned = len;
    return MORE;
  }
  if (r < 0)
    return count_lines(in + headers_at, len - headers_at) >= IDGEN_HTTP1_MAX_HEADERS ? 431
                                                                                     : 400;
  hd->len = (size_t)r;
  size_t blank = hd->len - headers_at >= 2 && in[hd->len - 2] == '\r' ? 2 : 1;
  if (hd->len - headers_at - blank > s->max_headers)
    return 431;
  return GO_ON;
}

/* The framing the headers ask for: no folding, one length, no chunked body, a small one. */
static int step_framing(head *hd) {
  read_headers(hd->h, hd->nh, &hd->info);
  if (hd->info.folded || hd->info.bad_length)
    return 400;
  if (hd->info.chunked || hd->info.content_length > IDGEN_HTTP1_MAX_BODY)
    return 413;
  return GO_ON;
}

/* Counts the request under its User-Agent; the name is made again only when the
 * User-Agent is not the connection's last one. */
static void count_caller(idgen__http1_session *s, const head_info *info) {
  size_t n = info->user_agent_len < IDGEN_CALLER_NAME_MAX ? info->user_agent_len
                                                          : IDGEN_CALLER_NAME_MAX;
  if (!info->user_agent)
    n = 0;
  if (!s->named || n != s->ua_len || (n && memcmp(s->ua, info->user_agent, n))) {
    int first = !s->named;
    if (n)
      memcpy(s->ua, info->user_agent, n);
    s->ua_len = n;
    s->named = 1;
    idgen__caller_name_set(&s->caller, info->user_agent, n);
    s->caller_ref = IDGEN__CALLER_REF_NONE;
    if (first && idgen__log_debug_on())
      idgen__log("debug", "caller", "http name=%s", s->caller.s);
  }
  idgen__callers_count(s->t->callers, &s->caller, &s->caller_ref, 1);
}

/* Routes a whole request and writes its response; sets *close as the connection asks. */
static void answer(idgen__http1_session *s, head *hd, idgen__buf *out, int *close) {
  idgen__http_req req;
  memset(&req, 0, sizeof req);
  req.method = hd->method;
  req.method_len = hd->method_len;
  origin_form(&hd->path, &hd->path_len);
  idgen__http1_target(&req, hd->path, hd->path_len);
  req.authorization = hd->info.authorization;
  req.authorization_len = hd->info.authorization_len;
  req.cert = s->cert;
  req.health = s->health;
  count_caller(s, &hd->info);
  idgen__http_res res;
  idgen__api_http(s->t, &req, &res);
  if (res.auth_failed) {
    idgen__metrics_auth_failed(s->t->m, LISTENER_HTTP);
    if (++s->auth_failures >= IDGEN_HTTP1_MAX_AUTH_FAILURES)
      res.close = 1;
  }
  int keep = hd->minor >= 1 ? !hd->info.conn_close
                            : hd->info.conn_keep_alive && !hd->info.conn_close;
  *close = res.close || !keep;
  int is_head = hd->method_len == 4 && memcmp(hd->method, "HEAD", 4) == 0;
  write_response(s, &res, is_head, hd->minor == 0 && !*close, *close, out);
}

/* One request from in[0..len): the bytes it took (0: more are needed). Each step
 * decides one thing: the request line, the head, its framing, the body's bytes. */
static size_t one_request(idgen__http1_session *s, const char *in, size_t len,
                          idgen__buf *out, int *close) {
  /* Like h2o, allow one empty line before a request (some clients send CRLF after a
   * body). */
  size_t off = in[0] == '\n' ? 1 : in[0] == '\r' && len >= 2 && in[1] == '\n' ? 2 : 0;
  if (in[0] == '\r' && len < 2)
    return 0;
  head hd;
  size_t headers_at = 0;
  int v = step_line(s, in, len, off, &hd, &headers_at);
  if (v == GO_ON && s->body_wait && len < s->body_wait)
    return 0;
  if (v == GO_ON)
    v = step_head(s, in, len, headers_at, &hd);
  if (v == GO_ON)
    v = step_framing(&hd);
  if (v == MORE)
    return 0;
  if (v != GO_ON)
    return refuse(s, v, len, out, close);
  size_t used = hd.len + (size_t)hd.info.content_length;
  if (len < used) {
    s->body_wait = used;
    return 0;
  }
  s->body_wait = 0;
  s->scanned = 0;
  answer(s, &hd, out, close);
  return used;
}

size_t idgen__http1_feed(idgen__http1_session *s, const char *in, size_t len,
                         idgen__buf *out, int *close) {
  size_t used = 0;
  *close = 0;
  while (used < len && out->len < IDGEN_HTTP1_OUT_HIGH && !*close) {
    size_t n = one_request(s, in + used, len - used, out, close);
    if (n == 0)
      break;
    used += n;
  }
  return used;
}
