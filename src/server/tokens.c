/* tokens.c: the token files read into a set, found in constant time, and compared
 * across a reload. */
#include "server/tokens.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  idgen__token_spec spec; /* generators: an owned copy */
  char value[IDGEN_CFG_STR];
  size_t len;
  idgen__quota quota;
  size_t slot;
  uint64_t ident;
  _Atomic uint64_t *bucket;
} entry;

struct idgen__token_set {
  entry *v;
  size_t n;
  uint64_t serial;
};

/* A bucket to a cache line: two busy tokens never share one. */
typedef struct bucket {
  _Atomic uint64_t tat;
  char pad[64 - sizeof(uint64_t)];
} bucket;

struct idgen__token_reg {
  char names[IDGEN__TOKEN_SLOTS][IDGEN__GEN_NAME_MAX + 1];
  _Atomic size_t count;
  bucket buckets[IDGEN__TOKEN_SLOTS];
  idgen__quota made_under[IDGEN__TOKEN_SLOTS]; /* the quota each TAT was made under */
  uint64_t next_ident, next_serial;            /* main thread */
};

int idgen__token_reg_new(idgen__token_reg **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : -1;
}

void idgen__token_reg_free(idgen__token_reg *reg) {
  free(reg);
}

size_t idgen__token_reg_count(const idgen__token_reg *reg) {
  return reg ? atomic_load_explicit(&reg->count, memory_order_acquire) : 0;
}

const char *idgen__token_reg_name(const idgen__token_reg *reg, size_t slot) {
  return reg->names[slot];
}

/* The slot of name, registered if new; -1 when every slot is taken. Main thread. */
static long reg_slot(idgen__token_reg *reg, const char *name) {
  size_t n = atomic_load_explicit(&reg->count, memory_order_relaxed);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(reg->names[i], name))
      return (long)i;
  if (n == IDGEN__TOKEN_SLOTS)
    return -1;
  snprintf(reg->names[n], sizeof reg->names[n], "%s", name);
  atomic_store_explicit(&reg->count, n + 1, memory_order_release);
  return (long)n;
}

int idgen__token_read(const char *what, const char *path, char *out, size_t outsize,
                      char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return -1;
  }
  memset(out, 0, outsize);
  size_t n = fread(out, 1, outsize - 1, f);
  int more = fgetc(f) != EOF, failed = ferror(f);
  fclose(f);
  out[n] = 0;
  while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ' ||
               out[n - 1] == '\t'))
    out[--n] = 0;
  int bad = failed || more || n == 0 || strlen(out) != n;
  for (size_t i = 0; !bad && i < n; i++)
    bad = (unsigned char)out[i] <= ' ' || (unsigned char)out[i] >= 0x7f;
  if (bad)
    snprintf(err, errlen, "%s %s: want one token of %d..%zu printable characters", what,
             path, IDGEN_SERVE_TOKEN_MIN, outsize - 1);
  else if (n < IDGEN_SERVE_TOKEN_MIN)
    snprintf(err, errlen,
             "%s %s: the token has %zu characters, %d at least are needed "
             "(one way: head -c 24 /dev/urandom | base64)",
             what, path, n, IDGEN_SERVE_TOKEN_MIN);
  if (bad || n < IDGEN_SERVE_TOKEN_MIN) {
    memset(out, 0, outsize);
    return -1;
  }
  return 0;
}

/* 1 if a[0..al) == b[0..bl), in time that depends on al alone. */
static unsigned same_bytes(const char *a, size_t al, const char *b, size_t bl) {
  unsigned diff = (unsigned)(al != bl);
  for (size_t i = 0; i < al; i++)
    diff |= (unsigned)(unsigned char)a[i] ^ (unsigned)(unsigned char)(i < bl ? b[i] : 0);
  return (unsigned)(diff == 0);
}

void idgen__token_set_free(idgen__token_set *set) {
  if (!set)
    return;
  for (size_t i = 0; i < set->n; i++) {
    free(set->v[i].spec.generators);
    memset(set->v[i].value, 0, sizeof set->v[i].value);
  }
  free(set->v);
  free(set);
}

/* Each token's slot, identity and bucket: a name and value old had keep old's identity;
 * a bucket whose quota changed is rescaled (idgen__quota_rescale). Only once the whole
 * set is read: a failed reload leaves every bucket as it was. */
