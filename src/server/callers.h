/* callers.h: who calls, counted in bounded memory: a client's name (RESP CLIENT SETNAME or
 * HELLO SETNAME, HTTP User-Agent) in a Space-Saving top-N (Metwally, Agrawal, El Abbadi,
 * "Efficient computation of frequent and top-k elements in data streams", 2005), one
 * table per serving thread, merged when /metrics or /v1/callers is read.
 *
 * Space-Saving keeps IDGEN_CALLERS_N counters. A name already counted adds to its own; a
 * new one, while a counter is free, takes it; else it takes the smallest counter, whose
 * count it inherits (+1) and records as its error. So within one thread each count c of
 * a name is at least its true count f, and c - error <= f <= c, error <= that thread's
 * smallest counter; a name not in the table was seen at most min times (min: the
 * smallest counter, 0 while one is free). Merged over threads, a name's count is the sum
 * of its count in each thread, or that thread's min where it is not in the table: never
 * below the true count, above it by at most the sum of the threads' mins (the
 * error_bound reported beside it). Memory is fixed: N counters a thread, whatever the
 * names clients send. */
#ifndef IDGEN_SERVER_CALLERS_H
#define IDGEN_SERVER_CALLERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/buf.h"

#define IDGEN_CALLERS_N 64         /* counters a thread; names /metrics lists at most */
#define IDGEN_CALLER_NAME_MAX 64   /* bytes of a name kept: the rest is cut off */
#define IDGEN_CALLER_NONE "-"      /* the name of a client that gave none */
#define IDGEN_CALLER_OTHER "other" /* /metrics's series for everything past the top N */

/* A caller's name as counted: the first IDGEN_CALLER_NAME_MAX bytes the client sent,
 * every byte outside printable ASCII and every '"' and '\' turned into '_' (so a name
 * is a Prometheus label value and a JSON string as it is, and a log line stays one);
 * "" becomes "-", and "other" (the overflow series' name) becomes "_other". */
typedef struct idgen__caller_name {
  uint64_t hash;
  size_t len;
  char s[IDGEN_CALLER_NAME_MAX + 1];
} idgen__caller_name;

void idgen__caller_name_set(idgen__caller_name *n, const char *raw, size_t len);

/* Where a connection's name was counted last: its slot, and the slot's stamp then (a
 * slot given to another name gets a new stamp). Makes the next count O(1). */
typedef struct idgen__caller_ref {
  uint32_t slot, stamp;
} idgen__caller_ref;
/* A reference that matches no slot. */
#define IDGEN__CALLER_REF_NONE ((idgen__caller_ref){0, 1})

typedef struct idgen__callers idgen__callers;             /* every thread's table */
typedef struct idgen__callers_table idgen__callers_table; /* one thread's */

/* nthreads tables (at least one). Returns 0 or IDGEN_ENOMEM. */
int idgen__callers_new(idgen__callers **out, size_t nthreads);
void idgen__callers_free(idgen__callers *c); /* NULL is fine */
/* Table i (the last one for i past the end). */
idgen__callers_table *idgen__callers_table_of(idgen__callers *c, size_t i);

/* Counts n requests of name in t. Only t's own thread may call it (no lock: the
 * readers below retry a slot that changed under them). ref: the caller's cache, kept
 * with its name (IDGEN__CALLER_REF_NONE at first and whenever the name changes). */
void idgen__callers_count(idgen__callers_table *t, const idgen__caller_name *name,
                          idgen__caller_ref *ref, uint64_t n);

typedef struct idgen__caller_stat {
  char name[IDGEN_CALLER_NAME_MAX + 1];
  uint64_t count;    /* at least the true count, at most count_min + ... see above */
  uint64_t at_least; /* a lower bound: the sum of (count - error) where it is counted */
} idgen__caller_stat;

typedef struct idgen__callers_top {
  idgen__caller_stat *all; /* every name of every table, by count, largest first */
  size_t nall;
  size_t n;             /* the top ones: min(nall, IDGEN_CALLERS_N) */
  uint64_t total;       /* every request counted, every thread: the counters' sum */
  uint64_t other;       /* total minus the top n's counts (never below 0) */
  uint64_t error_bound; /* the most a listed count exceeds the true one: sum of mins */
} idgen__callers_top;

/* The merged counts of every table. Any thread, while the owners count (a slot being
 * replaced is read again; one that stays busy is left out of every sum). Returns 0 or
 * IDGEN_ENOMEM (out untouched); free out with idgen__callers_top_free. */
int idgen__callers_merge(const idgen__callers *c, idgen__callers_top *out);
void idgen__callers_top_free(idgen__callers_top *top);

/* Appends idgen_caller_requests_total{caller} (the top N and "other": N + 1 series at
 * most) and idgen_caller_error_bound, Prometheus text format. */
void idgen__callers_render_metrics(const idgen__callers *c, idgen__buf *out);
/* Appends {"callers":[{"name":..,"count":..,"at_least":..},..],"other":..,
 * "total":..,"error_bound":..,"capacity":N,"threads":T}. */
void idgen__callers_render_json(const idgen__callers *c, idgen__buf *out);

#endif
