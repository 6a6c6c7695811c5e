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
scripts/deps.sh "$group"
shift || true
exec make "$target" "$@"
