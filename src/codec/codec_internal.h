/* codec_internal.h: the per-form encoders and strict parsers behind idgen/codec.h. */
#ifndef IDGEN_CODEC_INTERNAL_H
#define IDGEN_CODEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/codec.h"

#define IDGEN__ID_MAX UINT64_C(0x7fffffffffffffff)

/* Each encoder writes its text and a NUL into out (outlen checked by the caller to be
 * at least its fixed width + 1, except decimal and friendly, which check themselves)
 * and returns the length. Each parser takes s[0..len), len >= 1, and returns 0 or a
 * negative IDGEN_E*; *id is written only on success. */
int idgen__decimal_format(uint64_t id, char *out, size_t outlen);
int idgen__decimal_parse(const char *s, size_t len, uint64_t *id);
int idgen__base62_format(uint64_t id, char *out, size_t outlen);
int idgen__base62_parse(const char *s, size_t len, uint64_t *id);
int idgen__base32_format(uint64_t id, char *out, size_t outlen);
int idgen__base32_parse(const char *s, size_t len, uint64_t *id);
int idgen__hex_format(uint64_t id, char *out, size_t outlen);
int idgen__hex_parse(const char *s, size_t len, uint64_t *id);
int idgen__friendly_format(uint64_t id, const idgen_layout *layout, char *out,
                           size_t outlen);
int idgen__friendly_parse(const char *s, size_t len, const idgen_layout *layout,
                          uint64_t *id);

/* Parses an unsigned decimal field of a friendly ID: digits only, no leading zero
 * (but "0"), value <= max. */
int idgen__decimal_field(const char *s, size_t len, uint64_t max, uint64_t *out);

#define IDGEN__BASE62_WIDTH 11
#define IDGEN__BASE32_WIDTH 13
#define IDGEN__HEX_WIDTH 16

#endif
