/* time_arg.h: a time as a user writes it (RFC 3339, Unix ms, now-1d) and the ID bounds of
 * each scheme at a time, as text: shared by `idgen at` and GET /v1/bounds, so the two
 * cannot disagree. */
#ifndef IDGEN_COMMON_TIME_ARG_H
#define IDGEN_COMMON_TIME_ARG_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/layout.h"

/* Parses s[0..len) into Unix ms, strictly:
 *   RFC 3339   2026-12-01T00:00:00Z, 2026-12-01T01:00:00.5+01:00 (any fraction; digits
 *              past the ms are dropped, rounding down); a date alone, 2026-12-01, is its
 *              midnight UTC
 *   Unix ms    1796083200000 (digits only)
 *   relative   now, now-1d, now+2h, now-90s: one signed whole number and a unit of ms,
 *              s, m, h, d or w, from now_ms
 * Returns 0, or IDGEN_EEMPTY / IDGEN_EFORMAT / IDGEN_ECHAR / IDGEN_EOVERFLOW, with
 * *unix_ms untouched. Thread-safe. */
int idgen__time_arg_parse(const char *s, size_t len, int64_t now_ms, int64_t *unix_ms);

/* The schemes with bounds: a 64-bit layout, UUIDv7 (canonical text) and ULID. */
typedef enum idgen__bound_scheme {
  IDGEN__BOUND_LAYOUT,
  IDGEN__BOUND_UUIDV7,
  IDGEN__BOUND_ULID
} idgen__bound_scheme;

/* "uuidv7" (or "uuid7") and "ulid" name those schemes; anything else is a layout. Returns
 * 1 and sets *out for those names, else 0. */
int idgen__bound_scheme_parse(const char *name, idgen__bound_scheme *out);

/* Writes the smallest (last = 0) or the largest (last = 1) ID of the scheme whose time is
 * unix_ms: a 64-bit ID in decimal, a UUIDv7 in its 36 chars, a ULID in its 26. layout is
 * read only for IDGEN__BOUND_LAYOUT. Returns the length; out of the scheme's range,
 * IDGEN_EBEFOREEPOCH or IDGEN_ETIMEEND and a one-line reason naming the range into err.
 * Thread-safe. */
int idgen__bound_text(idgen__bound_scheme scheme, const idgen_layout *layout,
                      int64_t unix_ms, int last, char *out, size_t outlen, char *err,
                      size_t errlen);

#endif
