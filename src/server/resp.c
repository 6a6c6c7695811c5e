/* resp.c: RESP requests in, replies out: the parser, and the session that feeds each
 * command to the table in resp_cmd.c. */
#include "server/resp.h"

#include <string.h>
#include <strings.h>

#include "server/resp_reply.h"

/* Reads a decimal from s[0..n) strictly; returns -1 if it is not one or above max. */
static long long parse_len(const char *s, size_t n, long long max) {
  if (n == 1 && s[0] >= '0' && s[0] <= '9')
    return s[0] - '0' > max ? -2 : s[0] - '0';
  if (n == 0 || n > 10)
    return -2;
  size_t i = 0;
  int neg = 0;
  if (s[0] == '-') {
    neg = 1;
    i = 1;
    if (n == 1)
      return -2;
  }
  long long v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -2;
    v = v * 10 + (s[i] - '0');
  }
  if (neg)
    return -v >= -1 ? -1 : -2;
  return v > max ? -2 : v;
}

/* What the parser reads next (parse stage); one step_ function each. */
enum { PS_START, PS_INLINE, PS_COUNT, PS_BULK_LEN, PS_BULK_DATA };
/* A step's outcome: the parser's results (1, 0, -1, IDGEN_RESP_HTTP) or go on. */
enum { STEP_ON = 2 };
/* "*N\r\n" and "$N\r\n" lines are short: parse_len reads 10 digits at most. */
#define COUNT_LINE_MAX 16

/* The end of a length line ("*N\r\n", "$N\r\n") starting at in[at], searched over
 * COUNT_LINE_MAX bytes at most: 1 and *lf, 0 if it has not arrived, -1 if it is too long
 * or ends in a bare LF (silence until the buffer filled up would leave the client
 * guessing). */
static int length_line(const char *in, size_t len, size_t at, const char **lf) {
  size_t avail = len - at;
  /* The common line, one digit ("*1\r\n", "$2\r\n"), without a search. */
  if (avail >= 4 && in[at + 2] == '\r' && in[at + 3] == '\n') {
    *lf = in + at + 3;
    return 1;
  }
  const char *nl = memchr(in + at, '\n', avail < COUNT_LINE_MAX ? avail : COUNT_LINE_MAX);
  if (!nl)
    return avail >= COUNT_LINE_MAX ? -1 : 0;
  if (nl - (in + at) < 2 || nl[-1] != '\r')
    return -1;
  *lf = nl;
  return 1;
}

static int fail(const char **err, const char *why) {
  *err = why;
  return -1;
}

/* Browsers may post to any local port: a request line or a Host header is no command. */
static int looks_like_http(const idgen__resp_cmd *c) {
  static const char *const methods[] = {"GET",     "POST",    "PUT",   "DELETE", "HEAD",
                                        "OPTIONS", "CONNECT", "TRACE", "PATCH"};
  if (c->argc >= 1 && c->argl[0] == 5 && strncasecmp(c->argv[0], "host:", 5) == 0)
    return 1;
  if (c->argc != 3 || c->argl[2] < 5 || memcmp(c->argv[2], "HTTP/", 5) != 0)
    return 0;
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (c->argl[0] == strlen(methods[i]) && !memcmp(c->argv[0], methods[i], c->argl[0]))
      return 1;
  return 0;
}

static int step_start(idgen__resp_parser *p, const char *in, size_t len) {
  if (len == 0)
    return 0;
  p->stage = in[0] == '*' ? PS_COUNT : PS_INLINE;
  p->pos = 0;
  return STEP_ON;
}

