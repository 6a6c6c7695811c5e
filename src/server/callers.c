/* callers.c: the Space-Saving tables of callers' names (callers.h), their merge, and
 * their rendering for /metrics and /v1/callers. */
#include "server/callers.h"

#include <stdlib.h>
#include <string.h>

#include "idgen/error.h"

#define NAME_WORDS (IDGEN_CALLER_NAME_MAX / 8)

/* One counter. The owner thread reads its private copy (hash, len, name); the atomics
 * are what other threads read, a seqlock per slot: stamp odd while the owner gives the
 * slot to another name, bumped twice for each. */
typedef struct slot {
  _Atomic uint32_t stamp;
  _Atomic uint32_t rlen;
  _Atomic uint64_t count, error;
  _Atomic uint64_t rname[NAME_WORDS];
  /* the owner's: */
  uint64_t hash;
  size_t len;
  char name[IDGEN_CALLER_NAME_MAX];
} slot;

struct idgen__callers_table {
  slot slots[IDGEN_CALLERS_N];
  _Atomic uint32_t used; /* slots in use; they fill from 0 and are never freed */
  /* No total: Space-Saving's counters always add up to the requests counted. */
  char pad[64]; /* the next thread's table on another cache line */
};

struct idgen__callers {
  size_t ntables;
  idgen__callers_table tables[];
};

/* FNV-1a: the names are short and the hash only picks the slots to compare. */
static uint64_t hash_of(const char *s, size_t n) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
  return h;
}

void idgen__caller_name_set(idgen__caller_name *n, const char *raw, size_t len) {
  if (len > IDGEN_CALLER_NAME_MAX)
    len = IDGEN_CALLER_NAME_MAX;
  for (size_t i = 0; i < len; i++) {
    char c = raw[i];
    n->s[i] = c < ' ' || c > '~' || c == '"' || c == '\\' ? '_' : c;
  }
  n->len = len;
  n->s[len] = 0;
  if (len == 0) {
    n->len = strlen(IDGEN_CALLER_NONE);
    memcpy(n->s, IDGEN_CALLER_NONE, n->len + 1);
  } else if (strcmp(n->s, IDGEN_CALLER_OTHER) == 0) {
    n->len = strlen(IDGEN_CALLER_OTHER) + 1;
    n->s[0] = '_';
    memcpy(n->s + 1, IDGEN_CALLER_OTHER, n->len);
  }
  n->hash = hash_of(n->s, n->len);
}

int idgen__callers_new(idgen__callers **out, size_t nthreads) {
  if (nthreads == 0)
    nthreads = 1;
  idgen__callers *c = calloc(1, sizeof *c + nthreads * sizeof c->tables[0]);
  if (!c)
    return IDGEN_ENOMEM;
  c->ntables = nthreads;
  *out = c;
  return 0;
}

void idgen__callers_free(idgen__callers *c) {
  free(c);
}

idgen__callers_table *idgen__callers_table_of(idgen__callers *c, size_t i) {
  return &c->tables[i < c->ntables ? i : c->ntables - 1];
}

static void add(_Atomic uint64_t *v, uint64_t n) {
  /* One writer: a load and a store, not a locked add. */
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
                        memory_order_relaxed);
}

