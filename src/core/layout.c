/* layout.c: layouts as data: presets, the spec grammar, validation, compose/decompose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "idgen/layout.h"

#define EPOCH_2026 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */

/* Every preset once: name and spec. Discord documents 42 bits of time and Instagram 41,
 * each filling all 64 bits; their top bit stays 0 until 2084 and 2046, and an ID here
 * never sets the sign bit, so their time fields are modelled one bit narrower: decoding
 * real IDs is the same, and the end date is the day their IDs would turn negative as
 * signed 64-bit integers. */
#define PRESETS(X)                                                                         \
  X("snowflake", "time:41@1ms,worker:10,seq:12,epoch:1767225600000")                       \
  X("twitter", "time:41@1ms,datacenter:5,worker:5,seq:12,epoch:1288834974657")             \
  X("discord", "time:41@1ms,worker:5,process:5,seq:12,epoch:1420070400000")                \
  X("instagram", "time:40@1ms,shard:13,seq:10,epoch:1314220021721")                        \
  X("sonyflake", "time:39@10ms,seq:8,machine:16,epoch:2014-09-01")                         \
  X("js53", "time:41@1ms,worker:3,seq:9,epoch:1767225600000")

#define PRESET_NAME(name, spec) name,
#define PRESET_SPEC(name, spec) spec,
static const char *const preset_names[] = {PRESETS(PRESET_NAME) NULL};
static const char *const preset_specs[] = {PRESETS(PRESET_SPEC)};
#define NPRESETS (sizeof preset_specs / sizeof preset_specs[0])

const char *const *idgen_layout_preset_names(void) {
  return preset_names;
}

/* A bad layout: its message into err, IDGEN_ELAYOUT returned (core/error.c). */
#define fail(err, errlen, ...) idgen__fail(IDGEN_ELAYOUT, err, errlen, __VA_ARGS__)

int idgen_layout_preset(const char *name, idgen_layout *out) {
  if (!name || !out)
    return IDGEN_EINVAL;
  for (size_t i = 0; i < NPRESETS; i++) {
    if (strcmp(name, preset_names[i]))
      continue;
    idgen_layout layout;
    int rc =
        idgen_layout_parse(preset_specs[i], strlen(preset_specs[i]), 0, &layout, NULL, 0);
    if (rc < 0)
      return rc;
    snprintf(layout.name, sizeof layout.name, "%s", name);
    *out = layout;
    return 0;
  }
  return IDGEN_EINVAL;
}

/* A strict decimal in [0, max] from s[0..len); -1 if it is not one. */
static int64_t parse_uint(const char *s, size_t len, int64_t max) {
  if (len == 0 || len > 18 || (len > 1 && s[0] == '0'))
    return -1;
  int64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v <= max ? v : -1;
}

static int valid_name(const char *s, size_t len) {
  if (len == 0 || len >= IDGEN_FIELD_NAME_MAX)
    return 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
          (i > 0 && c >= '0' && c <= '9')))
      return 0;
  }
  return 1;
}