/* Words separated by spaces or tabs, one line; p->pos: how far '\n' was searched. */
static int step_inline(idgen__resp_parser *p, const char *in, size_t len,
                       idgen__resp_cmd *cmd, size_t *consumed, const char **err) {
  const char *nl = memchr(in + p->pos, '\n', len - p->pos);
  if (!nl) {
    p->pos = len;
    return len >= IDGEN_RESP_MAX_REQUEST
               ? fail(err, "ERR Protocol error: too big inline request")
               : 0;
  }
  size_t linelen = (size_t)(nl - in);
  if (linelen >= IDGEN_RESP_MAX_REQUEST)
    return fail(err, "ERR Protocol error: too big inline request");
  if (linelen && in[linelen - 1] == '\r')
    linelen--;
  cmd->argc = 0;
  size_t i = 0;
  while (i < linelen) {
    while (i < linelen && (in[i] == ' ' || in[i] == '\t'))
      i++;
    if (i >= linelen)
      break;
    size_t start = i;
    while (i < linelen && in[i] != ' ' && in[i] != '\t')
      i++;
    if (cmd->argc < IDGEN_RESP_MAX_ARGS) {
      cmd->argv[cmd->argc] = in + start;
      cmd->argl[cmd->argc] = i - start;
    }
    cmd->argc++;
  }
  *consumed = (size_t)(nl - in) + 1;
  return looks_like_http(cmd) ? IDGEN_RESP_HTTP : 1;
}

static int step_count(idgen__resp_parser *p, const char *in, size_t len,
                      idgen__resp_cmd *cmd, size_t *consumed, const char **err) {
  const char *lf = NULL;
  int found = length_line(in, len, 0, &lf);
  if (found <= 0)
    return found < 0 ? fail(err, "ERR Protocol error: invalid multibulk length") : 0;
  long long n = parse_len(in + 1, (size_t)(lf - in - 2), 1024 * 1024);
  if (n < -1)
    return fail(err, "ERR Protocol error: invalid multibulk length");
  p->pos = (size_t)(lf - in) + 1;
  if (n <= 0) {
    cmd->argc = 0;
    *consumed = p->pos;
    return 1;
  }
  p->nargs = (size_t)n;
  p->argc = 0;
  p->stage = PS_BULK_LEN;
  return STEP_ON;
}

static int step_bulk_len(idgen__resp_parser *p, const char *in, size_t len,
                         const char **err) {
  if (p->pos >= len)
    return 0;
  if (in[p->pos] != '$')
    return fail(err, "ERR Protocol error: expected '$'");
  const char *lf = NULL;
  int found = length_line(in, len, p->pos, &lf);
  if (found <= 0)
    return found < 0 ? fail(err, "ERR Protocol error: invalid bulk length") : 0;
  long long bl =
      parse_len(in + p->pos + 1, (size_t)(lf - (in + p->pos) - 2), IDGEN_RESP_MAX_REQUEST);
  if (bl < 0)
    return fail(err, "ERR Protocol error: invalid bulk length");
  size_t start = (size_t)(lf - in) + 1;
  if (start + (size_t)bl + 2 > IDGEN_RESP_MAX_REQUEST)
    return fail(err, "ERR Protocol error: request too large");
  p->bulk_len = (size_t)bl;
  p->pos = start;
  p->stage = PS_BULK_DATA;
  return STEP_ON;
}

static int step_bulk_data(idgen__resp_parser *p, const char *in, size_t len,
                          idgen__resp_cmd *cmd, size_t *consumed, const char **err) {
  if (len - p->pos < p->bulk_len + 2)
    return 0;
  if (in[p->pos + p->bulk_len] != '\r' || in[p->pos + p->bulk_len + 1] != '\n')
    return fail(err, "ERR Protocol error: bulk string not followed by CRLF");
  if (p->argc < IDGEN_RESP_MAX_ARGS) {
    p->argo[p->argc] = p->pos;
    p->argl[p->argc] = p->bulk_len;
  }
  p->argc++;
  p->pos += p->bulk_len + 2;
  if (p->argc < p->nargs) {
    p->stage = PS_BULK_LEN;
    return STEP_ON;
  }
  cmd->argc = p->argc;
  for (size_t i = 0; i < p->argc && i < IDGEN_RESP_MAX_ARGS; i++) {
    cmd->argv[i] = in + p->argo[i];
    cmd->argl[i] = p->argl[i];
  }
  *consumed = p->pos;
  return 1;
}

