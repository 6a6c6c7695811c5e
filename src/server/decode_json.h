/* decode_json.h: the JSON of one decoded ID, shared by `idgen decode --json` and the
 * server's GET /v1/decode/{id} and RESP DECODE, so the three cannot drift apart. */
#ifndef IDGEN_SERVER_DECODE_JSON_H
#define IDGEN_SERVER_DECODE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/layout.h"

/* Room enough for any layout's object, with its NUL. */
#define IDGEN_DECODE_JSON_MAX 512

/* Writes, NUL-terminated, with no newline:
 *   {"id":"<decimal>","layout":"<name>","time":"<ISO 8601 UTC>","time_ms":<unix ms>,
 *    "fields":{"<node field>":<n>,...,"sequence":<n>}}
 * The ID is a string (JavaScript loses digits past 2^53); node fields follow the
 * layout's order. Returns the length, IDGEN_ERANGE if id has bits the layout does not
 * hold, IDGEN_EBUFSIZE if outlen is too small. Thread-safe. */
int idgen__decode_json(const idgen_layout *layout, uint64_t id, char *out, size_t outlen);

#endif
