/* idgen.h: the public API of libidgen, and only libidgen's: each part has its own header
 * under idgen/. The add-on libraries' headers are included on their own, next to the
 * library they need: idgen/opaque.h (libidgen-opaque, libcrypto), idgen/etcd.h
 * (libidgen-etcd, libcurl, jansson) and idgen/redis.h (libidgen-redis, hiredis). */
#ifndef IDGEN_H
#define IDGEN_H

#include "idgen/error.h"
#include "idgen/layout.h"
#include "idgen/clock.h"
#include "idgen/gen.h"
#include "idgen/codec.h"
#include "idgen/random.h"
#include "idgen/uuid.h"
#include "idgen/collide.h"
#include "idgen/lease.h"

#endif
