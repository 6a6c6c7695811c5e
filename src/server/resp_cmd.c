/* resp_cmd.c: the RESP commands as one table (name, arity, flags, handler, docs), the
 * way Redis's server.h keeps its own, and their handlers. ID and IDS take a generator's
 * name (docs/generators.md). The connection commands a
 * Redis client sends on its own (HELLO, CLIENT, SELECT, COMMAND, ECHO, RESET) answer as
 * redis-server 7 does, checked against it by tests/integration/resp_vs_redis.sh. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/decode_json.h"
#include "common/id_form.h"
#include "server/log.h"
#include "server/resp.h"
#include "server/resp_reply.h"

#ifndef IDGEN_VERSION
#define IDGEN_VERSION "unknown"
#endif

/* One command being run. */
typedef struct call {
  idgen__resp_session *s;
  const idgen__resp_cmd *c;
  idgen__resp_out out;
  int close; /* close the connection once the reply is sent */
} call;

enum {
  CMD_NO_AUTH = 1, /* runs before AUTH (Redis's no_auth flag) */
  CMD_FAST = 2,    /* O(1): Redis's fast flag, for COMMAND INFO */
};

typedef struct command {
  const char *name; /* lower case, as Redis writes names in errors and COMMAND */
  int arity;        /* n: exactly n words, the name included; -n: n or more */
  int max;          /* with -n: at most this many words (0: no bound), checked here where
                       Redis's handlers check it, with the same error */
  unsigned flags;   /* CMD_* */
  idgen__rcmd slot; /* metrics */
  void (*run)(call *x);
  const struct command *sub; /* subcommands (CLIENT, COMMAND), ending with a NULL name:
                                argv[1] names one; run (if any) serves argc == 1 */
  const char *group;         /* COMMAND DOCS */
  const char *summary;
  const char *complexity;
} command;

static size_t count_of(const command *table) {
  size_t n = 0;
  while (table[n].name)
    n++;
  return n;
}

static int word_is(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* s[0..n) is the table's name (lower case) in any case: by hand, as it runs on every
 * command. */
static int name_is(const char *s, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
    if (c != name[i] || !name[i])
      return 0;
  }
  return name[n] == 0;
}

static int arg_is(const call *x, size_t i, const char *lit) {
  return i < x->c->argc && i < IDGEN_RESP_MAX_ARGS &&
         word_is(x->c->argv[i], x->c->argl[i], lit);
}

static void ok(call *x) {
  idgen__resp_simple(&x->out, "OK");
}

static void reply_error(call *x, const char *msg) {
  idgen__resp_error(&x->out, msg, strlen(msg));
}

/* Redis's string2ll: an optional '-', then digits with no leading zero (except "0"). */
static int parse_ll(const char *s, size_t n, long long *out) {
  size_t i = 0;
  int neg = 0;
  if (n > 0 && s[0] == '-') {
    neg = 1;
    i = 1;
  }
  if (i >= n || n - i > 18 || (s[i] == '0' && n - i > 1) || (neg && s[i] == '0'))
    return -1;
  long long v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = neg ? -v : v;
  return 0;
}

/* ---- IDs ------------------------------------------------------------------------- */

static void issue_error(call *x, int err) {
  int temporary;
  const char *code = idgen__svc_error_code(err, &temporary);
  idgen__resp_errorf(&x->out, "%s %s: %s", temporary ? "TRYAGAIN" : "ERR", code,
                     idgen_strerror(err));
}

/* Reads the count argument; writes the error reply and returns 0 if it is bad. */
static int count_arg(call *x, size_t i, uint64_t *n) {
  uint64_t max = idgen__svc_config(x->s->t->svc)->max_count;
  const char *s = x->c->argv[i];
  size_t len = x->c->argl[i];
  uint64_t v = 0;
  int good = len > 0 && len <= 19;
  for (size_t k = 0; good && k < len; k++) {
    if (s[k] < '0' || s[k] > '9')
      good = 0;
    else
      v = v * 10 + (uint64_t)(s[k] - '0');
  }
  if (!good) {
    reply_error(x, "ERR value is not an integer or out of range");
    return 0;
  }
  if (v < 1 || v > max) {
    idgen__resp_errorf(&x->out, "ERR count must be from 1 to %llu",
                       (unsigned long long)max);
    return 0;
  }
  *n = v;
  return 1;
}

/* ID [name] [form], IDS [name] count [form]: the generator argument i names, or the
 * default one where the grammar before names had something else there (an argument
 * that is all digits, names never are; ID: a format's name, names never are; IDS: a
 * lone argument, its count as before, unless it names a generator whose count is
 * missing), so that old commands, wrong ones included, answer as they did
 * (docs/generators.md). *next gets the index after the name, if any. NULL, with the
 * error reply written, for an unknown name. */
static idgen__generator *generator_arg(call *x, size_t i, int counted, size_t *next) {
  idgen__svc *svc = x->s->t->svc;
  *next = i;
  if (i >= x->c->argc)
    return idgen__svc_default(svc);
  const char *a = x->c->argv[i];
  size_t l = x->c->argl[i];
  idgen__id_form form;
  if (strspn(a, "0123456789") >= l || (!counted && idgen__id_form_parse(a, l, &form) == 0))
    return idgen__svc_default(svc);
  idgen__generator *g = idgen__svc_generator(svc, a, l);
  if (!g && counted && i + 1 == x->c->argc)
    return idgen__svc_default(svc);
  if (!g) {
    idgen__resp_errorf(&x->out, "ERR unknown generator '%.*s' (INFO lists them)%s",
                       (int)(l > 64 ? 64 : l), a,
                       counted ? "" : "; not a format either: " IDGEN__ID_FORMS);
    return NULL;
  }
  *next = i + 1;
  return g;
}