/* Gives slot s to name, with count and error, under its seqlock. */
static void take(slot *s, const idgen__caller_name *name, uint64_t count, uint64_t error) {
  uint32_t stamp = atomic_load_explicit(&s->stamp, memory_order_relaxed);
  atomic_store_explicit(&s->stamp, stamp + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  uint64_t words[NAME_WORDS] = {0};
  memcpy(words, name->s, name->len);
  for (size_t i = 0; i < NAME_WORDS; i++)
    atomic_store_explicit(&s->rname[i], words[i], memory_order_relaxed);
  atomic_store_explicit(&s->rlen, (uint32_t)name->len, memory_order_relaxed);
  atomic_store_explicit(&s->count, count, memory_order_relaxed);
  atomic_store_explicit(&s->error, error, memory_order_relaxed);
  atomic_store_explicit(&s->stamp, stamp + 2, memory_order_release);
  s->hash = name->hash;
  s->len = name->len;
  memcpy(s->name, name->s, name->len);
}

/* The slot holding name, or -1. */
static long find(const idgen__callers_table *t, uint32_t used,
                 const idgen__caller_name *name) {
  for (uint32_t i = 0; i < used; i++) {
    const slot *s = &t->slots[i];
    if (s->hash == name->hash && s->len == name->len && !memcmp(s->name, name->s, s->len))
      return (long)i;
  }
  return -1;
}

/* Space-Saving's step for a name not in the table: a free slot, or the smallest one's,
 * whose count the name inherits and records as its error. */
static uint32_t replace_min(idgen__callers_table *t, uint32_t used,
                            const idgen__caller_name *name, uint64_t n) {
  if (used < IDGEN_CALLERS_N) {
    take(&t->slots[used], name, n, 0);
    atomic_store_explicit(&t->used, used + 1, memory_order_release);
    return used;
  }
  uint32_t min = 0;
  uint64_t min_count = atomic_load_explicit(&t->slots[0].count, memory_order_relaxed);
  for (uint32_t i = 1; i < IDGEN_CALLERS_N; i++) {
    uint64_t c = atomic_load_explicit(&t->slots[i].count, memory_order_relaxed);
    if (c < min_count) {
      min = i;
      min_count = c;
    }
  }
  take(&t->slots[min], name, min_count + n, min_count);
  return min;
}

/* A name not at its cached slot: looked up, or given a slot. Apart from the fast path,
 * so that the fast path saves no registers (it was 33 instructions a command inline). */
__attribute__((noinline)) static void count_slow(idgen__callers_table *t,
                                                 const idgen__caller_name *name,
                                                 idgen__caller_ref *ref, uint64_t n) {
  uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
  long i = find(t, used, name);
  if (i >= 0)
    add(&t->slots[i].count, n);
  else
    i = replace_min(t, used, name, n);
  ref->slot = (uint32_t)i;
  ref->stamp = atomic_load_explicit(&t->slots[i].stamp, memory_order_relaxed);
}

void idgen__callers_count(idgen__callers_table *t, const idgen__caller_name *name,
                          idgen__caller_ref *ref, uint64_t n) {
  slot *s = &t->slots[ref->slot];
  if (atomic_load_explicit(&s->stamp, memory_order_relaxed) == ref->stamp)
    add(&s->count, n);
  else
    count_slow(t, name, ref, n);
}

/* ---- the merge --------------------------------------------------------------------- */

typedef struct seen {
  uint64_t hash, count, error;
  size_t table;
  uint32_t len;
  char name[IDGEN_CALLER_NAME_MAX + 1];
} seen;

/* Slot s as it stands, read under its seqlock; 0 if it stayed busy. */
static int read_slot(const slot *s, seen *out) {
  for (int tries = 0; tries < 1000; tries++) {
    uint32_t s1 = atomic_load_explicit(&s->stamp, memory_order_acquire);
    if (s1 & 1)
      continue;
    uint64_t words[NAME_WORDS];
    for (size_t i = 0; i < NAME_WORDS; i++)
      words[i] = atomic_load_explicit(&s->rname[i], memory_order_relaxed);
    uint32_t len = atomic_load_explicit(&s->rlen, memory_order_relaxed);
    out->count = atomic_load_explicit(&s->count, memory_order_relaxed);
    out->error = atomic_load_explicit(&s->error, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->stamp, memory_order_relaxed) != s1)
      continue;
    out->len = len > IDGEN_CALLER_NAME_MAX ? IDGEN_CALLER_NAME_MAX : len;
    memcpy(out->name, words, out->len);
    out->name[out->len] = 0;
    out->hash = hash_of(out->name, out->len);
    return 1;
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  const seen *x = a, *y = b;
  if (x->hash != y->hash)
    return x->hash < y->hash ? -1 : 1;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  return memcmp(x->name, y->name, x->len);
}

static int by_count(const void *a, const void *b) {
  const idgen__caller_stat *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp(x->name, y->name);
}

int idgen__callers_merge(const idgen__callers *c, idgen__callers_top *out) {
  size_t cap = c->ntables * IDGEN_CALLERS_N, n = 0;
  seen *all = malloc(cap * sizeof *all);
  uint64_t *mins = calloc(c->ntables, sizeof *mins);
  idgen__caller_stat *merged = malloc(cap * sizeof *merged);
  if (!all || !mins || !merged) {
    free(all);
    free(mins);
    free(merged);
    return IDGEN_ENOMEM;
  }
  memset(out, 0, sizeof *out);
  uint64_t sum_mins = 0;
  for (size_t k = 0; k < c->ntables; k++) {
    const idgen__callers_table *t = &c->tables[k];
    uint32_t used = atomic_load_explicit(&t->used, memory_order_acquire);
    uint64_t min = UINT64_MAX;
    for (uint32_t i = 0; i < used; i++)
      if (read_slot(&t->slots[i], &all[n])) {
        all[n].table = k;
        out->total += all[n].count;
        if (all[n].count < min)
          min = all[n].count;
        n++;
      }
    /* While a slot is free, a name not in the table was never seen here. */
    mins[k] = used < IDGEN_CALLERS_N ? 0 : min;
    sum_mins += mins[k];
  }
  /* One name's counts in every table side by side; where a table lacks it, its min. */
  qsort(all, n, sizeof *all, by_name);
  size_t m = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint64_t count = 0, at_least = 0, mins_there = 0;
    for (; j < n && by_name(&all[i], &all[j]) == 0; j++) {
      count += all[j].count;
      at_least += all[j].count - all[j].error;
      mins_there += mins[all[j].table];
    }
    idgen__caller_stat *st = &merged[m++];
    memcpy(st->name, all[i].name, all[i].len + 1);
    st->count = count + (sum_mins - mins_there);
    st->at_least = at_least;
    i = j;
  }
  free(all);
  free(mins);
  qsort(merged, m, sizeof *merged, by_count);
  out->all = merged;
  out->nall = m;
  out->n = m < IDGEN_CALLERS_N ? m : IDGEN_CALLERS_N;
  uint64_t listed = 0;
  for (size_t i = 0; i < out->n; i++)
    listed += merged[i].count;
  /* Read while the owners count, the sums may cross by a few: never below 0. */
  out->other = out->total > listed ? out->total - listed : 0;
  out->error_bound = sum_mins;
  return 0;
}

