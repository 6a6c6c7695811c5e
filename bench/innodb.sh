#!/usr/bin/env bash
# bench/innodb.sh: what a key's width does to InnoDB's secondary indexes. InnoDB keeps
# the primary key in every secondary index entry (its pointer to the row), so a 16-byte
# key makes each secondary index grow, not only the primary one. Starts a throwaway
# MariaDB (scripts/mariadb-cluster.sh, one server), loads the same rows under each key
# scheme into a table with two secondary indexes, prints a markdown table, plots it, and
# stops the server by PID.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/innodb.sh [options]
Starts a throwaway MariaDB on 127.0.0.1 (temp dir, free port), loads N rows per key scheme
into t (id KEY PRIMARY KEY, a BIGINT, b INT, KEY (a), KEY (b)) with LOAD DATA in
--chunks equal parts, one transaction each, and reports each index's size
(mysql.innodb_index_stats after ANALYZE), the tablespace file, the load time and the
insert rate per chunk. Schemes:
  snowflake  BIGINT      idgen next (increasing)
  segment    BIGINT      idgen segment next (dense 1..N, as a segment sequence)
  uuid7      BINARY(16)  idgen uuid7 (increasing)
  uuid4      BINARY(16)  idgen uuid4 (random)
  uuid7_text CHAR(36)    idgen uuid7, as text (ascii)
  --rows N            rows per scheme (default 1000000)
  --chunks N          LOAD DATA parts, the rate samples (default 10)
  --schemes LIST      comma-separated subset, in the order to run
  --buffer-pool S     innodb_buffer_pool_size (default 32M, as bench/btree.sh's
                      shared_buffers)
  --out DIR           where the TSV files and plots go (default BUILD/bench-innodb)
  --docs              also write the InnoDB section of docs/btree.md and docs/img/innodb_*.png
  --build DIR         the build dir holding idgen (default: build)
  -h, --help          this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rows=1000000
chunks=10
schemes="snowflake,segment,uuid7,uuid4,uuid7_text"
buffer_pool=32M
out_dir=""
docs=0
build_dir="$src_dir/build"

