/* decode_json.c: `idgen decode --json`'s object, built in one place. */
#include "server/decode_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "idgen/error.h"

static int append(char *out, size_t outlen, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int append(char *out, size_t outlen, size_t *pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + *pos, outlen - *pos, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= outlen - *pos)
    return IDGEN_EBUFSIZE;
  *pos += (size_t)n;
  return 0;
}

int idgen__decode_json(const idgen_layout *layout, uint64_t id, char *out, size_t outlen) {
  idgen_parts parts;
  int rc = idgen_decompose(layout, id, &parts);
  if (rc < 0)
    return rc;
  char when[40];
  rc = idgen_format_time(parts.time_ms, when, sizeof when);
  if (rc < 0)
    return rc;
  char tmp[IDGEN_DECODE_JSON_MAX];
  size_t pos = 0;
  /* Layout and field names come from presets or validated specs: plain words. */
  rc = append(tmp, sizeof tmp, &pos,
              "{\"id\":\"%" PRIu64
              "\",\"layout\":\"%s\",\"time\":\"%s\",\"time_ms\":%" PRId64 ",\"fields\":{",
              id, layout->name, when, parts.time_ms);
  size_t node = 0;
  for (size_t i = 0; rc == 0 && i < layout->nfields; i++) {
    if (layout->fields[i].kind != IDGEN_FIELD_NODE)
      continue;
    rc = append(tmp, sizeof tmp, &pos, "\"%s\":%" PRIu64 ",", layout->fields[i].name,
                parts.node[node < IDGEN_LAYOUT_NODES_MAX ? node : 0]);
    node++;
  }
  if (rc == 0)
    rc = append(tmp, sizeof tmp, &pos, "\"sequence\":%" PRIu64 "}}", parts.seq);
  if (rc < 0)
    return rc;
  if (pos + 1 > outlen)
    return IDGEN_EBUFSIZE;
  memcpy(out, tmp, pos + 1);
  return (int)pos;
}
