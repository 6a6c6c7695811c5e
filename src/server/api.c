/* api.c: the HTTP/JSON routes: /v1/id, /v1/ids, /v1/uuid7, /v1/uuid4, /v1/ulid,
 * /v1/decode/{id}, /v1/info, /healthz, /readyz, /metrics, and the status page /. Every
 * 64-bit ID is a JSON string; IDs come in any form of server/id_form.h, opaque ones
 * included. */
#include "server/api.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/decode_json.h"
#include "server/id_form.h"
#include "server/status_page.h"

int idgen__tctx_init(idgen__tctx *t, idgen__svc *svc, size_t shard) {
  memset(t, 0, sizeof *t);
  t->svc = svc;
  t->m = idgen__svc_shard(svc, shard);
  t->ids_cap = idgen__svc_config(svc)->max_count;
  t->ids = malloc(t->ids_cap * sizeof *t->ids);
  return t->ids ? 0 : IDGEN_ENOMEM;
}

void idgen__tctx_free(idgen__tctx *t) {
  free(t->ids);
  idgen__buf_free(&t->out);
  memset(t, 0, sizeof *t);
}

static int eq(const char *s, size_t n, const char *lit) {
  size_t l = strlen(lit);
  return n == l && memcmp(s, lit, l) == 0;
}

static void json_error(idgen__tctx *t, idgen__http_res *res, int status, const char *code,
                       const char *message) {
  static const struct {
    int status;
    const char *reason;
  } reasons[] = {{400, "Bad Request"},
                 {401, "Unauthorized"},
                 {403, "Forbidden"},
                 {404, "Not Found"},
                 {405, "Method Not Allowed"},
                 {413, "Payload Too Large"},
                 {414, "URI Too Long"},
                 {431, "Request Header Fields Too Large"},
                 {500, "Internal Server Error"},
                 {503, "Service Unavailable"}};
  res->status = status;
  res->reason = "Error";
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
    if (reasons[i].status == status)
      res->reason = reasons[i].reason;
  res->content_type = "application/json";
  idgen__buf_reset(&t->out);
  idgen__buf_adds(&t->out, "{\"error\":{\"code\":");
  idgen__buf_add_json_str(&t->out, code, strlen(code));
  idgen__buf_adds(&t->out, ",\"message\":");
  idgen__buf_add_json_str(&t->out, message, strlen(message));
  idgen__buf_adds(&t->out, "}}\n");
}

static void issue_error(idgen__tctx *t, idgen__http_res *res, int err) {
  int temporary;
  const char *code = idgen__svc_error_code(err, &temporary);
  json_error(t, res, temporary ? 503 : 500, code, idgen_strerror(err));
  if (temporary)
    res->retry_after_s = 1;
}

static void ok_json(idgen__http_res *res) {
  res->status = 200;
  res->reason = "OK";
  res->content_type = "application/json";
}

/* The query parameters a route accepts. */
typedef struct params {
  int has_count, has_format, has_opaque;
  uint64_t count;
  idgen__id_form form;
  int opaque; /* decode: the ID is an opaque one */
} params;

enum { P_COUNT = 1, P_FORMAT = 2, P_OPAQUE = 4 };

/* Parses the query strictly: only the allowed keys, each at most once. Returns 0, or
 * writes the error response and returns -1. */
