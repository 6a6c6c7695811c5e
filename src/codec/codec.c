/* codec.c: the public codec calls: format names, dispatch, and telling forms apart. */
#include <string.h>

#include "codec/codec_internal.h"

static const char *const names[] = {"decimal", "base62", "base32", "hex", "friendly"};
#define NFORMATS (sizeof names / sizeof names[0])

int idgen_format_parse(const char *name, idgen_format *out) {
  if (!name || !out)
    return IDGEN_EINVAL;
  for (size_t i = 0; i < NFORMATS; i++)
    if (!strcmp(name, names[i])) {
      *out = (idgen_format)i;
      return 0;
    }
  return IDGEN_EINVAL;
}

const char *idgen_format_name(idgen_format format) {
  if ((unsigned)format < NFORMATS)
    return names[format];
  return "unknown";
}

int idgen_id_format(uint64_t id, idgen_format format, const idgen_layout *layout, char *out,
                    size_t outlen) {
  if (!out)
    return IDGEN_EINVAL;
  if (id > IDGEN__ID_MAX)
    return IDGEN_ESIGN;
  switch (format) {
  case IDGEN_FORMAT_DECIMAL:
    return idgen__decimal_format(id, out, outlen);
  case IDGEN_FORMAT_BASE62:
    return outlen > IDGEN__BASE62_WIDTH ? idgen__base62_format(id, out, outlen)
                                        : IDGEN_EBUFSIZE;
  case IDGEN_FORMAT_BASE32:
    return outlen > IDGEN__BASE32_WIDTH ? idgen__base32_format(id, out, outlen)
                                        : IDGEN_EBUFSIZE;
  case IDGEN_FORMAT_HEX:
    return outlen > IDGEN__HEX_WIDTH ? idgen__hex_format(id, out, outlen) : IDGEN_EBUFSIZE;
  case IDGEN_FORMAT_FRIENDLY:
    return layout ? idgen__friendly_format(id, layout, out, outlen) : IDGEN_EINVAL;
  }
  return IDGEN_EINVAL;
}

int idgen_id_parse(const char *s, size_t len, idgen_format format,
                   const idgen_layout *layout, uint64_t *id) {
  if ((!s && len) || !id)
    return IDGEN_EINVAL;
  if (len == 0)
    return IDGEN_EEMPTY;
  switch (format) {
  case IDGEN_FORMAT_DECIMAL:
    return idgen__decimal_parse(s, len, id);
  case IDGEN_FORMAT_BASE62:
    return idgen__base62_parse(s, len, id);
  case IDGEN_FORMAT_BASE32:
    return idgen__base32_parse(s, len, id);
  case IDGEN_FORMAT_HEX:
    return idgen__hex_parse(s, len, id);
  case IDGEN_FORMAT_FRIENDLY:
    return layout ? idgen__friendly_parse(s, len, layout, id) : IDGEN_EINVAL;
  }
  return IDGEN_EINVAL;
}

/* Which form a text has, by shape alone (docs/codecs.md, "Telling forms apart"). */
static int guess(const char *s, size_t len, idgen_format *out) {
  int digits = 1, dash = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '-')
      dash = 1;
    else if (s[i] < '0' || s[i] > '9')
      digits = 0;
  }
  if (dash) {
    *out = IDGEN_FORMAT_FRIENDLY;
    return 0;
  }
  /* Digits without a leading zero are a decimal; the fixed-width forms of small
   * values are all digits too, but always start with '0'. */
  if (digits && (len == 1 || s[0] != '0')) {
    *out = IDGEN_FORMAT_DECIMAL;
    return 0;
  }
  switch (len) {
  case IDGEN__BASE62_WIDTH:
    *out = IDGEN_FORMAT_BASE62;
    return 0;
  case IDGEN__BASE32_WIDTH:
    *out = IDGEN_FORMAT_BASE32;
    return 0;
  case IDGEN__HEX_WIDTH:
    *out = IDGEN_FORMAT_HEX;
    return 0;
  default:
    break;
  }
  if (digits) { /* a decimal with a leading zero: say so */
    *out = IDGEN_FORMAT_DECIMAL;
    return 0;
  }
  return IDGEN_EFORMAT;
}

int idgen_id_parse_any(const char *s, size_t len, const idgen_layout *layout, uint64_t *id,
                       idgen_format *which) {
  if ((!s && len) || !id)
    return IDGEN_EINVAL;
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  idgen_format f;
  int rc = guess(s, len, &f);
  if (rc < 0)
    return rc;
  if (f == IDGEN_FORMAT_FRIENDLY && !layout)
    return IDGEN_EFORMAT;
  if ((rc = idgen_id_parse(s, len, f, layout, id)) < 0)
    return rc;
  if (which)
    *which = f;
  return 0;
}