static int parse_item(const char *item, size_t len, idgen_layout *l, int *have_epoch,
                      char *err, size_t errlen) {
  const char *colon = memchr(item, ':', len);
  if (!colon)
    return fail(err, errlen, "layout item '%.*s' is not NAME:VALUE", (int)len, item);
  size_t klen = (size_t)(colon - item);
  const char *val = colon + 1;
  size_t vlen = len - klen - 1;
  if (klen == 5 && !memcmp(item, "epoch", 5)) {
    int64_t ms = parse_uint(val, vlen, INT64_C(253402300799999));
    if (ms < 0 && idgen_parse_time(val, vlen, &ms) < 0)
      return fail(err, errlen,
                  "epoch '%.*s' is neither YYYY-MM-DD[THH:MM:SS[.mmm]Z] nor Unix ms",
                  (int)vlen, val);
    l->epoch_ms = ms;
    *have_epoch = 1;
    return 0;
  }
  if (klen == 4 && !memcmp(item, "name", 4)) {
    if (!valid_name(val, vlen) || vlen >= IDGEN_LAYOUT_NAME_MAX)
      return fail(err, errlen, "layout name '%.*s' must be a word of letters, digits, _",
                  (int)vlen, val);
    memcpy(l->name, val, vlen);
    l->name[vlen] = '\0';
    return 0;
  }
  if (!valid_name(item, klen))
    return fail(err, errlen, "field name '%.*s' must be 1-15 letters, digits or _",
                (int)klen, item);
  if (l->nfields == IDGEN_LAYOUT_FIELDS_MAX)
    return fail(err, errlen, "too many fields (at most %d)", IDGEN_LAYOUT_FIELDS_MAX);
  idgen_field *f = &l->fields[l->nfields];
  memset(f, 0, sizeof *f);
  memcpy(f->name, item, klen);
  f->kind = IDGEN_FIELD_NODE;
  if (klen == 4 && !memcmp(item, "time", 4))
    f->kind = IDGEN_FIELD_TIME;
  else if ((klen == 3 && !memcmp(item, "seq", 3)) ||
           (klen == 8 && !memcmp(item, "sequence", 8)))
    f->kind = IDGEN_FIELD_SEQ;
  const char *at = memchr(val, '@', vlen);
  size_t blen = at ? (size_t)(at - val) : vlen;
  if (at) {
    if (f->kind != IDGEN_FIELD_TIME)
      return fail(err, errlen, "field '%s': only the time field has a unit", f->name);
    const char *unit = at + 1;
    size_t ulen = vlen - blen - 1;
    if (ulen == 3 && !memcmp(unit, "1ms", 3))
      l->unit_ms = 1;
    else if (ulen == 4 && !memcmp(unit, "10ms", 4))
      l->unit_ms = 10;
    else if (ulen == 2 && !memcmp(unit, "1s", 2))
      l->unit_ms = 1000;
    else
      return fail(err, errlen, "field 'time': unit '%.*s' is not 1ms, 10ms or 1s",
                  (int)ulen, unit);
  }
  int64_t bits = parse_uint(val, blen, 63);
  if (bits < 1)
    return fail(err, errlen,
                "field '%s': width '%.*s' is not a number of bits from 1 to 63", f->name,
                (int)blen, val);
  f->bits = (uint8_t)bits;
  if (f->kind == IDGEN_FIELD_SEQ)
    memcpy(f->name, "sequence", 9);
  l->nfields++;
  return 0;
}

int idgen_layout_parse(const char *spec, size_t len, int64_t now_ms, idgen_layout *out,
                       char *err, size_t errlen) {
  if (!spec || !out)
    return IDGEN_EINVAL;
  if (len == 0)
    return fail(err, errlen, "empty layout");
  if (!memchr(spec, ':', len)) { /* a preset name */
    char name[IDGEN_LAYOUT_NAME_MAX];
    if (len >= sizeof name)
      return fail(err, errlen, "unknown layout '%.*s'", (int)len, spec);
    memcpy(name, spec, len);
    name[len] = '\0';
    if (idgen_layout_preset(name, out) < 0) {
      char names[128] = "";
      for (size_t i = 0, n = 0; i < NPRESETS && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                              preset_names[i]);
      return fail(err, errlen,
                  "unknown layout '%s' (presets: %s; or a spec like "
                  "time:41@1ms,worker:10,seq:12)",
                  name, names);
    }
    return 0;
  }
  idgen_layout l;
  memset(&l, 0, sizeof l);
  snprintf(l.name, sizeof l.name, "custom");
  l.unit_ms = 1;
  l.epoch_ms = EPOCH_2026;
  int have_epoch = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && spec[i] != ',')
      continue;
    if (i == start)
      return fail(err, errlen, "empty item in layout '%.*s'", (int)len, spec);
    int rc = parse_item(spec + start, i - start, &l, &have_epoch, err, errlen);
    if (rc < 0)
      return rc;
    start = i + 1;
  }
  int rc = idgen_layout_validate(&l, now_ms, err, errlen);
  if (rc < 0)
    return rc;
  *out = l;
  return 0;
}

