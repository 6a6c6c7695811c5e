/* idgen/etcd.h: the etcd lease provider, in a library of its own, libidgen-etcd
 * (pkg-config idgen-etcd; CMake idgen::etcd), the one part of idgen that needs libcurl
 * and jansson. libidgen alone serves the static, k8s and file providers; with
 * libidgen-etcd linked and registered, idgen_lease_open serves kind etcd too. */
#ifndef IDGEN_ETCD_H
#define IDGEN_ETCD_H

#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes idgen_lease_open (idgen/lease.h) open IDGEN_LEASE_ETCD providers in this
 * process; before it, that kind is refused with IDGEN_ENOPROVIDER. Call it once, before
 * opening; calling it again does nothing more. Thread-safe. Defined in libidgen-etcd:
 * calling it is what links the provider into a static program. */
IDGEN_API void idgen_lease_etcd_register(void);

#ifdef __cplusplus
}
#endif
#endif
