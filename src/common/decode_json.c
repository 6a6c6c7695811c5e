/* decode_json.c: `idgen decode --json`'s objects, built in one place: 64-bit IDs,
 * UUIDs (v1, v6 and v7 with their time) and ULIDs. */
#include "common/decode_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "idgen/codec.h"
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

/* 100 ns intervals from 1582-10-15 (the Gregorian epoch of v1/v6) to 1970-01-01. */
#define GREGORIAN_TO_UNIX_100NS INT64_C(0x01B21DD213814000)

const char *idgen__wide_kind(const char *text, size_t len) {
  if (len == IDGEN_UUID_TEXT_LEN && text[8] == '-')
    return "UUID"; /* a friendly 64-bit ID has its first '-' at offset 17 */
  if (len == IDGEN_ULID_TEXT_LEN && !memchr(text, '-', len))
    return "ULID"; /* no 64-bit form is 26 chars long without a '-' */
  return NULL;
}

/* The time a UUID carries, if any: v7 (Unix ms), v1 and v6 (Gregorian 100 ns). */
static int uuid_time_ms(idgen_uuid u, int64_t *ms) {
  if (idgen_uuid_variant_of(u) != IDGEN_UUID_VARIANT_RFC)
    return 0;
  int version = idgen_uuid_version(u);
  uint64_t hi = 0;
  for (int i = 0; i < 8; i++)
    hi = hi << 8 | u.b[i];
  uint64_t ts;
  if (version == 7)
    return idgen_uuid7_time_ms(u, ms) == 0;
  if (version == 1) /* time_low(32) time_mid(16) ver time_high(12) */
    ts = (hi & 0xFFFu) << 48 | ((hi >> 16) & 0xFFFFu) << 32 | hi >> 32;
  else if (version == 6) /* time_high(32) time_mid(16) ver time_low(12) */
    ts = (hi >> 16) << 12 | (hi & 0xFFFu);
  else
    return 0;
  int64_t unix_100ns = (int64_t)ts - GREGORIAN_TO_UNIX_100NS;
  *ms = unix_100ns >= 0 ? unix_100ns / 10000 : -((-unix_100ns + 9999) / 10000);
  return 1;
}

static const char *uuid_scheme(idgen_uuid u) {
  static const char *const names[16] = {
      "uuid",   "uuidv1", "uuidv2", "uuidv3", "uuidv4", "uuidv5", "uuidv6", "uuidv7",
      "uuidv8", "uuid",   "uuid",   "uuid",   "uuid",   "uuid",   "uuid",   "uuid"};
  static const uint8_t zero[16],
      ones[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  if (!memcmp(u.b, zero, 16))
    return "nil";
  if (!memcmp(u.b, ones, 16))
    return "max";
  if (idgen_uuid_variant_of(u) != IDGEN_UUID_VARIANT_RFC)
    return "uuid";
  return names[idgen_uuid_version(u)];
}

int idgen__wide_parse(const char *text, size_t len, idgen__wide *out) {
  const char *what = idgen__wide_kind(text, len);
  if (!what)
    return 0;
  idgen__wide w;
  memset(&w, 0, sizeof w);
  w.version = -1;
  if (what[1] == 'U') { /* "UUID" */
    idgen_uuid u;
    int rc = idgen_uuid_parse(text, len, &u);
    if (rc < 0)
      return rc;
    idgen_uuid_format(u, w.id, sizeof w.id);
    w.form = "uuid";
    w.scheme = uuid_scheme(u);
    if (idgen_uuid_variant_of(u) == IDGEN_UUID_VARIANT_RFC)
      w.version = idgen_uuid_version(u);
    w.variant = idgen_uuid_variant_name(idgen_uuid_variant_of(u));
    w.has_time = uuid_time_ms(u, &w.time_ms);
  } else {
    idgen_ulid u;
    int rc = idgen_ulid_parse(text, len, &u);
    if (rc < 0)
      return rc;
    idgen_ulid_format(u, w.id, sizeof w.id);
    w.form = "ulid";
    w.scheme = "ulid";
    w.has_time = 1;
    w.time_ms = idgen_ulid_time_ms(u);
  }
  *out = w;
  return 1;
}

int idgen__wide_json(const idgen__wide *w, char *out, size_t outlen) {
  char tmp[IDGEN_DECODE_JSON_MAX];
  size_t pos = 0;
  int rc =
      append(tmp, sizeof tmp, &pos, "{\"id\":\"%s\",\"scheme\":\"%s\"", w->id, w->scheme);
  if (rc == 0 && w->version >= 0)
    rc = append(tmp, sizeof tmp, &pos, ",\"version\":%d", w->version);
  if (rc == 0 && w->variant)
    rc = append(tmp, sizeof tmp, &pos, ",\"variant\":\"%s\"", w->variant);
  char when[40];
  if (rc == 0 && w->has_time) {
    if (idgen_format_time(w->time_ms, when, sizeof when) >= 0)
      rc = append(tmp, sizeof tmp, &pos, ",\"time\":\"%s\",\"time_ms\":%" PRId64, when,
                  w->time_ms);
    else /* beyond year 9999 */
      rc = append(tmp, sizeof tmp, &pos, ",\"time\":null,\"time_ms\":%" PRId64, w->time_ms);
  }
  if (rc == 0)
    rc = append(tmp, sizeof tmp, &pos, "}");
  if (rc < 0)
    return rc;
  if (pos + 1 > outlen)
    return IDGEN_EBUFSIZE;
  memcpy(out, tmp, pos + 1);
  return (int)pos;
}

int idgen__decode_any_json(const idgen_layout *layout, const char *text, size_t len,
                           char *out, size_t outlen, const char **kind) {
  idgen__wide w;
  int rc = idgen__wide_parse(text, len, &w);
  *kind = rc != 0 ? idgen__wide_kind(text, len) : "ID";
  if (rc < 0)
    return rc;
  if (rc > 0)
    return idgen__wide_json(&w, out, outlen);
  uint64_t id;
  rc = idgen_id_parse_any(text, len, layout, &id, NULL);
  return rc < 0 ? rc : idgen__decode_json(layout, id, out, outlen);
}