int idgen_layout_validate(idgen_layout *layout, int64_t now_ms, char *err, size_t errlen) {
  if (!layout)
    return IDGEN_EINVAL;
  idgen_layout l = *layout;
  if (l.nfields < 1 || l.nfields > IDGEN_LAYOUT_FIELDS_MAX)
    return fail(err, errlen,
                "%d fields: a layout has a time field, 1 or 2 node fields and "
                "a sequence",
                l.nfields);
  if (l.unit_ms != 1 && l.unit_ms != 10 && l.unit_ms != 1000)
    return fail(err, errlen, "field 'time': unit %u ms is not 1, 10 or 1000", l.unit_ms);
  if (l.epoch_ms < 0)
    return fail(err, errlen, "epoch %lld is before 1970", (long long)l.epoch_ms);
  if (now_ms > 0 && l.epoch_ms > now_ms)
    return fail(err, errlen, "epoch %lld ms is in the future", (long long)l.epoch_ms);
  int ntime = 0, nseq = 0, nnode = 0, last_node = -1;
  unsigned total = 0;
  for (int i = 0; i < l.nfields; i++) {
    idgen_field *f = &l.fields[i];
    if (f->bits == 0)
      return fail(err, errlen, "field '%s' has no bits", f->name);
    if (!valid_name(f->name, strnlen(f->name, sizeof f->name)))
      return fail(err, errlen, "field %d has no valid name", i + 1);
    for (int j = 0; j < i; j++)
      if (!strcmp(l.fields[j].name, f->name))
        return fail(err, errlen, "field '%s' appears twice", f->name);
    total += f->bits;
    switch (f->kind) {
    case IDGEN_FIELD_TIME:
      if (i != 0)
        return fail(err, errlen, "field 'time' must come first");
      ntime++;
      break;
    case IDGEN_FIELD_SEQ:
      nseq++;
      break;
    case IDGEN_FIELD_NODE:
      if (nnode > 0 && last_node != i - 1)
        return fail(err, errlen, "node fields must be adjacent ('%s')", f->name);
      nnode++;
      last_node = i;
      break;
    default:
      return fail(err, errlen, "field '%s' has an unknown kind", f->name);
    }
  }
  if (ntime != 1)
    return fail(err, errlen, "field 'time' is missing (it must come first)");
  if (nseq != 1)
    return fail(err, errlen, nseq ? "field 'seq' appears twice" : "field 'seq' is missing");
  if (nnode < 1 || nnode > IDGEN_LAYOUT_NODES_MAX)
    return fail(err, errlen, "%d node fields: a layout has 1 or 2", nnode);
  if (total > 63)
    return fail(err, errlen, "fields add up to %u bits: at most 63 (the sign bit stays 0)",
                total);
  /* Times must stay printable and in int64 ms: the field ends by the year 9999. */
  const int64_t year_9999_end_ms = INT64_C(253402300800000);
  if (l.fields[0].bits > 48 || (int64_t)(UINT64_C(1) << l.fields[0].bits) * l.unit_ms >
                                   year_9999_end_ms - l.epoch_ms)
    return fail(err, errlen, "field 'time': %u bits of %u ms run past the year 9999",
                l.fields[0].bits, l.unit_ms);
  unsigned shift = total;
  l.node_bits = 0;
  l.node_shift = 63;
  for (int i = 0; i < l.nfields; i++) {
    idgen_field *f = &l.fields[i];
    shift -= f->bits;
    f->shift = (uint8_t)shift;
    if (f->kind == IDGEN_FIELD_TIME) {
      l.time_bits = f->bits;
      l.time_shift = f->shift;
    } else if (f->kind == IDGEN_FIELD_SEQ) {
      l.seq_bits = f->bits;
      l.seq_shift = f->shift;
    } else {
      l.node_bits = (uint8_t)(l.node_bits + f->bits);
      if (f->shift < l.node_shift)
        l.node_shift = f->shift;
    }
  }
  *layout = l;
  return 0;
}

