/* idgen/etcd.h: the etcd lease provider, in a library of its own, libidgen-etcd
 * (pkg-config idgen-etcd; CMake idgen::etcd), the one part of idgen that needs libcurl
 * and jansson. libidgen alone serves the static, k8s and file providers; a program that
 * links libidgen-etcd and lists its row in idgen_lease_config.providers gets kind etcd
 * from idgen_lease_open too:
 *
 *   static const idgen_lease_provider *const providers[] = {&idgen_lease_etcd, NULL};
 *   config.providers = providers;
 *
 * Without it, kind etcd is refused with IDGEN_ENOPROVIDER. (This row replaces
 * idgen_lease_etcd_register(), which set a process-wide constructor: the table is the
 * caller's now, and libidgen keeps no global state.) */
#ifndef IDGEN_ETCD_H
#define IDGEN_ETCD_H

#include "idgen/error.h"
#include "idgen/lease.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The etcd provider's row (idgen_lease_provider, idgen/lease.h). Constant; naming it is
 * what links the provider into a static program. */
IDGEN_API extern const idgen_lease_provider idgen_lease_etcd;

#ifdef __cplusplus
}
#endif
#endif
