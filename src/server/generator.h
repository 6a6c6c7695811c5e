/* generator.h: the generators `idgen serve` hosts by name, one interface over the
 * kinds: snowflake (gen_snowflake.c: a generator, its lease and keeper), segment
 * (gen_segment.c: blocks from a backend), uuid7, uuid4 and ulid (gen_text.c). Each kind
 * is a const class; the server and the routes never know which one they hold. Nothing
 * here touches a socket. */
#ifndef IDGEN_SERVER_GENERATOR_H
#define IDGEN_SERVER_GENERATOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/id_form.h"
#include "idgen.h"
#include "idgen/opaque.h"
#include "server/buf.h"
#include "server/config.h"

typedef struct idgen__generator idgen__generator;

/* What the generators of one service share. */
typedef struct idgen__gen_env {
  idgen_clock *clock;   /* --clock: mono or wall */
  int wall_clock;       /* 1 for --clock wall */
  idgen_random *random; /* thread-safe */
} idgen__gen_env;

/* One family of per-generator metrics: sample writes its samples for one generator of
 * the class (labelled generator="NAME", see idgen__gen_sample); offset is the place of
 * the value in the class's stats snapshot, for a sample function shared by the families
 * that show one uint64_t field as it is. */
typedef struct idgen__gen_family {
  const char *name, *type, *help;
  void (*sample)(idgen__generator *g, const struct idgen__gen_family *f, idgen__buf *out);
  size_t offset;
} idgen__gen_family;

typedef struct idgen__gen_class {
  idgen__kind kind;
  /* Makes the generator from its spec (checked by idgen__serve_config_check); one line
   * in err on failure (a lease that cannot be won at start, ...). */
  int (*open)(idgen__generator **out, const idgen__gen_spec *spec,
              const idgen__gen_env *env, char *err, size_t errlen);
  /* Numeric kinds: as idgen_gen_next_batch: n, or the count handed out before an error,
   * or a negative error if none. NULL for the text kinds. Thread-safe. */
  int64_t (*next_batch)(idgen__generator *g, uint64_t *ids, size_t n);
  /* Kinds with contiguous numbers (segment): up to n of them in one reservation, as
   * idgen__segment_next_range. NULL for the others (RANGE is refused). Thread-safe. */
  int (*next_range)(idgen__generator *g, uint64_t n, uint64_t *first, uint64_t *count,
                    uint64_t *stride);
  /* Text kinds: one ID into out (NUL-terminated); its length or a negative error. NULL
   * for the numeric kinds. Thread-safe. */
  int (*next_text)(idgen__generator *g, char *out, size_t outlen);
  /* 1 if it hands out IDs now; else 0 with the reason (one line) in reason. */
  int (*ready)(idgen__generator *g, char *reason, size_t reasonlen);
  /* IDs handed out so far. */
  uint64_t (*issued)(idgen__generator *g);
  /* /v1/info: its fields as ",\"key\":value..." (after "kind" and "ready"). */
  void (*info_json)(idgen__generator *g, idgen__buf *out);
  /* INFO of the default generator: its fields as "key:value\r\n" lines. */
  void (*info_text)(idgen__generator *g, idgen__buf *out);
  /* INFO's "# Generators" line: a few fields as ",key=value" (no ',' '=' ':' inside). */
  void (*info_line)(idgen__generator *g, idgen__buf *out);
  /* The main thread's periodic look (every 200 ms): log changes of state. May be NULL. */
  void (*watch)(idgen__generator *g);
  /* SIGHUP's reload (server/reload.h): spec's live settings (its format) made ready for
   * live_swap in *out (heap; free() frees it), or *out NULL when they are the ones in
   * force. -1 with one line in err (nothing made). NULL for a kind with nothing live.
   * Main thread. */
  int (*live_make)(idgen__generator *g, const idgen__gen_spec *spec, void **out, char *err,
                   size_t errlen);
  /* Publishes what live_make made (an atomic store, release) and returns the object it
   * replaces, which a serving thread may still read: retire it (server/grace.h). */
  void *(*live_swap)(idgen__generator *g, void *made);
  /* Graceful end (final HWM, lease released), then free. */
  void (*close)(idgen__generator *g);
  const idgen__gen_family *families;
  size_t nfamilies;
} idgen__gen_class;