/* Reads the optional form argument of ID and IDS (common/id_form.h; decimal when
 * absent) and checks that it suits generator g; writes the error reply and returns 0
 * if not. */
static int form_arg(call *x, idgen__generator *g, size_t i, idgen__id_form *form) {
  form->format = IDGEN_FORMAT_DECIMAL;
  form->opaque = 0;
  if (i >= x->c->argc)
    return 1;
  char why[200];
  if (idgen__id_form_parse(x->c->argv[i], x->c->argl[i], form) < 0) {
    reply_error(x, "ERR unknown format, want one of " IDGEN__ID_FORMS);
    return 0;
  }
  if (!idgen__generator_form_ok(g, *form, why, sizeof why)) {
    idgen__resp_errorf(&x->out, "ERR %s", why);
    return 0;
  }
  return 1;
}

/* One 64-bit ID as a bulk string, written in place (idgen__resp_short_bulk_frame); the
 * null reply for an ID its layout cannot write as friendly. */
_Static_assert(IDGEN_FORMAT_MAX <= IDGEN__RESP_SHORT_BULK_MAX,
               "an ID is a short bulk string");
static void bulk_id(call *x, uint64_t id, idgen_format format, const idgen_layout *layout) {
  char *p = idgen__buf_reserve(x->out.buf, IDGEN_FORMAT_MAX + 8);
  if (!p)
    return;
  int len =
      idgen_id_format(id, format, layout, p + IDGEN__RESP_SHORT_BULK_AT, IDGEN_FORMAT_MAX);
  if (len < 0) {
    idgen__resp_null(&x->out);
    return;
  }
  x->out.buf->len += idgen__resp_short_bulk_frame(p, (size_t)len);
}

/* 1 if n IDs are charged to the connection's token's quota (idgen__svc_charge), before
 * any is made; else answers BUSY (over the quota) or ERR (over the burst) and 0. */
static int charged(call *x, uint64_t n) {
  const idgen__grant *g = &x->s->grant;
  if (!g->quota)
    return 1; /* no quota: the one test */
  uint64_t retry_s = 0;
  idgen__quota_verdict v = idgen__svc_charge(g, n, x->s->t->m, &retry_s);
  if (v == IDGEN__QUOTA_OK)
    return 1;
  if (v == IDGEN__QUOTA_OVER_BURST)
    idgen__resp_errorf(&x->out,
                       "ERR over_burst: token '%s' asks %llu IDs at once, more than its "
                       "burst of %llu: no wait lets it pass",
                       idgen__svc_grant_name(g), (unsigned long long)n,
                       (unsigned long long)g->quota->burst);
  else
    idgen__resp_errorf(&x->out,
                       "BUSY token '%s' is over its quota of %llu IDs/s: retry in %llu s",
                       idgen__svc_grant_name(g), (unsigned long long)g->quota->rate,
                       (unsigned long long)retry_s);
  return 0;
}

/* n IDs of g in form (idgen__svc_issue): one bulk string, or an array of n (many) bulk
 * strings, never integers, in RESP3 too: a JavaScript client would turn a 64-bit integer
 * into a float. All of them or an error, never a short list. */
static void issue(call *x, idgen__generator *g, uint64_t n, idgen__id_form form, int many) {
  idgen__issued *r = &x->s->t->issued;
  if (x->s->grant.quota && !charged(x, n))
    return;
  int rc = idgen__svc_issue(g, (size_t)n, form, x->s->t->m, r);
  if (rc < 0) {
    issue_error(x, rc);
    return;
  }
  idgen__svc_grant_count(x->s->t->m, &x->s->grant, TOKEN_IDS, n);
  if (many) {
    idgen__buf_reserve(x->out.buf, r->n * 48 + 16);
    idgen__resp_array(&x->out, r->n);
  }
  for (size_t i = 0; i < r->n; i++) {
    if (r->is_text) {
      size_t len;
      const char *text = idgen__issued_text(r, i, &len);
      idgen__resp_bulk(&x->out, text, len);
      continue;
    }
    bulk_id(x, r->ids[i], form.format, g->layout);
  }
}

/* 1 if the connection's token may use g; else answers NOPERM and returns 0. */
/* Cold: out of the way of the commands that pass. */
__attribute__((cold)) static int not_permitted(call *x, const idgen__generator *g) {
  idgen__svc_grant_count(x->s->t->m, &x->s->grant, TOKEN_REFUSED, 1);
  idgen__resp_errorf(&x->out, "NOPERM token '%s' may not use generator '%s'",
                     idgen__svc_grant_name(&x->s->grant), g->name);
  return 0;
}

static int permitted(call *x, const idgen__generator *g) {
  return idgen__svc_grant_covers(&x->s->grant, g) ? 1 : not_permitted(x, g);
}

/* ID [name] [form] */
static void cmd_id(call *x) {
  idgen__id_form form;
  size_t next;
  idgen__generator *g = generator_arg(x, 1, 0, &next);
  if (!g || !permitted(x, g))
    return;
  if (x->c->argc > next + 1)
    reply_error(x, "ERR wrong number of arguments for 'id' command");
  else if (form_arg(x, g, next, &form))
    issue(x, g, 1, form, 0);
}

