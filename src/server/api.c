/* api.c: the HTTP/JSON routes, from one table: /v1/id and /v1/ids (of the default
 * generator or ?name=N), /v1/range?name=N (a segment one's numbers), /v1/uuid7,
 * /v1/uuid4, /v1/ulid, /v1/decode/{id}, /v1/info, /v1/bounds (server/bounds.c),
 * /v1/callers (server/callers.c), /healthz,
 * /readyz, /metrics, and the status page /. Every 64-bit ID is a JSON string; IDs come
 * in any form of common/id_form.h, opaque ones included. */
#include "server/api.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/decode_json.h"
#include "common/id_form.h"
#include "server/bounds.h"
#include "server/status_page.h"

int idgen__tctx_init(idgen__tctx *t, idgen__svc *svc, size_t shard) {
  memset(t, 0, sizeof *t);
  t->svc = svc;
  t->m = idgen__svc_shard(svc, shard);
  t->callers = idgen__callers_table_of(idgen__svc_callers(svc), shard);
  t->hold.slot = shard;
  return idgen__issued_init(&t->issued, (size_t)idgen__svc_config(svc)->max_count);
}

void idgen__tctx_free(idgen__tctx *t) {
  if (t->svc)
    idgen__svc_tokens_unhold(t->svc, &t->hold);
  idgen__issued_free(&t->issued);
  idgen__buf_free(&t->out);
  memset(t, 0, sizeof *t);
}

static int eq(const char *s, size_t n, const char *lit) {
  size_t l = strlen(lit);
  return n == l && memcmp(s, lit, l) == 0;
}

/* The status line's words for this status, and the JSON content type. */
static void json_status(idgen__http_res *res, int status) {
  static const struct {
    int status;
    const char *reason;
  } reasons[] = {{200, "OK"},
                 {400, "Bad Request"},
                 {401, "Unauthorized"},
                 {403, "Forbidden"},
                 {404, "Not Found"},
                 {405, "Method Not Allowed"},
                 {413, "Payload Too Large"},
                 {414, "URI Too Long"},
                 {429, "Too Many Requests"},
                 {431, "Request Header Fields Too Large"},
                 {500, "Internal Server Error"},
                 {503, "Service Unavailable"}};
  res->status = status;
  res->reason = "Error";
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
    if (reasons[i].status == status)
      res->reason = reasons[i].reason;
  res->content_type = "application/json";
}

/* "error":{"code":"…","message":"…"}: a member of the body's object. */
static void add_error(idgen__buf *out, const char *code, const char *message) {
  idgen__buf_adds(out, "\"error\":{\"code\":");
  idgen__buf_add_json_str(out, code, strlen(code));
  idgen__buf_adds(out, ",\"message\":");
  idgen__buf_add_json_str(out, message, strlen(message));
  idgen__buf_addc(out, '}');
}

/* An error answer: {"error":{"code":"…","message":"…"}}. */
static void json_error(idgen__tctx *t, idgen__http_res *res, int status, const char *code,
                       const char *message) {
  json_status(res, status);
  idgen__buf_reset(&t->out);
  idgen__buf_addc(&t->out, '{');
  add_error(&t->out, code, message);
  idgen__buf_adds(&t->out, "}\n");
}

static void issue_error(idgen__tctx *t, idgen__http_res *res, int err) {
  int temporary;
  const char *code = idgen__svc_error_code(err, &temporary);
  json_error(t, res, temporary ? 503 : 500, code, idgen_strerror(err));
  if (temporary)
    res->retry_after_s = 1;
}

static void ok_json(idgen__http_res *res) {
  json_status(res, 200);
}

/* The query parameters a route accepts. */
typedef struct params {
  int has_count, has_format, has_opaque, has_name;
  int raw; /* format=raw: the integer of a generator with a text form, in decimal */
  uint64_t count;
  idgen__id_form form;
  int opaque;            /* decode: the ID is an opaque one */
  idgen__generator *gen; /* ?name=N, else the default generator */
  const char *from, *to; /* bounds: the raw values, NULL when absent */
  size_t from_len, to_len;
  idgen__grant grant; /* what the request's token lets it do */
} params;