static int adopt(idgen__token_set *set, idgen__token_reg *reg, const idgen__token_set *old,
                 uint64_t now_ns, char *err, size_t errlen) {
  for (size_t i = 0; i < set->n; i++) {
    long slot = reg_slot(reg, set->v[i].spec.name);
    if (slot < 0) {
      snprintf(err, errlen,
               "more than %d token names over this server's life: restart it to forget "
               "the old ones",
               IDGEN__TOKEN_SLOTS);
      return -1;
    }
    set->v[i].slot = (size_t)slot;
  }
  set->serial = ++reg->next_serial;
  for (size_t i = 0; i < set->n; i++) {
    entry *e = &set->v[i];
    e->ident = 0;
    for (size_t j = 0; old && j < old->n && !e->ident; j++)
      if (!strcmp(old->v[j].spec.name, e->spec.name) &&
          same_bytes(old->v[j].value, old->v[j].len, e->value, e->len) &&
          !strcmp(old->v[j].spec.cert_subject, e->spec.cert_subject) &&
          !strcmp(old->v[j].spec.cert_san, e->spec.cert_san))
        e->ident = old->v[j].ident;
    if (!e->ident)
      e->ident = ++reg->next_ident;
    bucket *b = &reg->buckets[e->slot];
    e->bucket = &b->tat;
    idgen__quota *was = &reg->made_under[e->slot];
    if (memcmp(was, &e->quota, sizeof *was)) {
      uint64_t tat = atomic_load(&b->tat), to;
      do
        to = idgen__quota_rescale(tat, now_ns, was, &e->quota);
      while (!atomic_compare_exchange_weak(&b->tat, &tat, to));
      *was = e->quota;
    }
  }
  return 0;
}

/* 1 if two teams' cert_subject (or cert_san) are set and equal. */
static int same_cert(const char *a, const char *b) {
  return a[0] && !strcmp(a, b);
}

/* A set of n tokens from specs (copied), each read from its file, or taken from
 * preset[i] when that is not NULL (a token without a file: the tests' fixtures). */
static int load(const idgen__token_spec *const *specs, const char *const *preset, size_t n,
                idgen__token_reg *reg, const idgen__token_set *old, uint64_t now_ns,
                idgen__token_set **out, char *err, size_t errlen) {
  idgen__token_set *set = calloc(1, sizeof *set);
  if (set)
    set->v = calloc(n ? n : 1, sizeof *set->v);
  if (!set || !set->v) {
    free(set);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    entry *e = &set->v[set->n];
    e->spec = *specs[i];
    e->spec.generators = NULL;
    set->n++;
    if (idgen__quota_init(&e->quota, e->spec.rate, e->spec.burst) < 0) {
      snprintf(err, errlen, "tokens.%s: rate or burst out of range", e->spec.name);
      goto fail;
    }
    if (specs[i]->ngenerators) {
      e->spec.generators = calloc(specs[i]->ngenerators, sizeof *e->spec.generators);
      if (!e->spec.generators) {
        snprintf(err, errlen, "out of memory");
        goto fail;
      }
      memcpy(e->spec.generators, specs[i]->generators,
             specs[i]->ngenerators * sizeof *e->spec.generators);
    }
    char what[IDGEN__GEN_NAME_MAX + 32];
    if (e->spec.line)
      snprintf(what, sizeof what, "tokens.%s.file", e->spec.name);
    else
      snprintf(what, sizeof what, "--auth-token-file");
    if (preset[i])
      snprintf(e->value, sizeof e->value, "%s", preset[i]);
    else if (e->spec.file[0] && idgen__token_read(what, e->spec.file, e->value,
                                                  sizeof e->value, err, errlen) < 0)
      goto fail;
    e->len = strlen(e->value); /* 0: a team of a certificate only */
    for (size_t j = 0; j < i; j++) {
      if (same_cert(set->v[j].spec.cert_subject, e->spec.cert_subject) ||
          same_cert(set->v[j].spec.cert_san, e->spec.cert_san)) {
        snprintf(err, errlen,
                 "tokens '%s' and '%s' name the same certificate (%s): a connection could "
                 "not tell them apart",
                 set->v[j].spec.name, e->spec.name,
                 same_cert(set->v[j].spec.cert_subject, e->spec.cert_subject)
                     ? e->spec.cert_subject
                     : e->spec.cert_san);
        goto fail;
      }
      if (e->len && same_bytes(set->v[j].value, set->v[j].len, e->value, e->len)) {
        snprintf(err, errlen,
                 "tokens '%s' and '%s' hold the same token (%s, %s): a request could not "
                 "tell them apart",
                 set->v[j].spec.name, e->spec.name, set->v[j].spec.file, e->spec.file);
        goto fail;
      }
    }
  }
  if (reg && adopt(set, reg, old, now_ns, err, errlen) < 0)
    goto fail;
  *out = set;
  return 0;
fail:
  idgen__token_set_free(set);
  return -1;
}

