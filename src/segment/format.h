/* format.h: the text form of a period generator's numbers ("ORD-{date:%Y%m%d}-{seq:06}"
 * gives ORD-20261201-000123) and its strict parse back. The number stays an integer
 * inside (PERIOD * 10^digits + n); the text is made from it and read back to it. */
#ifndef IDGEN_SEGMENT_FORMAT_H
#define IDGEN_SEGMENT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "segment/period.h"

#define IDGEN_SEG_FORMAT_MAX 128 /* a template, and a text made from one */
#define IDGEN_SEG_FORMAT_PARTS 16

typedef struct idgen__seg_format {
  char template_text[IDGEN_SEG_FORMAT_MAX];
  char name[72];
  idgen__period_kind period;
  uint64_t mult; /* 10^digits */
  size_t nparts;
  struct {
    char kind;      /* 'L' literal, 'Y' 'm' 'd' 'j' a date field, 'S' the sequence */
    size_t at, len; /* literal: its bytes in template_text; field: its width */
  } parts[IDGEN_SEG_FORMAT_PARTS];
} idgen__seg_format;

/* Compiles a template for a generator's name, period and digits. Fields: {date:PAT}
 * with %Y (4 digits), %m, %d (2), %j (3, day of the year) and %% in PAT; {seq:0N}, the
 * number zero-padded to N digits; {name}; anything else is literal (no '{' or '}').
 * Refused with IDGEN_EINVAL and one line in err: a field it does not know, a date
 * pattern it cannot read back (%y, %b, ...), no {seq:0N} or two, a sequence narrower
 * than the period's largest number (N < digits), a date that does not name the period
 * (day: %Y with %m and %d, or %j; month: %Y and %m; year: %Y), a template without a
 * period. */
int idgen__seg_format_compile(idgen__seg_format *f, const char *template_text,
                              const char *name, idgen__period_kind period, unsigned digits,
                              char *err, size_t errlen);

/* The text of number v (PERIOD * 10^digits + n). Its length, or IDGEN_EFORMAT for a v
 * that is no number of this period kind, IDGEN_EBUFSIZE. */
int idgen__seg_format_text(const idgen__seg_format *f, uint64_t v, char *out,
                           size_t outlen);

/* Reads text back, strictly: every literal as it is, every field at its width, a valid
 * date of one period, n from 1, and the text made again from the result must be text
 * itself. 0 with *v, *period and *n; IDGEN_EFORMAT otherwise. */
int idgen__seg_format_parse(const idgen__seg_format *f, const char *text, size_t len,
                            uint64_t *v, uint64_t *period, uint64_t *n);

/* 1 if a text of format a can also be a text of format b (the same text for two numbers
 * when one replaces the other), 0 if no text is both. Every field has a fixed width, so
 * this compares the two templates position by position: texts of different lengths
 * never coincide; at one position a literal byte excludes the other format's different
 * literal, and a date or sequence field (digits) excludes a non-digit literal. A format
 * equal to the other (template, period and digits) counts as coinciding. */
int idgen__seg_format_overlap(const idgen__seg_format *a, const idgen__seg_format *b);

/* ---- format_history.c: every format a generator has served ---------------------- */

/* A generator's formats, oldest first, as its history file holds them (issue 35): a new
 * format is checked against each, so that no text a format ever made is the text of
 * another number. The file, "formats-NAME" in the state directory:
 *   idgen segment format history 1
 *   PERIOD DIGITS TEMPLATE        (one line per format: day 6 ORD-{date:%Y%m%d}-{seq:06})
 * every line ending in '\n'. */
#define IDGEN_SEG_HISTORY_MAX 64
#define IDGEN_SEG_HISTORY_HEADER "idgen segment format history 1\n"

typedef struct idgen__seg_history {
  size_t n;
  idgen__seg_format formats[IDGEN_SEG_HISTORY_MAX];
} idgen__seg_history;

/* Reads a history file's text for generator name, strictly: the header line, then
 * lines of a period (day, month, year), digits (1 to 18) and a template that compiles;
 * a last line without '\n' (a torn write) is refused. 0, or IDGEN_EFORMAT with one line
 * in err naming the line. */
int idgen__seg_history_parse(idgen__seg_history *h, const char *text, size_t len,
                             const char *name, char *err, size_t errlen);

/* Loads path: 1 read, 0 no such file (h empty), or a negative error with one line in
 * err (unreadable, or refused by the parse). */
int idgen__seg_history_load(idgen__seg_history *h, const char *path, const char *name,
                            char *err, size_t errlen);

/* The first format of h whose texts can be those of f, f itself (same template, period
 * and digits) excepted; NULL if none. */
const idgen__seg_format *idgen__seg_history_conflict(const idgen__seg_history *h,
                                                     const idgen__seg_format *f);

/* 1 if f (same template, period and digits) is one of h's formats, else 0. */
int idgen__seg_history_has(const idgen__seg_history *h, const idgen__seg_format *f);

/* Records f in h and in path, durably (a new file written, fsynced, renamed over path,
 * the directory fsynced) before the caller serves a text of f. 0 if f was in h already
 * (nothing written), 1 written, or a negative error with one line in err. */
int idgen__seg_history_add(idgen__seg_history *h, const idgen__seg_format *f,
                           const char *path, char *err, size_t errlen);

#endif
