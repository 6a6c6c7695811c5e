/* buf.h: a growable byte buffer for building responses; sticky failure on ENOMEM. */
#ifndef IDGEN_SERVER_BUF_H
#define IDGEN_SERVER_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct idgen__buf {
  char *data;
  size_t len, cap;
  int failed; /* set once an allocation failed; later appends do nothing */
} idgen__buf;

void idgen__buf_reset(idgen__buf *b);
void idgen__buf_free(idgen__buf *b);
/* Makes room for n more bytes; returns a pointer to them or NULL (and sets failed). */
char *idgen__buf_reserve(idgen__buf *b, size_t n);
void idgen__buf_add(idgen__buf *b, const void *p, size_t n);
void idgen__buf_adds(idgen__buf *b, const char *s);
void idgen__buf_addc(idgen__buf *b, char c);
void idgen__buf_addu(idgen__buf *b, uint64_t v);
void idgen__buf_addi(idgen__buf *b, int64_t v);
void idgen__buf_addf(idgen__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. */
void idgen__buf_add_json_str(idgen__buf *b, const char *s, size_t n);

#endif