/* IDS [name] count [form] */
static void cmd_ids(call *x) {
  uint64_t n;
  idgen__id_form form;
  size_t next;
  idgen__generator *g = generator_arg(x, 1, 1, &next);
  if (!g || !permitted(x, g))
    return;
  if (x->c->argc < next + 1 || x->c->argc > next + 2)
    reply_error(x, "ERR wrong number of arguments for 'ids' command");
  else if (count_arg(x, next, &n) && form_arg(x, g, next + 1, &form))
    issue(x, g, n, form, 1);
}

/* RANGE name count: a segment generator's numbers first..last, taken as IDS takes
 * them; an array of two bulk strings (three, the stride last, for a backend whose
 * numbers are not consecutive), shorter than count when the block has fewer left. */
static void cmd_range(call *x) {
  idgen__svc *svc = x->s->t->svc;
  idgen__generator *g = idgen__svc_generator(svc, x->c->argv[1], x->c->argl[1]);
  if (!g) {
    idgen__resp_errorf(&x->out, "ERR unknown generator '%.*s' (INFO lists them)",
                       (int)(x->c->argl[1] > 64 ? 64 : x->c->argl[1]), x->c->argv[1]);
    return;
  }
  if (!permitted(x, g))
    return;
  const char *refusal = idgen__svc_range_refusal(g);
  if (refusal) {
    idgen__resp_errorf(&x->out, "ERR %s", refusal);
    return;
  }
  const char *s = x->c->argv[2];
  size_t len = x->c->argl[2];
  uint64_t n = 0;
  int good = len > 0 && len <= 10;
  for (size_t k = 0; good && k < len; k++) {
    if (s[k] < '0' || s[k] > '9')
      good = 0;
    else
      n = n * 10 + (uint64_t)(s[k] - '0');
  }
  if (!good || n < 1 || n > IDGEN__RANGE_MAX_COUNT) {
    idgen__resp_errorf(&x->out, "ERR count must be from 1 to %llu",
                       (unsigned long long)IDGEN__RANGE_MAX_COUNT);
    return;
  }
  idgen__range r;
  if (charged(x, n) == 0)
    return;
  int rc = idgen__svc_range(g, n, x->s->t->m, &r);
  if (rc < 0) {
    issue_error(x, rc);
    return;
  }
  idgen__svc_grant_count(x->s->t->m, &x->s->grant, TOKEN_IDS, r.count);
  idgen__resp_array(&x->out, r.stride == 1 ? 2 : 3);
  bulk_id(x, r.first, IDGEN_FORMAT_DECIMAL, NULL);
  bulk_id(x, r.last, IDGEN_FORMAT_DECIMAL, NULL);
  if (r.stride != 1)
    bulk_id(x, r.stride, IDGEN_FORMAT_DECIMAL, NULL);
}

/* UUID7 [n], UUID4 [n], ULID [n]: the service's own text IDs, one bulk string or an
 * array of n. */
static void text_ids(call *x, idgen__kind kind) {
  uint64_t n = 1;
  idgen__id_form form = {IDGEN_FORMAT_DECIMAL, 0};
  if (x->c->argc == 1 || count_arg(x, 1, &n))
    issue(x, idgen__svc_builtin(x->s->t->svc, kind), n, form, x->c->argc == 2);
}

static void cmd_uuid7(call *x) {
  text_ids(x, KIND_UUID7);
}
static void cmd_uuid4(call *x) {
  text_ids(x, KIND_UUID4);
}
static void cmd_ulid(call *x) {
  text_ids(x, KIND_ULID);
}

/* DECODE id: the JSON of `idgen decode --json` as one bulk string (not a map: the same
 * bytes as HTTP's), for any form it reads: 64-bit IDs, UUIDs, ULIDs. */
static void cmd_decode(call *x) {
  const idgen_layout *layout = idgen__svc_layout(x->s->t->svc);
  char json[IDGEN_DECODE_JSON_MAX];
  const char *kind;
  if (!layout && !idgen__wide_kind(x->c->argv[1], x->c->argl[1])) {
    reply_error(x, "ERR a 64-bit ID needs a snowflake layout: the default generator is "
                   "not a snowflake one (GET /v1/decode/ID?name=N)");
    return;
  }
  int n = idgen__decode_any_json(layout, x->c->argv[1], x->c->argl[1], json, sizeof json,
                                 &kind);
  if (n < 0 && kind[0] == 'I')
    idgen__resp_errorf(&x->out, "ERR invalid ID for layout %s: %s", layout->name,
                       idgen_strerror(n));
  else if (n < 0)
    idgen__resp_errorf(&x->out, "ERR invalid %s: %s", kind, idgen_strerror(n));
  else
    idgen__resp_bulk(&x->out, json, (size_t)n);
}

/* ---- INFO ------------------------------------------------------------------------ */

/* 1 if the "# Title" section is asked for: no argument, "all", "default", "everything",
 * or its name in any case (Redis's INFO takes several). */
static int section_wanted(const call *x, const char *title, size_t len) {
  if (x->c->argc == 1)
    return 1;
  for (size_t i = 1; i < x->c->argc && i < IDGEN_RESP_MAX_ARGS; i++)
    if (word_is(x->c->argv[i], x->c->argl[i], "all") ||
        word_is(x->c->argv[i], x->c->argl[i], "default") ||
        word_is(x->c->argv[i], x->c->argl[i], "everything") ||
        (x->c->argl[i] == len && strncasecmp(x->c->argv[i], title, len) == 0))
      return 1;
  return 0;
}

