/* cli_common.c: what every subcommand shares: errors, number and layout parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_error(int status, const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "idgen%s%s: ", cmd && *cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return status;
}

int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  if (!text || !*text)
    return IDGEN_EEMPTY;
  uint64_t v = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9')
      return IDGEN_ECHAR;
    unsigned digit = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return IDGEN_EOVERFLOW;
    v = v * 10 + digit;
  }
  if (text[0] == '0' && text[1])
    return IDGEN_EFORMAT;
  if (v < min || v > max)
    return IDGEN_EOVERFLOW;
  *out = v;
  return 0;
}

int cli_layout(const char *spec, idgen_layout *out, char *err, size_t errlen) {
  if (!spec)
    spec = "snowflake";
  return idgen_layout_parse(spec, strlen(spec), cli_now_ms(), out, err, errlen);
}

int64_t cli_now_ms(void) {
  return idgen_wall_ns() / 1000000;
}
