/* resp_reply.c: RESP2 and RESP3 reply frames. */
#include "server/resp_reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void header(idgen__resp_out *o, char type, uint64_t n) {
  idgen__buf_addc(o->buf, type);
  idgen__buf_addu(o->buf, n);
  idgen__buf_add(o->buf, "\r\n", 2);
}

void idgen__resp_simple(idgen__resp_out *o, const char *s) {
  idgen__buf_addc(o->buf, '+');
  idgen__buf_adds(o->buf, s);
  idgen__buf_add(o->buf, "\r\n", 2);
}

void idgen__resp_error(idgen__resp_out *o, const char *s, size_t n) {
  idgen__buf_addc(o->buf, '-');
  size_t start = o->buf->len;
  idgen__buf_add(o->buf, s, n);
  if (o->buf->failed)
    return;
  for (size_t i = start; i < o->buf->len; i++)
    if ((unsigned char)o->buf->data[i] < 0x20)
      o->buf->data[i] = ' ';
  idgen__buf_add(o->buf, "\r\n", 2);
}

void idgen__resp_errorf(idgen__resp_out *o, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  idgen__resp_error(o, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void idgen__resp_bulk(idgen__resp_out *o, const char *s, size_t n) {
  if (n > IDGEN__RESP_SHORT_BULK_MAX) {
    header(o, '$', n);
    idgen__buf_add(o->buf, s, n);
    idgen__buf_add(o->buf, "\r\n", 2);
    return;
  }
  /* Every ID is shorter than 100 bytes: one reservation, the length's digits by hand. */
  char *p = idgen__buf_reserve(o->buf, n + 7);
  if (!p)
    return;
  memcpy(p + IDGEN__RESP_SHORT_BULK_AT, s, n);
  o->buf->len += idgen__resp_short_bulk_frame(p, n);
}

size_t idgen__resp_short_bulk_frame(char *p, size_t n) {
  size_t at = 0;
  p[at++] = '$';
  if (n >= 10)
    p[at++] = (char)('0' + n / 10);
  else
    memmove(p + 4, p + IDGEN__RESP_SHORT_BULK_AT, n);
  p[at++] = (char)('0' + n % 10);
  p[at++] = '\r';
  p[at++] = '\n';
  at += n;
  p[at++] = '\r';
  p[at++] = '\n';
  return at;
}

void idgen__resp_bulks(idgen__resp_out *o, const char *s) {
  idgen__resp_bulk(o, s, strlen(s));
}

void idgen__resp_int(idgen__resp_out *o, int64_t v) {
  idgen__buf_addc(o->buf, ':');
  idgen__buf_addi(o->buf, v);
  idgen__buf_add(o->buf, "\r\n", 2);
}

void idgen__resp_array(idgen__resp_out *o, size_t n) {
  header(o, '*', n);
}

void idgen__resp_map(idgen__resp_out *o, size_t pairs) {
  if (o->proto >= 3)
    header(o, '%', pairs);
  else
    header(o, '*', 2 * (uint64_t)pairs);
}

void idgen__resp_set(idgen__resp_out *o, size_t n) {
  header(o, o->proto >= 3 ? '~' : '*', n);
}

void idgen__resp_null(idgen__resp_out *o) {
  idgen__buf_adds(o->buf, o->proto >= 3 ? "_\r\n" : "$-1\r\n");
}

void idgen__resp_verbatim(idgen__resp_out *o, const char *s, size_t n) {
  if (o->proto < 3) {
    idgen__resp_bulk(o, s, n);
    return;
  }
  header(o, '=', n + 4);
  idgen__buf_add(o->buf, "txt:", 4);
  idgen__buf_add(o->buf, s, n);
  idgen__buf_add(o->buf, "\r\n", 2);
}
