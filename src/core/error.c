/* error.c: names and sentences for idgen's error codes and negated errno values, and
 * the one formatter of a failed call's message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core_internal.h"
#include "idgen/error.h"

const char *idgen_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define IDGEN_ERROR_TEXT(name, value, text)                                                \
  case IDGEN_##name:                                                                       \
    return text;
    IDGEN_ERRORS(IDGEN_ERROR_TEXT)
#undef IDGEN_ERROR_TEXT
  default:
    break;
  }
  if (err < 0 && err > -4096)
    return strerror(-err); /* glibc returns a static string for every value */
  return "unknown error";
}

const char *idgen_err_name(int err) {
  switch (err) {
  case 0:
    return "OK";
#define IDGEN_ERROR_NAME(name, value, text)                                                \
  case IDGEN_##name:                                                                       \
    return "IDGEN_" #name;
    IDGEN_ERRORS(IDGEN_ERROR_NAME)
#undef IDGEN_ERROR_NAME
  default:
    break;
  }
  if (err < 0 && err > -4096) {
    const char *name = strerrorname_np(-err);
    if (name)
      return name;
  }
  return "UNKNOWN";
}

int idgen__fail(int rc, char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return rc;
}
