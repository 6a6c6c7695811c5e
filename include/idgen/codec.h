/* idgen/codec.h: text forms of 64-bit IDs, each with a strict parser. */
#ifndef IDGEN_CODEC_H
#define IDGEN_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"
#include "idgen/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum idgen_format {
  IDGEN_FORMAT_DECIMAL = 0, /* 1..19 digits, no sign, no leading zero (but "0") */
  IDGEN_FORMAT_BASE62 = 1,  /* 11 chars 0-9A-Za-z, fixed width: text order = number order */
  IDGEN_FORMAT_BASE32 =
      2,                /* 13 chars Crockford, fixed width, upper case out, any case in */
  IDGEN_FORMAT_HEX = 3, /* 16 chars, lower case out, any case in */
  IDGEN_FORMAT_FRIENDLY = 4, /* yyyyMMddHHmmssSSS-<node>[-<node>]-<seq>, UTC, per layout */
} idgen_format;

/* Longest text any format writes, with its NUL. */
#define IDGEN_FORMAT_MAX 64

/* "decimal", "base62", "base32", "hex", "friendly" -> format; IDGEN_EINVAL otherwise. */
IDGEN_API int idgen_format_parse(const char *name, idgen_format *out);
IDGEN_API const char *idgen_format_name(idgen_format format);

/* Writes id in format into out (NUL-terminated). layout is needed for FRIENDLY only
 * (may be NULL otherwise). IDs have the sign bit clear: IDGEN_ESIGN if it is set.
 * Returns the length or a negative error. Thread-safe. */
IDGEN_API int idgen_id_format(uint64_t id, idgen_format format, const idgen_layout *layout,
                              char *out, size_t outlen);

/* Parses exactly one encoding in format from s[0..len): anything else is rejected
 * with IDGEN_EEMPTY, IDGEN_ELENGTH, IDGEN_ECHAR, IDGEN_EOVERFLOW (above 2^63 - 1),
 * IDGEN_ESIGN ("+"/"-" or the sign bit) or IDGEN_EFORMAT (friendly structure, time
 * before the epoch or off the unit, a field too wide). Thread-safe. */
IDGEN_API int idgen_id_parse(const char *s, size_t len, idgen_format format,
                             const idgen_layout *layout, uint64_t *id);

/* Parses any form, told apart by shape: only digits -> decimal; a '-' -> friendly;
 * else 11 chars -> base62, 13 -> base32, 16 -> hex. *which (may be NULL) gets the
 * form. Errors as idgen_id_parse, IDGEN_EFORMAT when no form fits. */
IDGEN_API int idgen_id_parse_any(const char *s, size_t len, const idgen_layout *layout,
                                 uint64_t *id, idgen_format *which);

#ifdef __cplusplus
}
#endif
#endif
