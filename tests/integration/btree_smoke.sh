#!/usr/bin/env bash
# Smoke test of bench/btree.sh: the whole benchmark (throwaway PostgreSQL, every scheme,
# table, plots) with a tiny row count, so CI shows it still runs. It checks that it ran,
# not what it measured: the benchmark itself is evidence (docs/btree.md), not a test.
set -euo pipefail
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IDGEN_BUILD_DIR:-$src/build}

# scripts/deps.sh test installs PostgreSQL and libpq: their absence is a failure here.
if [[ ! -x "$build/bench_btree_load" ]]; then
  echo "FAIL: $build/bench_btree_load not built (needs libpq-dev: scripts/deps.sh test)" >&2; exit 1
fi
if [[ ! -x /usr/lib/postgresql/15/bin/initdb ]] && ! command -v pg_config >/dev/null 2>&1; then
  echo "FAIL: no PostgreSQL server (scripts/deps.sh test)" >&2; exit 1
fi
# idgen_next and idgen_uuidv7 are the extension's (scripts/test.sh's pg stage installs it).
if [[ ! -f "$(pg_config --pkglibdir)/idgen.so" ]]; then
  echo "FAIL: the idgen PostgreSQL extension is not installed (make pg-install)" >&2; exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rows=2000
bash "$src/bench/btree.sh" --rows "$rows" --batch 500 --every 500 --repeat 1 --out "$out" --build "$build" \
  >"$out/stdout" 2>"$out/stderr" || { rc=$?; cat "$out/stderr" >&2; fail "bench/btree.sh exited $rc"; }

schemes=(bigserial snowflake idgen_next uuid4_pg uuid4 uuid7 idgen_uuidv7 ulid ulid_mono)
# The markdown table: a header, a rule, one row per scheme.
[[ $(grep -c '^|' "$out/stdout") -eq $(( ${#schemes[@]} + 2 )) ]] || fail "table rows: $(cat "$out/stdout")"
for s in "${schemes[@]}"; do
  line=$(awk -F'\t' -v s="$s" '$1 == s' "$out/btree_summary.tsv")
  [[ -n "$line" ]] || fail "$s missing from btree_summary.tsv"
  # rows, index bytes, leaf pages, WAL bytes
  awk -F'\t' -v r="$rows" '$2 != r || $6 <= 0 || $8 <= 0 || $12 <= 0 { exit 1 }' <<<"$line" \
    || fail "$s: implausible summary: $line"
done
# One rate sample per 500 rows, one column per scheme.
[[ $(wc -l <"$out/btree_rate.tsv") -eq $(( rows / 500 + 1 )) ]] || fail "btree_rate.tsv: $(cat "$out/btree_rate.tsv")"
if command -v gnuplot >/dev/null 2>&1; then
  for png in btree_rate btree_size_wal btree_wal_over_rows; do
    [[ -s "$out/$png.png" ]] || fail "$png.png not drawn"
  done
fi
# The cluster is stopped and its temp dir gone.
pid=$(grep -o 'pid [0-9]*' "$out/stderr" | sed -n 1p | cut -d' ' -f2)
[[ -n "$pid" ]] || fail "no server pid in: $(cat "$out/stderr")"
! kill -0 "$pid" 2>/dev/null || fail "PostgreSQL (pid $pid) still running"
echo "PASS: bench/btree.sh ran every scheme with $rows rows"
