/* tokens.h: the tokens clients present (--auth-token-file and the config file's tokens:
 * section), read from their files at start and on SIGHUP, and what each lets a request
 * do: which generators it may use, whether it may decode opaque IDs. A set never changes
 * once made; a reload makes a new one. */
#ifndef IDGEN_SERVER_TOKENS_H
#define IDGEN_SERVER_TOKENS_H

#include <stddef.h>

#include "server/config.h"

typedef struct idgen__token_set idgen__token_set;

/* The name --auth-token-file's token goes by (every generator, and decode). */
#define IDGEN__AUTH_TOKEN_NAME "auth-token-file"

/* Reads a token file into out (outsize bytes): one token of IDGEN_SERVE_TOKEN_MIN to
 * outsize - 1 printable bytes, trailing blanks dropped. Returns 0, or -1 with one line in
 * err, "WHAT PATH: why" (what: "--auth-token-file", "tokens.NAME.file"); out is zeroed. */
int idgen__token_read(const char *what, const char *path, char *out, size_t outsize,
                      char *err, size_t errlen);

/* Reads every token of cfg: --auth-token-file's first (as IDGEN__AUTH_TOKEN_NAME), then
 * the tokens: section's. The specs are copied. *out is NULL when cfg has no token. -1
 * with one line in err for a file that fails to read, or two tokens of one value. */
int idgen__token_set_load(const idgen__serve_config *cfg, idgen__token_set **out, char *err,
                          size_t errlen);
/* Reads the files of old's tokens again into a new set (old is untouched). */
int idgen__token_set_reload(const idgen__token_set *old, idgen__token_set **out, char *err,
                            size_t errlen);
/* Frees set and every set it replaced (idgen__token_set_chain). NULL is fine. */
void idgen__token_set_free(idgen__token_set *set);
/* Makes newer keep older alive until newer is freed: a connection may still hold one of
 * older's tokens, so a reload never frees what another thread may be reading. */
void idgen__token_set_chain(idgen__token_set *newer, idgen__token_set *older);

size_t idgen__token_set_count(const idgen__token_set *set);
const idgen__token_spec *idgen__token_set_spec(const idgen__token_set *set, size_t i);
/* The index of the token whose value is tok[0..len), or -1. Its time depends on the
 * tokens' lengths and number, never on their contents or on which one matches. */
long idgen__token_set_find(const idgen__token_set *set, const char *tok, size_t len);
/* The index in set of the token old's i-th was: the same name and the same value; -1
 * if a reload removed or changed it. */
long idgen__token_set_same(const idgen__token_set *set, const idgen__token_set *old,
                           size_t i);
/* 1 if the token may use the generator named name. */
int idgen__token_covers(const idgen__token_spec *t, const char *name);

#endif