enum {
  P_COUNT = 1,
  P_FORMAT = 2,
  P_OPAQUE = 4,
  P_NAME = 8,
  P_TIMES = 16,
  P_RANGE_COUNT = 32,
  P_ISSUES =
      64 /* not a parameter: the route issues from p->gen, which the token must cover */
};

/* A query value shown in a message: at most 32 bytes, control bytes as '?'. */
static void shown(const char *s, size_t n, char *out, size_t outlen) {
  snprintf(out, outlen, "%.*s", (int)(n > 32 ? 32 : n), s);
  for (char *c = out; *c; c++)
    if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
      *c = '?';
}

/* The form asked must suit the generator (idgen__generator_form_ok). */
static int check_form(idgen__tctx *t, const params *p, idgen__http_res *res) {
  char why[200];
  if (idgen__generator_form_ok(p->gen, p->form, why, sizeof why))
    return 0;
  json_error(t, res, 400, "bad_format", why);
  return -1;
}

/* One query parameter's parser: val[0..vlen) into p, or the error response written and
 * -1. allowed is the route's P_ bits (count's ceiling depends on them). */
typedef int param_parse(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                        params *p, idgen__http_res *res);

static int bad(idgen__tctx *t, idgen__http_res *res, int status, const char *code,
               const char *msg) {
  json_error(t, res, status, code, msg);
  return -1;
}

static int parse_count(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                       params *p, idgen__http_res *res) {
  uint64_t max = (allowed & P_RANGE_COUNT) ? IDGEN__RANGE_MAX_COUNT
                                           : idgen__svc_config(t->svc)->max_count;
  if (p->has_count)
    return bad(t, res, 400, "bad_count", "count given twice");
  p->has_count = 1;
  uint64_t v = 0;
  int okv = vlen > 0 && vlen <= 10;
  for (size_t i = 0; okv && i < vlen; i++) {
    if (val[i] < '0' || val[i] > '9')
      okv = 0;
    else
      v = v * 10 + (uint64_t)(val[i] - '0');
  }
  if (!okv || v < 1 || v > max) {
    char msg[96];
    snprintf(msg, sizeof msg, "count must be a whole number from 1 to %llu",
             (unsigned long long)max);
    return bad(t, res, 400, "bad_count", msg);
  }
  p->count = v;
  return 0;
}

static int parse_format(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                        params *p, idgen__http_res *res) {
  (void)allowed;
  if (!p->has_format && eq(val, vlen, "raw")) { /* the integer of a text form */
    p->has_format = p->raw = 1;
    return 0;
  }
  if (p->has_format || idgen__id_form_parse(val, vlen, &p->form) < 0)
    return bad(t, res, 400, "bad_format", "format must be one of " IDGEN__ID_FORMS);
  p->has_format = 1;
  return 0;
}

static int parse_name(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                      params *p, idgen__http_res *res) {
  (void)allowed;
  if (p->has_name)
    return bad(t, res, 400, "bad_parameter", "name given twice");
  p->has_name = 1;
  if (!(p->gen = idgen__svc_generator(t->svc, val, vlen))) {
    char name[40], msg[96];
    shown(val, vlen, name, sizeof name);
    snprintf(msg, sizeof msg, "no generator named '%s' (GET /v1/info lists them)", name);
    return bad(t, res, 404, "unknown_generator", msg);
  }
  return 0;
}

static int parse_opaque(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                        params *p, idgen__http_res *res) {
  (void)allowed;
  if (p->has_opaque || vlen != 1 || (val[0] != '0' && val[0] != '1'))
    return bad(t, res, 400, "bad_parameter", "opaque must be 0 or 1, given once");
  p->has_opaque = 1;
  p->opaque = val[0] == '1';
  return 0;
}

/* from= and to=: kept raw, for the route's own time parser. */
static int parse_time(const char *key, const char **v, size_t *len, idgen__tctx *t,
                      const char *val, size_t vlen, idgen__http_res *res) {
  if (*v) {
    char msg[32];
    snprintf(msg, sizeof msg, "%s given twice", key);
    return bad(t, res, 400, "bad_parameter", msg);
  }
  *v = val;
  *len = vlen;
  return 0;
}

