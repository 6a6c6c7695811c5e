/* bounds.c: the smallest and the largest ID of each scheme whose time is a given ms. */
#include <string.h>

#include "core/core_internal.h"
#include "idgen/layout.h"
#include "idgen/uuid.h"

/* Every field below the time field is free at one time unit: all zero is the smallest
 * ID of that unit and all one the largest, whatever the order of the other fields
 * (Sonyflake's sequence before its machine included). */
static int layout_bound(const idgen_layout *l, int64_t unix_ms, int last, uint64_t *id) {
  idgen_parts p;
  memset(&p, 0, sizeof p);
  int rc = idgen_layout_ticks(l, unix_ms, &p.ticks);
  if (rc < 0)
    return rc;
  if (last) {
    p.worker = idgen_layout_max_worker(l);
    p.seq = (UINT64_C(1) << l->seq_bits) - 1;
  }
  return idgen_compose(l, &p, id);
}

int idgen_layout_first_id(const idgen_layout *l, int64_t unix_ms, uint64_t *id) {
  return layout_bound(l, unix_ms, 0, id);
}

int idgen_layout_last_id(const idgen_layout *l, int64_t unix_ms, uint64_t *id) {
  return layout_bound(l, unix_ms, 1, id);
}

static void put_ms48(uint8_t *b, int64_t unix_ms) {
  for (int i = 0; i < 6; i++)
    b[i] = (uint8_t)((uint64_t)unix_ms >> (40 - 8 * i));
}

int idgen_uuid7_bound(int64_t unix_ms, int last, idgen_uuid *out) {
  if (unix_ms < 0 || unix_ms > IDGEN_UUID_MAX_MS)
    return unix_ms < 0 ? IDGEN_EBEFOREEPOCH : IDGEN_ETIMEEND;
  idgen_uuid u;
  memset(u.b, last ? 0xff : 0x00, sizeof u.b);
  put_ms48(u.b, unix_ms);
  /* Version 7 and variant 10 are fixed bits: the rest of rand_a and rand_b is free. */
  u.b[6] = (uint8_t)(0x70 | (u.b[6] & 0x0f));
  u.b[8] = (uint8_t)(0x80 | (u.b[8] & 0x3f));
  *out = u;
  return 0;
}

int idgen_ulid_bound(int64_t unix_ms, int last, idgen_ulid *out) {
  if (unix_ms < 0 || unix_ms > IDGEN_UUID_MAX_MS)
    return unix_ms < 0 ? IDGEN_EBEFOREEPOCH : IDGEN_ETIMEEND;
  idgen_ulid u;
  memset(u.b, last ? 0xff : 0x00, sizeof u.b);
  put_ms48(u.b, unix_ms);
  *out = u;
  return 0;
}
