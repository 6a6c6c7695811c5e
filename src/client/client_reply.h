/* client_reply.h: what libidgen-client reads in the replies hiredis's reader parsed
 * (RANGE, IDS, ECHO, INFO), strictly: a reply that is not exactly what was asked is
 * refused, never half used. No I/O (fuzz/fuzz_client_reply.c feeds it bytes). */
#ifndef IDGEN_CLIENT_REPLY_H
#define IDGEN_CLIENT_REPLY_H

#include <hiredis/hiredis.h>
#include <stdatomic.h>
#include <stdint.h>

/* The most elements all the arrays of one reply may hold together: the largest IDS
 * refill (max_array's top) plus room for RANGE's three. */
#define IDGEN__CLIENT_MAX_ARRAY 65536
#define IDGEN__CLIENT_REPLY_ELEMENTS_MAX (IDGEN__CLIENT_MAX_ARRAY + 16)

/* hiredis's reader, except that it refuses (a protocol error) a reply whose arrays'
 * headers together announce more than IDGEN__CLIENT_REPLY_ELEMENTS_MAX elements:
 * hiredis 0.14 allocates an array's element table from its header alone, so
 * "*277777777\r\n" would make the client allocate 2 GB. NULL when out of memory.
 * Freed with idgen__client_reader_free. */
redisReader *idgen__client_reader_create(void);
void idgen__client_reader_free(redisReader *reader);

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
