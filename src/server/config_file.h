/* config_file.h: `idgen serve --config FILE`: the YAML file read into generator entries
 * (libyaml), each option with its line, so that errors can name both. What the options
 * mean is config.c's business; this file knows only the file's shape:
 *
 *   generators:
 *     NAME:
 *       KEY: SCALAR
 *   tokens:
 *     NAME:
 *       KEY: SCALAR or [SCALAR, ...]
 */
#ifndef IDGEN_SERVER_CONFIG_FILE_H
#define IDGEN_SERVER_CONFIG_FILE_H

#include <stddef.h>

#define IDGEN_CONFIG_FILE_MAX_BYTES (1024 * 1024) /* a bigger file is refused */
#define IDGEN_CONFIG_KEY_MAX 64

typedef struct idgen__config_option {
  char key[IDGEN_CONFIG_KEY_MAX];
  char *value; /* the scalar, NUL-terminated (owned); NULL for a list */
  char **items; /* a list of scalars (tokens' entries only; owned), nitems of them */
  size_t nitems;
  int line; /* 1-based */
} idgen__config_option;

typedef struct idgen__config_entry {
  char *name; /* the generator's name, as written (owned) */
  int line;
  idgen__config_option *options;
  size_t noptions;
} idgen__config_entry;

typedef struct idgen__config_file {
  idgen__config_entry *entries; /* in the file's order; names are distinct */
  size_t nentries;
  idgen__config_entry *tokens; /* the same shape; an option may be a list */
  size_t ntokens;
  int tokens_line; /* of "tokens:"; 0: none */
} idgen__config_file;

/* Reads and parses path. Returns 0, or -1 with one line in err: "PATH:LINE: KEY: what
 * is wrong" (a YAML syntax error, a key that is not a string, a value that is not a
 * scalar (a token's may be a list of scalars), a generator, token or option given
 * twice, an unknown top-level key). On failure
 * *out is left empty. */
int idgen__config_file_read(const char *path, idgen__config_file *out, char *err,
                            size_t errlen);
void idgen__config_file_free(idgen__config_file *f);

#endif
