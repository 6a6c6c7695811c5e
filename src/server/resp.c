/* resp.c: RESP2 requests in, replies out: PING, ID [form], IDS n [form], UUID7, UUID4,
 * ULID, DECODE, INFO, QUIT, AUTH, with Redis's error wording. */
#include "server/resp.h"

#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/decode_json.h"
#include "server/id_form.h"

/* Reads a decimal from s[0..n) strictly; returns -1 if it is not one or above max. */
static long long parse_len(const char *s, size_t n, long long max) {
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
  s->t = t;
  s->authed = !idgen__svc_auth_required(t->svc);
  s->auth_failures = 0;
  idgen__resp_parser_init(&s->parser);
}

static int is(const idgen__resp_cmd *c, const char *name) {
  size_t l = strlen(name);
  return c->argl[0] == l && strncasecmp(c->argv[0], name, l) == 0;
}

static void bulk(idgen__buf *out, const char *s, size_t n) {
  idgen__buf_addc(out, '$');
  idgen__buf_addu(out, n);
  idgen__buf_add(out, "\r\n", 2);
  idgen__buf_add(out, s, n);
  idgen__buf_add(out, "\r\n", 2);
}

/* An error line; control bytes in it become spaces so the reply stays one line. */
static void error_line(idgen__buf *out, const char *s, size_t n) {
  idgen__buf_addc(out, '-');
  size_t start = out->len;
  idgen__buf_add(out, s, n);
  if (out->failed)
    return;
  for (size_t i = start; i < out->len; i++)
    if ((unsigned char)out->data[i] < 0x20)
      out->data[i] = ' ';
  idgen__buf_add(out, "\r\n", 2);
}

static void error_str(idgen__buf *out, const char *s) {
  error_line(out, s, strlen(s));
}