static int parse_from(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                      params *p, idgen__http_res *res) {
  (void)allowed;
  return parse_time("from", &p->from, &p->from_len, t, val, vlen, res);
}

static int parse_to(idgen__tctx *t, unsigned allowed, const char *val, size_t vlen,
                    params *p, idgen__http_res *res) {
  (void)allowed;
  return parse_time("to", &p->to, &p->to_len, t, val, vlen, res);
}

/* Every query parameter, the routes' P_ bits that take it, and its parser. */
static const struct param_def {
  const char *key;
  unsigned bits;
  param_parse *parse;
} param_defs[] = {
    {"count", P_COUNT | P_RANGE_COUNT, parse_count},
    {"format", P_FORMAT, parse_format},
    {"name", P_NAME, parse_name},
    {"opaque", P_OPAQUE, parse_opaque},
    {"from", P_TIMES, parse_from},
    {"to", P_TIMES, parse_to},
};

static const struct param_def *param_def(unsigned allowed, const char *key, size_t klen) {
  for (size_t i = 0; i < sizeof param_defs / sizeof *param_defs; i++)
    if ((allowed & param_defs[i].bits) && eq(key, klen, param_defs[i].key))
      return &param_defs[i];
  return NULL;
}

/* Parses the query strictly: only the allowed keys, each at most once. Returns 0, or
 * writes the error response and returns -1. */
static int parse_query(idgen__tctx *t, const idgen__http_req *req, unsigned allowed,
                       params *p, idgen__http_res *res) {
  memset(p, 0, sizeof *p);
  p->count = 1;
  p->form.format = IDGEN_FORMAT_DECIMAL;
  p->gen = idgen__svc_default(t->svc);
  if (!req->query)
    return 0;
  const char *q = req->query, *end = req->query + req->query_len;
  while (q < end) {
    const char *amp = memchr(q, '&', (size_t)(end - q));
    const char *pe = amp ? amp : end;
    const char *eqs = memchr(q, '=', (size_t)(pe - q));
    const char *key = q, *val = eqs ? eqs + 1 : pe;
    size_t klen = (size_t)((eqs ? eqs : pe) - q), vlen = (size_t)(pe - val);
    q = amp ? amp + 1 : end;
    if (klen == 0 && vlen == 0)
      continue; /* "?" or "&&" */
    const struct param_def *d = param_def(allowed, key, klen);
    if (!d) {
      char name[40], msg[96];
      shown(key, klen, name, sizeof name);
      snprintf(msg, sizeof msg, "unknown query parameter '%s'", name);
      return bad(t, res, 400, "bad_parameter", msg);
    }
    if (d->parse(t, allowed, val, vlen, p, res) < 0)
      return -1;
  }
  return p->has_format ? check_form(t, p, res) : 0;
}

static void add_id(idgen__tctx *t, uint64_t id, idgen_format format,
                   const idgen_layout *layout) {
  char text[IDGEN_FORMAT_MAX];
  int n = idgen_id_format(id, format, layout, text, sizeof text);
  if (n < 0) {
    idgen__buf_adds(&t->out, "null");
    return;
  }
  idgen__buf_addc(&t->out, '"');
  idgen__buf_add(&t->out, text, (size_t)n);
  idgen__buf_addc(&t->out, '"');
}

/* n IDs charged to the token's quota (idgen__svc_charge), before any is made: 0, or
 * the refusal answered (429 with Retry-After; 400 over_burst) and -1. */
