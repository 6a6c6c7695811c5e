/* provider.c: the public calls on a provider, each through its class (lease_internal.h),
 * so that the provider's struct stays out of the public header; and what every provider
 * shares: why(), the fork check, and the IDs an acquire passes over. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lease/lease_internal.h"

int idgen_lease_acquire(idgen_lease *lease, idgen_lease_grant *out) {
  return lease->vtable->acquire(lease, out);
}

int idgen_lease_keepalive(idgen_lease *lease) {
  return lease->vtable->keepalive(lease);
}

int idgen_lease_write_hwm(idgen_lease *lease, int64_t hwm_ms) {
  return lease->vtable->write_hwm(lease, hwm_ms);
}

int idgen_lease_release(idgen_lease *lease, int64_t final_hwm_ms) {
  return lease->vtable->release(lease, final_hwm_ms);
}

int idgen_lease_holders(idgen_lease *lease, idgen_lease_holder *out, size_t max,
                        size_t *count) {
  return lease->vtable->holders(lease, out, max, count);
}

void idgen_lease_describe(idgen_lease *lease, char *out, size_t outlen) {
  lease->vtable->describe(lease, out, outlen);
}

const char *idgen_lease_name(const idgen_lease *lease) {
  return lease->vtable->name;
}

const char *idgen_lease_why(const idgen_lease *lease) {
  return lease->why;
}

void idgen_lease_free(idgen_lease *lease) {
  if (lease)
    lease->vtable->free(lease);
}

/* ---- shared by the providers ----------------------------------------------------- */

int idgen__lease_forked(uint64_t fork_gen) {
  return idgen__fork_generation() != fork_gen;
}

int idgen__why(idgen_lease *lease, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lease->why, sizeof lease->why, fmt, ap);
  va_end(ap);
  return err;
}

int idgen__pass_over(idgen_lease *lease, idgen__passed *p, uint64_t w) {
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 16;
    uint64_t *ids = realloc(p->ids, cap * sizeof *ids);
    if (!ids)
      return idgen__why(lease, IDGEN_ENOMEM, "out of memory");
    p->ids = ids;
    p->cap = cap;
  }
  p->ids[p->n++] = w;
  return 0;
}

int idgen__none_free(idgen_lease *lease, const idgen_lease_space *space, const char *ns,
                     const char *provider, const idgen__passed *p) {
  char name[160], other[96] = "";
  idgen__space_name(space, ns, name, sizeof name);
  if (p->other)
    snprintf(other, sizeof other,
             "; %zu held under their other name (with or without --datacenter)", p->other);
  if (p->corrupt)
    return idgen__why(lease, IDGEN_ENOWORKER,
                      "none of the %s free (%s)%s; %zu skipped, the last: %s", name,
                      provider, other, p->corrupt, p->last_corrupt);
  return idgen__why(lease, IDGEN_ENOWORKER, "all %llu %s are taken (%s)%s",
                    (unsigned long long)idgen__space_size(space), name, provider, other);
}
