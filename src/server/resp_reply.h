/* resp_reply.h: writes RESP replies in the protocol a connection negotiated (HELLO):
 * RESP2, or RESP3 with its maps, sets, nulls and verbatim strings. One call per frame
 * header or scalar; a caller writes an aggregate's elements after its header. */
#ifndef IDGEN_SERVER_RESP_REPLY_H
#define IDGEN_SERVER_RESP_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "server/buf.h"

typedef struct idgen__resp_out {
  idgen__buf *buf;
  int proto; /* 2 or 3 */
} idgen__resp_out;

/* "+s": s must hold no CR or LF. */
void idgen__resp_simple(idgen__resp_out *o, const char *s);
/* "-s": control bytes in s become spaces, so the reply stays one line. */
void idgen__resp_error(idgen__resp_out *o, const char *s, size_t n);
void idgen__resp_errorf(idgen__resp_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void idgen__resp_bulk(idgen__resp_out *o, const char *s, size_t n);
/* Frames a bulk string shorter than 100 bytes in place: its n bytes already at p + 5,
 * p has room for n + 7. Writes "$N\r\n" before them (moving them left by one when N has
 * one digit) and "\r\n" after; returns the frame's length. */
#define IDGEN__RESP_SHORT_BULK_MAX 99
#define IDGEN__RESP_SHORT_BULK_AT 5
size_t idgen__resp_short_bulk_frame(char *p, size_t n);
void idgen__resp_bulks(idgen__resp_out *o, const char *s);
void idgen__resp_int(idgen__resp_out *o, int64_t v);
/* Aggregate headers. A map of n pairs is "%n" in RESP3 and an array of 2n in RESP2; a
 * set is "~n" or "*n". */
void idgen__resp_array(idgen__resp_out *o, size_t n);
void idgen__resp_map(idgen__resp_out *o, size_t pairs);
void idgen__resp_set(idgen__resp_out *o, size_t n);
/* No value: "_" in RESP3, the null bulk string "$-1" in RESP2 (Redis's addReplyNull). */
void idgen__resp_null(idgen__resp_out *o);
/* Text meant for people (INFO, CLIENT INFO): RESP3's verbatim string "=n txt:...", a
 * bulk string in RESP2. */
void idgen__resp_verbatim(idgen__resp_out *o, const char *s, size_t n);

#endif