static int charged(idgen__tctx *t, const idgen__grant *who, uint64_t n,
                   idgen__http_res *res) {
  uint64_t retry_s = 0;
  idgen__quota_verdict v = idgen__svc_charge(who, n, t->m, &retry_s);
  if (v == IDGEN__QUOTA_OK)
    return 0;
  char msg[256];
  if (v == IDGEN__QUOTA_OVER_BURST) {
    snprintf(
        msg, sizeof msg,
        "token '%s' asks %llu IDs at once, more than its burst of %llu: no wait lets it "
        "pass (ask fewer, or raise tokens.%s.burst)",
        idgen__svc_grant_name(who), (unsigned long long)n,
        (unsigned long long)who->quota->burst, idgen__svc_grant_name(who));
    json_error(t, res, 400, "over_burst", msg);
    return -1;
  }
  snprintf(msg, sizeof msg, "token '%s' is over its quota of %llu IDs/s (burst %llu)",
           idgen__svc_grant_name(who), (unsigned long long)who->quota->rate,
           (unsigned long long)who->quota->burst);
  json_error(t, res, 429, "over_quota", msg);
  res->retry_after_s = retry_s > INT32_MAX ? INT32_MAX : (int)retry_s;
  return -1;
}

/* n IDs of g (idgen__svc_issue) as JSON: one under key `one`, or a list under `many`;
 * 64-bit ones as strings in form, text ones as they are. */
static void issue(idgen__tctx *t, const idgen__grant *who, idgen__generator *g, size_t n,
                  idgen__id_form form, int text_form, int list, const char *one,
                  const char *many, idgen__http_res *res) {
  idgen__issued *r = &t->issued;
  if (who->quota && charged(t, who, n, res) < 0)
    return;
  int rc = idgen__svc_issue(g, n, form, t->m, r);
  if (rc < 0) {
    issue_error(t, res, rc);
    return;
  }
  idgen__svc_grant_count(t->m, who, TOKEN_IDS, n);
  ok_json(res);
  idgen__buf_reset(&t->out);
  if (list)
    idgen__buf_reserve(&t->out, n * 40 + 16);
  idgen__buf_adds(&t->out, "{\"");
  idgen__buf_adds(&t->out, list ? many : one);
  idgen__buf_adds(&t->out, list ? "\":[" : "\":");
  for (size_t i = 0; i < n; i++) {
    if (i)
      idgen__buf_addc(&t->out, ',');
    if (r->is_text) {
      size_t len;
      const char *text = idgen__issued_text(r, i, &len);
      idgen__buf_add_json_str(&t->out, text, len);
    } else if (text_form && g->text_of) {
      char text[160];
      int len = g->text_of(g, r->ids[i], text, sizeof text);
      if (len < 0)
        idgen__buf_adds(&t->out, "null");
      else
        idgen__buf_add_json_str(&t->out, text, (size_t)len);
    } else {
      add_id(t, r->ids[i], form.format, g->layout);
    }
  }
  idgen__buf_adds(&t->out, list ? "]}\n" : "}\n");
}

static void route_id(idgen__tctx *t, const idgen__http_req *req, const params *p,
                     idgen__http_res *res) {
  (void)req;
  issue(t, &p->grant, p->gen, 1, p->form, !p->has_format, 0, "id", "ids", res);
}

static void route_ids(idgen__tctx *t, const idgen__http_req *req, const params *p,
                      idgen__http_res *res) {
  (void)req;
  issue(t, &p->grant, p->gen, (size_t)p->count, p->form, !p->has_format, 1, "id", "ids",
        res);
}

/* GET /v1/range?name=N&count=C: {"first":"..","last":".."} (and "stride" when it is not
 * 1), a segment generator's numbers taken as /v1/ids takes them. */
static void route_range(idgen__tctx *t, const idgen__http_req *req, const params *p,
                        idgen__http_res *res) {
  (void)req;
  if (!p->has_name) {
    json_error(t, res, 400, "bad_parameter", "name is required: the segment generator");
    return;
  }
  const char *refusal = idgen__svc_range_refusal(p->gen);
  if (refusal) {
    json_error(t, res, 400, "no_ranges", refusal);
    return;
  }
  idgen__range r;
  if (charged(t, &p->grant, p->count, res) < 0)
    return;
  int rc = idgen__svc_range(p->gen, p->count, t->m, &r);
  if (rc < 0) {
    issue_error(t, res, rc);
    return;
  }
  idgen__svc_grant_count(t->m, &p->grant, TOKEN_IDS, r.count);
  ok_json(res);
  idgen__buf_reset(&t->out);
  idgen__buf_addf(&t->out, "{\"first\":\"%llu\",\"last\":\"%llu\"",
                  (unsigned long long)r.first, (unsigned long long)r.last);
  if (r.stride != 1)
    idgen__buf_addf(&t->out, ",\"stride\":\"%llu\"", (unsigned long long)r.stride);
  idgen__buf_adds(&t->out, "}\n");
}

