#!/usr/bin/env bash
# Builds the PostgreSQL extension (pg/) against BUILD's libidgen.a and libidgen-opaque.a,
# and installs it into PostgreSQL's directories (pg_config's), as root or through sudo.
# Usage: scripts/pg-install.sh [BUILD] [make variables, e.g. WERROR=1]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
shift || true
for lib in libidgen.a libidgen-opaque.a; do
  [[ -f "$build/$lib" ]] || { echo "pg-install.sh: $build/$lib not built (make build)" >&2; exit 1; }
done
command -v pg_config >/dev/null && [[ -f "$(pg_config --pgxs)" ]] ||
  { echo "pg-install.sh: PGXS not found (scripts/deps.sh test installs postgresql-server-dev-15)" >&2; exit 1; }
make -s -C pg IDGEN_BUILD="$build" "$@"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
$sudo make -s -C pg IDGEN_BUILD="$build" install "$@" >/dev/null
echo "pg-install.sh: idgen installed into $(pg_config --pkglibdir) and $(pg_config --sharedir)/extension" >&2
