#!/usr/bin/env bash
# The short fault campaign (tests/chaos/run.sh, every scenario, ~2 s of load around each
# fault): real replicas on a real 3-member etcd, clocks stepped, processes paused and
# killed, etcd leader and quorum lost, worker IDs exhausted, the state dir full,
# read-only and removed under load, etcd slowed, segment generators on PostgreSQL, etcd and MariaDB (one at READ-COMMITTED,
# one beside a Flickr one-number client), the ZooKeeper provider on a 3-member ensemble of its
# own (scenario zookeeper, ~100 s); `idgen check` must find no duplicate and no disorder after
# each, and must find the duplicates of the negative control. About 6 minutes here (341 s).
# Usage: chaos.sh /path/to/idgen
set -euo pipefail
IDGEN=${1:?usage: chaos.sh /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
"$IDGEN" serve --help >/dev/null 2>&1 || { echo "FAIL: $IDGEN has no working 'serve'" >&2; exit 1; }
for t in chaos_client chaos_delay segment_ticket_client; do
  [[ -x $BUILD/$t ]] || { echo "FAIL: $BUILD/$t not built" >&2; exit 1; }
done
exec bash "$SRC/tests/chaos/run.sh" --idgen "$IDGEN" --client "$BUILD/chaos_client" \
  --delay "$BUILD/chaos_delay" --ticket "$BUILD/segment_ticket_client" --phase 2 --batch 256 --pause-ms 5 --ttl 4 --strict-liveness
