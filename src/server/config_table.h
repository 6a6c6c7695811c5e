/* config_table.h: config.c's two tables, the options of `idgen serve` and those of a
 * generator entry, with where each value came from: what config_print.c prints them
 * from (--help, --print-config), so that the table stays in one place. */
#ifndef IDGEN_SERVER_CONFIG_TABLE_H
#define IDGEN_SERVER_CONFIG_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "server/kind.h"

typedef enum { OPT_STR, OPT_U64 } idgen__opt_kind;

typedef struct idgen__serve_opt {
  const char *name; /* flag without "--"; env is IDGEN_ + upper case, '-' -> '_' */
  idgen__opt_kind kind;
  size_t off, size;
  uint64_t min, max;
  const char *def;
  const char *help;
} idgen__serve_opt;

/* The options of `idgen serve`, in --help's order. */
extern const idgen__serve_opt idgen__serve_opts[];
extern const size_t idgen__serve_nopts;

typedef enum { GK_KIND, GK_STR, GK_U64, GK_LEASE } idgen__gen_key_type;

/* One option of a generator entry. Options with a flag set the default generator
 * through that flag (a serve option or a lease option), so that the flag, its IDGEN_*
 * variable and the file's "default" entry meet in one place, the flag winning. */
typedef struct idgen__gen_key {
  const char *name; /* as the file spells it */
  unsigned kinds;   /* bit 1 << kind for each kind that takes it */
  idgen__gen_key_type type;
  size_t off, size; /* GK_STR, GK_U64: the spec's field */
  uint64_t min, max;
  const char *flag; /* the default generator's flag, or NULL */
} idgen__gen_key;

/* The options of a generator entry. */
extern const idgen__gen_key idgen__gen_keys[];
extern const size_t idgen__gen_nkeys;

#define KB(k) (1u << (k))         /* a kind's bit in idgen__gen_key.kinds */
#define IDGEN__KEY_INHERITED (-1) /* spec->lines: the default generator's value */

/* The IDGEN_* variable of o. */
void idgen__serve_env_name(const idgen__serve_opt *o, char *out, size_t outlen);
/* The index of the generator option named name (one of the table's). */
size_t idgen__gen_key_index(const char *name);
/* "kind, layout, ..." for one kind. */
void idgen__gen_keys_of(idgen__kind kind, char *out, size_t outlen);
/* Where the last load took option i of idgen__serve_opts, or the lease option named
 * name, from: "default", "env", "flag" or "file" (then *line is its line). */
const char *idgen__serve_opt_source(size_t i, int *line);
const char *idgen__lease_opt_source(const char *name, int *line);

/* The text of a lease option that holds one (etcd-cacert, etcd-cert, etcd-key,
 * etcd-user, etcd-password-file: a generator's etcd_* keys), NULL for the others. */
struct idgen_lease_config;
const char *idgen__lease_key_text(const struct idgen_lease_config *l, const char *flag);

/* --help's text (config_print.c). */
void idgen__serve_config_usage(FILE *out);

#endif