void idgen__resp_parser_init(idgen__resp_parser *p) {
  memset(p, 0, sizeof *p);
  p->stage = PS_START;
}

int idgen__resp_parse(idgen__resp_parser *p, const char *in, size_t len,
                      idgen__resp_cmd *cmd, size_t *consumed, const char **err) {
  int rc = STEP_ON;
  while (rc == STEP_ON) {
    switch (p->stage) {
    case PS_START:
      rc = step_start(p, in, len);
      break;
    case PS_INLINE:
      rc = step_inline(p, in, len, cmd, consumed, err);
      break;
    case PS_COUNT:
      rc = step_count(p, in, len, cmd, consumed, err);
      break;
    case PS_BULK_LEN:
      rc = step_bulk_len(p, in, len, err);
      break;
    default:
      rc = step_bulk_data(p, in, len, cmd, consumed, err);
      break;
    }
  }
  if (rc != 0)
    p->stage = PS_START;
  return rc;
}

void idgen__resp_session_init(idgen__resp_session *s, idgen__tctx *t) {
  memset(s, 0, sizeof *s);
  s->t = t;
  s->authed = !idgen__svc_auth_required(t->svc);
  s->grant = IDGEN__GRANT_ALL;
  s->proto = 2;
  s->id = idgen__svc_client_id(t->svc);
  s->opened_ns = idgen_monotonic_ns();
  idgen__caller_name_set(&s->caller, "", 0);
  s->caller_ref = IDGEN__CALLER_REF_NONE;
  idgen__resp_parser_init(&s->parser);
}

int idgen__resp_cert_auth(idgen__resp_session *s) {
  idgen__grant g;
  if (!s->cert || !idgen__svc_auth_cert(s->t->svc, &s->t->hold, s->cert, &g))
    return 0;
  s->authed = 1;
  s->by_cert = 1;
  s->grant = g;
  return 1;
}

void idgen__resp_session_cert(idgen__resp_session *s,
                              const struct idgen__cert_names *cert) {
  s->cert = cert;
  if (!s->authed)
    idgen__resp_cert_auth(s);
}

size_t idgen__resp_feed(idgen__resp_session *s, const char *in, size_t len, idgen__buf *out,
                        int *close) {
  size_t used = 0;
  *close = 0;
  /* One clock read a command: a command's end is the next one's start. */
  int64_t t0 = 0;
  while (used < len && out->len < IDGEN_RESP_OUT_HIGH && !*close) {
    idgen__resp_cmd cmd;
    size_t consumed = 0;
    const char *err = NULL;
    int rc = idgen__resp_parse(&s->parser, in + used, len - used, &cmd, &consumed, &err);
    if (rc == 0)
      break;
    if (rc == IDGEN_RESP_HTTP) {
      atomic_fetch_add_explicit(&s->t->m->resp_cross_protocol, 1, memory_order_relaxed);
      *close = 1;
      used = len;
      break;
    }
    if (rc < 0) {
      idgen__resp_out o = {out, s->proto};
      idgen__resp_error(&o, err, strlen(err));
      atomic_fetch_add_explicit(&s->t->m->resp_protocol_errors, 1, memory_order_relaxed);
      *close = 1;
      used = len;
      break;
    }
    used += consumed;
    if (cmd.argc == 0)
      continue;
    if (t0 == 0)
      t0 = idgen_monotonic_ns();
    int error = 0;
    idgen__rcmd which = idgen__resp_run(s, &cmd, out, &error, close);
    int64_t t1 = idgen_monotonic_ns();
    idgen__metrics_resp(s->t->m, which, error, t1 - t0);
    idgen__callers_count(s->t->callers, &s->caller, &s->caller_ref, 1);
    t0 = t1;
    if (idgen__svc_stopping(s->t->svc))
      *close = 1;
  }
  return used;
}
