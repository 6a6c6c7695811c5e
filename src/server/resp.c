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

static int parse_inline(const char *in, size_t len, idgen__resp_cmd *cmd, size_t *consumed,
                        const char **err) {
  const char *nl = memchr(in, '\n', len);
  if (!nl) {
    if (len > IDGEN_RESP_MAX_REQUEST) {
      *err = "ERR Protocol error: too big inline request";
      return -1;
    }
    return 0;
  }
  size_t linelen = (size_t)(nl - in);
  if (linelen > IDGEN_RESP_MAX_REQUEST) {
    *err = "ERR Protocol error: too big inline request";
    return -1;
  }
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
  return 1;
}

int idgen__resp_parse(const char *in, size_t len, idgen__resp_cmd *cmd, size_t *consumed,
                      const char **err) {
  if (len == 0)
    return 0;
  if (in[0] != '*')
    return parse_inline(in, len, cmd, consumed, err);
  size_t limit = len < IDGEN_RESP_MAX_REQUEST ? len : IDGEN_RESP_MAX_REQUEST;
  const char *cr = memchr(in, '\r', limit);
  if (!cr || (size_t)(cr - in) + 1 >= len) {
    if (len >= IDGEN_RESP_MAX_REQUEST) {
      *err = "ERR Protocol error: invalid multibulk length";
      return -1;
    }
    return 0;
  }
  if (cr[1] != '\n') {
    *err = "ERR Protocol error: invalid multibulk length";
    return -1;
  }
  long long n = parse_len(in + 1, (size_t)(cr - in - 1), 1024 * 1024);
  if (n < -1) {
    *err = "ERR Protocol error: invalid multibulk length";
    return -1;
  }
  size_t pos = (size_t)(cr - in) + 2;
  cmd->argc = 0;
  for (long long a = 0; a < n; a++) {
    if (pos >= len)
      goto more;
    if (in[pos] != '$') {
      *err = "ERR Protocol error: expected '$'";
      return -1;
    }
    size_t avail = len - pos;
    const char *lcr = memchr(in + pos, '\r', avail < 16 ? avail : 16);
    if (!lcr) {
      if (avail >= 16) {
        *err = "ERR Protocol error: invalid bulk length";
        return -1;
      }
      goto more;
    }
    if ((size_t)(lcr - in) + 1 >= len)
      goto more;
    if (lcr[1] != '\n') {
      *err = "ERR Protocol error: invalid bulk length";
      return -1;
    }
    long long bl =
        parse_len(in + pos + 1, (size_t)(lcr - (in + pos) - 1), IDGEN_RESP_MAX_REQUEST);
    if (bl < 0) {
      *err = "ERR Protocol error: invalid bulk length";
      return -1;
    }
    pos = (size_t)(lcr - in) + 2;
    if (pos > IDGEN_RESP_MAX_REQUEST || (size_t)bl > IDGEN_RESP_MAX_REQUEST - pos) {
      *err = "ERR Protocol error: request too large";
      return -1;
    }
    if (len - pos < (size_t)bl + 2)
      goto more;
    if (in[pos + (size_t)bl] != '\r' || in[pos + (size_t)bl + 1] != '\n') {
      *err = "ERR Protocol error: bulk string not followed by CRLF";
      return -1;
    }
    if (cmd->argc < IDGEN_RESP_MAX_ARGS) {
      cmd->argv[cmd->argc] = in + pos;
      cmd->argl[cmd->argc] = (size_t)bl;
    }
    cmd->argc++;
    pos += (size_t)bl + 2;
  }
  *consumed = pos;
  return 1;
more:
  if (len >= IDGEN_RESP_MAX_REQUEST) {
    *err = "ERR Protocol error: request too large";
    return -1;
  }
  return 0;
}

void idgen__resp_session_init(idgen__resp_session *s, idgen__tctx *t) {
  s->t = t;
  s->authed = !idgen__svc_auth_required(t->svc);
}

static int64_t resp_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
      error_str(out, "WRONGPASS invalid username-password pair or user is disabled.");
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
    int rc = idgen__resp_parse(in + used, len - used, &cmd, &consumed, &err);
    if (rc == 0)
      break;
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
    int64_t t0 = resp_mono_ns();
    int error = 0;
    idgen__rcmd which = run(s, &cmd, out, &error, close);
    idgen__metrics_resp(s->t->m, which, error, resp_mono_ns() - t0);
    if (idgen__svc_stopping(s->t->svc))
      *close = 1;
  }
  return used;
}
