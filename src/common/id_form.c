/* id_form.c: IDs in the form a client asks for, plain or opaque; opaque keys from files. */
#include "common/id_form.h"

#include <stdio.h>
#include <string.h>

#define OPAQUE_PREFIX "opaque-"

int idgen__id_form_parse(const char *s, size_t len, idgen__id_form *out) {
  char name[24];
  if (!s || len >= sizeof name || memchr(s, 0, len))
    return IDGEN_EINVAL;
  size_t plen = strlen(OPAQUE_PREFIX);
  int opaque = len > plen && memcmp(s, OPAQUE_PREFIX, plen) == 0;
  size_t skip = opaque ? plen : 0;
  memcpy(name, s + skip, len - skip);
  name[len - skip] = 0;
  idgen_format format;
  if (idgen_format_parse(name, &format) < 0 || (opaque && format == IDGEN_FORMAT_FRIENDLY))
    return IDGEN_EINVAL;
  out->format = format;
  out->opaque = opaque;
  return 0;
}

int idgen__id_form_prepare(idgen__id_form form, const idgen_opaque *o, uint64_t *ids,
                           size_t n) {
  if (!form.opaque)
    return 0;
  return o ? idgen_opaque_encode_batch(o, ids, ids, n) : IDGEN_EINVAL;
}

static const char *key_problem(int rc) {
  switch (rc) {
  case IDGEN_EEMPTY:
  case IDGEN_ECHAR:
  case IDGEN_ELENGTH:
    return "want 32 or 64 hex digits (a 128- or 256-bit key) and at most a newline "
           "(`idgen opaque keygen FILE` writes one)";
  default:
    return idgen_strerror(rc);
  }
}

int idgen__opaque_open(const char *option, const char *path, const char *tweak,
                       size_t tweaklen, idgen_opaque **out, char *err, size_t errlen) {
  uint8_t key[IDGEN_OPAQUE_KEY_MAX];
  size_t keylen = 0;
  int rc = idgen_opaque_key_load(path, key, &keylen);
  if (rc < 0) {
    snprintf(err, errlen, "%s %s: %s", option, path, key_problem(rc));
    return rc;
  }
  rc = idgen_opaque_new(out, key, keylen, (const uint8_t *)tweak, tweaklen);
  explicit_bzero(key, sizeof key);
  if (rc < 0)
    snprintf(err, errlen, "%s %s: %s", option, path, idgen_strerror(rc));
  return rc;
}
