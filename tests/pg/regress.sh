#!/usr/bin/env bash
# `make -C pg installcheck` (pg_regress: pg/test/sql against pg/test/expected) on a
# throwaway cluster: static lease with worker 7, the tests' opaque key.
# Usage: tests/pg/regress.sh /path/to/idgen
source "$(dirname "$0")/pg_common.bash"

# The key of docs/opaque.md's example (000102...1f), readable by the server only.
printf '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n' >"$T/opaque.key"
chown postgres: "$T/opaque.key" 2>/dev/null || true
chmod 600 "$T/opaque.key"
start_cluster regress "idgen.lease=static" "idgen.worker_id=7" \
  "idgen.opaque_key_file='$T/opaque.key'"
sql regress "CREATE EXTENSION idgen"
wait_state regress held
sql regress "DROP EXTENSION idgen"

out=$BUILD/pg-regress
rm -rf "$out"
mkdir -p "$out"
if ! PGHOST=127.0.0.1 PGPORT=$(port_of regress) PGUSER=postgres \
  make -C "$SRC/pg" installcheck IDGEN_BUILD="$BUILD" >"$T/installcheck.log" 2>&1; then
  cat "$T/installcheck.log" >&2
  cat "$out/regression.diffs" >&2 2>/dev/null || true
  fail "pg_regress failed (diffs above, results in $out)"
fi
grep -E 'tests passed|failed' "$T/installcheck.log" || true
ok "make -C pg installcheck passed"
