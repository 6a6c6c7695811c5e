/* buf.c: the growable byte buffer behind every response the server builds. */
#include "server/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void idgen__buf_reset(idgen__buf *b) {
  b->len = 0;
  b->failed = 0;
}

void idgen__buf_free(idgen__buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}

char *idgen__buf_grow(idgen__buf *b, size_t n) {
  if (b->failed)
    return NULL;
  if (!b->data || b->cap - b->len < n) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
      if (cap > SIZE_MAX / 2) {
        b->failed = 1;
        return NULL;
      }
      cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = 1;
      return NULL;
    }
    b->data = p;
    b->cap = cap;
  }
  return b->data + b->len;
}

void idgen__buf_addu(idgen__buf *b, uint64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  idgen__buf_add(b, tmp + i, sizeof tmp - i);
}

void idgen__buf_addi(idgen__buf *b, int64_t v) {
  if (v < 0) {
    idgen__buf_addc(b, '-');
    idgen__buf_addu(b, (uint64_t)0 - (uint64_t)v);
  } else {
    idgen__buf_addu(b, (uint64_t)v);
  }
}

void idgen__buf_addf(idgen__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof tmp) {
    idgen__buf_add(b, tmp, (size_t)n);
    return;
  }
  char *dst = idgen__buf_reserve(b, (size_t)n + 1);
  if (!dst)
    return;
  va_start(ap, fmt);
  vsnprintf(dst, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void idgen__buf_add_json_str(idgen__buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  idgen__buf_addc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      idgen__buf_addc(b, '\\');
      idgen__buf_addc(b, (char)c);
    } else if (c < 0x20 || c >= 0x7f) {
      /* Bytes outside printable ASCII are escaped one by one (not UTF-8 decoded): the
       * output is always valid JSON whatever a client sent. */
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      idgen__buf_add(b, esc, sizeof esc);
    } else {
      idgen__buf_addc(b, (char)c);
    }
  }
  idgen__buf_addc(b, '"');
}
