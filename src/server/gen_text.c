/* gen_text.c: the kinds whose IDs are text: uuid7 (RFC 9562, rising within the
 * generator), uuid4 (random) and ulid (monotonic within the generator). No state to
 * lease: always ready. */
#include <stdatomic.h>
#include <stdlib.h>

#include "server/generator.h"

typedef struct text_gen {
  idgen__generator base;
  idgen_uuid7_gen *uuid7; /* uuid7 only */
  idgen_ulid_gen *ulid;   /* ulid only */
  idgen_random *random;
  _Atomic uint64_t issued;
} text_gen;

static text_gen *of(idgen__generator *g) {
  return (text_gen *)g;
}

static void text_close(idgen__generator *g) {
  text_gen *t = of(g);
  idgen_uuid7_free(t->uuid7);
  idgen_ulid_free(t->ulid);
  free(t);
}

/* One of the three classes, by the spec's kind. */
static int text_open(idgen__generator **out, const idgen__gen_spec *spec,
                     const idgen__gen_env *env, char *err, size_t errlen) {
  const idgen__gen_class *class = spec->kind == KIND_UUID7   ? &idgen__gen_uuid7_class
                                  : spec->kind == KIND_UUID4 ? &idgen__gen_uuid4_class
                                                             : &idgen__gen_ulid_class;
  text_gen *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  t->base.vtable = class;
  t->random = env->random;
  int rc = 0;
  if (class->kind == KIND_UUID7) {
    idgen_uuid7_config c = {.clock = env->clock, .random = env->random};
    rc = idgen_uuid7_new(&t->uuid7, &c);
  } else if (class->kind == KIND_ULID) {
    idgen_ulid_config c = {.clock = env->clock, .random = env->random, .monotonic = 1};
    rc = idgen_ulid_new(&t->ulid, &c);
  }
  if (rc < 0) {
    snprintf(err, errlen, "%s: %s", idgen__kind_name(class->kind), idgen_strerror(rc));
    text_close(&t->base);
    return rc;
  }
  *out = &t->base;
  return 0;
}

static int counted(text_gen *t, int rc) {
  if (rc >= 0)
    atomic_fetch_add_explicit(&t->issued, 1, memory_order_relaxed);
  return rc;
}

static int uuid7_next(idgen__generator *g, char *out, size_t outlen) {
  idgen_uuid u;
  int rc = idgen_uuid7_next(of(g)->uuid7, &u);
  return counted(of(g), rc < 0 ? rc : idgen_uuid_format(u, out, outlen));
}
static int uuid4_next(idgen__generator *g, char *out, size_t outlen) {
  idgen_uuid u;
  int rc = idgen_uuid4(of(g)->random, &u);
  return counted(of(g), rc < 0 ? rc : idgen_uuid_format(u, out, outlen));
}
static int ulid_next(idgen__generator *g, char *out, size_t outlen) {
  idgen_ulid u;
  int rc = idgen_ulid_next(of(g)->ulid, &u);
  return counted(of(g), rc < 0 ? rc : idgen_ulid_format(u, out, outlen));
}

static int text_ready(idgen__generator *g, char *reason, size_t reasonlen) {
  (void)g, (void)reason, (void)reasonlen;
  return 1;
}

static uint64_t text_issued(idgen__generator *g) {
  return atomic_load_explicit(&of(g)->issued, memory_order_relaxed);
}

/* info_json, info_text, info_line: a text kind has no fields beyond the common ones. */
static void no_fields(idgen__generator *g, idgen__buf *out) {
  (void)g, (void)out;
}

#define TEXT_CLASS(KIND, NEXT)                                                             \
  {                                                                                        \
    .kind = KIND, .open = text_open, .next_text = NEXT, .ready = text_ready,               \
    .issued = text_issued, .info_json = no_fields, .info_text = no_fields,                 \
    .info_line = no_fields, .close = text_close                                            \
  }

const idgen__gen_class idgen__gen_uuid7_class = TEXT_CLASS(KIND_UUID7, uuid7_next);
const idgen__gen_class idgen__gen_uuid4_class = TEXT_CLASS(KIND_UUID4, uuid4_next);
const idgen__gen_class idgen__gen_ulid_class = TEXT_CLASS(KIND_ULID, ulid_next);