int idgen_layout_format(const idgen_layout *l, char *out, size_t outlen) {
  char buf[256], epoch[32];
  size_t n = 0;
  for (int i = 0; i < l->nfields; i++) {
    const idgen_field *f = &l->fields[i];
    const char *name = f->kind == IDGEN_FIELD_SEQ ? "seq" : f->name;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%u", i ? "," : "", name, f->bits);
    if (f->kind == IDGEN_FIELD_TIME)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "@%s",
                            l->unit_ms == 1    ? "1ms"
                            : l->unit_ms == 10 ? "10ms"
                                               : "1s");
  }
  if (idgen_format_time(l->epoch_ms, epoch, sizeof epoch) < 0)
    return IDGEN_ERANGE;
  n += (size_t)snprintf(buf + n, sizeof buf - n, ",epoch:%s,name:%s", epoch, l->name);
  if (n + 1 > outlen || n >= sizeof buf)
    return IDGEN_EBUFSIZE;
  memcpy(out, buf, n + 1);
  return (int)n;
}

static uint64_t max_ticks(const idgen_layout *l) {
  return (UINT64_C(1) << l->time_bits) - 1;
}

int64_t idgen_layout_end_ms(const idgen_layout *l) {
  return l->epoch_ms + (int64_t)(max_ticks(l) + 1) * (int64_t)l->unit_ms;
}

int64_t idgen_layout_js_unsafe_ms(const idgen_layout *l) {
  /* Tick T's IDs span [T << shift, (T + 1) << shift): the first tick past 2^53 - 1 is
   * 2^(53 - shift), and from there on every ID is. */
  if ((unsigned)l->time_bits + l->time_shift <= 53)
    return INT64_MAX;
  uint64_t ticks = l->time_shift >= 53 ? 1 : UINT64_C(1) << (53 - l->time_shift);
  return l->epoch_ms + (int64_t)ticks * (int64_t)l->unit_ms;
}

uint64_t idgen_layout_max_worker(const idgen_layout *l) {
  return (UINT64_C(1) << l->node_bits) - 1;
}

double idgen_layout_ids_per_second(const idgen_layout *l) {
  return (double)(UINT64_C(1) << l->seq_bits) * 1000.0 / (double)l->unit_ms;
}

int idgen_layout_ticks(const idgen_layout *l, int64_t unix_ms, uint64_t *ticks) {
  if (unix_ms < l->epoch_ms)
    return IDGEN_EBEFOREEPOCH;
  uint64_t t = (uint64_t)(unix_ms - l->epoch_ms) / l->unit_ms;
  if (t > max_ticks(l))
    return IDGEN_ETIMEEND;
  *ticks = t;
  return 0;
}

int idgen_compose(const idgen_layout *l, const idgen_parts *p, uint64_t *id) {
  if (p->ticks > max_ticks(l) || p->worker > idgen_layout_max_worker(l) ||
      p->seq >= (UINT64_C(1) << l->seq_bits))
    return IDGEN_ERANGE;
  *id = p->ticks << l->time_shift | p->worker << l->node_shift | p->seq << l->seq_shift;
  return 0;
}

int idgen_decompose(const idgen_layout *l, uint64_t id, idgen_parts *out) {
  unsigned total = (unsigned)l->time_bits + l->time_shift;
  if (id >> total)
    return IDGEN_ERANGE;
  idgen_parts p;
  memset(&p, 0, sizeof p);
  p.ticks = id >> l->time_shift & max_ticks(l);
  p.time_ms = l->epoch_ms + (int64_t)p.ticks * (int64_t)l->unit_ms;
  p.seq = id >> l->seq_shift & ((UINT64_C(1) << l->seq_bits) - 1);
  p.worker = id >> l->node_shift & idgen_layout_max_worker(l);
  int n = 0;
  for (int i = 0; i < l->nfields; i++) {
    const idgen_field *f = &l->fields[i];
    if (f->kind == IDGEN_FIELD_NODE)
      p.node[n++] = id >> f->shift & ((UINT64_C(1) << f->bits) - 1);
  }
  *out = p;
  return 0;
}