/* INFO [section ...]: "key:value" lines under "# Server", "# Generator" (the default
 * one) and "# Generators" (one line each, Redis's "name:field=value,..."); an unknown
 * section gives an empty text, as Redis's does. */
static void cmd_info(call *x) {
  idgen__buf text = {0}, kept = {0};
  idgen__svc_info_text(x->s->t->svc, &text);
  int keep = 0;
  for (size_t at = 0; at < text.len;) {
    const char *line = text.data + at;
    const char *nl = memchr(line, '\n', text.len - at);
    size_t len = nl ? (size_t)(nl - line) + 1 : text.len - at;
    if (len > 2 && line[0] == '#' && line[1] == ' ') {
      size_t title = len - 2;
      while (title > 0 && (line[2 + title - 1] == '\n' || line[2 + title - 1] == '\r'))
        title--;
      keep = section_wanted(x, line + 2, title);
      if (keep && kept.len)
        idgen__buf_add(&kept, "\r\n", 2); /* a blank line between sections */
    }
    if (keep)
      idgen__buf_add(&kept, line, len);
    at += len;
  }
  if (text.failed || kept.failed)
    reply_error(x, "ERR out of memory");
  else
    idgen__resp_verbatim(&x->out, kept.data ? kept.data : "", kept.len);
  idgen__buf_free(&text);
  idgen__buf_free(&kept);
}

/* ---- connection ------------------------------------------------------------------ */

static void cmd_ping(call *x) {
  if (x->c->argc == 1)
    idgen__resp_simple(&x->out, "PONG");
  else
    idgen__resp_bulk(&x->out, x->c->argv[1], x->c->argl[1]);
}

static void cmd_echo(call *x) {
  idgen__resp_bulk(&x->out, x->c->argv[1], x->c->argl[1]);
}

static void cmd_quit(call *x) {
  ok(x);
  x->close = 1;
}

/* Only database 0: IDs have no keyspace to choose, and clients send SELECT 0. */
static void cmd_select(call *x) {
  long long db;
  if (parse_ll(x->c->argv[1], x->c->argl[1], &db) < 0)
    reply_error(x, "ERR value is not an integer or out of range");
  else if (db != 0)
    reply_error(x, "ERR DB index is out of range");
  else
    ok(x);
}

/* The check of AUTH and HELLO AUTH: the user must be "default" and the password the
 * token; without a token "default" takes any password, like Redis's default user with
 * nopass. Returns 1, or answers WRONGPASS, counts it (closing the connection at the
 * IDGEN_RESP_MAX_AUTH_FAILURES-th: guessing takes new connections) and returns 0. */
static int authenticate(call *x, const char *user, size_t ul, const char *pass, size_t pl) {
  idgen__tctx *t = x->s->t;
  idgen__grant grant;
  int good = ul == 7 && memcmp(user, "default", 7) == 0 &&
             idgen__svc_auth(t->svc, &t->hold, pass, pl, &grant);
  if (good) {
    x->s->authed = 1;
    x->s->by_cert = 0; /* a token sent wins over the certificate */
    x->s->grant = grant;
    return 1;
  }
  reply_error(x, "WRONGPASS invalid username-password pair or user is disabled.");
  idgen__metrics_auth_failed(t->m, LISTENER_RESP);
  if (++x->s->auth_failures >= IDGEN_RESP_MAX_AUTH_FAILURES)
    x->close = 1;
  return 0;
}

/* AUTH password | AUTH user password */
static void cmd_auth(call *x) {
  const idgen__resp_cmd *c = x->c;
  if (c->argc > 3) {
    reply_error(x, "ERR syntax error");
  } else if (c->argc == 2 && !idgen__svc_auth_required(x->s->t->svc)) {
    reply_error(
        x, "ERR AUTH <password> called without any password configured for the default "
           "user. Are you sure your configuration is correct?");
  } else if (c->argc == 2
                 ? authenticate(x, "default", 7, c->argv[1], c->argl[1])
                 : authenticate(x, c->argv[1], c->argl[1], c->argv[2], c->argl[2])) {
    ok(x);
  }
}

/* Redis's validateClientAttr: printable ASCII without spaces. */
static int printable_word(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '!' || s[i] > '~')
      return 0;
  return 1;
}

/* Sets the connection's name (empty: none); answers the error and returns 0 if the
 * name is not one. */
static int set_name(call *x, const char *name, size_t len) {
  if (!printable_word(name, len)) {
    reply_error(x,
                "ERR Client names cannot contain spaces, newlines or special characters.");
    return 0;
  }
  if (len > IDGEN_RESP_NAME_MAX) {
    idgen__resp_errorf(&x->out, "ERR Client names are at most %d bytes here",
                       IDGEN_RESP_NAME_MAX);
    return 0;
  }
  memcpy(x->s->name, name, len);
  x->s->name[len] = 0;
  idgen__caller_name_set(&x->s->caller, name, len);
  x->s->caller_ref = IDGEN__CALLER_REF_NONE;
  if (idgen__log_debug_on())
    idgen__log("debug", "caller", "resp client=%llu name=%s", (unsigned long long)x->s->id,
               x->s->caller.s);
  return 1;
}

/* HELLO [protover [AUTH user pass] [SETNAME name]]: switches to RESP2 or RESP3 and
 * answers with the server's map, as Redis 7 does (same keys, same order). */
