/* password.c: reads a password file (--etcd-password-file, --zk-password-file): one line,
 * its line end dropped, wiped from the stack after use. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lease/lease_internal.h"

int idgen__password_file_read(const char *opt, const char *path, char *out, size_t cap,
                              char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (err && errlen)
      snprintf(err, errlen, "--%s %s: %s", opt, path, strerror(errno));
    return IDGEN_EINVAL;
  }
  char buf[IDGEN_LEASE_NAME_MAX * 4 + 2];
  size_t want = cap + 1 < sizeof buf ? cap + 1 : sizeof buf - 1; /* one past: too long */
  size_t n = fread(buf, 1, want, f);
  fclose(f);
  buf[n] = '\0';
  if (n && buf[n - 1] == '\n')
    buf[--n] = '\0';
  if (n && buf[n - 1] == '\r')
    buf[--n] = '\0';
  const char *why = !n                     ? "empty"
                    : n >= cap             ? "too long"
                    : strlen(buf) != n     ? "holds a NUL byte"
                    : strpbrk(buf, "\r\n") ? "more than one line"
                                           : NULL;
  if (why) {
    if (err && errlen)
      snprintf(err, errlen, "--%s %s: %s", opt, path, why);
    memset(buf, 0, sizeof buf);
    return IDGEN_EINVAL;
  }
  memcpy(out, buf, n + 1);
  memset(buf, 0, sizeof buf);
  return 0;
}
