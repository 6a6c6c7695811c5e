/* core_internal.h: what the core shares with the rest of libidgen: the unit of time the
 * clocks and generators convert by. */
#ifndef IDGEN_CORE_INTERNAL_H
#define IDGEN_CORE_INTERNAL_H

#include <stdint.h>

#define NS_PER_MS INT64_C(1000000)

#endif
