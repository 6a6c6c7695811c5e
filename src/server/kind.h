/* kind.h: the kinds of generator `idgen serve` hosts, and their names (in the config
 * file, /v1/info, INFO and the metrics' kind label). */
#ifndef IDGEN_SERVER_KIND_H
#define IDGEN_SERVER_KIND_H

#include <string.h>

typedef enum idgen__kind {
  KIND_SNOWFLAKE, /* 64-bit Snowflake IDs: layout, worker-ID lease */
  KIND_UUID7,
  KIND_UUID4,
  KIND_ULID,
  KIND_SEGMENT, /* dense integers from blocks leased from a backend */
  KIND_COUNT
} idgen__kind;

/* Every kind's name, for messages. */
#define IDGEN__KINDS "snowflake, segment, uuid7, uuid4, ulid"

static inline const char *idgen__kind_name(idgen__kind kind) {
  static const char *const names[KIND_COUNT] = {"snowflake", "uuid7", "uuid4", "ulid",
                                                "segment"};
  return (unsigned)kind < KIND_COUNT ? names[kind] : "unknown";
}

/* 0 and *out for a kind's name; -1 otherwise. */
static inline int idgen__kind_parse(const char *name, idgen__kind *out) {
  for (unsigned k = 0; k < KIND_COUNT; k++)
    if (!strcmp(name, idgen__kind_name((idgen__kind)k))) {
      *out = (idgen__kind)k;
      return 0;
    }
  return -1;
}

/* Kinds whose IDs are 64-bit integers (the codecs and opaque forms apply); the others
 * make text (UUIDs, ULIDs). */
static inline int idgen__kind_numeric(idgen__kind kind) {
  return kind == KIND_SNOWFLAKE || kind == KIND_SEGMENT;
}

#endif
