/* backend.c: what the segment backends share: opening one by kind, names, why(). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "segment/segment.h"

typedef int (*backend_new_fn)(idgen__segment_backend **out, const char *dsn,
                              int64_t timeout_ms, char *err, size_t errlen);
/* A backend that takes TLS and auth options of the lease config too (etcd, redis). */
typedef int (*backend_new_with_fn)(idgen__segment_backend **out, const char *dsn,
                                   int64_t timeout_ms, const idgen_lease_config *access,
                                   char *err, size_t errlen);

static const struct {
  const char *kind;
  backend_new_fn open;
  backend_new_with_fn open_with;
} backends[] = {
    {"file", idgen__segment_file_new, NULL},
    {"postgres", idgen__segment_postgres_new, NULL},
    {"etcd", NULL, idgen__segment_etcd_new},
    {"mariadb", idgen__segment_mariadb_new, NULL},
    {"redis", NULL, idgen__segment_redis_new},
};

const char *idgen__segment_backend_kinds(void) {
  return "file, postgres, etcd, mariadb, redis";
}

int idgen__segment_backend_open(idgen__segment_backend **out, const char *kind,
                                const char *dsn, int64_t timeout_ms, char *err,
                                size_t errlen) {
  return idgen__segment_backend_open_with(out, kind, dsn, timeout_ms, NULL, err, errlen);
}

void idgen__segment_access_copy(idgen_lease_config *dst, const idgen_lease_config *src) {
  memcpy(dst->etcd_cacert, src->etcd_cacert, sizeof dst->etcd_cacert);
  memcpy(dst->etcd_cert, src->etcd_cert, sizeof dst->etcd_cert);
  memcpy(dst->etcd_key, src->etcd_key, sizeof dst->etcd_key);
  memcpy(dst->etcd_user, src->etcd_user, sizeof dst->etcd_user);
  memcpy(dst->etcd_password_file, src->etcd_password_file, sizeof dst->etcd_password_file);
  memcpy(dst->etcd_password, src->etcd_password, sizeof dst->etcd_password);
  memcpy(dst->redis_cacert, src->redis_cacert, sizeof dst->redis_cacert);
  memcpy(dst->redis_cert, src->redis_cert, sizeof dst->redis_cert);
  memcpy(dst->redis_key, src->redis_key, sizeof dst->redis_key);
  memcpy(dst->redis_user, src->redis_user, sizeof dst->redis_user);
  memcpy(dst->redis_password_file, src->redis_password_file,
         sizeof dst->redis_password_file);
  memcpy(dst->redis_password, src->redis_password, sizeof dst->redis_password);
}

int idgen__segment_backend_open_with(idgen__segment_backend **out, const char *kind,
                                     const char *dsn, int64_t timeout_ms,
                                     const idgen_lease_config *access, char *err,
                                     size_t errlen) {
  if (timeout_ms == 0)
    timeout_ms = 5000;
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
    if (strcmp(kind, backends[i].kind))
      continue;
    if (!dsn || !*dsn) {
      snprintf(err, errlen, "segment backend %s: no DSN given", kind);
      return IDGEN_EINVAL;
    }
    if (strlen(dsn) >= IDGEN_SEGMENT_DSN_MAX) {
      snprintf(err, errlen, "segment backend %s: DSN longer than %d bytes", kind,
               IDGEN_SEGMENT_DSN_MAX - 1);
      return IDGEN_EINVAL;
    }
    if (timeout_ms < 0) {
      snprintf(err, errlen, "segment backend %s: negative timeout", kind);
      return IDGEN_EINVAL;
    }
    if (backends[i].open_with)
      return backends[i].open_with(out, dsn, timeout_ms, access, err, errlen);
    return backends[i].open(out, dsn, timeout_ms, err, errlen);
  }
  snprintf(err, errlen, "unknown segment backend '%s' (%s)", kind,
           idgen__segment_backend_kinds());
  return IDGEN_EINVAL;
}

int idgen__segment_name_check(const char *name) {
  size_t len = strlen(name);
  if (len < 1 || len > IDGEN_SEGMENT_NAME_MAX || name[0] == '.')
    return IDGEN_EINVAL;
  /* A period key, NAME:NUMBER: the name, then 4, 6 or 8 digits. */
  const char *colon = strchr(name, ':');
  if (colon) {
    size_t digits = len - (size_t)(colon - name) - 1;
    if (colon == name || (digits != 4 && digits != 6 && digits != 8))
      return IDGEN_EINVAL;
    for (size_t i = 1; i <= digits; i++)
      if (colon[i] < '0' || colon[i] > '9')
        return IDGEN_EINVAL;
    len = (size_t)(colon - name);
  }
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.' || c == '-'))
      return IDGEN_EINVAL;
  }
  return 0;
}

int idgen__segment_why(idgen__segment_backend *b, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->why, sizeof b->why, fmt, ap);
  va_end(ap);
  return err;
}

int idgen__segment_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                             uint64_t step) {
  if (b->vtable->key_start)
    return b->vtable->key_start(b, ns, key, step);
  return b->vtable->init(b, key, step, 0, 0);
}

int idgen__segment_period_check(idgen__segment_backend *b, const char *name,
                                idgen__period_kind kind) {
  return b->vtable->period_check ? b->vtable->period_check(b, name, kind) : 0;
}

int idgen__segment_period_key(const char *key, char *family, size_t familylen,
                              uint64_t *number) {
  const char *colon = strchr(key, ':');
  if (!colon)
    return 0;
  size_t digits = strlen(colon + 1);
  const char *pattern = digits == 4 ? "YYYY" : digits == 6 ? "YYYYMM" : "YYYYMMDD";
  uint64_t v = 0;
  for (const char *c = colon + 1; *c; c++)
    v = v * 10 + (uint64_t)(*c - '0'); /* idgen__segment_name_check: 4, 6 or 8 digits */
  snprintf(family, familylen, "%.*s:%s", (int)(colon - key), key, pattern);
  *number = v;
  return 1;
}

int idgen__segment_behind(idgen__segment_backend *b, const char *key, uint64_t newest,
                          const char *record) {
  const char *colon = strchr(key, ':');
  int len = colon ? (int)(colon - key) : (int)strlen(key);
  return idgen__segment_why(b, IDGEN_EPROTO,
                            "%s: period %s is behind %" PRIu64 ", the newest period a "
                            "server of '%.*s' entered (%s): refused, not made (again) at 1",
                            b->vtable->name, colon ? colon + 1 : key, newest, len, key,
                            record);
}
