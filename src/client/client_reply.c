/* client_reply.c: the checks of client_reply.h. */
#include "client/client_reply.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "idgen/error.h"

/* ---- the bounded reader ---------------------------------------------------------------- */

/* The elements the arrays of the reply being read have announced so far. */
typedef struct reply_budget {
  size_t elements;
} reply_budget;

static redisReplyObjectFunctions bounded_functions;
static void *(*hiredis_create_array)(const redisReadTask *, int);
static pthread_once_t bounded_once = PTHREAD_ONCE_INIT;

/* hiredis's createArray, once the reply's arrays stay within the budget; NULL (which the
 * reader turns into an error) past it. A top-level array starts a new reply. */
static void *bounded_array(const redisReadTask *task, int elements) {
  reply_budget *b = task->privdata;
  if (!task->parent)
    b->elements = 0;
  if (elements > 0) {
    if ((size_t)elements > IDGEN__CLIENT_REPLY_ELEMENTS_MAX - b->elements)
      return NULL;
    b->elements += (size_t)elements;
  }
  return hiredis_create_array(task, elements);
}

/* hiredis's own functions, with createArray bounded: its defaults are not exported, so
 * they are taken from a reader it made. */
static void make_bounded_functions(void) {
  redisReader *r = redisReaderCreate();
  if (!r)
    return;
  bounded_functions = *r->fn;
  hiredis_create_array = r->fn->createArray;
  bounded_functions.createArray = bounded_array;
  redisReaderFree(r);
}

redisReader *idgen__client_reader_create(void) {
  pthread_once(&bounded_once, make_bounded_functions);
  if (!hiredis_create_array)
    return NULL;
  reply_budget *b = calloc(1, sizeof *b);
  redisReader *r = b ? redisReaderCreateWithFunctions(&bounded_functions) : NULL;
  if (!r) {
    free(b);
    return NULL;
  }
  r->privdata = b;
  return r;
}

void idgen__client_reader_free(redisReader *reader) {
  if (!reader)
    return;
  free(reader->privdata);
  redisReaderFree(reader);
}

/* ---- the replies ---------------------------------------------------------------------- */

/* A decimal uint64 of 1 to 20 digits, no sign, no leading zero but "0". */
static int parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int string_u64(const redisReply *e, uint64_t *out) {
  return e && e->type == REDIS_REPLY_STRING ? parse_u64(e->str, e->len, out) : -1;
}

int idgen__client_parse_range(const redisReply *r, uint64_t asked, uint64_t *first,
                              uint64_t *last, uint64_t *stride) {
  if (!r)
    return IDGEN_EPROTO;
  if (r->type == REDIS_REPLY_ERROR)
    return strstr(r->str, "snowflake generator has no ranges") ? IDGEN__REPLY_NO_RANGES
                                                               : IDGEN_EPROTO;
  if (r->type != REDIS_REPLY_ARRAY || (r->elements != 2 && r->elements != 3))
    return IDGEN_EPROTO;
  uint64_t f, l, st = 1;
  if (string_u64(r->element[0], &f) < 0 || string_u64(r->element[1], &l) < 0 ||
      (r->elements == 3 && string_u64(r->element[2], &st) < 0))
    return IDGEN_EPROTO;
  if (st == 0 || l < f || (l - f) % st != 0 || (l - f) / st >= asked)
    return IDGEN_EPROTO;
  *first = f;
  *last = l;
  *stride = st;
  return 0;
}

int idgen__client_parse_ids(const redisReply *r, uint64_t n, _Atomic uint64_t *ids) {
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != n)
    return IDGEN_EPROTO;
  uint64_t prev = 0;
  for (size_t i = 0; i < r->elements; i++) {
    uint64_t v;
    if (string_u64(r->element[i], &v) < 0 || (i && v <= prev))
      return IDGEN_EPROTO;
    atomic_store_explicit(&ids[i], v, memory_order_relaxed);
    prev = v;
  }
  return 0;
}

int idgen__client_reply_is_tag(const redisReply *r, const char *tag) {
  return r && r->type == REDIS_REPLY_STRING && r->len == strlen(tag) &&
         memcmp(r->str, tag, r->len) == 0;
}

int idgen__client_info_ready(const redisReply *r) {
  if (!r || r->type != REDIS_REPLY_STRING)
    return 0;
  const char *p = r->str, *end = r->str + r->len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *line_end = nl ? nl : end;
    size_t n = (size_t)(line_end - p);
    if (n && p[n - 1] == '\r')
      n--;
    if (n == 7 && !memcmp(p, "ready:1", 7))
      return 1;
    p = nl ? nl + 1 : end;
  }
  return 0;
}
