/* fuzz_resp_split.c: the RESP parser's saved state. Any bytes, fed in pieces whose sizes
 * come from the input itself (as a client sending one command in many writes), parse to
 * exactly the commands, errors and consumed counts of the same bytes parsed whole: the
 * parser resumes where it stopped and never reads past what it was given. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What one parse gave, for comparing: its result, bytes, arguments. */
typedef struct outcome {
  int rc;
  size_t used, argc;
  const char *err;
  size_t argo[IDGEN_RESP_MAX_ARGS], argl[IDGEN_RESP_MAX_ARGS];
} outcome;

/* Parses in[0..len) one command after another; pieces: NULL for all at once, else the
 * sizes of the successive pieces (cycled). Records up to max outcomes; returns how many. */
static size_t run(const char *in, size_t len, const uint8_t *pieces, size_t npieces,
                  outcome *out, size_t max) {
  idgen__resp_parser p;
  idgen__resp_parser_init(&p);
  size_t start = 0, avail = npieces ? 0 : len, k = 0, n = 0;
  while (n < max && start < len) {
    if (npieces) {
      size_t step = pieces[k++ % npieces] % 16 + 1;
      avail = avail + step < len - start ? avail + step : len - start;
    }
    /* Exactly the bytes given: a copy, so reading past them is caught by ASan. */
    char *copy = malloc(avail ? avail : 1);
    memcpy(copy, in + start, avail);
    idgen__resp_cmd cmd;
    size_t used = 0;
    const char *err = NULL;
    int rc = idgen__resp_parse(&p, copy, avail, &cmd, &used, &err);
    if (rc == 0) {
      free(copy);
      if (avail == len - start)
        break;
      continue;
    }
    outcome *o = &out[n++];
    memset(o, 0, sizeof *o);
    o->rc = rc;
    o->err = err;
    if (rc == 1) {
      assert(used > 0 && used <= avail);
      o->used = used;
      o->argc = cmd.argc;
      for (size_t i = 0; i < cmd.argc && i < IDGEN_RESP_MAX_ARGS; i++) {
        assert(cmd.argv[i] >= copy && cmd.argv[i] + cmd.argl[i] <= copy + used);
        o->argo[i] = (size_t)(cmd.argv[i] - copy) + start;
        o->argl[i] = cmd.argl[i];
      }
    }
    free(copy);
    if (rc != 1)
      break;
    start += used;
    avail -= used;
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  /* The first byte says how many of the next bytes give piece sizes. */
  size_t npieces = (size_t)data[0] % 8 + 1;
  if (size < 1 + npieces)
    return 0;
  const uint8_t *pieces = data + 1;
  const char *in = (const char *)data + 1 + npieces;
  size_t len = size - 1 - npieces;
  enum { MAX = 64 };
  static outcome whole[MAX], split[MAX];
  size_t nw = run(in, len, NULL, 0, whole, MAX);
  size_t ns = run(in, len, pieces, npieces, split, MAX);
  assert(nw == ns);
  for (size_t i = 0; i < nw; i++) {
    assert(whole[i].rc == split[i].rc && whole[i].used == split[i].used);
    assert(whole[i].argc == split[i].argc && whole[i].err == split[i].err);
    assert(!memcmp(whole[i].argo, split[i].argo, sizeof whole[i].argo));
    assert(!memcmp(whole[i].argl, split[i].argl, sizeof whole[i].argl));
  }
  return 0;
}
