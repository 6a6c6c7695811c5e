#!/usr/bin/env bash
# Runs every fuzz target briefly (5 s each, seeds included), so a parser crash fails CI.
# Longer runs: scripts/fuzz.sh 600.
set -euo pipefail
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "$src/scripts/fuzz.sh" "${FUZZ_SMOKE_SECONDS:-5}"
