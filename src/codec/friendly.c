/* friendly.c: IDs as "yyyyMMddHHmmssSSS-<node>[-<node>]-<seq>" (UTC), per layout. */
#include <stdio.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "core/text_internal.h"

#define TIME_DIGITS 17
#define MS_PER_DAY INT64_C(86400000)
/* 10000-01-01T00:00:00Z: four year digits end here. */
#define YEAR_10000_MS INT64_C(253402300800000)

/* The NODE fields' widths in layout order; returns how many. */
static int node_widths(const idgen_layout *layout,
                       unsigned widths[IDGEN_LAYOUT_NODES_MAX]) {
  int n = 0;
  for (unsigned i = 0; i < layout->nfields && i < IDGEN_LAYOUT_FIELDS_MAX; i++)
    if (layout->fields[i].kind == IDGEN_FIELD_NODE && n < IDGEN_LAYOUT_NODES_MAX)
      widths[n++] = layout->fields[i].bits;
  return n;
}

int idgen__friendly_format(uint64_t id, const idgen_layout *layout, char *out,
                           size_t outlen) {
  idgen_parts parts;
  unsigned widths[IDGEN_LAYOUT_NODES_MAX];
  int rc = idgen_decompose(layout, id, &parts);
  if (rc < 0)
    return rc;
  int nodes = node_widths(layout, widths);
  /* epoch_ms + ticks * unit_ms, checked: a wide time field can pass year 9999. */
  if (layout->unit_ms == 0 || layout->epoch_ms < 0 || layout->epoch_ms >= YEAR_10000_MS ||
      parts.ticks > (uint64_t)(YEAR_10000_MS - 1 - layout->epoch_ms) / layout->unit_ms)
    return IDGEN_ERANGE;
  int64_t ms = layout->epoch_ms + (int64_t)parts.ticks * (int64_t)layout->unit_ms;
  int64_t y, mo, d;
  idgen__civil_from_days(ms / MS_PER_DAY, &y, &mo, &d);
  int64_t in_day = ms % MS_PER_DAY;
  char buf[IDGEN_FORMAT_MAX];
  int n = snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d%03d", (int)y, (int)mo, (int)d,
                   (int)(in_day / 3600000), (int)(in_day / 60000 % 60),
                   (int)(in_day / 1000 % 60), (int)(in_day % 1000));
  for (int i = 0; i < nodes; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, "-%llu",
                  (unsigned long long)parts.node[i]);
  n += snprintf(buf + n, sizeof buf - (size_t)n, "-%llu", (unsigned long long)parts.seq);
  if ((size_t)n + 1 > outlen)
    return IDGEN_EBUFSIZE;
  memcpy(out, buf, (size_t)n + 1);
  return n;
}

static int64_t digits_at(const char *s, size_t n) {
  int64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v = v * 10 + (s[i] - '0');
  return v;
}

/* "yyyyMMddHHmmssSSS" -> Unix ms; a date or time that does not exist -> EFORMAT. */
static int parse_time17(const char *s, int64_t *ms) {
  int64_t y = digits_at(s, 4), mo = digits_at(s + 4, 2), d = digits_at(s + 6, 2);
  int64_t h = digits_at(s + 8, 2), mi = digits_at(s + 10, 2), sec = digits_at(s + 12, 2);
  int64_t milli = digits_at(s + 14, 3);
  if (mo < 1 || mo > 12 || d < 1 || d > idgen__days_in_month(y, mo) || h > 23 || mi > 59 ||
      sec > 59)
    return IDGEN_EFORMAT;
  *ms = idgen__days_from_civil(y, mo, d) * MS_PER_DAY + h * 3600000 + mi * 60000 +
        sec * 1000 + milli;
  return 0;
}

int idgen__friendly_parse(const char *s, size_t len, const idgen_layout *layout,
                          uint64_t *id) {
  if (len == 0)
    return IDGEN_EEMPTY;
  if (s[0] == '+' || s[0] == '-')
    return IDGEN_ESIGN;
  for (size_t i = 0; i < len; i++)
    if ((s[i] < '0' || s[i] > '9') && s[i] != '-')
      return IDGEN_ECHAR;
  unsigned widths[IDGEN_LAYOUT_NODES_MAX];
  int nodes = node_widths(layout, widths);
  if (nodes < 1 || layout->unit_ms == 0)
    return IDGEN_EINVAL;

  /* Split at '-': the time, each node, the sequence; no more, no fewer. */
  const char *part[2 + IDGEN_LAYOUT_NODES_MAX];
  size_t plen[2 + IDGEN_LAYOUT_NODES_MAX];
  int nparts = 0, want = nodes + 2;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && s[i] != '-')
      continue;
    if (nparts == want)
      return IDGEN_EFORMAT;
    part[nparts] = s + start;
    plen[nparts++] = i - start;
    start = i + 1;
  }
  if (nparts != want || plen[0] != TIME_DIGITS)
    return IDGEN_EFORMAT;

  int64_t ms;
  int rc = parse_time17(part[0], &ms);
  if (rc < 0)
    return rc;
  if (ms < layout->epoch_ms)
    return IDGEN_EBEFOREEPOCH;
  if ((ms - layout->epoch_ms) % layout->unit_ms != 0)
    return IDGEN_EFORMAT;
  uint64_t ticks = (uint64_t)(ms - layout->epoch_ms) / layout->unit_ms;
  if (layout->time_bits < 64 && ticks >> layout->time_bits)
    return IDGEN_EOVERFLOW;

  idgen_parts parts;
  memset(&parts, 0, sizeof parts);
  parts.ticks = ticks;
  parts.time_ms = ms;
  for (int i = 0; i < nodes; i++) {
    uint64_t max = (UINT64_C(1) << widths[i]) - 1;
    if ((rc = idgen__decimal_field(part[1 + i], plen[1 + i], max, &parts.node[i])) < 0)
      return plen[1 + i] == 0 ? IDGEN_EFORMAT : rc;
    parts.worker = parts.worker << widths[i] | parts.node[i];
  }
  uint64_t seq_max = (UINT64_C(1) << layout->seq_bits) - 1;
  if ((rc = idgen__decimal_field(part[nodes + 1], plen[nodes + 1], seq_max, &parts.seq)) <
      0)
    return plen[nodes + 1] == 0 ? IDGEN_EFORMAT : rc;
  uint64_t v;
  if ((rc = idgen_compose(layout, &parts, &v)) < 0)
    return IDGEN_EOVERFLOW;
  *id = v;
  return 0;
}