static void lower_name(const idgen__resp_cmd *c, char *name, size_t cap) {
  size_t n = c->argl[0] < cap - 1 ? c->argl[0] : cap - 1;
  for (size_t i = 0; i < n; i++) {
    char ch = c->argv[0][i];
    name[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
  }
  name[n] = 0;
}

static void wrong_arity(idgen__buf *out, const idgen__resp_cmd *c) {
  char name[32], msg[96];
  lower_name(c, name, sizeof name);
  int n = snprintf(msg, sizeof msg, "ERR wrong number of arguments for '%s' command", name);
  error_line(out, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void unknown(idgen__buf *out, const idgen__resp_cmd *c) {
  /* Redis 7: "ERR unknown command 'x', with args beginning with: 'a' 'b' " */
  idgen__buf tmp = {0};
  idgen__buf_adds(&tmp, "ERR unknown command '");
  idgen__buf_add(&tmp, c->argv[0], c->argl[0] > 128 ? 128 : c->argl[0]);
  idgen__buf_adds(&tmp, "', with args beginning with: ");
  size_t kept = c->argc < IDGEN_RESP_MAX_ARGS ? c->argc : IDGEN_RESP_MAX_ARGS;
  for (size_t i = 1; i < kept && tmp.len < 128; i++) {
    idgen__buf_addc(&tmp, '\'');
    idgen__buf_add(&tmp, c->argv[i], c->argl[i] > 128 ? 128 : c->argl[i]);
    idgen__buf_adds(&tmp, "' ");
  }
  if (tmp.failed)
    error_str(out, "ERR unknown command");
  else
    error_line(out, tmp.data, tmp.len);
  idgen__buf_free(&tmp);
}

static void resp_issue_error(idgen__buf *out, int err) {
  int temporary;
  const char *code = idgen__svc_error_code(err, &temporary);
  char msg[160];
  int n = snprintf(msg, sizeof msg, "%s %s: %s", temporary ? "TRYAGAIN" : "ERR", code,
                   idgen_strerror(err));
  error_line(out, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* Reads the count argument; writes the error reply and returns 0 if it is bad. */
static int count_arg(idgen__resp_session *s, const idgen__resp_cmd *c, size_t i,
                     uint64_t *n, idgen__buf *out) {
  uint64_t max = idgen__svc_config(s->t->svc)->max_count;
  uint64_t v = 0;
  int ok = c->argl[i] > 0 && c->argl[i] <= 19;
  for (size_t k = 0; ok && k < c->argl[i]; k++) {
    char ch = c->argv[i][k];
    if (ch < '0' || ch > '9')
      ok = 0;
    else
      v = v * 10 + (uint64_t)(ch - '0');
  }
  if (!ok) {
    error_str(out, "ERR value is not an integer or out of range");
    return 0;
  }
  if (v < 1 || v > max) {
    char msg[80];
    snprintf(msg, sizeof msg, "ERR count must be from 1 to %llu", (unsigned long long)max);
    error_str(out, msg);
    return 0;
  }
  *n = v;
  return 1;
}

/* Reads the optional form argument of ID and IDS (server/id_form.h; decimal when
 * absent); writes the error reply and returns 0 if it is bad. */
static int form_arg(idgen__resp_session *s, const idgen__resp_cmd *c, size_t i,
                    idgen__id_form *form, idgen__buf *out) {
  form->format = IDGEN_FORMAT_DECIMAL;
  form->opaque = 0;
  if (i >= c->argc)
    return 1;
  if (idgen__id_form_parse(c->argv[i], c->argl[i], form) < 0) {
    error_str(out, "ERR unknown format, want one of " IDGEN__ID_FORMS);
    return 0;
  }
  if (form->opaque && !idgen__svc_opaque(s->t->svc)) {
    error_str(out, "ERR opaque formats need a key: this server runs without "
                   "--opaque-key-file");
    return 0;
  }
  return 1;
}

/* ids[0..n) in form: one bulk string, or an array of n when many; an error reply if the
 * opaque forms cannot be made. */
static void reply_ids(idgen__resp_session *s, idgen__id_form form, uint64_t *ids, size_t n,
                      int many, idgen__buf *out) {
  int rc = idgen__id_form_prepare(form, idgen__svc_opaque(s->t->svc), ids, n);
  if (rc < 0) {
    resp_issue_error(out, rc);
    return;
  }
  if (many) {
    idgen__buf_reserve(out, n * 28 + 16);
    idgen__buf_addc(out, '*');
    idgen__buf_addu(out, n);
    idgen__buf_add(out, "\r\n", 2);
  }
  for (size_t i = 0; i < n; i++) {
    char text[IDGEN_FORMAT_MAX];
    int len = idgen_id_format(ids[i], form.format, idgen__svc_layout(s->t->svc), text,
                              sizeof text);
    if (len < 0)
      idgen__buf_adds(out, "$-1\r\n"); /* an ID its layout cannot write as friendly */
    else
      bulk(out, text, (size_t)len);
  }
}

/* Runs one command; returns its metric slot, sets *error and *close. */
static idgen__rcmd run(idgen__resp_session *s, const idgen__resp_cmd *c, idgen__buf *out,
                       int *error, int *close) {
  idgen__tctx *t = s->t;
  size_t start = out->len;
  idgen__rcmd which = RCMD_OTHER;
  if (is(c, "QUIT")) {
    idgen__buf_adds(out, "+OK\r\n");
    *close = 1;
    return RCMD_QUIT;
  }
  if (is(c, "AUTH")) {
    which = RCMD_AUTH;
    if (c->argc != 2 && c->argc != 3) {
      wrong_arity(out, c);
    } else if (!idgen__svc_auth_required(t->svc)) {
      error_str(out, "ERR AUTH <password> called without any password configured for the "
                     "default user. Are you sure your configuration is correct?");
    } else if ((c->argc == 3 && !(c->argl[1] == 7 && !strncmp(c->argv[1], "default", 7))) ||
               !idgen__svc_auth_ok(t->svc, c->argv[c->argc - 1], c->argl[c->argc - 1])) {
      /* Guessing takes a new connection every few tries; Redis clients reconnect. */
      error_str(out, "WRONGPASS invalid username-password pair or user is disabled.");
      idgen__metrics_auth_failed(t->m, LISTENER_RESP);
      if (++s->auth_failures >= IDGEN_RESP_MAX_AUTH_FAILURES)
        *close = 1;
    } else {
      s->authed = 1;
      idgen__buf_adds(out, "+OK\r\n");
    }
    goto done;
  }
  if (!s->authed) {
    error_str(out, "NOAUTH Authentication required.");
    goto done;
  }
  if (is(c, "PING")) {
    which = RCMD_PING;
    if (c->argc == 1)
      idgen__buf_adds(out, "+PONG\r\n");
    else if (c->argc == 2)
      bulk(out, c->argv[1], c->argl[1]);
    else
      wrong_arity(out, c);
  } else if (is(c, "ID")) {
    which = RCMD_ID;
    uint64_t id;
    idgen__id_form form;
    int rc;
    if (c->argc > 2) {
      wrong_arity(out, c);
    } else if (form_arg(s, c, 1, &form, out)) {
      if ((rc = idgen__svc_next(t->svc, &id)) < 0) {
        resp_issue_error(out, rc);
      } else {
        idgen__metrics_issued(t->m, KIND_SNOWFLAKE, 1);
        reply_ids(s, form, &id, 1, 0, out);
      }
    }
  } else if (is(c, "IDS")) {
    which = RCMD_IDS;
    uint64_t n;
    idgen__id_form form;
    if (c->argc != 2 && c->argc != 3) {
      wrong_arity(out, c);
    } else if (count_arg(s, c, 1, &n, out) && form_arg(s, c, 2, &form, out)) {
      int64_t got = idgen__svc_next_batch(t->svc, t->ids, (size_t)n);
      if (got > 0)
        idgen__metrics_issued(t->m, KIND_SNOWFLAKE, (uint64_t)got);
      if (got < 0 || (uint64_t)got < n) {
        int64_t again = got < 0 ? got : idgen__svc_next_batch(t->svc, t->ids, 1);
        resp_issue_error(out, again < 0 ? (int)again : IDGEN_EEXHAUSTED);
      } else {
        reply_ids(s, form, t->ids, (size_t)n, 1, out);
      }
    }
  } else if (is(c, "UUID7") || is(c, "UUID4") || is(c, "ULID")) {
    idgen__kind kind = is(c, "UUID7")   ? KIND_UUID7
                       : is(c, "UUID4") ? KIND_UUID4
                                        : KIND_ULID;
    which = kind == KIND_UUID7 ? RCMD_UUID7 : kind == KIND_UUID4 ? RCMD_UUID4 : RCMD_ULID;
    uint64_t n = 1;
    if (c->argc > 2) {
      wrong_arity(out, c);
    } else if (c->argc == 1 || count_arg(s, c, 1, &n, out)) {
      size_t mark = out->len;
      if (c->argc == 2) {
        idgen__buf_addc(out, '*');
        idgen__buf_addu(out, n);
        idgen__buf_add(out, "\r\n", 2);
      }
      for (uint64_t i = 0; i < n; i++) {
        char text[64];
        int l = idgen__svc_text_id(t->svc, kind, text, sizeof text);
        if (l < 0) {
          out->len = mark;
          if (l == IDGEN_EINVAL)
            unknown(out, c);
          else
            resp_issue_error(out, l);
          break;
        }
        bulk(out, text, (size_t)l);
        if (i + 1 == n)
          idgen__metrics_issued(t->m, kind, n);
      }
    }
  } else if (is(c, "DECODE")) {
    which = RCMD_DECODE;
    if (c->argc != 2) {
      wrong_arity(out, c);
    } else {
      const idgen_layout *layout = idgen__svc_layout(t->svc);
      uint64_t id;
      char json[IDGEN_DECODE_JSON_MAX];
      int rc = idgen_id_parse_any(c->argv[1], c->argl[1], layout, &id, NULL);
      int n = rc < 0 ? rc : idgen__decode_json(layout, id, json, sizeof json);
      if (n < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "ERR invalid ID for layout %s: %s", layout->name,
                 idgen_strerror(n));
        error_str(out, msg);
      } else {
        bulk(out, json, (size_t)n);
      }
    }
  } else if (is(c, "INFO")) {
    which = RCMD_INFO;
    idgen__buf text = {0};
    idgen__svc_info_text(t->svc, &text);
    if (text.failed)
      error_str(out, "ERR out of memory");
    else
      bulk(out, text.data, text.len);
    idgen__buf_free(&text);
  } else if (is(c, "COMMAND")) {
    /* redis-cli asks for command docs when it starts interactively: no docs. */
    idgen__buf_adds(out, "*0\r\n");
    which = RCMD_OTHER;
  } else {
    unknown(out, c);
  }
done:
  *error = out->len > start && out->data[start] == '-';
  return which;
}

size_t idgen__resp_feed(idgen__resp_session *s, const char *in, size_t len, idgen__buf *out,
                        int *close) {
  size_t used = 0;
  *close = 0;
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
      error_str(out, err);
      atomic_fetch_add_explicit(&s->t->m->resp_protocol_errors, 1, memory_order_relaxed);
      *close = 1;
      used = len;
      break;
    }
    used += consumed;
    if (cmd.argc == 0)
      continue;
    int64_t t0 = idgen_monotonic_ns();
    int error = 0;
    idgen__rcmd which = run(s, &cmd, out, &error, close);
    idgen__metrics_resp(s->t->m, which, error, idgen_monotonic_ns() - t0);
    if (idgen__svc_stopping(s->t->svc))
      *close = 1;
  }
  return used;
}
