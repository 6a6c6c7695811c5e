#!/usr/bin/env bash
# The README's entry point on a fresh Debian machine: install what the target needs, then make it.
# Usage: ./make.sh run | ./make.sh test | ./make.sh bench | ./make.sh [any make target]
set -euo pipefail
cd "$(dirname "$0")"
target=${1:-all}
case "$target" in
  test|test-*|check|fuzz|pg|pg-*) group=test ;;
  bench*) group=bench ;;
  *) group=build ;;
esac
if [[ $target == test ]]; then
  # The whole suite: its first stages (ASan and TSan builds, unit and concurrency tests)
  # need only the unit group; the rest of the test group installs meanwhile, and
  # scripts/test.sh waits for it before a stage that needs it (a fresh machine: 289
  # packages, 104 s, half of it unpacking on one core while the other was idle).
  scripts/deps.sh unit
  IDGEN_DEPS_PENDING=$(mktemp -d)
  export IDGEN_DEPS_PENDING
  ( t0=$SECONDS; scripts/deps.sh test >"$IDGEN_DEPS_PENDING/log" 2>&1
    echo "$? $((SECONDS - t0))" >"$IDGEN_DEPS_PENDING/rc.tmp" &&
      mv "$IDGEN_DEPS_PENDING/rc.tmp" "$IDGEN_DEPS_PENDING/rc" ) &
else
  scripts/deps.sh "$group"
fi
shift || true
exec make "$target" "$@"