int idgen__token_set_load(const idgen__serve_config *cfg, idgen__token_reg *reg,
                          const idgen__token_set *old, uint64_t now_ns,
                          idgen__token_set **out, char *err, size_t errlen) {
  *out = NULL;
  idgen__token_spec auth = {.all_generators = 1, .decode = 1};
  snprintf(auth.name, sizeof auth.name, "%s", IDGEN__AUTH_TOKEN_NAME);
  snprintf(auth.file, sizeof auth.file, "%s", cfg->auth_token_file);
  const idgen__token_spec *specs[IDGEN__TOKENS_MAX + 1];
  const char *preset[IDGEN__TOKENS_MAX + 1] = {0};
  size_t n = 0;
  if (cfg->auth_token_file[0] || cfg->auth_token[0]) {
    if (!cfg->auth_token_file[0])
      preset[n] = cfg->auth_token;
    specs[n++] = &auth;
  }
  for (size_t i = 0; i < cfg->ntokens && n < IDGEN__TOKENS_MAX + 1; i++)
    specs[n++] = &cfg->tokens[i];
  return n ? load(specs, preset, n, reg, old, now_ns, out, err, errlen) : 0;
}

int idgen__token_set_reload(const idgen__token_set *old, idgen__token_reg *reg,
                            uint64_t now_ns, idgen__token_set **out, char *err,
                            size_t errlen) {
  const idgen__token_spec *specs[IDGEN__TOKENS_MAX + 1];
  const char *preset[IDGEN__TOKENS_MAX + 1] = {0};
  size_t n = 0;
  for (size_t i = 0; i < old->n && n < IDGEN__TOKENS_MAX + 1; i++) {
    preset[n] = old->v[i].spec.file[0] ? NULL : old->v[i].value;
    specs[n++] = &old->v[i].spec;
  }
  return load(specs, preset, n, reg, old, now_ns, out, err, errlen);
}

uint64_t idgen__token_set_serial(const idgen__token_set *set) {
  return set->serial;
}

size_t idgen__token_set_count(const idgen__token_set *set) {
  return set ? set->n : 0;
}

const idgen__token_spec *idgen__token_set_spec(const idgen__token_set *set, size_t i) {
  return &set->v[i].spec;
}

long idgen__token_set_find(const idgen__token_set *set, const char *tok, size_t len) {
  long found = -1;
  for (size_t i = 0; set && i < set->n; i++) {
    /* Every token is compared, and the match picked by a mask, not a branch; a team
     * without a value (a certificate only) is no match for an empty token. */
    long mask = -(long)(same_bytes(set->v[i].value, set->v[i].len, tok, len) &
                        (unsigned)(set->v[i].len != 0));
    found = (found & ~mask) | ((long)i & mask);
  }
  return found;
}

void idgen__token_set_ref(const idgen__token_set *set, size_t i, idgen__token_ref *out) {
  const entry *e = &set->v[i];
  *out = (idgen__token_ref){e->ident, e->quota.interval_ns ? &e->quota : NULL, e->bucket,
                            e->slot};
}

long idgen__token_set_by_ident(const idgen__token_set *set, uint64_t ident) {
  for (size_t j = 0; set && j < set->n; j++)
    if (set->v[j].ident == ident)
      return (long)j;
  return -1;
}

/* 1 if names holds the team's cert_subject as its subject or its cert_san among its SAN
 * entries. */
static int cert_matches(const idgen__token_spec *t, const idgen__cert_names *names) {
  if (t->cert_subject[0] && !strcmp(t->cert_subject, names->subject))
    return 1;
  for (size_t i = 0; t->cert_san[0] && i < names->nsans; i++)
    if (!strcmp(t->cert_san, names->sans[i]))
      return 1;
  return 0;
}

long idgen__token_set_find_cert(const idgen__token_set *set,
                                const idgen__cert_names *names) {
  long found = -1;
  for (size_t i = 0; set && names && i < set->n; i++) {
    if (!cert_matches(&set->v[i].spec, names))
      continue;
    if (found >= 0)
      return -1; /* two teams: neither */
    found = (long)i;
  }
  return found;
}

int idgen__token_covers(const idgen__token_spec *t, const char *name) {
  if (t->all_generators)
    return 1;
  for (size_t i = 0; i < t->ngenerators; i++)
    if (!strcmp(t->generators[i], name))
      return 1;
  return 0;
}