static void cmd_hello(call *x) {
  const idgen__resp_cmd *c = x->c;
  long long proto = x->s->proto;
  if (c->argc >= 2) {
    if (parse_ll(c->argv[1], c->argl[1], &proto) < 0) {
      reply_error(x, "ERR Protocol version is not an integer or out of range");
      return;
    }
    if (proto < 2 || proto > 3) {
      reply_error(x, "NOPROTO unsupported protocol version");
      return;
    }
  }
  size_t user = 0, name = 0; /* argument indexes; 0: not given */
  for (size_t j = 2; j < c->argc; j++) {
    size_t more = c->argc - 1 - j;
    if (arg_is(x, j, "AUTH") && more >= 2 && j + 2 < IDGEN_RESP_MAX_ARGS) {
      user = j + 1;
      j += 2;
    } else if (arg_is(x, j, "SETNAME") && more >= 1 && j + 1 < IDGEN_RESP_MAX_ARGS) {
      name = j + 1;
      j++;
    } else {
      size_t l = j < IDGEN_RESP_MAX_ARGS ? c->argl[j] : 0;
      idgen__resp_errorf(&x->out, "ERR Syntax error in HELLO option '%.*s'",
                         (int)(l > 128 ? 128 : l),
                         j < IDGEN_RESP_MAX_ARGS ? c->argv[j] : "");
      return;
    }
  }
  if (user &&
      !authenticate(x, c->argv[user], c->argl[user], c->argv[user + 1], c->argl[user + 1]))
    return;
  if (!x->s->authed) {
    reply_error(
        x, "NOAUTH HELLO must be called with the client already authenticated, otherwise "
           "the HELLO AUTH <user> <pass> option can be used to authenticate the client "
           "and select the RESP protocol version at the same time");
    return;
  }
  if (name && !set_name(x, c->argv[name], c->argl[name]))
    return;
  x->s->proto = (int)proto;
  x->out.proto = (int)proto; /* the reply is in the new protocol already */
  idgen__resp_out *o = &x->out;
  idgen__resp_map(o, 7);
  idgen__resp_bulks(o, "server");
  idgen__resp_bulks(o, "idgen");
  idgen__resp_bulks(o, "version");
  idgen__resp_bulks(o, IDGEN_VERSION);
  idgen__resp_bulks(o, "proto");
  idgen__resp_int(o, x->s->proto);
  idgen__resp_bulks(o, "id");
  idgen__resp_int(o, (int64_t)x->s->id);
  idgen__resp_bulks(o, "mode");
  idgen__resp_bulks(o, "standalone");
  idgen__resp_bulks(o, "role");
  idgen__resp_bulks(o, "master");
  idgen__resp_bulks(o, "modules");
  idgen__resp_array(o, 0);
}

/* RESET: the connection as if new (RESP2, no name, and AUTH needed again if a token is
 * set), as Redis's; failed AUTHs still count. */
static void cmd_reset(call *x) {
  x->s->proto = 2;
  x->out.proto = 2;
  x->s->name[0] = 0;
  idgen__caller_name_set(&x->s->caller, "", 0);
  x->s->caller_ref = IDGEN__CALLER_REF_NONE;
  x->s->authed = !idgen__svc_auth_required(x->s->t->svc);
  x->s->by_cert = 0;
  x->s->grant = IDGEN__GRANT_ALL;
  if (!x->s->authed)
    idgen__resp_cert_auth(x->s); /* the certificate is still the connection's */
  idgen__resp_simple(&x->out, "RESET");
}

static void cmd_client_id(call *x) {
  idgen__resp_int(&x->out, (int64_t)x->s->id);
}

static void cmd_client_getname(call *x) {
  if (x->s->name[0])
    idgen__resp_bulks(&x->out, x->s->name);
  else
    idgen__resp_null(&x->out);
}

static void cmd_client_setname(call *x) {
  if (set_name(x, x->c->argv[2], x->c->argl[2]))
    ok(x);
}

/* CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2; clients send it on connect and
 * ignore an error). */
static void cmd_client_setinfo(call *x) {
  const idgen__resp_cmd *c = x->c;
  char *dest = arg_is(x, 2, "lib-name")  ? x->s->lib_name
               : arg_is(x, 2, "lib-ver") ? x->s->lib_ver
                                         : NULL;
  size_t al = c->argl[2] > 128 ? 128 : c->argl[2];
  if (!dest)
    idgen__resp_errorf(&x->out, "ERR Unrecognized option '%.*s'", (int)al, c->argv[2]);
  else if (!printable_word(c->argv[3], c->argl[3]))
    idgen__resp_errorf(&x->out,
                       "ERR %.*s cannot contain spaces, newlines or special "
                       "characters.",
                       (int)al, c->argv[2]);
  else if (c->argl[3] > IDGEN_RESP_NAME_MAX)
    idgen__resp_errorf(&x->out, "ERR %.*s is at most %d bytes here", (int)al, c->argv[2],
                       IDGEN_RESP_NAME_MAX);
  else {
    memcpy(dest, c->argv[3], c->argl[3]);
    dest[c->argl[3]] = 0;
    ok(x);
  }
}