/* Every generator starts with this. */
struct idgen__generator {
  const idgen__gen_class *vtable;
  char name[IDGEN__GEN_NAME_MAX + 1];
  const idgen_layout *layout; /* snowflake: its layout (decode, friendly); else NULL */
  idgen_opaque *opaque;       /* its opaque permutation (tweak: its name), or NULL */
  /* A text form (`format:`): the text of a numeric ID, its length or a negative error;
   * and the ID back from a text, strictly (0 or IDGEN_EFORMAT). NULL without one. */
  int (*text_of)(const idgen__generator *g, uint64_t id, char *out, size_t outlen);
  int (*id_of)(const idgen__generator *g, const char *text, size_t len, uint64_t *id);
};

/* The classes, by kind. */
extern const idgen__gen_class idgen__gen_snowflake_class;
extern const idgen__gen_class idgen__gen_segment_class;
extern const idgen__gen_class idgen__gen_uuid7_class;
extern const idgen__gen_class idgen__gen_uuid4_class;
extern const idgen__gen_class idgen__gen_ulid_class;

/* Opens the generator a spec names, with its opaque key. */
int idgen__generator_open(idgen__generator **out, const idgen__gen_spec *spec,
                          const idgen__gen_env *env, char *err, size_t errlen);
/* Closes (gracefully) and frees; NULL is fine. */
void idgen__generator_close(idgen__generator *g);

static inline idgen__kind idgen__generator_kind(const idgen__generator *g) {
  return g->vtable->kind;
}
/* Whether IDs of g can be written in form: 1, or 0 with the reason (one line) in why.
 * Text kinds take no form; friendly needs a snowflake layout; opaque forms a key. */
int idgen__generator_form_ok(const idgen__generator *g, idgen__id_form form, char *why,
                             size_t whylen);
/* "\"kind\":\"..\",\"ready\":..[,\"not_ready_reason\":..],\"issued\":N" then the
 * class's fields: one generator's /v1/info object without its braces. */
void idgen__generator_info_json(idgen__generator *g, idgen__buf *out);
/* Its "# Generators" line of INFO: "gen_NAME:kind=..,ready=..,issued=..[,...]\r\n". */
void idgen__generator_info_text(idgen__generator *g, idgen__buf *out);
/* Every per-generator metric family, each with one sample set per generator. */
void idgen__generators_metrics(idgen__generator *const *gens, size_t n, idgen__buf *out);
/* generator="NAME" (names need no escaping: [A-Za-z0-9_.-]). */
void idgen__gen_label(const idgen__generator *g, idgen__buf *out);
/* One sample of family f: f->name{generator="NAME"<labels>} v. */
void idgen__gen_sample(idgen__generator *g, const idgen__gen_family *f, const char *labels,
                       double v, idgen__buf *out);
/* The uint64_t at f->offset of a stats snapshot, as one sample without more labels. */
void idgen__gen_sample_u64(idgen__generator *g, const idgen__gen_family *f,
                           const void *stats, idgen__buf *out);
/* A Unix ms as ISO text ("null" when not positive), for the classes' info. */
void idgen__gen_add_time(idgen__buf *out, int64_t ms);
/* A latency histogram (idgen_lease_latency, the lease's buckets) as one family's
 * samples with extra labels (",backend=\"postgres\"" or ""). */
void idgen__gen_add_histogram(idgen__generator *g, const char *name, const char *labels,
                              const idgen_lease_latency *lat, idgen__buf *out);

#endif
