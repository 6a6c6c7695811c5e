/* resp.h: the Redis protocol (RESP2) side of the server, sans I/O: a request parser
 * (multibulk and inline) and a session that turns bytes in into replies out. The
 * parser is our own (not hiredis's reader, which parses replies and not inline
 * commands) and is fuzzed by fuzz/fuzz_resp.c. */
#ifndef IDGEN_SERVER_RESP_H
#define IDGEN_SERVER_RESP_H

#include <stddef.h>

#include "server/api.h"
#include "server/buf.h"

#define IDGEN_RESP_MAX_ARGS 8        /* arguments kept; argc still counts them all */
#define IDGEN_RESP_MAX_REQUEST 65536 /* bytes of one command, framing included */
#define IDGEN_RESP_OUT_HIGH 262144   /* stop answering once this much waits to be sent */

typedef struct idgen__resp_cmd {
  size_t argc; /* arguments sent (may exceed IDGEN_RESP_MAX_ARGS) */
  const char *argv[IDGEN_RESP_MAX_ARGS]; /* into the input buffer, not NUL-terminated */
  size_t argl[IDGEN_RESP_MAX_ARGS];
} idgen__resp_cmd;

/* Parses one command from in[0..len). Returns 1 and sets *consumed (argc may be 0 for
 * an empty line or "*0"), 0 if more bytes are needed, or -1 with *err set to a
 * Redis-worded protocol error (the connection must then be closed). */
int idgen__resp_parse(const char *in, size_t len, idgen__resp_cmd *cmd, size_t *consumed,
                      const char **err);

typedef struct idgen__resp_session {
  idgen__tctx *t;
  int authed;
} idgen__resp_session;

void idgen__resp_session_init(idgen__resp_session *s, idgen__tctx *t);

/* Answers every complete command in in[0..len), in order, appending replies to out;
 * stops early once out holds IDGEN_RESP_OUT_HIGH bytes. Returns the bytes consumed.
 * Sets *close when the connection should be closed once out is sent (QUIT, a protocol
 * error, shutting down). */
size_t idgen__resp_feed(idgen__resp_session *s, const char *in, size_t len, idgen__buf *out,
                        int *close);

#endif
