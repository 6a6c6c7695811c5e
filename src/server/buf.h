/* buf.h: a growable byte buffer for building responses; sticky failure on ENOMEM. */
#ifndef IDGEN_SERVER_BUF_H
#define IDGEN_SERVER_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct idgen__buf {
  char *data;
  size_t len, cap;
  int failed; /* set once an allocation failed; later appends do nothing */
} idgen__buf;

void idgen__buf_reset(idgen__buf *b);
void idgen__buf_free(idgen__buf *b);
/* The slow half of idgen__buf_reserve: grows the buffer. */
char *idgen__buf_grow(idgen__buf *b, size_t n);

/* Makes room for n more bytes; returns a pointer to them or NULL (and sets failed).
 * Inline, with add and addc: every byte of every answer goes through them, and a call per
 * piece was a tenth of a request's instructions. */
static inline char *idgen__buf_reserve(idgen__buf *b, size_t n) {
  if (b->data && !b->failed && b->cap - b->len >= n)
    return b->data + b->len;
  return idgen__buf_grow(b, n);
}
static inline void idgen__buf_add(idgen__buf *b, const void *p, size_t n) {
  char *dst = idgen__buf_reserve(b, n);
  if (!dst)
    return;
  if (n)
    memcpy(dst, p, n);
  b->len += n;
}
static inline void idgen__buf_adds(idgen__buf *b, const char *s) {
  idgen__buf_add(b, s, strlen(s));
}
static inline void idgen__buf_addc(idgen__buf *b, char c) {
  char *dst = idgen__buf_reserve(b, 1);
  if (!dst)
    return;
  *dst = c;
  b->len++;
}
void idgen__buf_addu(idgen__buf *b, uint64_t v);
void idgen__buf_addi(idgen__buf *b, int64_t v);
void idgen__buf_addf(idgen__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. */
void idgen__buf_add_json_str(idgen__buf *b, const char *s, size_t n);

#endif
