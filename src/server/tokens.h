/* tokens.h: the tokens clients present (--auth-token-file and the config file's tokens:
 * section), read from their files at start and on SIGHUP, and what each lets a request
 * do: which generators it may use, whether it may decode opaque IDs, its quota. A set
 * never changes once made; a reload makes a new one. */
#ifndef IDGEN_SERVER_TOKENS_H
#define IDGEN_SERVER_TOKENS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/config.h"
#include "server/quota.h"

typedef struct idgen__token_set idgen__token_set;

/* The name --auth-token-file's token goes by (every generator, and decode). */
#define IDGEN__AUTH_TOKEN_NAME "auth-token-file"

/* Reads a token file into out (outsize bytes): one token of IDGEN_SERVE_TOKEN_MIN to
 * outsize - 1 printable bytes, trailing blanks dropped. Returns 0, or -1 with one line in
 * err, "WHAT PATH: why" (what: "--auth-token-file", "tokens.NAME.file"); out is zeroed. */
int idgen__token_read(const char *what, const char *path, char *out, size_t outsize,
                      char *err, size_t errlen);

/* The token names a server has known and, per name, its quota's bucket and the quota its
 * TAT was made under: a reload that keeps a name keeps its bucket (rescaled if its rate
 * or burst changed), so it neither refills nor empties it. A slot per name, never
 * reused: the per-token metrics stay bounded and never change hands. */
typedef struct idgen__token_reg idgen__token_reg;
int idgen__token_reg_new(idgen__token_reg **out);
void idgen__token_reg_free(idgen__token_reg *reg);
/* The names known so far (thread-safe: a slot is named before it is counted). */
size_t idgen__token_reg_count(const idgen__token_reg *reg);
const char *idgen__token_reg_name(const idgen__token_reg *reg, size_t slot);

/* Reads every token of cfg: --auth-token-file's first (as IDGEN__AUTH_TOKEN_NAME), then
 * the tokens: section's. The specs are copied. *out is NULL when cfg has no token. -1
 * with one line in err for a file that fails to read, two tokens of one value, or a
 * registry out of slots. With reg (NULL: a check only, no buckets), each token gets its
 * name's slot and bucket, the bucket rescaled to the token's quota (main thread); old
 * (may be NULL) is the set this one replaces: a token of the same name and value keeps
 * its identity (idgen__token_set_ident), so a connection's grant survives. A team with
 * cert_subject or cert_san and no file has no token value; two teams of one cert_subject or
 * cert_san are refused as two of one value are. */
int idgen__token_set_load(const idgen__serve_config *cfg, idgen__token_reg *reg,
                          const idgen__token_set *old, uint64_t now_ns,
                          idgen__token_set **out, char *err, size_t errlen);
/* Reads the files of old's tokens again into a new set (old is untouched), as load. */
int idgen__token_set_reload(const idgen__token_set *old, idgen__token_reg *reg,
                            uint64_t now_ns, idgen__token_set **out, char *err,
                            size_t errlen);
/* Frees one set. NULL is fine. The caller knows no thread reads it (service.c). */
void idgen__token_set_free(idgen__token_set *set);
/* A number of its own for each set a registry made (1, 2, ...): never reused, unlike an
 * address. */
uint64_t idgen__token_set_serial(const idgen__token_set *set);

size_t idgen__token_set_count(const idgen__token_set *set);
const idgen__token_spec *idgen__token_set_spec(const idgen__token_set *set, size_t i);
/* The index of the token whose value is tok[0..len), or -1. Its time depends on the
 * tokens' lengths and number, never on their contents or on which one matches. A team
 * with no file (a certificate only) has no value and never matches. */
long idgen__token_set_find(const idgen__token_set *set, const char *tok, size_t len);
/* What a grant keeps of token i (one call: it runs on every HTTP request). */
typedef struct idgen__token_ref {
  uint64_t ident;            /* kept by a reload that keeps its name, value, cert_subject
                                and cert_san; never 0
                                with a registry */
  const idgen__quota *quota; /* NULL: no quota */
  _Atomic uint64_t *bucket;  /* NULL without a registry */
  size_t slot;               /* its name's, in the registry */
} idgen__token_ref;
void idgen__token_set_ref(const idgen__token_set *set, size_t i, idgen__token_ref *out);
/* The index of the token of identity ident, or -1 (a reload removed or changed it). */
long idgen__token_set_by_ident(const idgen__token_set *set, uint64_t ident);
/* What a verified client certificate shows, for idgen__token_set_find_cert: its
 * subject in RFC 2253 form (`openssl x509 -noout -subject -nameopt RFC2253` prints it)
 * and its first IDGEN__CERT_SANS_MAX SAN entries of kinds DNS, URI and email, each as
 * "DNS:name", "URI:uri", "email:addr". server/tls.c reads them from the certificate. */
#define IDGEN__CERT_SANS_MAX 8
typedef struct idgen__cert_names {
  char subject[IDGEN_CFG_STR];
  size_t nsans;
  char sans[IDGEN__CERT_SANS_MAX][IDGEN_CFG_STR];
} idgen__cert_names;
/* The index of the one team whose cert_subject equals names' subject, or whose cert_san
 * equals one of its SAN entries (exact bytes, both); -1 when none does, or when two
 * teams do (a certificate that could be either team is neither). */
long idgen__token_set_find_cert(const idgen__token_set *set,
                                const idgen__cert_names *names);
/* 1 if the token may use the generator named name. */
int idgen__token_covers(const idgen__token_spec *t, const char *name);

#endif
