/* fuzz_resp.c: the RESP request parser (our own, sans I/O) and the session that answers
 * commands: any bytes, split at any point, must parse the same, never read out of
 * bounds, and every reply must be well framed. */
#include <assert.h>

#include "fuzz_server.h"
#include "server/resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one RESP2 or RESP3 reply frame at out[*pos]; returns 0 if malformed. COMMAND's
 * entries nest five deep (its subcommands' sets of flags). */
static int frame(const char *out, size_t len, size_t *pos, int depth) {
  if (*pos >= len || depth > 6)
    return 0;
  char t = out[*pos];
  const char *nl = memchr(out + *pos, '\n', len - *pos);
  if (!nl || nl == out + *pos || nl[-1] != '\r')
    return 0;
  long long n = atoll(out + *pos + 1);
  *pos = (size_t)(nl - out) + 1;
  if (t == '+' || t == '-' || t == ':' || t == '_')
    return 1;
  if (t == '$' || t == '=') {
    if (t == '$' && n == -1) /* a nil: an ID its form cannot write (friendly past 9999) */
      return 1;
    if (n < 0 || (size_t)n + 2 > len - *pos || (t == '=' && (n < 4 || out[*pos + 3] != ':')))
      return 0;
    *pos += (size_t)n + 2;
    return out[*pos - 2] == '\r' && out[*pos - 1] == '\n';
  }
  if (t == '*' || t == '~' || t == '%') {
    long long items = t == '%' ? 2 * n : n;
    for (long long i = 0; i < items; i++)
      if (!frame(out, len, pos, depth + 1))
        return 0;
    return 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    fuzz_server_init();
    ready = 1;
  }
  const char *in = (const char *)data;
  /* 1. The parser alone: every command it returns lies inside the input. */
  size_t pos = 0;
  idgen__resp_parser parser;
  idgen__resp_parser_init(&parser);
  while (pos < size) {
    idgen__resp_cmd cmd;
    size_t used = 0;
    const char *err = NULL;
    int rc = idgen__resp_parse(&parser, in + pos, size - pos, &cmd, &used, &err);
    if (rc <= 0) {
      assert(rc == 0 || rc == IDGEN_RESP_HTTP || err != NULL);
      break;
    }
    assert(used > 0 && used <= size - pos);
    size_t kept = cmd.argc < IDGEN_RESP_MAX_ARGS ? cmd.argc : IDGEN_RESP_MAX_ARGS;
    for (size_t i = 0; i < kept; i++)
      assert(cmd.argv[i] >= in + pos && cmd.argv[i] + cmd.argl[i] <= in + pos + used);
    pos += used;
  }
  /* 2. A session fed in two pieces (split by the first byte) answers with whole frames. */
  idgen__resp_session s;
  idgen__resp_session_init(&s, &fuzz_tctx);
  s.authed = size > 0 && (data[0] & 1); /* as AUTH with the token would */
  if (s.authed)
    idgen__svc_auth(fuzz_tctx.svc, &fuzz_tctx.hold, FUZZ_TOKEN, strlen(FUZZ_TOKEN),
                    &s.grant);
  idgen__buf out = {0}, pending = {0};
  size_t split = size ? data[0] % (size + 1) : 0;
  int close = 0;
  idgen__buf_add(&pending, in, split);
  for (int round = 0; round < 2 && !close; round++) {
    for (;;) {
      size_t used =
          pending.len ? idgen__resp_feed(&s, pending.data, pending.len, &out, &close) : 0;
      if (used) {
        memmove(pending.data, pending.data + used, pending.len - used);
        pending.len -= used;
      }
      if (close || used == 0)
        break;
      size_t at = 0;
      while (at < out.len)
        assert(frame(out.data, out.len, &at, 0));
      idgen__buf_reset(&out);
    }
    if (round == 0)
      idgen__buf_add(&pending, in + split, size - split);
  }
  size_t at = 0;
  while (at < out.len)
    assert(frame(out.data, out.len, &at, 0));
  idgen__buf_free(&out);
  idgen__buf_free(&pending);
  return 0;
}
