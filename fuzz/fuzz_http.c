/* fuzz_http.c: the HTTP request handler (api.c) behind h2o: any method, path, query
 * and Authorization value gets a response with a known status and a JSON or text body
 * that never echoes raw control bytes. */
#include <assert.h>

#include "fuzz_server.h"

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
  const char *q = memchr(target, '?', target_len);
  r.path = target;
  r.path_len = q ? (size_t)(q - target) : target_len;
  if (q) {
    r.query = q + 1;
    r.query_len = target_len - r.path_len - 1;
  }
  size_t auth_len;
  const char *auth = piece(&p, end, &auth_len);
  if (auth_len) {
    r.authorization = auth;
    r.authorization_len = auth_len;
  }
  r.request_line_bytes = r.method_len + target_len + 10;
  r.header_bytes = (size_t)(end - p);
  idgen__http_res res;
  idgen__api_http(&fuzz_tctx, &r, &res);
  static const int known[] = {200, 400, 401, 403, 404, 405, 413, 414, 431, 500, 503};
  int ok = 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    ok |= res.status == known[i];
  assert(ok && res.reason && res.content_type);
  assert(!fuzz_tctx.out.failed);
  if (res.content_type[0] == 'a') { /* application/json: printable ASCII and newline */
    for (size_t i = 0; i < fuzz_tctx.out.len; i++) {
      unsigned char c = (unsigned char)fuzz_tctx.out.data[i];
      assert((c >= 0x20 && c < 0x7f) || c == '\n');
    }
  }
  return 0;
}
