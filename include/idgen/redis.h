/* idgen/redis.h: the Redis lease provider, in a library of its own, libidgen-redis
 * (pkg-config idgen-redis; CMake idgen::redis), the one part of idgen that needs
 * hiredis. A program that links it and lists its row gets kind redis from
 * idgen_lease_open (--lease redis --redis redis://[user:pass@]HOST:PORT[/db]):
 *
 *   static const idgen_lease_provider *const providers[] = {&idgen_lease_redis, NULL};
 *   config.providers = providers;
 *
 * Redis is not a consensus store: its scripts fence the clients of one primary, but a
 * failover or a restart without persistence loses keys. What holds and what does not is
 * in docs/leases.md ("Redis"). After idgen_lease_open, idgen_lease_why holds a warning
 * ("" if none) when the server has AOF off or appendfsync other than always. */
#ifndef IDGEN_REDIS_H
#define IDGEN_REDIS_H

#include "idgen/error.h"
#include "idgen/lease.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Redis provider's row (idgen_lease_provider, idgen/lease.h). Constant. */
IDGEN_API extern const idgen_lease_provider idgen_lease_redis;

#ifdef __cplusplus
}
#endif
#endif
