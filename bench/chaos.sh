#!/usr/bin/env bash
# The long fault campaign: every scenario of tests/chaos/run.sh with longer phases and
# 4096-ID batches, then random mixed faults in rounds until --minutes have passed.
# Prints the table and writes it to --out. Histories go to a directory under /tmp and
# each scenario's are deleted once `idgen check` has read them (about 35 bytes per ID).
# Usage: bench/chaos.sh [--minutes N] [--out FILE] [--build DIR] [--phase S]
#                       [--pause-ms N] [--seed N] [--ttl S]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
MINUTES=10 BUILD=${IDGEN_BUILD_DIR:-$SRC/build} OUT="" PHASE=8 PAUSE_MS=40 TTL=6 SEED=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --phase) PHASE=$2; shift 2 ;;
    --pause-ms) PAUSE_MS=$2; shift 2 ;;
    --ttl) TTL=$2; shift 2 ;;
    --seed) SEED=(--seed "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/chaos.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$BUILD/chaos-table.md}
for t in idgen chaos_client chaos_delay; do
  [[ -x $BUILD/$t ]] || { echo "bench/chaos.sh: $BUILD/$t not built (cmake --build $BUILD)" >&2; exit 2; }
done
echo "bench/chaos.sh: $MINUTES minutes, phase $PHASE s, batches of 4096, pause $PAUSE_MS ms, TTL $TTL s; table -> $OUT" >&2
exec bash "$SRC/tests/chaos/run.sh" --idgen "$BUILD/idgen" --client "$BUILD/chaos_client" \
  --delay "$BUILD/chaos_delay" --phase "$PHASE" --batch 4096 --pause-ms "$PAUSE_MS" \
  --ttl "$TTL" --minutes "$MINUTES" --table "$OUT" "${SEED[@]}"
