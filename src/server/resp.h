/* resp.h: the Redis protocol side of the server, sans I/O: a request parser (multibulk
 * and inline) and a session that turns bytes in into replies out, in RESP2 or, after
 * HELLO 3, RESP3. The parser is our own (not hiredis's reader, which parses replies and
 * not inline commands) and is fuzzed by fuzz/fuzz_resp.c; the commands are a table in
 * resp_cmd.c. */
#ifndef IDGEN_SERVER_RESP_H
#define IDGEN_SERVER_RESP_H

#include <stddef.h>

#include "server/api.h"
#include "server/buf.h"

/* Arguments kept (argc still counts them all): enough for Redis's unknown-command error,
 * which quotes arguments until 128 bytes, each taking 3 at least ("'' "). */
#define IDGEN_RESP_MAX_ARGS 44
#define IDGEN_RESP_MAX_REQUEST 16384   /* bytes of one command, framing included */
#define IDGEN_RESP_OUT_HIGH 16384      /* stop answering once this much waits to be sent */
#define IDGEN_RESP_MAX_AUTH_FAILURES 3 /* wrong AUTHs before the connection is closed */
#define IDGEN_RESP_NAME_MAX 64 /* CLIENT SETNAME, CLIENT SETINFO values: bytes kept */

typedef struct idgen__resp_cmd {
  size_t argc; /* arguments sent (may exceed IDGEN_RESP_MAX_ARGS) */
  const char *argv[IDGEN_RESP_MAX_ARGS]; /* into the input buffer, not NUL-terminated */
  size_t argl[IDGEN_RESP_MAX_ARGS];
} idgen__resp_cmd;

/* Where the parser stopped in an unfinished command, so that a command sent in many small
 * pieces is read once, not again from its first byte on every read. */
typedef struct idgen__resp_parser {
  int stage;                        /* what is read next (resp.c) */
  size_t pos;                       /* where, counted from the command's first byte */
  size_t nargs;                     /* multibulk: arguments announced */
  size_t bulk_len;                  /* the bulk string being read */
  size_t argc;                      /* arguments read so far */
  size_t argo[IDGEN_RESP_MAX_ARGS]; /* where each kept argument starts */
  size_t argl[IDGEN_RESP_MAX_ARGS];
} idgen__resp_parser;

/* The line looked like an HTTP request (a web page posting to this port): the connection
 * is closed without a reply, as Redis does, before any command runs. */
#define IDGEN_RESP_HTTP (-2)

void idgen__resp_parser_init(idgen__resp_parser *p);

/* Parses one command from in[0..len), which starts at the command's first byte. Returns 1
 * and sets *consumed (argc may be 0 for an empty line or "*0"); 0 if more bytes are
 * needed: call again with the same bytes and more after them (the buffer may have moved),
 * and the parser resumes where it stopped; -1 with *err set to a Redis-worded protocol
 * error (the connection must then be closed); or IDGEN_RESP_HTTP. After anything but 0,
 * the parser is ready for the next command. A command is at most IDGEN_RESP_MAX_REQUEST
 * bytes; the multibulk and bulk length lines must end in CRLF. */
int idgen__resp_parse(idgen__resp_parser *p, const char *in, size_t len,
                      idgen__resp_cmd *cmd, size_t *consumed, const char **err);

typedef struct idgen__resp_session {
  idgen__tctx *t;
  int authed;
  idgen__grant grant;                     /* the token AUTH presented decides every command */
  const struct idgen__cert_names *cert;   /* the client certificate verified, or NULL */
  int by_cert;                            /* grant is cert's team (no AUTH since) */
  unsigned auth_failures;                 /* wrong AUTHs on this connection */
  int proto;                              /* 2, or 3 after HELLO 3 */
  uint64_t id;                            /* CLIENT ID */
  int64_t opened_ns;                      /* monotonic: CLIENT INFO's age */
  char name[IDGEN_RESP_NAME_MAX + 1];     /* CLIENT SETNAME, HELLO SETNAME; "": none */
  char lib_name[IDGEN_RESP_NAME_MAX + 1]; /* CLIENT SETINFO LIB-NAME */
  char lib_ver[IDGEN_RESP_NAME_MAX + 1];  /* CLIENT SETINFO LIB-VER */
  idgen__caller_name caller;              /* name as counted ("-": none; callers.h) */
  idgen__caller_ref caller_ref;
  idgen__resp_parser parser;
} idgen__resp_session;

void idgen__resp_session_init(idgen__resp_session *s, idgen__tctx *t);
/* The connection's verified client certificate (kept, not copied; NULL: none): when it
 * stands for a team (server/tokens.h), the session is authenticated as that team from
 * now on, as if it had sent that team's AUTH; an AUTH later replaces it. */
void idgen__resp_session_cert(idgen__resp_session *s, const struct idgen__cert_names *cert);
/* Authenticates s by its certificate if it has one whose team is in force: 1, or 0. */
int idgen__resp_cert_auth(idgen__resp_session *s);

/* Runs one parsed command (argc >= 1) through the command table (resp_cmd.c), appending
 * its reply to out. Returns its metric slot; sets *error when the reply is an error and
 * *close when the connection must close once out is sent. */
idgen__rcmd idgen__resp_run(idgen__resp_session *s, const idgen__resp_cmd *c,
                            idgen__buf *out, int *error, int *close);

/* Answers every complete command in in[0..len), in order, appending replies to out;
 * counts each one under the connection's name as it stands after the command (so a
 * CLIENT SETNAME counts under the name it sets) in this thread's callers' table;
 * stops early once out holds IDGEN_RESP_OUT_HIGH bytes. Returns the bytes consumed; the
 * next call passes what was not consumed first, with any new bytes after it. Sets *close
 * when the connection should be closed once out is sent (QUIT, a protocol error, a line
 * that looks like HTTP, IDGEN_RESP_MAX_AUTH_FAILURES wrong AUTHs, shutting down). */
size_t idgen__resp_feed(idgen__resp_session *s, const char *in, size_t len, idgen__buf *out,
                        int *close);

#endif
