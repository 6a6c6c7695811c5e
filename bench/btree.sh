#!/usr/bin/env bash
# bench/btree.sh: what each ID scheme does to a PostgreSQL B-tree. Starts a throwaway
# PostgreSQL 15 cluster on a free loopback port, loads the same rows under each key
# scheme with bench_btree_load, prints a markdown table, plots it, and stops the cluster.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/btree.sh [options]
Starts a throwaway PostgreSQL cluster on 127.0.0.1 (temp dir, free port), loads N rows
per ID scheme (bigserial, snowflake, idgen_next, uuid4_pg, uuid4, uuid7, idgen_uuidv7, ulid,
ulid_mono) with COPY in equal batches, prints a markdown table and draws plots with gnuplot.
idgen_next and idgen_uuidv7 are column defaults of the idgen PostgreSQL extension: the
cluster preloads it, so it must be installed (make pg-install).
  --rows N             rows per scheme (default 1000000)
  --batch N            rows per COPY, one transaction each (default 1000)
  --every N            sample the insert rate every N rows (default 100000, or rows/10)
  --checkpoint-every N CHECKPOINT every N rows, untimed (default: as --every; 0: never)
  --schemes LIST       comma-separated subset, in the order to run
  --repeat N           rounds of all schemes; the median run is reported (default 3)
  --shared-buffers S   PostgreSQL shared_buffers (default 32MB)
  --out DIR            where the TSV files and plots go (default: BUILD/bench-btree)
  --docs               also write docs/btree.md (results section) and docs/img/btree_*.png
  --build DIR          the build dir holding bench_btree_load (default: build)
  -h, --help           this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rows=1000000
batch=1000
every=""
checkpoint_every=""
repeat=3
schemes=""
shared_buffers=32MB
out_dir=""
docs=0
build_dir="$src_dir/build"