static int parse_query(idgen__tctx *t, const idgen__http_req *req, unsigned allowed,
                       params *p, idgen__http_res *res) {
  memset(p, 0, sizeof *p);
  p->count = 1;
  p->form.format = IDGEN_FORMAT_DECIMAL;
  if (!req->query)
    return 0;
  const char *q = req->query, *end = req->query + req->query_len;
  uint64_t max = idgen__svc_config(t->svc)->max_count;
  while (q < end) {
    const char *amp = memchr(q, '&', (size_t)(end - q));
    const char *pe = amp ? amp : end;
    const char *eqs = memchr(q, '=', (size_t)(pe - q));
    const char *key = q, *val = eqs ? eqs + 1 : pe;
    size_t klen = (size_t)((eqs ? eqs : pe) - q), vlen = (size_t)(pe - val);
    q = amp ? amp + 1 : end;
    if (klen == 0 && vlen == 0)
      continue; /* "?" or "&&" */
    if ((allowed & P_COUNT) && eq(key, klen, "count")) {
      if (p->has_count) {
        json_error(t, res, 400, "bad_count", "count given twice");
        return -1;
      }
      p->has_count = 1;
      uint64_t v = 0;
      int okv = vlen > 0 && vlen <= 7;
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
        json_error(t, res, 400, "bad_count", msg);
        return -1;
      }
      p->count = v;
    } else if ((allowed & P_FORMAT) && eq(key, klen, "format")) {
      if (p->has_format || idgen__id_form_parse(val, vlen, &p->form) < 0) {
        json_error(t, res, 400, "bad_format", "format must be one of " IDGEN__ID_FORMS);
        return -1;
      }
      if (p->form.opaque && !idgen__svc_opaque(t->svc)) {
        json_error(t, res, 400, "bad_format",
                   "opaque formats need a key: this server runs without --opaque-key-file");
        return -1;
      }
      p->has_format = 1;
    } else if ((allowed & P_OPAQUE) && eq(key, klen, "opaque")) {
      if (p->has_opaque || vlen != 1 || (val[0] != '0' && val[0] != '1')) {
        json_error(t, res, 400, "bad_parameter", "opaque must be 0 or 1, given once");
        return -1;
      }
      p->has_opaque = 1;
      p->opaque = val[0] == '1';
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "unknown query parameter '%.*s'",
               (int)(klen > 32 ? 32 : klen), key);
      for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
          *c = '?';
      json_error(t, res, 400, "bad_parameter", msg);
      return -1;
    }
  }
  return 0;
}

static void add_id(idgen__tctx *t, uint64_t id, idgen_format format) {
  char text[IDGEN_FORMAT_MAX];
  int n = idgen_id_format(id, format, idgen__svc_layout(t->svc), text, sizeof text);
  if (n < 0) {
    idgen__buf_adds(&t->out, "null");
    return;
  }
  idgen__buf_addc(&t->out, '"');
  idgen__buf_add(&t->out, text, (size_t)n);
  idgen__buf_addc(&t->out, '"');
}

static void route_ids(idgen__tctx *t, const params *p, int many, idgen__http_res *res) {
  size_t n = many ? (size_t)p->count : 1;
  int64_t got = idgen__svc_next_batch(t->svc, t->ids, n);
  if (got < 0) {
    issue_error(t, res, (int)got);
    return;
  }
  idgen__metrics_issued(t->m, KIND_SNOWFLAKE, (uint64_t)got);
  if ((size_t)got < n) {
    /* Some were issued, then the generator refused: answer with the error, not a
     * short list (the issued ones are burnt, never repeated). */
    int64_t again = idgen__svc_next_batch(t->svc, t->ids, 1);
    issue_error(t, res, again < 0 ? (int)again : IDGEN_EEXHAUSTED);
    return;
  }
  int rc = idgen__id_form_prepare(p->form, idgen__svc_opaque(t->svc), t->ids, n);
  if (rc < 0) {
    json_error(t, res, 500, "internal", idgen_strerror(rc));
    return;
  }
  ok_json(res);
  idgen__buf_reset(&t->out);
  if (!many) {
    idgen__buf_adds(&t->out, "{\"id\":");
    add_id(t, t->ids[0], p->form.format);
    idgen__buf_adds(&t->out, "}\n");
    return;
  }
  idgen__buf_reserve(&t->out, n * 24 + 16);
  idgen__buf_adds(&t->out, "{\"ids\":[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      idgen__buf_addc(&t->out, ',');
    add_id(t, t->ids[i], p->form.format);
  }
  idgen__buf_adds(&t->out, "]}\n");
}

