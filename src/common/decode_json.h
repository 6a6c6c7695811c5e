/* decode_json.h: what `idgen decode` reads and the JSON it prints, shared with the
 * server's GET /v1/decode/{id} and RESP DECODE, so the three cannot drift apart: 64-bit
 * IDs in any codec form, UUIDs of any version, ULIDs. */
#ifndef IDGEN_COMMON_DECODE_JSON_H
#define IDGEN_COMMON_DECODE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/layout.h"
#include "idgen/uuid.h"

/* Room enough for any layout's object, with its NUL. */
#define IDGEN_DECODE_JSON_MAX 512

/* Writes, NUL-terminated, with no newline:
 *   {"id":"<decimal>","layout":"<name>","time":"<ISO 8601 UTC>","time_ms":<unix ms>,
 *    "fields":{"<node field>":<n>,...,"sequence":<n>}}
 * The ID is a string (JavaScript loses digits past 2^53); node fields follow the
 * layout's order. Returns the length, IDGEN_ERANGE if id has bits the layout does not
 * hold, IDGEN_EBUFSIZE if outlen is too small. Thread-safe. */
int idgen__decode_json(const idgen_layout *layout, uint64_t id, char *out, size_t outlen);

/* A 128-bit value decoded: a UUID or a ULID. */
typedef struct idgen__wide {
  char id[IDGEN_UUID_TEXT_LEN + 1]; /* canonical text (lower-case UUID, upper-case ULID) */
  const char *form;                 /* "uuid" or "ulid" */
  const char
      *scheme; /* "uuidv1".."uuidv8", "uuid" (other variants), "nil", "max", "ulid" */
  int version; /* the RFC variant's version; -1: none printed */
  const char *variant; /* idgen_uuid_variant_name; NULL for a ULID */
  int has_time;        /* v1, v6, v7 and ULIDs carry a time */
  int64_t time_ms;     /* Unix ms */
} idgen__wide;

/* "UUID" when text has a UUID's shape (36 chars, '-' at offset 8), "ULID" for a ULID's
 * (26 chars, no '-'; no 64-bit form has that shape), else NULL: a 64-bit ID. */
const char *idgen__wide_kind(const char *text, size_t len);
/* Decodes text of a UUID's or a ULID's shape. Returns 1 and fills *out; 0 if text has
 * neither shape; a negative IDGEN_* error if it has one but is malformed. */
int idgen__wide_parse(const char *text, size_t len, idgen__wide *out);
/* Writes, NUL-terminated, with no newline:
 *   {"id":"<canonical>","scheme":"<scheme>","version":<n>,"variant":"<name>",
 *    "time":"<ISO 8601 UTC>","time_ms":<unix ms>}
 * version only for the RFC variant, variant only for UUIDs, time only when it has one
 * ("time" null past year 9999: a ULID can reach 10889). Returns the length or
 * IDGEN_EBUFSIZE. */
int idgen__wide_json(const idgen__wide *w, char *out, size_t outlen);

/* Any text `idgen decode` reads, without a forced format: a UUID or a ULID by its shape,
 * else a 64-bit ID in any codec of layout; its JSON into out as above. Returns the length,
 * or the parse error (IDGEN_EFORMAT, ...) with *kind set to what the text was read as
 * ("UUID", "ULID" or "ID"), for the message. */
int idgen__decode_any_json(const idgen_layout *layout, const char *text, size_t len,
                           char *out, size_t outlen, const char **kind);

#endif
