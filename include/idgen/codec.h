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
 * (may be NULL otherwise; IDGEN_EINVAL if missing). IDs have the sign bit clear:
 * IDGEN_ESIGN if it is set. FRIENDLY: IDGEN_ERANGE if id has bits outside the layout or
 * its time is past year 9999. IDGEN_EBUFSIZE if out is short (IDGEN_FORMAT_MAX always
 * suffices). Returns the length or a negative error. Thread-safe. */
IDGEN_API int idgen_id_format(uint64_t id, idgen_format format, const idgen_layout *layout,
                              char *out, size_t outlen);

/* Parses exactly one encoding in format from s[0..len) and nothing else; there is no
 * trimming, no prefix ("0x"), no separator. Rejections, checked in this order:
 *   IDGEN_EEMPTY     len == 0
 *   IDGEN_ESIGN      a leading '+' or '-'
 *   IDGEN_ELENGTH    base62 not 11 chars, base32 not 13, hex not 16
 *   IDGEN_ECHAR      a character outside the form's alphabet (base32 is strict
 *                    Crockford: I, L, O, U and hyphens are rejected, not mapped)
 *   IDGEN_EFORMAT    decimal with a leading zero ("007"); friendly: wrong number of
 *                    '-'-separated parts, an empty part, time not 17 digits, a date or
 *                    time that does not exist, a time off the layout's unit (Sonyflake:
 *                    10 ms), a node or sequence with a leading zero
 *   IDGEN_EBEFOREEPOCH  friendly: a time before the layout's epoch
 *   IDGEN_EOVERFLOW  a value above 2^63 - 1; friendly: a time past the layout's end,
 *                    or a node or sequence too wide for its field
 *   IDGEN_EINVAL     NULL id, or FRIENDLY without a layout
 * *id is written only on success. Thread-safe. */
IDGEN_API int idgen_id_parse(const char *s, size_t len, idgen_format format,
                             const idgen_layout *layout, uint64_t *id);

/* Parses any form, told apart by shape (docs/codecs.md):
 *   a leading '+' or '-'                   -> IDGEN_ESIGN
 *   contains '-'                           -> friendly (needs layout, else IDGEN_EFORMAT)
 *   only digits, and "0" or no leading '0' -> decimal
 *   else 11 chars -> base62, 13 -> base32, 16 -> hex
 *   else only digits                       -> decimal (so: leading zero, IDGEN_EFORMAT)
 *   else                                   -> IDGEN_EFORMAT
 * A fixed-width form that happens to be all digits with a non-zero first digit (a hex
 * "1234567890123456") is read as decimal: pass the format to idgen_id_parse to be sure.
 * *which (may be NULL) gets the form. Errors as idgen_id_parse. Thread-safe. */
IDGEN_API int idgen_id_parse_any(const char *s, size_t len, const idgen_layout *layout,
                                 uint64_t *id, idgen_format *which);

#ifdef __cplusplus
}
#endif
#endif
