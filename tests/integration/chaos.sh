#!/usr/bin/env bash
# The short fault campaign (tests/chaos/run.sh, ~2 s of load around each fault), its
# scenarios on etcd: real replicas on a real 3-member etcd, clocks stepped, processes
# paused and killed, etcd leader and quorum lost, worker IDs exhausted, etcd slowed,
# etcd requiring client certificates (TLS), segment generators, the mixed nemesis;
# `idgen check` must find no duplicate and no disorder after each, and must find the
# duplicates of the negative control. The other
# scenarios (the file provider, MariaDB, ZooKeeper, Redis) are chaos_stores.sh's, so
# that the two halves run side by side in the suite.
# Usage: chaos.sh /path/to/idgen [SCENARIO...]   (default: the etcd ones)
set -euo pipefail
IDGEN=${1:?usage: chaos.sh /path/to/idgen [SCENARIO...]}
shift
[[ $# -gt 0 ]] || set -- negative clock-5ms clock-200ms clock-3s clock-1h pause kill-restart \
  all-restart etcd-leader etcd-quorum regions exhausted netdelay etcd-tls segment mixed
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
"$IDGEN" serve --help >/dev/null 2>&1 || { echo "FAIL: $IDGEN has no working 'serve'" >&2; exit 1; }
for t in chaos_client chaos_delay segment_ticket_client; do
  [[ -x $BUILD/$t ]] || { echo "FAIL: $BUILD/$t not built" >&2; exit 1; }
done
exec bash "$SRC/tests/chaos/run.sh" --idgen "$IDGEN" --client "$BUILD/chaos_client" \
  --delay "$BUILD/chaos_delay" --ticket "$BUILD/segment_ticket_client" --phase 2 --batch 256 --pause-ms 5 --ttl 4 --strict-liveness "$@"