/* /v1/uuid7, /v1/uuid4, /v1/ulid: the service's own, whatever the configuration. */
static void builtin_text(idgen__tctx *t, const params *p, idgen__kind kind, const char *one,
                         const char *many, idgen__http_res *res) {
  issue(t, &p->grant, idgen__svc_builtin(t->svc, kind), (size_t)p->count, p->form, 0,
        p->has_count, one, many, res);
}

static void route_uuid7(idgen__tctx *t, const idgen__http_req *req, const params *p,
                        idgen__http_res *res) {
  (void)req;
  builtin_text(t, p, KIND_UUID7, "uuid", "uuids", res);
}
static void route_uuid4(idgen__tctx *t, const idgen__http_req *req, const params *p,
                        idgen__http_res *res) {
  (void)req;
  builtin_text(t, p, KIND_UUID4, "uuid", "uuids", res);
}
static void route_ulid(idgen__tctx *t, const idgen__http_req *req, const params *p,
                       idgen__http_res *res) {
  (void)req;
  builtin_text(t, p, KIND_ULID, "ulid", "ulids", res);
}

/* ?opaque=1: the text is an opaque ID; the answer is the decode object of the ID behind
 * it, with "opaque" first. Only with a token: without one, anybody could turn every
 * opaque ID back into its time, worker and sequence (docs/opaque.md). */
static int decode_opaque(idgen__tctx *t, const params *p, const char *text, size_t len,
                         uint64_t *id, uint64_t *opaque, idgen__http_res *res) {
  const idgen_opaque *o = p->gen->opaque;
  if (!idgen__svc_auth_required(t->svc)) {
    json_error(t, res, 403, "forbidden",
               "opaque decode needs --auth-token-file: without a token anybody could undo "
               "the opaque form");
    return -1;
  }
  if (!idgen__svc_grant_decode(&p->grant) || !idgen__svc_grant_covers(&p->grant, p->gen)) {
    char msg[256];
    snprintf(msg, sizeof msg, "token '%s' may not decode %s IDs of generator '%s'",
             idgen__svc_grant_name(&p->grant), "opaque", p->gen->name);
    idgen__svc_grant_count(t->m, &p->grant, TOKEN_REFUSED, 1);
    json_error(t, res, 403, "forbidden", msg);
    return -1;
  }
  if (!o) {
    json_error(t, res, 404, "not_found",
               "no opaque key: this server runs without --opaque-key-file");
    return -1;
  }
  /* No layout: an opaque ID has no friendly form. */
  int rc = idgen_id_parse_any(text, len, NULL, opaque, NULL);
  if (rc == 0)
    rc = idgen_opaque_decode(o, *opaque, id);
  if (rc < 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "not an opaque ID in decimal, base62, base32 or hex: %s",
             idgen_strerror(rc));
    json_error(t, res, 400, "bad_id", msg);
    return -1;
  }
  return 0;
}

