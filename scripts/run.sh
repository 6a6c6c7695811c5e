#!/usr/bin/env bash
# The embedded default (`make run`, the README's first command): `idgen serve` on
# 127.0.0.1 (HTTP 8080, Redis protocol 6380) with the file lease provider keeping its
# worker-ID lock and high-water mark in a local state directory. Extra arguments and
# IDGEN_* variables pass through: scripts/run.sh --threads 1, IDGEN_HTTP=127.0.0.1:9090 ...
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
if [[ ! -x "$build/idgen" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)"
fi
export IDGEN_STATE_DIR=${IDGEN_STATE_DIR:-$PWD/$build/state}
mkdir -p "$IDGEN_STATE_DIR"
echo "idgen: serving on http://${IDGEN_HTTP:-127.0.0.1:8080} and redis://${IDGEN_RESP:-127.0.0.1:6380}" \
     "(state in $IDGEN_STATE_DIR; Ctrl-C stops)" >&2
resp=${IDGEN_RESP:-127.0.0.1:6380}
echo "idgen: try  curl -s http://${IDGEN_HTTP:-127.0.0.1:8080}/v1/id  or  redis-cli -p ${resp##*:} ID" >&2
exec "$build/idgen" serve "$@"