die() { echo "bench/innodb.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) [[ $# -ge 2 ]] || die "--rows needs a value"; rows=$2; shift 2 ;;
    --chunks) [[ $# -ge 2 ]] || die "--chunks needs a value"; chunks=$2; shift 2 ;;
    --schemes) [[ $# -ge 2 ]] || die "--schemes needs a value"; schemes=$2; shift 2 ;;
    --buffer-pool) [[ $# -ge 2 ]] || die "--buffer-pool needs a value"; buffer_pool=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; out_dir=$2; shift 2 ;;
    --docs) docs=1; shift ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; build_dir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ "$rows" =~ ^[1-9][0-9]*$ ]] || die "--rows must be a positive integer"
[[ "$chunks" =~ ^[1-9][0-9]*$ && $chunks -le $rows ]] || die "--chunks must be from 1 to --rows"
[[ "$buffer_pool" =~ ^[1-9][0-9]*[MG]$ ]] || die "--buffer-pool like 32M"
declare -A column=([snowflake]="BIGINT" [segment]="BIGINT" [uuid7]="BINARY(16)"
                   [uuid4]="BINARY(16)" [uuid7_text]="CHAR(36) CHARACTER SET ascii")
IFS=, read -r -a scheme_list <<<"$schemes"
for s in "${scheme_list[@]}"; do [[ -n "${column[$s]:-}" ]] || die "unknown scheme '$s'"; done

idgen="$build_dir/idgen"
[[ -x "$idgen" ]] || { echo "bench/innodb.sh: $idgen not built (make build)" >&2; exit 1; }
for tool in mariadbd mariadb; do
  command -v "$tool" >/dev/null || { echo "bench/innodb.sh: $tool not found (scripts/deps.sh bench)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/idgen-innodb.XXXXXX)
chmod 755 "$tmp"
cleanup() {
  [[ -f "$tmp/db/members" ]] && "$src_dir/scripts/mariadb-cluster.sh" stop "$tmp/db" || true
  rm -rf "$tmp"
}
trap cleanup EXIT

[[ -n "$out_dir" ]] || out_dir="$build_dir/bench-innodb"
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

# One server; the settings the results depend on, written out (the ticket-server
# settings of the script do not matter here: the keys come from the client).
"$src_dir/scripts/mariadb-cluster.sh" start "$tmp/db" 1 "--innodb-buffer-pool-size=$buffer_pool" \
  --innodb-file-per-table=1 --innodb-page-size=16384 --innodb-flush-log-at-trx-commit=1 \
  --innodb-stats-persistent=1 --local-infile=1 >/dev/null
port=$(cat "$tmp/db/m0.port")
pid=$(cat "$tmp/db/m0.pid")
db() { mariadb --no-defaults --local-infile=1 -h 127.0.0.1 -P "$port" -u root -N -B test "$@"; }
version=$(db -e "SELECT VERSION()")
echo "bench/innodb.sh: MariaDB $version on 127.0.0.1:$port (pid $pid), innodb_buffer_pool_size=$buffer_pool" >&2

# keys SCHEME FILE: N keys, one a line, in the order they are inserted.
keys() {
  case $1 in
    snowflake) "$idgen" next -n "$rows" ;;
    segment) IDGEN_NAMESPACE=innodb-$$ "$idgen" segment init --dsn "$tmp/seg" s >/dev/null &&
             IDGEN_NAMESPACE=innodb-$$ "$idgen" segment next --dsn "$tmp/seg" -n "$rows" s ;;
    uuid7|uuid7_text) "$idgen" uuid7 -n "$rows" ;;
    uuid4) "$idgen" uuid4 -n "$rows" ;;
  esac >"$2"
}
mkdir -p "$tmp/seg"
chunk_rows=$(( (rows + chunks - 1) / chunks ))
summary="$out_dir/innodb_summary.tsv"
rate="$out_dir/innodb_rate.tsv"
printf 'scheme\tkey\trows\tload_s\trows_per_s\tprimary_bytes\tidx_a_bytes\tidx_b_bytes\tfile_bytes\tprimary_leaves\tidx_a_leaves\tidx_b_leaves\n' >"$summary"
: >"$tmp/rates"
start_s=$(date +%s)
for s in "${scheme_list[@]}"; do
  keys "$s" "$tmp/keys"
  # Rows: the key, a random bigint (a) and the row number (b): the secondary indexes'
  # own columns are the same for every scheme, so only the key's width differs.
  awk -v seed=42 'BEGIN { srand(seed) } { printf "%s\t%d\t%d\n", $1, int(rand() * 9e15), NR }' \
    "$tmp/keys" >"$tmp/rows"
  split -d -a 4 -l "$chunk_rows" "$tmp/rows" "$tmp/chunk."
  case $s in
    uuid7|uuid4) set_id="id = UNHEX(REPLACE(@k, '-', ''))" ;;
    *) set_id="id = @k" ;;
  esac
  db -e "DROP TABLE IF EXISTS t; CREATE TABLE t (id ${column[$s]} NOT NULL PRIMARY KEY,
         a BIGINT NOT NULL, b INT NOT NULL, KEY ia (a), KEY ib (b)) ENGINE=InnoDB"
  total_ns=0 done_rows=0
  : >"$tmp/rates.$s"
  for f in "$tmp"/chunk.*; do
    n=$(wc -l <"$f")
    t0=$(date +%s%N)
    db -e "LOAD DATA LOCAL INFILE '$f' INTO TABLE t (@k, a, b) SET $set_id"
    t1=$(date +%s%N)
    total_ns=$((total_ns + t1 - t0)) done_rows=$((done_rows + n))
    awk -v n="$n" -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f\n", n / (ns / 1e9) }' >>"$tmp/rates.$s"
    rm -f "$f"
  done
  got=$(db -e "SELECT count(*) FROM t")
  [[ $got -eq $rows ]] || { echo "bench/innodb.sh: $s: $got rows, not $rows" >&2; exit 1; }
  # Sizes: the pages each index holds (after ANALYZE, persistent statistics), and the
  # tablespace file.
  db -e "ANALYZE TABLE t" >/dev/null
  read -r prim ia ib < <(db -e "SELECT
      SUM(IF(index_name = 'PRIMARY', stat_value, 0)) * @@innodb_page_size,
      SUM(IF(index_name = 'ia', stat_value, 0)) * @@innodb_page_size,
      SUM(IF(index_name = 'ib', stat_value, 0)) * @@innodb_page_size
    FROM mysql.innodb_index_stats
    WHERE database_name = 'test' AND table_name = 't' AND stat_name = 'size'")
  read -r leaf_p leaf_a leaf_b < <(db -e "SELECT
      SUM(IF(index_name = 'PRIMARY', stat_value, 0)), SUM(IF(index_name = 'ia', stat_value, 0)),
      SUM(IF(index_name = 'ib', stat_value, 0))
    FROM mysql.innodb_index_stats
    WHERE database_name = 'test' AND table_name = 't' AND stat_name = 'n_leaf_pages'")
  file=$(db -e "SELECT file_size FROM information_schema.innodb_sys_tablespaces WHERE name = 'test/t'")
  load_s=$(awk -v ns="$total_ns" 'BEGIN { printf "%.2f", ns / 1e9 }')
  rps=$(awk -v ns="$total_ns" -v n="$rows" 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "${column[$s]%% *}" "$rows" "$load_s" \
    "$rps" "$prim" "$ia" "$ib" "$file" "$leaf_p" "$leaf_a" "$leaf_b" >>"$summary"
  echo "bench/innodb.sh: $s: $rows rows in ${load_s}s" >&2
  db -e "DROP TABLE t"
done
elapsed_s=$(( $(date +%s) - start_s ))

# The rate table: rows inserted, then one column per scheme.
{
  printf 'rows'
  for s in "${scheme_list[@]}"; do printf '\t%s' "$s"; done
  echo
  paste <(seq "$chunk_rows" "$chunk_rows" $((chunk_rows * chunks)) | sed "\$s/.*/$rows/") \
    $(for s in "${scheme_list[@]}"; do echo "$tmp/rates.$s"; done)
} >"$rate"

table="$out_dir/innodb_table.md"
{
  echo "| Scheme | Key | Rows | Load s | Rows/s | PRIMARY MiB | KEY (a) MiB | KEY (b) MiB | File MiB | Leaf pages PRIMARY / (a) / (b) | Secondary leaves ×snowflake |"
  echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  awk -F'\t' 'function m(b) { return sprintf("%.1f", b / 1048576) }
    NR == 2 { base = $11 + $12 }
    NR > 1 { printf "| %s | %s | %d | %s | %d | %s | %s | %s | %s | %d / %d / %d | %.2f× |\n", $1, $2, $3, $4,
             $5, m($6), m($7), m($8), m($9), $10, $11, $12, (base > 0 ? ($11 + $12) / base : 0) }' "$summary"
} >"$table"
cat "$table"
echo "bench/innodb.sh: loads took ${elapsed_s}s; results in $out_dir" >&2

if command -v gnuplot >/dev/null 2>&1; then
  awk -F'\t' 'NR > 1 { printf "%s\t%.2f\t%.2f\t%.2f\n", $1, $6 / 1048576, $7 / 1048576, $8 / 1048576 }' \
    "$summary" >"$out_dir/innodb_bars.tsv"
  ncols=$(( ${#scheme_list[@]} + 1 ))
  gnuplot <<EOF || { echo "bench/innodb.sh: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 900,540 font "DejaVu Sans,11" noenhanced
set datafile separator "\t"
set key outside right top
set grid
set output "$out_dir/innodb_sizes.png"
set title "InnoDB: each index's size per key ($rows rows; KEY (a) and KEY (b) hold the key too)"
set ylabel "MiB"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid noxtics ytics
set yrange [0:*]
plot "$out_dir/innodb_bars.tsv" using 2:xtic(1) title "PRIMARY (the rows)", \
     "" using 3 title "KEY (a) BIGINT", "" using 4 title "KEY (b) INT"
set output "$out_dir/innodb_rate.png"
set style data linespoints
set title "InnoDB insert rate over the run (LOAD DATA in $chunks parts, buffer pool $buffer_pool)"
set xlabel "rows inserted"
set ylabel "rows/s over the part"
set format x "%.0s%c"
set yrange [0:*]
plot for [i=2:$ncols] "$rate" using 1:i with linespoints lw 2 pt (i + 3) title columnheader(i)
EOF
else
  echo "bench/innodb.sh: gnuplot not found: no plots (scripts/deps.sh bench)" >&2
fi

if [[ $docs -eq 1 ]]; then
  tag=""
  [[ "$rows" == 1000000 ]] || tag="_$rows"
  begin="<!-- innodb-results rows=$rows begin: written by bench/innodb.sh --docs -->"
  end="<!-- innodb-results rows=$rows end -->"
  cpu=$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')
  results="$tmp/results.md"
  {
    echo "$begin"
    echo "Run of $(date -u +%Y-%m-%d) ($(date -u +%H:%M) UTC): \`bench/innodb.sh --rows $rows --chunks $chunks --buffer-pool $buffer_pool --docs\`;"
    echo "all the loads took ${elapsed_s} s. Machine: $(nproc) cores ($cpu), shared with other"
    echo "work; MariaDB $version, innodb_buffer_pool_size = $buffer_pool, 16 KiB pages."
    echo
    cat "$table"
    echo
    echo "![Each index's size per key](img/innodb_sizes$tag.png)"
    echo
    echo "![Insert rate over the run](img/innodb_rate$tag.png)"
    echo "$end"
  } >"$results"
  doc="$src_dir/docs/btree.md"
  if grep -qF "$begin" "$doc"; then
    awk -v f="$results" -v b="$begin" -v e="$end" '
      $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$doc" >"$tmp/doc.md"
    cat "$tmp/doc.md" >"$doc"
  else
    { echo; cat "$results"; } >>"$doc"
  fi
  mkdir -p "$src_dir/docs/img"
  for png in innodb_sizes innodb_rate; do
    [[ -f "$out_dir/$png.png" ]] && cp "$out_dir/$png.png" "$src_dir/docs/img/$png$tag.png"
  done
  echo "bench/innodb.sh: wrote $doc and docs/img/innodb_*$tag.png" >&2
fi
