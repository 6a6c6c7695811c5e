/* etcd_txn.h: what the etcd lease provider keeps in etcd (etcd_txn.c): its transactions
 * and the choice of a worker ID from a listing of the worker keys. The client they are
 * built on is etcd/client.h. */
#ifndef IDGEN_LEASE_ETCD_TXN_H
#define IDGEN_LEASE_ETCD_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "etcd/client.h"

/* Claim: if create_revision(worker_key) == 0, put worker_key = value with the lease and
 * read hwm_key (response 1), in one transaction. With the ID's other name (two-field
 * layouts; NULL: none), it must be absent too: create_revision(other_worker_key) == 0;
 * then other_hwm_key is read as well (response 2), and a failed compare reads
 * other_worker_key (the failure's response 0), to tell a race from the other name. */
char *idgen__etcd_claim_body(const char *worker_key, const char *value, int64_t lease_id,
                             const char *hwm_key, const char *other_worker_key,
                             const char *other_hwm_key);
/* Fenced HWM write: if lease(worker_key) == lease_id and mod_revision(hwm_key) ==
 * hwm_revision (0: the key does not exist), put hwm_key = value (no lease); otherwise
 * read worker_key and hwm_key (the failure's responses 0 and 1), to tell which compare
 * failed. idgen__etcd_parse_fenced_put reads the reply. */
char *idgen__etcd_fenced_put_body(const char *worker_key, int64_t lease_id,
                                  const char *hwm_key, int64_t hwm_revision,
                                  const char *value);
/* Fenced delete: if lease(worker_key) == lease_id, delete worker_key. */
char *idgen__etcd_fenced_delete_body(const char *worker_key, int64_t lease_id);

/* The worker ID at the end of a key (".../17" -> 17), or -1. */
int64_t idgen__etcd_key_worker(const char *key);
/* A key of a namespace, after its "/idgen/<ns>/": "workers/<N>", "hwm/<N>",
 * "dc/<D>/workers/<N>" or "dc/<D>/hwm/<N>". 0 with *dc (-1: none), *hwm (1: a HWM key)
 * and *worker = N; -1 for anything else. */
int idgen__etcd_key_parse(const char *rest, int64_t *dc, int *hwm, uint64_t *worker);

/* Which worker ID to take, from a listing of the worker keys (in any order): the one
 * in [lo, hi] whose key already carries lease_id, with *ours = 1 (a claim of ours that
 * etcd applied though its reply was lost, say to a timeout before a retry on another
 * endpoint: adopt it rather than claim a second ID); else the smallest ID in [lo, hi]
 * with no key, *ours = 0. IDs listed in skip[0..nskip) are passed over either way;
 * lease_id 0 adopts nothing. -1 when no ID is free. */
int64_t idgen__etcd_pick(const idgen__etcd_kv *kvs, size_t n, int64_t lease_id, uint64_t lo,
                         uint64_t hi, const uint64_t *skip, size_t nskip, int *ours);

/* What became of a fenced HWM write (idgen__etcd_parse_fenced_put). */
typedef enum idgen__etcd_hwm_put {
  IDGEN__HWM_WRITTEN,  /* applied */
  IDGEN__HWM_NOT_OURS, /* not applied: the worker key is gone or carries another lease */
  IDGEN__HWM_MOVED     /* not applied, though the worker key still carries lease_id: the
                        * HWM key was changed after hwm_revision */
} idgen__etcd_hwm_put;

/* A fenced HWM write's reply, for the body made with lease_id and hwm_revision: 0 with
 * *outcome and *revision, the HWM key's mod_revision after the transaction (0: no key),
 * and, when not written, *hwm: the HWM key as the failure read it (all zero: no key);
 * IDGEN_EPROTO for a reply that is none of the three (a success without a revision, a
 * failure that does not read both keys, or one whose compares would both have held). */
int idgen__etcd_parse_fenced_put(const char *body, size_t len, int64_t lease_id,
                                 int64_t hwm_revision, idgen__etcd_hwm_put *outcome,
                                 int64_t *revision, idgen__etcd_kv *hwm);

#endif