/* /v1/decode/{id}[?name=N]: with the layout (and opaque key) of a snowflake generator. */
static void route_decode(idgen__tctx *t, const idgen__http_req *req, const params *p,
                         idgen__http_res *res) {
  const char *text = req->path + 11;
  size_t len = req->path_len - 11;
  uint64_t id, opaque = 0;
  const idgen_layout *layout = p->gen->layout;
  /* A UUID or ULID decodes without a layout; a 64-bit ID needs a snowflake one's. */
  if (!layout && (p->opaque || !idgen__wide_kind(text, len))) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "'%s' is a %s generator: decode reads snowflake IDs "
             "(?name= a snowflake generator)",
             p->gen->name, idgen__kind_name(idgen__generator_kind(p->gen)));
    json_error(t, res, 400, "bad_parameter", msg);
    return;
  }
  const char *kind = "ID";
  char json[IDGEN_DECODE_JSON_MAX];
  int n;
  if (p->opaque) {
    if (decode_opaque(t, p, text, len, &id, &opaque, res) < 0)
      return;
    n = idgen__decode_json(layout, id, json, sizeof json);
  } else if (p->gen->id_of && p->gen->id_of(p->gen, text, len, &id) == 0) {
    n = idgen__decode_json(layout, id, json, sizeof json); /* its text form (ord_…) */
  } else {
    n = idgen__decode_any_json(layout, text, len, json, sizeof json, &kind);
  }
  if (n < 0) {
    char msg[160];
    if (kind[0] == 'I')
      snprintf(msg, sizeof msg, "not an ID of layout %s in any form: %s", layout->name,
               idgen_strerror(n));
    else
      snprintf(msg, sizeof msg, "not a %s: %s", kind, idgen_strerror(n));
    json_error(t, res, 400, "bad_id", msg);
    return;
  }
  idgen__buf_reset(&t->out);
  if (p->opaque)
    idgen__buf_addf(&t->out, "{\"opaque\":\"%llu\",", (unsigned long long)opaque);
  idgen__buf_add(&t->out, p->opaque ? json + 1 : json, (size_t)n - (p->opaque ? 1 : 0));
  idgen__buf_addc(&t->out, '\n');
  ok_json(res);
}

static void route_bounds(idgen__tctx *t, const idgen__http_req *req, const params *p,
                         idgen__http_res *res) {
  (void)req;
  char why[256];
  if (idgen__bounds_json(p->gen, p->from, p->from_len, p->to, p->to_len,
                         idgen_wall_ns() / 1000000, &t->out, why, sizeof why) < 0) {
    json_error(t, res, 400, "bad_parameter", why);
    return;
  }
  ok_json(res);
}

static void route_info(idgen__tctx *t, const idgen__http_req *req, const params *p,
                       idgen__http_res *res) {
  (void)req, (void)p;
  idgen__buf_reset(&t->out);
  idgen__svc_info_json(t->svc, &t->out);
  idgen__buf_addc(&t->out, '\n');
  ok_json(res);
}

static void route_healthz(idgen__tctx *t, const idgen__http_req *req, const params *p,
                          idgen__http_res *res) {
  (void)req, (void)p;
  idgen__buf_reset(&t->out);
  idgen__buf_adds(&t->out, "{\"status\":\"ok\"}\n");
  ok_json(res);
}

/* /readyz: the service (its default generator); ?name=N: that generator alone. The
 * body lists every generator either way: {"status":"ready","generators":{..}}, or the
 * error member of every refusal with the same list, {"error":{..},"generators":{..}}. */
static void route_readyz(idgen__tctx *t, const idgen__http_req *req, const params *p,
                         idgen__http_res *res) {
  (void)req;
  char reason[256] = "";
  int ready = p->has_name ? p->gen->vtable->ready(p->gen, reason, sizeof reason)
                          : idgen__svc_ready(t->svc, reason, sizeof reason);
  if (ready && idgen__svc_stopping(t->svc)) {
    ready = 0;
    snprintf(reason, sizeof reason, "shutting down");
  }
  idgen__buf_reset(&t->out);
  idgen__buf_addc(&t->out, '{');
  if (ready) {
    idgen__buf_adds(&t->out, "\"status\":\"ready\"");
    ok_json(res);
  } else {
    add_error(&t->out, "not_ready", reason);
    json_status(res, 503);
    res->retry_after_s = 1;
  }
  idgen__buf_adds(&t->out, ",\"generators\":");
  idgen__svc_ready_json(t->svc, &t->out);
  idgen__buf_adds(&t->out, "}\n");
}