/* CLIENT INFO: Redis's "key=value ..." line for the fields a connection here has. */
static void cmd_client_info(call *x) {
  idgen__resp_session *s = x->s;
  char line[512];
  int64_t age_s = (idgen_monotonic_ns() - s->opened_ns) / 1000000000;
  int n = snprintf(line, sizeof line,
                   "id=%llu name=%s age=%lld idle=0 flags=N db=0 sub=0 psub=0 ssub=0 "
                   "multi=-1 watch=0 cmd=client|info user=default redir=-1 resp=%d "
                   "lib-name=%s lib-ver=%s\n",
                   (unsigned long long)s->id, s->name, (long long)age_s, s->proto,
                   s->lib_name, s->lib_ver);
  idgen__resp_verbatim(&x->out, line,
                       (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* ---- the tables ------------------------------------------------------------------ */

static void cmd_client_help(call *x);
static void cmd_command(call *x);
static void cmd_command_count(call *x);
static void cmd_command_docs(call *x);
static void cmd_command_info(call *x);
static void cmd_command_help(call *x);

static const command client_commands[] = {
    {"client|getname", 2, 0, CMD_FAST, RCMD_CLIENT, cmd_client_getname, NULL, "connection",
     "Returns the name of the connection.", "O(1)"},
    {"client|help", 2, 0, 0, RCMD_CLIENT, cmd_client_help, NULL, "connection",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {"client|id", 2, 0, CMD_FAST, RCMD_CLIENT, cmd_client_id, NULL, "connection",
     "Returns the unique client ID of the connection.", "O(1)"},
    {"client|info", 2, 0, 0, RCMD_CLIENT, cmd_client_info, NULL, "connection",
     "Returns information about the connection.", "O(1)"},
    {"client|setinfo", 4, 0, 0, RCMD_CLIENT, cmd_client_setinfo, NULL, "connection",
     "Sets information specific to the client or connection.", "O(1)"},
    {"client|setname", 3, 0, 0, RCMD_CLIENT, cmd_client_setname, NULL, "connection",
     "Sets the connection name.", "O(1)"},
    {NULL, 0, 0, 0, RCMD_OTHER, NULL, NULL, NULL, NULL, NULL},
};

static const command command_commands[] = {
    {"command|count", 2, 0, 0, RCMD_COMMAND, cmd_command_count, NULL, "server",
     "Returns a count of commands.", "O(1)"},
    {"command|docs", -2, 0, 0, RCMD_COMMAND, cmd_command_docs, NULL, "server",
     "Returns documentary information about one, multiple or all commands.",
     "O(N) where N is the number of commands to look up"},
    {"command|help", 2, 0, 0, RCMD_COMMAND, cmd_command_help, NULL, "server",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {"command|info", -2, 0, 0, RCMD_COMMAND, cmd_command_info, NULL, "server",
     "Returns information about one, multiple or all commands.",
     "O(N) where N is the number of commands to look up"},
    {NULL, 0, 0, 0, RCMD_OTHER, NULL, NULL, NULL, NULL, NULL},
};

/* Every command, in the order COMMAND lists them. A new one needs a row here (and a
 * metrics slot in metrics.h); its handler runs only with its arity checked and, unless
 * CMD_NO_AUTH, after AUTH. */
static const command commands[] = {
    {"id", -1, 3, CMD_FAST, RCMD_ID, cmd_id, NULL, "idgen",
     "Returns a new ID of the default generator or of the one named, in decimal or the "
     "form given.",
     "O(1)"},
    {"ids", -2, 4, 0, RCMD_IDS, cmd_ids, NULL, "idgen",
     "Returns an array of count new IDs of the default generator or of the one named, "
     "increasing, as strings.",
     "O(N) where N is the count"},
    {"range", 3, 0, CMD_FAST, RCMD_RANGE, cmd_range, NULL, "idgen",
     "Returns the first and last of up to count new numbers of a segment generator, "
     "consecutive, never handed out again.",
     "O(1)"},
    {"uuid7", -1, 2, 0, RCMD_UUID7, cmd_uuid7, NULL, "idgen",
     "Returns a new UUIDv7, or an array of count.", "O(N) where N is the count"},
    {"uuid4", -1, 2, 0, RCMD_UUID4, cmd_uuid4, NULL, "idgen",
     "Returns a new UUIDv4, or an array of count.", "O(N) where N is the count"},
    {"ulid", -1, 2, 0, RCMD_ULID, cmd_ulid, NULL, "idgen",
     "Returns a new ULID, or an array of count.", "O(N) where N is the count"},
    {"decode", 2, 0, CMD_FAST, RCMD_DECODE, cmd_decode, NULL, "idgen",
     "Returns the parts of an ID as the JSON of `idgen decode --json`.", "O(1)"},
    {"info", -1, 0, 0, RCMD_INFO, cmd_info, NULL, "server",
     "Returns information and statistics about the server.", "O(1)"},
    {"ping", -1, 2, CMD_FAST, RCMD_PING, cmd_ping, NULL, "connection",
     "Returns the server's liveliness response.", "O(1)"},
    {"echo", 2, 0, CMD_FAST, RCMD_ECHO, cmd_echo, NULL, "connection",
     "Returns the given string.", "O(1)"},
    {"auth", -2, 0, CMD_NO_AUTH | CMD_FAST, RCMD_AUTH, cmd_auth, NULL, "connection",
     "Authenticates the connection.", "O(1)"},
    {"hello", -1, 0, CMD_NO_AUTH | CMD_FAST, RCMD_HELLO, cmd_hello, NULL, "connection",
     "Handshakes with the server: RESP2 or RESP3, AUTH, SETNAME.", "O(1)"},
    {"client", -2, 0, 0, RCMD_CLIENT, NULL, client_commands, "connection",
     "A container for client connection commands.", "Depends on subcommand."},
    {"select", 2, 0, CMD_FAST, RCMD_SELECT, cmd_select, NULL, "connection",
     "Changes the selected database: only 0 here.", "O(1)"},
    {"command", -1, 0, 0, RCMD_COMMAND, cmd_command, command_commands, "server",
     "Returns detailed information about all commands.",
     "O(N) where N is the number of commands"},
    {"reset", 1, 0, CMD_NO_AUTH | CMD_FAST, RCMD_RESET, cmd_reset, NULL, "connection",
     "Resets the connection.", "O(1)"},
    {"quit", -1, 0, CMD_NO_AUTH | CMD_FAST, RCMD_QUIT, cmd_quit, NULL, "connection",
     "Closes the connection.", "O(1)"},
    {NULL, 0, 0, 0, RCMD_OTHER, NULL, NULL, NULL, NULL, NULL},
};

/* The row named s[0..n): a top-level name, or the part after '|' of a subcommand. */
static const command *lookup(const command *table, const char *s, size_t n) {
  for (const command *cmd = table; cmd->name; cmd++) {
    /* A name without '|' is compared whole, before any search for one. */
    if (name_is(s, n, cmd->name))
      return cmd;
    const char *bar = strchr(cmd->name, '|');
    if (bar && name_is(s, n, bar + 1))
      return cmd;
  }
  return NULL;
}

static int arity_ok(const command *cmd, size_t argc) {
  if (cmd->arity >= 0)
    return argc == (size_t)cmd->arity;
  return argc >= (size_t)-cmd->arity && (cmd->max == 0 || argc <= (size_t)cmd->max);
}

/* The part of a name after '|', upper case, into out. */
static void upper_tail(const char *name, char *out, size_t cap) {
  const char *bar = strchr(name, '|');
  const char *s = bar ? bar + 1 : name;
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++)
    out[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 32) : s[i];
  out[i] = 0;
}

/* HELP of a container: its usage line, then each subcommand and its summary. */
static void help(call *x, const char *parent, const command *table) {
  char up[32];
  upper_tail(parent, up, sizeof up);
  idgen__resp_array(&x->out, 1 + 2 * count_of(table));
  char line[96];
  snprintf(line, sizeof line,
           "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", up);
  idgen__resp_simple(&x->out, line);
  for (const command *cmd = table; cmd->name; cmd++) {
    upper_tail(cmd->name, up, sizeof up);
    idgen__resp_simple(&x->out, up);
    snprintf(line, sizeof line, "    %s", cmd->summary);
    idgen__resp_simple(&x->out, line);
  }
}

static void cmd_client_help(call *x) {
  help(x, "client", client_commands);
}
static void cmd_command_help(call *x) {
  help(x, "command", command_commands);
}

/* COMMAND INFO's entry of one command: name, arity, flags, first, last and step of its
 * keys (none: IDs have no keys), ACL categories, tips, key specs, subcommands. */
static void command_info(call *x, const command *cmd) {
  idgen__resp_out *o = &x->out;
  int connection = strcmp(cmd->group, "connection") == 0;
  idgen__resp_array(o, 10);
  idgen__resp_bulks(o, cmd->name);
  idgen__resp_int(o, cmd->arity);
  idgen__resp_set(o,
                  (cmd->flags & CMD_FAST ? 1u : 0u) + (cmd->flags & CMD_NO_AUTH ? 1u : 0u));
  if (cmd->flags & CMD_FAST)
    idgen__resp_simple(o, "fast");
  if (cmd->flags & CMD_NO_AUTH)
    idgen__resp_simple(o, "no_auth");
  idgen__resp_int(o, 0);
  idgen__resp_int(o, 0);
  idgen__resp_int(o, 0);
  idgen__resp_set(o, (cmd->flags & CMD_FAST ? 1u : 0u) + (connection ? 1u : 0u));
  if (cmd->flags & CMD_FAST)
    idgen__resp_simple(o, "@fast");
  if (connection)
    idgen__resp_simple(o, "@connection");
  idgen__resp_set(o, 0); /* tips, key specs, subcommands: sets, as Redis 7 writes them */
  idgen__resp_set(o, 0);
  size_t nsub = cmd->sub ? count_of(cmd->sub) : 0;
  idgen__resp_set(o, nsub);
  for (size_t i = 0; i < nsub; i++)
    command_info(x, &cmd->sub[i]);
}

/* COMMAND DOCS' map of one command: summary, since, group, complexity, and its
 * subcommands' docs. */
static void command_docs(call *x, const command *cmd) {
  idgen__resp_out *o = &x->out;
  size_t nsub = cmd->sub ? count_of(cmd->sub) : 0;
  idgen__resp_map(o, nsub ? 5 : 4);
  idgen__resp_bulks(o, "summary");
  idgen__resp_bulks(o, cmd->summary);
  idgen__resp_bulks(o, "since");
  idgen__resp_bulks(o, "0.1.0");
  idgen__resp_bulks(o, "group");
  idgen__resp_bulks(o, cmd->group);
  idgen__resp_bulks(o, "complexity");
  idgen__resp_bulks(o, cmd->complexity);
  if (!nsub)
    return;
  idgen__resp_bulks(o, "subcommands");
  idgen__resp_map(o, nsub);
  for (size_t i = 0; i < nsub; i++) {
    idgen__resp_bulks(o, cmd->sub[i].name);
    command_docs(x, &cmd->sub[i]);
  }
}

static void cmd_command(call *x) {
  idgen__resp_array(&x->out, count_of(commands));
  for (const command *cmd = commands; cmd->name; cmd++)
    command_info(x, cmd);
}

static void cmd_command_count(call *x) {
  idgen__resp_int(&x->out, (int64_t)count_of(commands));
}

/* COMMAND INFO [name ...]: one entry per name, null for an unknown one. */
static void cmd_command_info(call *x) {
  const idgen__resp_cmd *c = x->c;
  if (c->argc == 2) {
    cmd_command(x);
    return;
  }
  idgen__resp_array(&x->out, c->argc - 2);
  for (size_t i = 2; i < c->argc; i++) {
    const command *cmd =
        i < IDGEN_RESP_MAX_ARGS ? lookup(commands, c->argv[i], c->argl[i]) : NULL;
    if (cmd)
      command_info(x, cmd);
    else
      idgen__resp_null(&x->out);
  }
}

/* COMMAND DOCS [name ...]: a map of name to docs; unknown names are left out. */
static void cmd_command_docs(call *x) {
  const idgen__resp_cmd *c = x->c;
  if (c->argc == 2) {
    idgen__resp_map(&x->out, count_of(commands));
    for (const command *cmd = commands; cmd->name; cmd++) {
      idgen__resp_bulks(&x->out, cmd->name);
      command_docs(x, cmd);
    }
    return;
  }
  const command *found[IDGEN_RESP_MAX_ARGS];
  size_t n = 0;
  for (size_t i = 2; i < c->argc && i < IDGEN_RESP_MAX_ARGS; i++)
    if ((found[n] = lookup(commands, c->argv[i], c->argl[i])) != NULL)
      n++;
  idgen__resp_map(&x->out, n);
  for (size_t i = 0; i < n; i++) {
    idgen__resp_bulks(&x->out, found[i]->name);
    command_docs(x, found[i]);
  }
}

/* ---- dispatch --------------------------------------------------------------------- */

/* Redis 7: "ERR unknown command 'x', with args beginning with: 'a' 'b' ", arguments
 * quoted until 128 bytes. */
static void unknown_command(call *x) {
  const idgen__resp_cmd *c = x->c;
  char args[160];
  size_t len = 0;
  for (size_t i = 1; i < c->argc && i < IDGEN_RESP_MAX_ARGS && len < 128; i++) {
    size_t take = c->argl[i] < 128 - len ? c->argl[i] : 128 - len;
    int n = snprintf(args + len, sizeof args - len, "'%.*s' ", (int)take, c->argv[i]);
    len += n > 0 ? (size_t)n : 0;
    if (len >= sizeof args)
      len = sizeof args - 1;
  }
  args[len] = 0;
  idgen__resp_errorf(&x->out, "ERR unknown command '%.*s', with args beginning with: %s",
                     (int)(c->argl[0] > 128 ? 128 : c->argl[0]), c->argv[0], args);
}

static void wrong_arity(call *x, const command *cmd) {
  idgen__resp_errorf(&x->out, "ERR wrong number of arguments for '%s' command", cmd->name);
}

/* As Redis: the name is looked up first (an unknown one is answered before AUTH too),
 * then AUTH is required (and its token still in force after a reload), then the arity
 * is checked. */
idgen__rcmd idgen__resp_run(idgen__resp_session *s, const idgen__resp_cmd *c,
                            idgen__buf *out, int *error, int *close) {
  call x = {s, c, {out, s->proto}, 0};
  size_t start = out->len;
  const command *cmd = lookup(commands, c->argv[0], c->argl[0]);
  idgen__rcmd slot = cmd ? cmd->slot : RCMD_OTHER;
  if (!cmd) {
    unknown_command(&x);
  } else if (!s->authed && !(cmd->flags & CMD_NO_AUTH)) {
    reply_error(&x, "NOAUTH Authentication required.");
  } else if (s->authed && !(cmd->flags & CMD_NO_AUTH) &&
             !idgen__svc_grant_renew(s->t->svc, &s->t->hold, &s->grant) &&
             !(s->by_cert && idgen__resp_cert_auth(s))) {
    /* A reload removed or changed the token this connection presented (or the team its
     * certificate stood for, and it stands for none now): AUTH again. */
    s->authed = 0;
    s->by_cert = 0;
    reply_error(&x, "NOAUTH Authentication required: a reload removed or changed the "
                    "token of this connection.");
  } else if (!arity_ok(cmd, c->argc)) {
    wrong_arity(&x, cmd);
  } else if (cmd->sub && (c->argc > 1 || !cmd->run)) {
    const command *sub = lookup(cmd->sub, c->argv[1], c->argl[1]);
    char up[32];
    upper_tail(cmd->name, up, sizeof up);
    if (!sub)
      idgen__resp_errorf(&x.out, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                         (int)(c->argl[1] > 128 ? 128 : c->argl[1]), c->argv[1], up);
    else if (!arity_ok(sub, c->argc))
      wrong_arity(&x, sub);
    else
      sub->run(&x);
  } else {
    cmd->run(&x);
  }
  if (cmd && s->authed && !(cmd->flags & CMD_NO_AUTH))
    idgen__svc_grant_count(s->t->m, &s->grant, TOKEN_REQUESTS, 1);
  *error = out->len > start && out->data[start] == '-';
  *close = x.close;
  return slot;
}
