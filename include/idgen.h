/* idgen.h: the public API of libidgen. Each part has its own header under idgen/. */
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
#include "idgen/opaque.h" /* in libidgen-opaque: link it (and libcrypto) to call these */
#include "idgen/etcd.h"   /* in libidgen-etcd: link it (libcurl, jansson) for etcd leases */

#endif