static void route_text(idgen__tctx *t, const params *p, idgen__kind kind, const char *one,
                       const char *many, idgen__http_res *res) {
  idgen__buf_reset(&t->out);
  idgen__buf_addf(&t->out, "{\"%s\":%s", p->has_count ? many : one,
                  p->has_count ? "[" : "");
  for (uint64_t i = 0; i < p->count; i++) {
    char text[64];
    int n = idgen__svc_text_id(t->svc, kind, text, sizeof text);
    if (n == IDGEN_EINVAL) {
      json_error(t, res, 404, "not_found", "this build has no UUID/ULID support");
      return;
    }
    if (n < 0) {
      issue_error(t, res, n);
      return;
    }
    if (i)
      idgen__buf_addc(&t->out, ',');
    idgen__buf_add_json_str(&t->out, text, (size_t)n);
  }
  idgen__metrics_issued(t->m, kind, p->count);
  idgen__buf_adds(&t->out, p->has_count ? "]}\n" : "}\n");
  ok_json(res);
}

/* ?opaque=1: the text is an opaque ID; the answer is the decode object of the ID behind
 * it, with "opaque" first. Only with a token: without one, anybody could turn every
 * opaque ID back into its time, worker and sequence (docs/opaque.md). */
static int decode_opaque(idgen__tctx *t, const char *text, size_t len, uint64_t *id,
                         uint64_t *opaque, idgen__http_res *res) {
  const idgen_opaque *o = idgen__svc_opaque(t->svc);
  if (!idgen__svc_auth_required(t->svc)) {
    json_error(t, res, 403, "forbidden",
               "opaque decode needs --auth-token-file: without a token anybody could undo "
               "the opaque form");
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

static void route_decode(idgen__tctx *t, const params *p, const char *text, size_t len,
                         idgen__http_res *res) {
  uint64_t id, opaque = 0;
  const idgen_layout *layout = idgen__svc_layout(t->svc);
  const char *kind = "ID";
  char json[IDGEN_DECODE_JSON_MAX];
  int n;
  if (p->opaque) {
    if (decode_opaque(t, text, len, &id, &opaque, res) < 0)
      return;
    n = idgen__decode_json(layout, id, json, sizeof json);
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

static idgen__route route_of(const idgen__http_req *req) {
  const char *p = req->path;
  size_t n = req->path_len;
  if (eq(p, n, "/v1/id"))
    return ROUTE_ID;
  if (eq(p, n, "/v1/ids"))
    return ROUTE_IDS;
  if (eq(p, n, "/v1/uuid7"))
    return ROUTE_UUID7;
  if (eq(p, n, "/v1/uuid4"))
    return ROUTE_UUID4;
  if (eq(p, n, "/v1/ulid"))
    return ROUTE_ULID;
  if (n > 11 && memcmp(p, "/v1/decode/", 11) == 0)
    return ROUTE_DECODE;
  if (eq(p, n, "/v1/info"))
    return ROUTE_INFO;
  if (eq(p, n, "/healthz"))
    return ROUTE_HEALTHZ;
  if (eq(p, n, "/readyz"))
    return ROUTE_READYZ;
  if (eq(p, n, "/metrics"))
    return ROUTE_METRICS;
  if (eq(p, n, "/"))
    return ROUTE_STATUS;
  return ROUTE_OTHER;
}

static int bearer_ok(idgen__tctx *t, const idgen__http_req *req) {
  if (!idgen__svc_auth_required(t->svc))
    return 1;
  if (!req->authorization || req->authorization_len < 7 ||
      strncasecmp(req->authorization, "Bearer ", 7) != 0)
    return 0;
  const char *tok = req->authorization + 7;
  size_t len = req->authorization_len - 7;
  while (len && *tok == ' ') {
    tok++;
    len--;
  }
  return idgen__svc_auth_ok(t->svc, tok, len);
}

static void dispatch(idgen__tctx *t, const idgen__http_req *req, idgen__route route,
                     idgen__http_res *res) {
  if (!eq(req->method, req->method_len, "GET") &&
      !eq(req->method, req->method_len, "HEAD")) {
    json_error(t, res, 405, "method_not_allowed", "only GET and HEAD are served");
    res->allow = 1;
    return;
  }
  if (route == ROUTE_OTHER) {
    json_error(t, res, 404, "not_found", "no such route; see docs/server.md");
    return;
  }
  /* Public: the probes, and the status page (its data comes from the routes below). */
  int public_route =
      route == ROUTE_HEALTHZ || route == ROUTE_READYZ || route == ROUTE_STATUS;
  if (!public_route && !bearer_ok(t, req)) {
    json_error(t, res, 401, "unauthorized",
               "a valid 'Authorization: Bearer <token>' is required");
    res->www_authenticate = 1;
    res->auth_failed = req->authorization != NULL;
    return;
  }
  params p;
  unsigned allowed = route == ROUTE_ID    ? P_FORMAT
                     : route == ROUTE_IDS ? P_COUNT | P_FORMAT
                     : route == ROUTE_UUID7 || route == ROUTE_UUID4 || route == ROUTE_ULID
                         ? P_COUNT
                     : route == ROUTE_DECODE ? P_OPAQUE
                                             : 0;
  if (parse_query(t, req, allowed, &p, res) < 0)
    return;
  const char *reason;
  switch (route) {
  case ROUTE_ID:
    route_ids(t, &p, 0, res);
    return;
  case ROUTE_IDS:
    route_ids(t, &p, 1, res);
    return;
  case ROUTE_UUID7:
    route_text(t, &p, KIND_UUID7, "uuid", "uuids", res);
    return;
  case ROUTE_UUID4:
    route_text(t, &p, KIND_UUID4, "uuid", "uuids", res);
    return;
  case ROUTE_ULID:
    route_text(t, &p, KIND_ULID, "ulid", "ulids", res);
    return;
  case ROUTE_DECODE:
    route_decode(t, &p, req->path + 11, req->path_len - 11, res);
    return;
  case ROUTE_INFO:
    idgen__buf_reset(&t->out);
    idgen__svc_info_json(t->svc, &t->out);
    idgen__buf_addc(&t->out, '\n');
    ok_json(res);
    return;
  case ROUTE_HEALTHZ:
    idgen__buf_reset(&t->out);
    idgen__buf_adds(&t->out, "{\"status\":\"ok\"}\n");
    ok_json(res);
    return;
  case ROUTE_READYZ:
    if (!idgen__svc_ready(t->svc, &reason)) {
      json_error(t, res, 503, "not_ready", reason);
      res->retry_after_s = 1;
      return;
    }
    idgen__buf_reset(&t->out);
    idgen__buf_adds(&t->out, "{\"status\":\"ready\"}\n");
    ok_json(res);
    return;
  case ROUTE_METRICS:
    idgen__buf_reset(&t->out);
    idgen__svc_metrics(t->svc, &t->out);
    res->status = 200;
    res->reason = "OK";
    res->content_type = "text/plain; version=0.0.4";
    return;
  case ROUTE_STATUS:
    idgen__buf_reset(&t->out);
    idgen__buf_add(&t->out, (const char *)idgen__status_page, idgen__status_page_len);
    res->status = 200;
    res->reason = "OK";
    res->content_type = "text/html; charset=utf-8";
    return;
  default:
    json_error(t, res, 404, "not_found", "no such route");
    return;
  }
}

void idgen__api_http(idgen__tctx *t, const idgen__http_req *req, idgen__http_res *res) {
  int64_t t0 = idgen_monotonic_ns();
  memset(res, 0, sizeof *res);
  idgen__route route = route_of(req);
  dispatch(t, req, route, res);
  if (t->out.failed)
    json_error(t, res, 500, "internal", "out of memory");
  if (idgen__svc_stopping(t->svc))
    res->close = 1;
  idgen__metrics_http(t->m, route, res->status, idgen_monotonic_ns() - t0);
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
}
