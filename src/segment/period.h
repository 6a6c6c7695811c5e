/* period.h: the periods of a time-scoped segment sequence (a day, a month or a year in a
 * timezone): which period an instant falls in, its number (20261201, 202612, 2026) and
 * its bounds, from the system's tz database (TZif files, read once, no TZ variable). */
#ifndef IDGEN_SEGMENT_PERIOD_H
#define IDGEN_SEGMENT_PERIOD_H

#include <stddef.h>
#include <stdint.h>

typedef enum idgen__period_kind {
  IDGEN__PERIOD_NONE = 0,
  IDGEN__PERIOD_DAY,   /* number YYYYMMDD */
  IDGEN__PERIOD_MONTH, /* YYYYMM */
  IDGEN__PERIOD_YEAR,  /* YYYY */
} idgen__period_kind;

/* "day", "month", "year" (or "none"): 0 and *out; IDGEN_EINVAL otherwise. */
int idgen__period_parse(const char *s, idgen__period_kind *out);
const char *idgen__period_name(idgen__period_kind kind);

typedef struct idgen__tz idgen__tz;

/* Loads a timezone by its tz database name (Europe/Berlin; UTC) from
 * /usr/share/zoneinfo (or $TZDIR). IDGEN_EINVAL with one line in err for an unknown
 * name or a file that is not TZif. Times past the file's last transition keep its last
 * offset (Debian's files run to 2037). */
int idgen__tz_load(const char *name, idgen__tz **out, char *err, size_t errlen);
void idgen__tz_free(idgen__tz *tz);
const char *idgen__tz_name(const idgen__tz *tz);
/* The first transition (Unix s) after after_s, or INT64_MAX. Thread-safe. */
int64_t idgen__tz_next_transition_s(const idgen__tz *tz, int64_t after_s);
/* The UTC offset in seconds at an instant. Thread-safe (read only). */
int32_t idgen__tz_offset_s(const idgen__tz *tz, int64_t unix_ms);

/* The period of kind holding unix_ms in tz: its number, and [start_ms, end_ms), where a
 * period's start is the first instant whose local date is at or past its first day (a
 * day may start at 01:00, last 23 or 25 hours) and its end the next period's start. So
 * start_ms <= unix_ms < end_ms, and periods tile time. 0, or IDGEN_EOVERFLOW before 1970
 * or past year 9999. Thread-safe. */
int idgen__period_of(idgen__period_kind kind, const idgen__tz *tz, int64_t unix_ms,
                     uint64_t *number, int64_t *start_ms, int64_t *end_ms);

/* The period's number back to its first day: y, m (1 if a year), d (1 unless a day).
 * 0, or IDGEN_EFORMAT for a number that is no period of kind (20261301). */
int idgen__period_date(idgen__period_kind kind, uint64_t number, int *y, int *m, int *d);

#endif
