/* idgen/zookeeper.h: the ZooKeeper lease provider, in a library of its own,
 * libidgen-zookeeper (pkg-config idgen-zookeeper; CMake idgen::zookeeper), the one part
 * of idgen that needs Debian's multithreaded ZooKeeper C client (libzookeeper_mt). A
 * program that links it and lists its row gets kind zookeeper from idgen_lease_open:
 *
 *   static const idgen_lease_provider *const providers[] = {&idgen_lease_zookeeper,
 *                                                           NULL};
 *   config.providers = providers;
 *
 * Without it, kind zookeeper is refused with IDGEN_ENOPROVIDER.
 *
 * What it keeps (docs/leases.md, "ZooKeeper"): an ephemeral node
 * /idgen/<ns>/workers/<N> per worker ID held (/idgen/<ns>/dc/<D>/workers/<N> under a
 * datacenter), holding the holder record; the HWM in the persistent node
 * /idgen/<ns>/hwm/<N>. The claim is one multi that creates the worker node and sets the
 * HWM node at the version just read (creates it when absent), and every HWM write is a
 * setData at the version this holder last saw: a holder that lost its session, or was
 * paused while another claimed, fails its next write. The lease's TTL is the session
 * timeout the ensemble negotiated (--lease-ttl asks for one).
 *
 * Threads: every call on the provider is synchronous and made from one thread (the
 * keeper's); the client's own threads run only a watcher that touches nothing. Each
 * open handle holds one ZooKeeper session: one TCP connection and the client's two
 * threads. */
#ifndef IDGEN_ZOOKEEPER_H
#define IDGEN_ZOOKEEPER_H

#include "idgen/error.h"
#include "idgen/lease.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ZooKeeper provider's row (idgen_lease_provider, idgen/lease.h). Constant; naming it
 * is what links the provider into a static program. */
IDGEN_API extern const idgen_lease_provider idgen_lease_zookeeper;

#ifdef __cplusplus
}
#endif
#endif
