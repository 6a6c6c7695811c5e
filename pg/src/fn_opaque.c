/* fn_opaque.c: opaque IDs in SQL (libidgen-opaque, docs/opaque.md): idgen_opaque(id)
 * and idgen_unopaque(opaque), under the key in idgen.opaque_key_file and the tweak
 * "default", so they agree with `idgen opaque` and idgen serve's default generator. */
#include "idgen_pg.h"

#include "fmgr.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(sql_idgen_opaque);
PG_FUNCTION_INFO_V1(sql_idgen_unopaque);

#define TWEAK "default"

/* This backend's permutation, and the key file it was made from: made again when the
 * setting names another file (a reload). */
static idgen_opaque *permutation;
static char *loaded_from;

static const idgen_opaque *get_permutation(void) {
  const char *path = idgen_pg_opaque_key_file;
  if (!path || !*path)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("idgen: no key for opaque IDs"),
                    errhint("Set idgen.opaque_key_file to a key file (idgen opaque keygen "
                            "FILE writes one) and reload.")));
  if (permutation && strcmp(loaded_from, path) == 0)
    return permutation;
  uint8_t key[IDGEN_OPAQUE_KEY_MAX];
  size_t keylen = 0;
  int rc = idgen_opaque_key_load(path, key, &keylen);
  if (rc < 0)
    ereport(ERROR,
            (errcode(rc > -1000 ? ERRCODE_UNDEFINED_FILE : ERRCODE_CONFIG_FILE_ERROR),
             errmsg("idgen: key file \"%s\" (idgen.opaque_key_file): %s", path,
                    idgen_strerror(rc)),
             errhint("A key file holds 32 or 64 hex digits and at most one newline.")));
  idgen_opaque *made = NULL;
  rc = idgen_opaque_new(&made, key, keylen, (const uint8_t *)TWEAK, strlen(TWEAK));
  explicit_bzero(key, sizeof key);
  if (rc < 0)
    ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
                    errmsg("idgen: opaque IDs: %s", idgen_strerror(rc))));
  idgen_opaque_free(permutation);
  free(loaded_from);
  permutation = made;
  loaded_from = strdup(path);
  if (!loaded_from) {
    idgen_opaque_free(permutation);
    permutation = NULL;
    ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
  }
  return permutation;
}

static Datum permute(FunctionCallInfo fcinfo, int forward) {
  int64 in = PG_GETARG_INT64(0);
  if (in < 0)
    ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                    errmsg("idgen: %lld is negative: IDs and opaque IDs are 0 to 2^63 - 1",
                           (long long)in)));
  const idgen_opaque *p = get_permutation();
  uint64_t out;
  int rc = forward ? idgen_opaque_encode(p, (uint64_t)in, &out)
                   : idgen_opaque_decode(p, (uint64_t)in, &out);
  if (rc < 0)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("idgen: opaque IDs: %s", idgen_strerror(rc))));
  PG_RETURN_INT64((int64)out);
}

Datum sql_idgen_opaque(PG_FUNCTION_ARGS) {
  return permute(fcinfo, 1);
}

Datum sql_idgen_unopaque(PG_FUNCTION_ARGS) {
  return permute(fcinfo, 0);
}
