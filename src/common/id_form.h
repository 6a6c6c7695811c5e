/* id_form.h: the forms a client may ask IDs in (a codec, or the opaque form of the ID in
 * a codec), and the opaque permutation of a generator made from its key file. Shared by
 * HTTP, RESP and `idgen opaque`, so the names and messages cannot drift apart. */
#ifndef IDGEN_COMMON_ID_FORM_H
#define IDGEN_COMMON_ID_FORM_H

#include <stddef.h>
#include <stdint.h>

#include "idgen.h"
#include "idgen/opaque.h"

/* Every form's name, for error messages. */
#define IDGEN__ID_FORMS                                                                    \
  "decimal, base62, base32, hex, friendly, opaque-decimal, opaque-base62, opaque-base32, " \
  "opaque-hex"

/* The generator `idgen serve` runs when none is named; its name is its opaque tweak. */
#define IDGEN__DEFAULT_GENERATOR "default"

typedef struct idgen__id_form {
  idgen_format format; /* the codec of the text */
  int opaque;          /* 1: write the ID's opaque form in that codec */
} idgen__id_form;

/* s[0..len) is a codec name (idgen_format_parse) or "opaque-" and one of decimal,
 * base62, base32, hex (an opaque ID has no time, so no friendly form). IDGEN_EINVAL
 * otherwise; *out is written only on success. */
int idgen__id_form_parse(const char *s, size_t len, idgen__id_form *out);

/* Readies ids[0..n) to be written in form: an opaque form replaces each by its opaque
 * form under o (one batch); then each is written with idgen_id_format(id, form.format).
 * Returns 0, IDGEN_EINVAL for an opaque form without o, or the error of
 * idgen_opaque_encode_batch. Thread-safe. */
int idgen__id_form_prepare(idgen__id_form form, const idgen_opaque *o, uint64_t *ids,
                           size_t n);

/* Reads the key file at path and makes the permutation with the given tweak (a
 * generator's name). The key bytes are wiped once the permutation holds them. On
 * failure writes "<option> <path>: <why>" into err and returns the error. */
int idgen__opaque_open(const char *option, const char *path, const char *tweak,
                       size_t tweaklen, idgen_opaque **out, char *err, size_t errlen);

#endif