die() { echo "bench/btree.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) [[ $# -ge 2 ]] || die "--rows needs a value"; rows=$2; shift 2 ;;
    --batch) [[ $# -ge 2 ]] || die "--batch needs a value"; batch=$2; shift 2 ;;
    --every) [[ $# -ge 2 ]] || die "--every needs a value"; every=$2; shift 2 ;;
    --checkpoint-every) [[ $# -ge 2 ]] || die "--checkpoint-every needs a value"
                        checkpoint_every=$2; shift 2 ;;
    --repeat) [[ $# -ge 2 ]] || die "--repeat needs a value"; repeat=$2; shift 2 ;;
    --schemes) [[ $# -ge 2 ]] || die "--schemes needs a value"; schemes=$2; shift 2 ;;
    --shared-buffers) [[ $# -ge 2 ]] || die "--shared-buffers needs a value"
                      shared_buffers=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; out_dir=$2; shift 2 ;;
    --docs) docs=1; shift ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; build_dir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ "$rows" =~ ^[1-9][0-9]*$ ]] || die "--rows must be a positive integer"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer"
[[ "$shared_buffers" =~ ^[1-9][0-9]*(kB|MB|GB)$ ]] || die "--shared-buffers like 32MB"

loader="$build_dir/bench_btree_load"
[[ -x "$loader" ]] || { echo "bench/btree.sh: $loader not built (make build; needs libpq-dev)" >&2; exit 1; }

pg_bin=""
if command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/initdb" ]]; then
  pg_bin=$(pg_config --bindir)
elif [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
  pg_bin=/usr/lib/postgresql/15/bin
else
  echo "bench/btree.sh: PostgreSQL server not found (scripts/deps.sh bench)" >&2
  exit 1
fi

# The extension's schemes (in the default list, or named) need it installed.
needs_idgen=0
[[ -z "$schemes" || ",$schemes," == *,idgen_* ]] && needs_idgen=1
preload=""
if [[ $needs_idgen -eq 1 ]]; then
  [[ -f "$(pg_config --pkglibdir 2>/dev/null)/idgen.so" ]] || {
    echo "bench/btree.sh: the idgen extension is not installed (make pg-install), or leave out" \
      "its schemes: --schemes bigserial,snowflake,uuid4_pg,uuid4,uuid7,ulid,ulid_mono" >&2
    exit 1
  }
  # The file lease, in the data directory, in a namespace of this run's own.
  preload="shared_preload_libraries = 'idgen'
idgen.namespace = 'btree-$$'"
fi

# initdb refuses to run as root: as root, run the server as the postgres user.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    su postgres -s /bin/bash -c "$*"
  else
    bash -c "$*"
  fi
}

tmp=$(mktemp -d /tmp/idgen-btree.XXXXXX)
chmod 755 "$tmp"
pg_pid=""
cleanup() {
  if [[ -n "$pg_pid" ]] && kill -0 "$pg_pid" 2>/dev/null; then
    kill -INT "$pg_pid" 2>/dev/null || true # fast shutdown
    for _ in $(seq 1 300); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
    kill -QUIT "$pg_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

[[ -n "$out_dir" ]] || out_dir="$build_dir/bench-btree"
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

mkdir "$tmp/pg"
[[ $(id -u) -eq 0 ]] && chown postgres: "$tmp/pg"
as_pg "'$pg_bin/initdb' -D '$tmp/pg/data' -U postgres -A trust --no-sync -E UTF8 --locale=C" \
  >"$tmp/pg/initdb.log" 2>&1 || { cat "$tmp/pg/initdb.log" >&2; exit 1; }

# The settings the results depend on, written out even where they are the defaults.
cat >>"$tmp/pg/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$tmp/pg'
shared_buffers = $shared_buffers
autovacuum = off
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = replica
wal_compression = off
checkpoint_timeout = 1h
max_wal_size = 8GB
$preload
EOF

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
started=0
for _ in 1 2 3 4 5; do
  port=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
  port_free "$port" || continue
  if as_pg "'$pg_bin/pg_ctl' -D '$tmp/pg/data' -l '$tmp/pg/server.log' -w -t 60 \
            -o '-p $port' start" >/dev/null 2>&1; then
    started=1
    break
  fi
done
if [[ $started -ne 1 ]]; then
  echo "bench/btree.sh: PostgreSQL did not start" >&2
  cat "$tmp/pg/server.log" >&2 || true
  exit 1
fi
pg_pid=$(head -n 1 "$tmp/pg/data/postmaster.pid")
version=$("$pg_bin/postgres" --version)
echo "bench/btree.sh: $version on 127.0.0.1:$port (pid $pg_pid), shared_buffers=$shared_buffers" >&2

# The loader talks through the Unix socket in the temp dir: the same server, but no TCP
# settings of the machine's loopback (a qdisc, a firewall) can get in the way.
args=(--conninfo "host=$tmp/pg port=$port user=postgres dbname=postgres"
      --rows "$rows" --batch "$batch" --repeat "$repeat" --out "$out_dir")
[[ -n "$every" ]] && args+=(--every "$every")
[[ -n "$checkpoint_every" ]] && args+=(--checkpoint-every "$checkpoint_every")
[[ -n "$schemes" ]] && args+=(--schemes "$schemes")
start_s=$(date +%s)
if ! "$loader" "${args[@]}"; then
  echo "bench/btree.sh: the load failed; the server log ends:" >&2
  tail -n 20 "$tmp/pg/server.log" >&2 || true
  exit 1
fi
elapsed_s=$(( $(date +%s) - start_s ))
echo "bench/btree.sh: loads took ${elapsed_s}s; results in $out_dir" >&2

# Plots: the insert rate over the run, then index size and WAL per scheme.
if command -v gnuplot >/dev/null 2>&1; then
  ncols=$(head -n 1 "$out_dir/btree_rate.tsv" | awk -F'\t' '{print NF}')
  # Index and WAL in MiB per scheme, one line each, for the bar chart.
  awk -F'\t' 'NR > 1 { printf "%s\t%.2f\t%.2f\t%.2f\n", $1, $6 / 1048576, $12 / 1048576, $7 / 1048576 }' \
    "$out_dir/btree_summary.tsv" >"$out_dir/btree_bars.tsv"
  gnuplot <<EOF || { echo "bench/btree.sh: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 900,540 font "DejaVu Sans,11" noenhanced
set datafile separator "\t"
set key outside right top
set grid
set output "$out_dir/btree_rate.png"
set title "Insert rate over the run ($rows rows, COPY batches of $batch, shared_buffers $shared_buffers)"
set xlabel "rows inserted"
set ylabel "rows/s over the interval$([[ $repeat -gt 1 ]] && echo " (median of $repeat rounds)")"
set format x "%.0s%c"
set yrange [0:*]
plot for [i=2:$ncols] "$out_dir/btree_rate.tsv" using 1:i with linespoints lw 2 pt (i + 3) ps 1.1 dashtype i%2+1 title columnheader(i)
set output "$out_dir/btree_wal_over_rows.png"
set title "WAL written over the run (cumulative)"
set ylabel "WAL MiB"
plot for [i=2:$ncols] "$out_dir/btree_wal.tsv" using 1:i with linespoints lw 2 pt (i + 3) ps 1.1 dashtype i%2+1 title columnheader(i)
set output "$out_dir/btree_size_wal.png"
set title "Primary-key index, table and WAL per scheme ($rows rows)"
set xlabel ""
set ylabel "MiB"
set format x "%g"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror
set grid noxtics ytics
plot "$out_dir/btree_bars.tsv" using 2:xtic(1) title "index", \
     "" using 4 title "table (heap)", \
     "" using 3 title "WAL"
EOF
else
  echo "bench/btree.sh: gnuplot not found: no plots (scripts/deps.sh bench)" >&2
fi

if [[ $docs -eq 1 ]]; then
  # One results section (and set of plots) per row count: the default run's plots are
  # docs/img/btree_*.png, another row count's carry it, e.g. btree_rate_10000000.png.
  tag=""
  [[ "$rows" == 1000000 ]] || tag="_$rows"
  begin="<!-- btree-results rows=$rows begin: written by bench/btree.sh --docs -->"
  end="<!-- btree-results rows=$rows end -->"
  cpu=$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')
  cores=$(nproc)
  mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
  cmd="bench/btree.sh --rows $rows --batch $batch --repeat $repeat --shared-buffers $shared_buffers"
  [[ -n "$every" ]] && cmd+=" --every $every"
  [[ -n "$checkpoint_every" ]] && cmd+=" --checkpoint-every $checkpoint_every"
  [[ -n "$schemes" ]] && cmd+=" --schemes $schemes"
  cmd+=" --docs"
  results="$tmp/results.md"
  {
    echo "$begin"
    echo "Run of $(date -u +%Y-%m-%d) ($(date -u +%H:%M) UTC): \`$cmd\`; all the loads took ${elapsed_s} s."
    echo "Machine: $cores cores ($cpu), $mem RAM, $(uname -sr); $version,"
    echo "shared_buffers = $shared_buffers. Absolute figures are this shared machine's: compare"
    echo "the rows with each other."
    echo
    cat "$out_dir/btree_table.md"
    echo
    echo "Relative to \`bigserial\` in the same run:"
    echo
    echo "| Scheme | Index size | Leaf pages | WAL | Full-page images | Insert time |"
    echo "|---|--:|--:|--:|--:|--:|"
    awk -F'\t' 'function x(a, b) { return b > 0 ? sprintf("%.2f×", a / b) : "n/a" }
      NR == 2 { bi = $6; bl = $8; bw = $12; bf = $13; bt = $4 }
      NR > 1 { printf "| %s | %s | %s | %s | %s | %s |\n", $1, x($6, bi), x($8, bl),
               x($12, bw), x($13, bf), x($4, bt) }' "$out_dir/btree_summary.tsv"
    echo
    echo "![Insert rate over the run](img/btree_rate$tag.png)"
    echo
    echo "![Index, table and WAL per scheme](img/btree_size_wal$tag.png)"
    echo
    echo "![WAL over the run](img/btree_wal_over_rows$tag.png)"
    echo "$end"
  } >"$results"
  doc="$src_dir/docs/btree.md"
  if [[ -f "$doc" ]] && grep -qF "$begin" "$doc"; then
    awk -v f="$results" -v b="$begin" -v e="$end" '
      $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$doc" >"$tmp/doc.md"
    cat "$tmp/doc.md" >"$doc"
  elif [[ -f "$doc" ]]; then
    { echo; cat "$results"; } >>"$doc"
  else
    { echo "# PostgreSQL B-trees under each ID scheme"; echo; cat "$results"; } >"$doc"
  fi
  mkdir -p "$src_dir/docs/img"
  for png in btree_rate btree_size_wal btree_wal_over_rows; do
    if [[ -f "$out_dir/$png.png" ]]; then
      cp "$out_dir/$png.png" "$src_dir/docs/img/$png$tag.png"
    fi
  done
  echo "bench/btree.sh: wrote $doc and docs/img/btree_*$tag.png" >&2
fi
