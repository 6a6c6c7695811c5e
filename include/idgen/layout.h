/* idgen/layout.h: the bit layout of a 64-bit ID, as data: fields, widths, order, epoch. */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum idgen_field_kind {
  IDGEN_FIELD_TIME = 1, /* time since the epoch, in units of unit_ms */
  IDGEN_FIELD_NODE = 2, /* part of the worker ID (worker, datacenter, shard, ...) */
  IDGEN_FIELD_SEQ = 3,  /* sequence within one time unit */
} idgen_field_kind;

#define IDGEN_FIELD_NAME_MAX 16
#define IDGEN_LAYOUT_NAME_MAX 32
#define IDGEN_LAYOUT_FIELDS_MAX 4
#define IDGEN_LAYOUT_NODES_MAX 2

typedef struct idgen_field {
  idgen_field_kind kind;
  uint8_t bits;  /* width, >= 1 */
  uint8_t shift; /* position of the lowest bit; set by idgen_layout_validate */
  char name[IDGEN_FIELD_NAME_MAX];
} idgen_field;

/* A layout, by value. fields[] runs from the most significant field to the least;
 * the sign bit is always 0 and is not a field. Exactly one TIME field, first; one SEQ
 * field; one or two NODE fields, anywhere after TIME (Sonyflake puts SEQ before its
 * machine field). Total width <= 63 bits. The worker ID of a layout is its NODE fields
 * read as one number, most significant first (twitter: datacenter << 5 | worker). */
typedef struct idgen_layout {
  char name[IDGEN_LAYOUT_NAME_MAX];
  int64_t epoch_ms; /* Unix ms of time field value 0 */
  uint32_t unit_ms; /* 1, 10 or 1000 */
  uint8_t nfields;  /* 3 or 4 */
  idgen_field fields[IDGEN_LAYOUT_FIELDS_MAX];
  /* Derived by idgen_layout_validate, read-only for callers: */
  uint8_t time_bits, seq_bits, node_bits; /* node_bits: all NODE fields together */
  uint8_t time_shift, seq_shift;
  uint8_t node_shift; /* the lowest NODE field's shift: where the worker ID starts */
} idgen_layout;

/* The parts of one ID. node[] follows the NODE fields in layout order. */
typedef struct idgen_parts {
  uint64_t ticks;  /* raw time field */
  int64_t time_ms; /* Unix ms: epoch_ms + ticks * unit_ms */
  uint64_t worker; /* all NODE fields as one number */
  uint64_t node[IDGEN_LAYOUT_NODES_MAX];
  uint64_t seq;
} idgen_parts;

/* Fills *out with a named preset: "snowflake" (41/10/12, epoch 2026-01-01),
 * "twitter", "discord", "instagram", "sonyflake", "js53". Returns IDGEN_EINVAL for an
 * unknown name. Thread-safe. */
IDGEN_API int idgen_layout_preset(const char *name, idgen_layout *out);

/* The preset names, NULL-terminated. */
IDGEN_API const char *const *idgen_layout_preset_names(void);

/* Parses a preset name or a spec, fills *out and validates it (see docs/layouts.md):
 *   spec   := field ("," field)* ["," "epoch:" date] ["," "name:" word]
 *   field  := "time:" bits ["@" unit] | "seq:" bits | name ":" bits
 *   unit   := "1ms" | "10ms" | "1s";  date := YYYY-MM-DD[THH:MM:SS[.mmm]Z] | unix ms
 * e.g. "time:41@1ms,worker:10,seq:12,epoch:2026-01-01". now_ms (Unix ms) rejects an
 * epoch in the future; pass 0 to skip that check. On failure, err (if not NULL)
 * receives a one-line reason naming the field. Thread-safe. */
IDGEN_API int idgen_layout_parse(const char *spec, size_t len, int64_t now_ms,
                                 idgen_layout *out, char *err, size_t errlen);

/* Checks a layout filled by hand and derives its shifts and widths. Rejects: no or two
 * TIME fields, TIME not first, no SEQ field, no or three NODE fields, a zero-width
 * field, a total over 63 bits, a bad unit, an epoch before 1970 or after now_ms (0
 * skips the future check), duplicate field names. err as for idgen_layout_parse. */
IDGEN_API int idgen_layout_validate(idgen_layout *layout, int64_t now_ms, char *err,
                                    size_t errlen);

/* Writes the layout as a spec string that idgen_layout_parse reads back. Returns the
 * length or IDGEN_EBUFSIZE. */
IDGEN_API int idgen_layout_format(const idgen_layout *layout, char *out, size_t outlen);

/* Unix ms of the first instant the time field cannot hold (the layout's end date). */
IDGEN_API int64_t idgen_layout_end_ms(const idgen_layout *layout);
/* Unix ms from which IDs may exceed 2^53 - 1 (JavaScript's exact integers), or
 * INT64_MAX if no ID of the layout ever does. */
IDGEN_API int64_t idgen_layout_js_unsafe_ms(const idgen_layout *layout);
/* The largest worker ID: 2^node_bits - 1. */
IDGEN_API uint64_t idgen_layout_max_worker(const idgen_layout *layout);
/* IDs per second one worker can issue: 2^seq_bits * 1000 / unit_ms. */
IDGEN_API double idgen_layout_ids_per_second(const idgen_layout *layout);

/* Unix ms -> time field value. IDGEN_EBEFOREEPOCH or IDGEN_ETIMEEND out of range;
 * times between units round down. */
IDGEN_API int idgen_layout_ticks(const idgen_layout *layout, int64_t unix_ms,
                                 uint64_t *ticks);

/* The smallest (first) and the largest (last) ID whose time is unix_ms: the time field
 * of unix_ms (rounded down to the unit), every other field all zeros or all ones. So
 * `id >= first(a) AND id <= last(b)` selects exactly the IDs made from a to b, both
 * ends included. IDGEN_EBEFOREEPOCH or IDGEN_ETIMEEND out of the layout's range; *id
 * untouched then. Thread-safe. */
IDGEN_API int idgen_layout_first_id(const idgen_layout *layout, int64_t unix_ms,
                                    uint64_t *id);
IDGEN_API int idgen_layout_last_id(const idgen_layout *layout, int64_t unix_ms,
                                   uint64_t *id);

/* Builds an ID from ticks, worker and seq (parts->time_ms and node[] are ignored: the
 * worker carries the node fields). IDGEN_ERANGE names no field; use the layout's
 * limits to say which. */
IDGEN_API int idgen_compose(const idgen_layout *layout, const idgen_parts *parts,
                            uint64_t *id);
/* Splits an ID into its parts. IDGEN_ERANGE if the sign bit or a bit above the
 * layout's width is set. */
IDGEN_API int idgen_decompose(const idgen_layout *layout, uint64_t id, idgen_parts *out);

/* Formats Unix ms as "2026-01-01T00:00:00.000Z" (24 chars + NUL). Returns the length or
 * IDGEN_EBUFSIZE. Thread-safe. */
IDGEN_API int idgen_format_time(int64_t unix_ms, char *out, size_t outlen);
/* Parses YYYY-MM-DD[THH:MM:SS[.mmm]Z] (UTC) into Unix ms; strict. */
IDGEN_API int idgen_parse_time(const char *s, size_t len, int64_t *unix_ms);

#ifdef __cplusplus
}
#endif
#endif
