#!/usr/bin/env bash
# Smoke test of bench/innodb.sh: the whole benchmark (a throwaway MariaDB, every scheme,
# the table, the plots) with a tiny row count, so the suite shows it still runs. It checks
# that it ran, not what it measured: the benchmark itself is evidence (docs/btree.md).
set -euo pipefail
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
idgen=${1:?usage: $0 /path/to/idgen}
build=$(dirname "$idgen")
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in mariadbd mariadb; do command -v $tool >/dev/null || fail "$tool not found (scripts/deps.sh test)"; done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rows=3000
bash "$src/bench/innodb.sh" --rows $rows --chunks 3 --out "$out" --build "$build" \
  >"$out/stdout" 2>"$out/stderr" || { rc=$?; cat "$out/stderr" >&2; fail "bench/innodb.sh exited $rc"; }
schemes=(snowflake segment uuid7 uuid4 uuid7_text)
[[ $(grep -c '^|' "$out/stdout") -eq $(( ${#schemes[@]} + 2 )) ]] || fail "table: $(cat "$out/stdout")"
for s in "${schemes[@]}"; do
  awk -F'\t' -v s="$s" -v r=$rows '$1 == s && $3 == r && $4 > 0 && $6 > 0 && $7 > 0 && $8 > 0 && $9 > 0 { ok = 1 }
    END { exit !ok }' "$out/innodb_summary.tsv" || fail "$s: $(cat "$out/innodb_summary.tsv")"
done
[[ $(wc -l <"$out/innodb_rate.tsv") -eq 4 ]] || fail "innodb_rate.tsv: $(cat "$out/innodb_rate.tsv")"
if command -v gnuplot >/dev/null; then
  for png in innodb_sizes innodb_rate; do [[ -s "$out/$png.png" ]] || fail "$png.png not drawn"; done
fi
pid=$(grep -o 'pid [0-9]*' "$out/stderr" | sed -n 1p | cut -d' ' -f2)
[[ -n "$pid" ]] || fail "no server pid in: $(cat "$out/stderr")"
! kill -0 "$pid" 2>/dev/null || fail "MariaDB (pid $pid) still running"
echo "PASS: bench/innodb.sh ran every scheme with $rows rows"
