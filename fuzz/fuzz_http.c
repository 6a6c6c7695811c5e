/* fuzz_http.c: the HTTP side: (1) the route handler (api.c): any method, path, query
 * and Authorization value gets a response with a known status and a JSON or text body
 * that never echoes raw control bytes; (2) the framing (http1.c): any bytes, fed in two
 * pieces, get whole responses with a known status, and never more consumed than given. */
#include <assert.h>

#include "fuzz_server.h"
#include "server/http1.h"

static const int known[] = {200, 400, 401, 403, 404, 405, 413, 414, 431, 500, 503};

static int known_status(int status) {
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (status == known[i])
      return 1;
  return 0;
}

/* Checks that out[0..len) is a run of responses: a status line with a known status, then
 * headers, a blank line and at most content-length bytes (none after HEAD). */
static void check_responses(const char *out, size_t len) {
  size_t at = 0;
  while (at < len) {
    assert(len - at > 13 && memcmp(out + at, "HTTP/1.1 ", 9) == 0);
    assert(known_status(atoi(out + at + 9)));
    const char *end = memmem(out + at, len - at, "\r\n\r\n", 4);
    assert(end);
    const char *cl = memmem(out + at, (size_t)(end - (out + at)), "content-length: ", 16);
    assert(cl);
    size_t body = (size_t)strtoul(cl + 16, NULL, 10);
    at = (size_t)(end - out) + 4;
    /* A body, unless this answered a HEAD: then the next response, or the end, is here. */
    int head = at == len || (len - at >= 9 && memcmp(out + at, "HTTP/1.1 ", 9) == 0);
    if (!head) {
      assert(body <= len - at);
      at += body;
    }
  }
}

static void framing(const uint8_t *data, size_t size) {
  idgen__http1_session s;
  idgen__http1_session_init(&s, &fuzz_tctx);
  idgen__buf out = {0}, pending = {0};
  size_t split = size ? data[0] % (size + 1) : 0;
  int close = 0;
  idgen__buf_add(&pending, data, split);
  for (int round = 0; round < 2 && !close; round++) {
    size_t used =
        pending.len ? idgen__http1_feed(&s, pending.data, pending.len, &out, &close) : 0;
    assert(used <= pending.len);
    memmove(pending.data, pending.data + used, pending.len - used);
    pending.len -= used;
    while (!close && used && pending.len) { /* past the output high-water mark */
      used = idgen__http1_feed(&s, pending.data, pending.len, &out, &close);
      memmove(pending.data, pending.data + used, pending.len - used);
      pending.len -= used;
    }
    if (round == 0)
      idgen__buf_add(&pending, data + split, size - split);
  }
  assert(!out.failed);
  check_responses(out.data, out.len);
  idgen__buf_free(&out);
  idgen__buf_free(&pending);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Takes the next '\n'-terminated piece of the input. */
static const char *piece(const char **p, const char *end, size_t *len) {
  const char *start = *p;
  const char *nl = memchr(start, '\n', (size_t)(end - start));
  const char *stop = nl ? nl : end;
  *len = (size_t)(stop - start);
  *p = nl ? nl + 1 : end;
  return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    fuzz_server_init();
    ready = 1;
  }
  const char *p = (const char *)data, *end = p + size;
  idgen__http_req r;
  memset(&r, 0, sizeof r);
  r.method = piece(&p, end, &r.method_len);
  size_t target_len;
  const char *target = piece(&p, end, &target_len);
  idgen__http1_target(&r, target, target_len);
  size_t auth_len;
  const char *auth = piece(&p, end, &auth_len);
  if (auth_len) {
    r.authorization = auth;
    r.authorization_len = auth_len;
  }
  idgen__http_res res;
  idgen__api_http(&fuzz_tctx, &r, &res);
  assert(known_status(res.status) && res.reason && res.content_type);
  assert(!fuzz_tctx.out.failed);
  if (res.content_type[0] == 'a') { /* application/json: printable ASCII and newline */
    for (size_t i = 0; i < fuzz_tctx.out.len; i++) {
      unsigned char c = (unsigned char)fuzz_tctx.out.data[i];
      assert((c >= 0x20 && c < 0x7f) || c == '\n');
    }
  }
  framing(data, size);
  return 0;
}