void idgen__callers_top_free(idgen__callers_top *top) {
  free(top->all);
  top->all = NULL;
  top->nall = top->n = 0;
}

/* ---- output ------------------------------------------------------------------------ */

void idgen__callers_render_metrics(const idgen__callers *c, idgen__buf *out) {
  idgen__callers_top top;
  if (idgen__callers_merge(c, &top) < 0)
    return;
  idgen__buf_addf(
      out,
      "# HELP idgen_caller_requests_total HTTP requests and RESP commands by the caller's "
      "name (User-Agent; CLIENT SETNAME; \"-\": none), approximate: the top %d of a "
      "Space-Saving count per thread, each at most idgen_caller_error_bound above the "
      "true count, never below; \"other\": the rest (it drops when a caller joins the "
      "top).\n"
      "# TYPE idgen_caller_requests_total counter\n",
      IDGEN_CALLERS_N);
  for (size_t i = 0; i < top.n; i++) {
    /* Names hold no '"', '\' or newline (idgen__caller_name_set): no escaping. */
    idgen__buf_adds(out, "idgen_caller_requests_total{caller=\"");
    idgen__buf_adds(out, top.all[i].name);
    idgen__buf_adds(out, "\"} ");
    idgen__buf_addu(out, top.all[i].count);
    idgen__buf_addc(out, '\n');
  }
  idgen__buf_addf(out,
                  "idgen_caller_requests_total{caller=\"" IDGEN_CALLER_OTHER "\"} %llu\n"
                  "# HELP idgen_caller_error_bound The most an idgen_caller_requests_total "
                  "series (but \"other\") may exceed its caller's true count: the sum of "
                  "each thread's smallest counter, 0 while every thread has one free.\n"
                  "# TYPE idgen_caller_error_bound gauge\n"
                  "idgen_caller_error_bound %llu\n",
                  (unsigned long long)top.other, (unsigned long long)top.error_bound);
  idgen__callers_top_free(&top);
}

void idgen__callers_render_json(const idgen__callers *c, idgen__buf *out) {
  idgen__callers_top top;
  if (idgen__callers_merge(c, &top) < 0) {
    out->failed = 1;
    return;
  }
  idgen__buf_adds(out, "{\"callers\":[");
  for (size_t i = 0; i < top.n; i++) {
    idgen__buf_adds(out, i ? ",{\"name\":" : "{\"name\":");
    idgen__buf_add_json_str(out, top.all[i].name, strlen(top.all[i].name));
    idgen__buf_addf(out, ",\"count\":%llu,\"at_least\":%llu}",
                    (unsigned long long)top.all[i].count,
                    (unsigned long long)top.all[i].at_least);
  }
  idgen__buf_addf(out,
                  "],\"other\":%llu,\"total\":%llu,\"error_bound\":%llu,\"capacity\":%d,"
                  "\"threads\":%zu}",
                  (unsigned long long)top.other, (unsigned long long)top.total,
                  (unsigned long long)top.error_bound, IDGEN_CALLERS_N, c->ntables);
  idgen__callers_top_free(&top);
}