static void route_metrics(idgen__tctx *t, const idgen__http_req *req, const params *p,
                          idgen__http_res *res) {
  (void)req, (void)p;
  idgen__buf_reset(&t->out);
  idgen__svc_metrics(t->svc, &t->out);
  res->status = 200;
  res->reason = "OK";
  res->content_type = "text/plain; version=0.0.4";
}

/* The merged top callers (server/callers.h), for the status page. */
static void route_callers(idgen__tctx *t, const idgen__http_req *req, const params *p,
                          idgen__http_res *res) {
  (void)req, (void)p;
  idgen__buf_reset(&t->out);
  idgen__callers_render_json(idgen__svc_callers(t->svc), &t->out);
  idgen__buf_addc(&t->out, '\n');
  ok_json(res);
}

static void route_status(idgen__tctx *t, const idgen__http_req *req, const params *p,
                         idgen__http_res *res) {
  (void)req, (void)p;
  idgen__buf_reset(&t->out);
  idgen__buf_add(&t->out, (const char *)idgen__status_page, idgen__status_page_len);
  res->status = 200;
  res->reason = "OK";
  res->content_type = "text/html; charset=utf-8";
}

typedef void (*route_fn)(idgen__tctx *t, const idgen__http_req *req, const params *p,
                         idgen__http_res *res);

/* The routes: a path (or a prefix, followed by at least one byte), the query
 * parameters it takes, whether it is public (no token: the probes, and the status page,
 * whose data comes from the routes that need one), and its handler. */
static const struct route {
  const char *path;
  int prefix;
  idgen__route metric;
  unsigned params;
  int public;
  route_fn handle;
} routes[] = {
    {"/v1/id", 0, ROUTE_ID, P_FORMAT | P_NAME | P_ISSUES, 0, route_id},
    {"/v1/ids", 0, ROUTE_IDS, P_COUNT | P_FORMAT | P_NAME | P_ISSUES, 0, route_ids},
    {"/v1/range", 0, ROUTE_RANGE, P_RANGE_COUNT | P_NAME | P_ISSUES, 0, route_range},
    {"/v1/uuid7", 0, ROUTE_UUID7, P_COUNT, 0, route_uuid7},
    {"/v1/uuid4", 0, ROUTE_UUID4, P_COUNT, 0, route_uuid4},
    {"/v1/ulid", 0, ROUTE_ULID, P_COUNT, 0, route_ulid},
    {"/v1/decode/", 1, ROUTE_DECODE, P_OPAQUE | P_NAME, 0, route_decode},
    {"/v1/bounds", 0, ROUTE_BOUNDS, P_TIMES | P_NAME, 0, route_bounds},
    {"/v1/info", 0, ROUTE_INFO, 0, 0, route_info},
    {"/v1/callers", 0, ROUTE_CALLERS, 0, 0, route_callers},
    {"/healthz", 0, ROUTE_HEALTHZ, 0, 1, route_healthz},
    {"/readyz", 0, ROUTE_READYZ, P_NAME, 1, route_readyz},
    {"/metrics", 0, ROUTE_METRICS, 0, 0, route_metrics},
    {"/", 0, ROUTE_STATUS, 0, 1, route_status},
};

/* --health-listen's, in plain text beside TLS ports: the probes, nothing that issues or
 * tells more (/metrics stays behind TLS and the token on --http). */
static const struct route health_routes[] = {
    {"/healthz", 0, ROUTE_HEALTHZ, 0, 1, route_healthz},
    {"/readyz", 0, ROUTE_READYZ, P_NAME, 1, route_readyz},
};

static const struct {
  const struct route *v;
  size_t n;
} route_tables[2] = {
    {routes, sizeof routes / sizeof routes[0]},
    {health_routes, sizeof health_routes / sizeof health_routes[0]},
};

static const struct route *route_of(const idgen__http_req *req) {
  const struct route *table = route_tables[req->health != 0].v;
  for (size_t i = 0; i < route_tables[req->health != 0].n; i++) {
    const struct route *r = &table[i];
    size_t l = strlen(r->path);
    if (r->prefix ? req->path_len > l && !memcmp(req->path, r->path, l)
                  : eq(req->path, req->path_len, r->path))
      return r;
  }
  return NULL;
}

