/* client_reply.h: what libidgen-client reads in the replies hiredis's reader parsed
 * (RANGE, IDS, ECHO, INFO), strictly: a reply that is not exactly what was asked is
 * refused, never half used. No I/O (fuzz/fuzz_client_reply.c feeds it bytes). */
#ifndef IDGEN_CLIENT_REPLY_H
#define IDGEN_CLIENT_REPLY_H

#include <hiredis/hiredis.h>
#include <stdatomic.h>
#include <stdint.h>

/* The server says the name has no ranges (a snowflake generator): use IDS. */
#define IDGEN__REPLY_NO_RANGES 1

/* RANGE's reply: [first, last] or [first, last, stride], decimal, first <= last, at
 * most asked numbers. 0; IDGEN__REPLY_NO_RANGES; or IDGEN_EPROTO (an error reply, or
 * malformed). */
int idgen__client_parse_range(const redisReply *r, uint64_t asked, uint64_t *first,
                              uint64_t *last, uint64_t *stride);
/* IDS's reply: exactly n decimal strings, strictly increasing, into ids. 0 or
 * IDGEN_EPROTO. */
int idgen__client_parse_ids(const redisReply *r, uint64_t n, _Atomic uint64_t *ids);
/* 1 if r is the bulk string tag (our ECHO). */
int idgen__client_reply_is_tag(const redisReply *r, const char *tag);
/* 1 if r is INFO's text with a "ready:1" line. */
int idgen__client_info_ready(const redisReply *r);

#endif
