/* bounds.h: GET /v1/bounds?from=T&to=T[&name=N]: the first and the last ID of a time
 * range, both ends included, under the generator's layout (snowflake) or scheme (uuid7,
 * ulid). */
#ifndef IDGEN_SERVER_BOUNDS_H
#define IDGEN_SERVER_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "server/buf.h"
#include "server/generator.h"

/* Writes {"first":"…","last":"…","from":"<ISO>","to":"<ISO>"} into out (reset first),
 * from and to as given in the query (percent-encoded; NULL when absent). Returns 0, or -1
 * with a one-line reason (a 400) in why: a kind without time, a missing or bad time, from
 * after to, a time outside the layout's range. */
int idgen__bounds_json(const idgen__generator *g, const char *from, size_t from_len,
                       const char *to, size_t to_len, int64_t now_ms, idgen__buf *out,
                       char *why, size_t whylen);

#endif