/* The request's token found (*g: what it may do), or 0. Without an Authorization
 * header, the connection's client certificate is tried (its team, tokens.h); a token
 * sent is judged alone, whatever the certificate. */
static int bearer_ok(idgen__tctx *t, const idgen__http_req *req, idgen__grant *g) {
  *g = IDGEN__GRANT_ALL;
  if (!idgen__svc_auth_required(t->svc))
    return 1;
  if (!req->authorization && req->cert)
    return idgen__svc_auth_cert(t->svc, &t->hold, req->cert, g);
  if (!req->authorization || req->authorization_len < 7 ||
      strncasecmp(req->authorization, "Bearer ", 7) != 0)
    return 0;
  const char *tok = req->authorization + 7;
  size_t len = req->authorization_len - 7;
  while (len && *tok == ' ') {
    tok++;
    len--;
  }
  return idgen__svc_auth(t->svc, &t->hold, tok, len, g);
}

static void dispatch(idgen__tctx *t, const idgen__http_req *req, const struct route *r,
                     idgen__http_res *res) {
  if (!eq(req->method, req->method_len, "GET") &&
      !eq(req->method, req->method_len, "HEAD")) {
    json_error(t, res, 405, "method_not_allowed", "only GET and HEAD are served");
    res->allow = 1;
    return;
  }
  if (!r) {
    json_error(t, res, 404, "not_found", "no such route; see docs/server.md");
    return;
  }
  idgen__grant grant = IDGEN__GRANT_ALL;
  if (!r->public && !bearer_ok(t, req, &grant)) {
    json_error(t, res, 401, "unauthorized",
               "a valid 'Authorization: Bearer <token>' is required");
    res->www_authenticate = 1;
    res->auth_failed = req->authorization != NULL;
    return;
  }
  params p;
  if (parse_query(t, req, r->params, &p, res) < 0)
    return;
  p.grant = grant;
  idgen__svc_grant_count(t->m, &grant, TOKEN_REQUESTS, 1);
  if ((r->params & P_ISSUES) && !idgen__svc_grant_covers(&grant, p.gen)) {
    idgen__svc_grant_count(t->m, &grant, TOKEN_REFUSED, 1);
    char msg[256];
    snprintf(msg, sizeof msg, "token '%s' may not use generator '%s'",
             idgen__svc_grant_name(&grant), p.gen->name);
    json_error(t, res, 403, "forbidden", msg);
    return;
  }
  r->handle(t, req, &p, res);
}

void idgen__api_http(idgen__tctx *t, const idgen__http_req *req, idgen__http_res *res) {
  int64_t t0 = idgen_monotonic_ns();
  memset(res, 0, sizeof *res);
  const struct route *r = route_of(req);
  dispatch(t, req, r, res);
  if (t->out.failed)
    json_error(t, res, 500, "internal", "out of memory");
  if (idgen__svc_stopping(t->svc))
    res->close = 1;
  idgen__metrics_http(t->m, r ? r->metric : ROUTE_OTHER, res->status,
                      idgen_monotonic_ns() - t0);
  res->body = t->out.data;
  res->body_len = t->out.len;
}

void idgen__api_refuse(idgen__tctx *t, int status, idgen__http_res *res) {
  static const struct {
    int status;
    const char *code, *message;
  } refusals[] = {
      {413, "payload_too_large", "no route takes a request body over 1 KiB"},
      {414, "uri_too_long", "request line longer than --max-request-line"},
      {431, "headers_too_large", "request headers larger than --max-header-bytes"},
  };
  int64_t t0 = idgen_monotonic_ns();
  memset(res, 0, sizeof *res);
  const char *code = "bad_request", *message = "not an HTTP/1.x request";
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
    if (refusals[i].status == status) {
      code = refusals[i].code;
      message = refusals[i].message;
    }
  json_error(t, res, status, code, message);
  res->close = 1;
  idgen__metrics_http(t->m, ROUTE_OTHER, res->status, idgen_monotonic_ns() - t0);
  res->body = t->out.data;
  res->body_len = t->out.len;
}
