#!/usr/bin/env bash
# bench/pg.sh: the idgen PostgreSQL extension next to the server's own key makers, in one
# run on one throwaway cluster: idgen_next() against nextval() on a sequence, and
# gen_random_uuid() against idgen_uuidv7(); called in a SELECT, and as a column default
# under INSERT, at 1 and 8 clients. Prints a markdown table, writes a JSON file.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/pg.sh [options]
Starts a PostgreSQL 15 cluster on 127.0.0.1 with the idgen extension preloaded (file lease;
synchronous_commit = off, autovacuum = off), then, each measurement --repeat times with
the functions taken in turn, reports the median:
  SELECT count(f) FROM generate_series(1, ROWS), timed inside the server, one session,
    f in idgen_next(), nextval('s'), gen_random_uuid(), idgen_uuidv7(), and a bare loop;
  the same with N sessions at once (pgbench, 10,000 calls per statement);
  INSERT INTO t (v) SELECT g FROM generate_series(1, 100) g with f as the key's column
    default (pgbench, TRUNCATE before each run), with 1 and N clients;
  then, on a second cluster whose layout has a wide sequence (--wide), the two SELECTs
    again for idgen_next() and nextval('s'): the cost without the ceiling of 4,096 IDs
    per ms that the default layout puts on one worker ID.
  --rows N       calls in the one-session SELECT (default 1000000)
  --seconds S    length of each pgbench run (default 5)
  --repeat N     runs of each measurement; the median is reported (default 3)
  --clients N    the many-clients count (default 8)
  --layout L     idgen.layout (default snowflake: its ceiling is 4,096,000 IDs/s)
  --wide L       the second cluster's layout (default time:41,worker:4,seq:18; '' skips it)
  --json FILE    the result file (default bench/results/pg.json)
  --md FILE      the markdown section (default bench/results/pg.md)
  --docs         also replace the pg section of docs/benchmarks.md
  -h, --help     this text
The idgen extension must be installed (make pg-install).
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rows=1000000
seconds=5
repeat=3
many=8
layout=snowflake
wide="time:41,worker:4,seq:18"
json="$src_dir/bench/results/pg.json"
md="$src_dir/bench/results/pg.md"
docs=0
bl_name="bench/pg.sh"
die() { echo "$bl_name: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) [[ $# -ge 2 ]] || die "--rows needs a value"; rows=$2; shift 2 ;;
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; seconds=$2; shift 2 ;;
    --repeat) [[ $# -ge 2 ]] || die "--repeat needs a value"; repeat=$2; shift 2 ;;
    --clients) [[ $# -ge 2 ]] || die "--clients needs a value"; many=$2; shift 2 ;;
    --layout) [[ $# -ge 2 ]] || die "--layout needs a value"; layout=$2; shift 2 ;;
    --wide) [[ $# -ge 2 ]] || die "--wide needs a value"; wide=$2; shift 2 ;;
    --json) [[ $# -ge 2 ]] || die "--json needs a value"; json=$2; shift 2 ;;
    --md) [[ $# -ge 2 ]] || die "--md needs a value"; md=$2; shift 2 ;;
    --docs) docs=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in rows seconds repeat many; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--${v/many/clients} must be a positive integer"
done
[[ "$layout" =~ ^[A-Za-z0-9:@,._-]+$ ]] || die "--layout: a preset or a spec"
[[ "$wide" =~ ^[A-Za-z0-9:@,._-]*$ ]] || die "--wide: a preset or a spec"
for tool in pgbench psql pg_config; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$bl_name: $tool not found (scripts/deps.sh bench)" >&2; exit 1; }
done
[[ -f "$(pg_config --pkglibdir)/idgen.so" ]] ||
  { echo "$bl_name: the idgen extension is not installed (make pg-install)" >&2; exit 1; }

# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_init
machine=$(bl_machine)
date=$(date -u +%Y-%m-%dT%H:%MZ)
cmd="bench/pg.sh --rows $rows --seconds $seconds --repeat $repeat --clients $many"
[[ "$layout" == snowflake ]] || cmd+=" --layout $layout"
[[ "$wide" == "time:41,worker:4,seq:18" ]] || cmd+=" --wide '$wide'"
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

# start_cluster NAME LAYOUT: a cluster with the extension, a sequence, the timing function
# and the tables; sets port_NAME.
start_cluster() {
  local out
  out=$("$bl_src/scripts/pg-cluster.sh" start "$bl_tmp/$1" "shared_preload_libraries=idgen" \
    "idgen.namespace='bench-pg-$$-$1'" "idgen.layout='$2'" "synchronous_commit=off" \
    "autovacuum=off" "max_connections=40") || bl_die "PostgreSQL did not start"
  bl_pg_dirs+=("$bl_tmp/$1")
  printf -v "port_$1" '%s' "${out%% *}"
  port=${out%% *}
  sql "CREATE EXTENSION idgen"
  sql "CREATE SEQUENCE s"
  sql "SELECT idgen_next()" >/dev/null # waits for the lease
  # Timed inside the server: the client's round trip is not part of it.
  sql "CREATE FUNCTION bench_select(expr text, n bigint) RETURNS double precision
       LANGUAGE plpgsql AS \$\$
       DECLARE t0 timestamptz := clock_timestamp(); c bigint;
       BEGIN
         EXECUTE format('SELECT count(%s) FROM generate_series(1, %s)', expr, n) INTO c;
         RETURN extract(epoch FROM clock_timestamp() - t0);
       END \$\$"
  for k in "${keys[@]}"; do sql "CREATE TABLE t_$k (id ${column[$k]}, v int NOT NULL)"; done
}
port=""
sql() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

keys=(idgen_next nextval uuid4 uuidv7)
declare -A expr=([idgen_next]="idgen_next()" [nextval]="nextval('s')"
                 [uuid4]="gen_random_uuid()" [uuidv7]="idgen_uuidv7()" [loop]="1")
declare -A column=([idgen_next]="bigint PRIMARY KEY DEFAULT idgen_next()"
                   [nextval]="bigint PRIMARY KEY DEFAULT nextval('s')"
                   [uuid4]="uuid PRIMARY KEY DEFAULT gen_random_uuid()"
                   [uuidv7]="uuid PRIMARY KEY DEFAULT idgen_uuidv7()")
start_cluster main "$layout"
pg_version=$(sql "SHOW server_version" | cut -d' ' -f1)

# pgbench_rate CLIENTS SCRIPT: transactions per second.
pgbench_rate() {
  local out
  out=$(pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c "$1" -j 2 -T "$seconds" \
    -f "$2" postgres 2>&1) || { echo "$out" >&2; bl_die "pgbench failed"; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out"
}

declare -A samples
# measure_selects PREFIX KEY...: the one-session and the many-session SELECT, each
# --repeat times with the keys in turn, into samples[PREFIXselect1_KEY], [PREFIXselectN_KEY].
measure_selects() {
  local prefix=$1 k r s tps
  shift
  for ((r = 0; r < repeat; r++)); do
    for k in "$@"; do
      s=$(sql "SELECT bench_select(\$e\$${expr[$k]}\$e\$, $rows)")
      samples[${prefix}select1_$k]+=" $(awk -v n="$rows" -v s="$s" 'BEGIN { printf "%.1f", n / s }')"
    done
  done
  bl_log "${prefix}one-session SELECT done"
  for ((r = 0; r < repeat; r++)); do
    for k in "$@"; do
      [[ $k == loop ]] && continue
      echo "SELECT count(${expr[$k]}) FROM generate_series(1, 10000);" >"$bl_tmp/select.sql"
      tps=$(pgbench_rate "$many" "$bl_tmp/select.sql")
      samples[${prefix}selectN_$k]+=" $(awk -v t="$tps" 'BEGIN { printf "%.1f", t * 10000 }')"
    done
  done
  bl_log "${prefix}$many-session SELECT done"
}

measure_selects "" "${keys[@]}" loop
# INSERT with 1 and many clients.
for c in 1 "$many"; do
  for ((r = 0; r < repeat; r++)); do
    for k in "${keys[@]}"; do
      sql "TRUNCATE t_$k"
      echo "INSERT INTO t_$k (v) SELECT g FROM generate_series(1, 100) g;" >"$bl_tmp/insert.sql"
      tps=$(pgbench_rate "$c" "$bl_tmp/insert.sql")
      samples[insert${c}_$k]+=" $(awk -v t="$tps" 'BEGIN { printf "%.1f", t * 100 }')"
    done
  done
  bl_log "INSERT with $c client(s) done"
done
seq_waits=$(sql "SELECT seq_waits FROM idgen_status()")
issued=$(sql "SELECT issued FROM idgen_status()")
"$bl_src/scripts/pg-cluster.sh" stop "$bl_tmp/main"
if [[ -n "$wide" ]]; then
  start_cluster wide "$wide"
  measure_selects wide_ idgen_next nextval loop
  wide_waits=$(sql "SELECT seq_waits FROM idgen_status()")
  "$bl_src/scripts/pg-cluster.sh" stop "$bl_tmp/wide"
fi

# --- Output --------------------------------------------------------------------------------
med() { # measurement key -> median
  # shellcheck disable=SC2086
  bl_median ${samples[$1]}
}
fmt() { awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); out = ""
  while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
  print s out }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
measures=("select1|SELECT f from generate_series(1, $(fmt "$rows")), IDs/s, one session|1"
          "selectN|the same, 10,000 per statement, IDs/s|$many"
          "insert1|INSERT 100 rows per statement, f as the key's default, rows/s|1"
          "insert${many}|the same, rows/s|$many")
[[ -z "$wide" ]] || measures+=(
  "wide_select1|SELECT, one session, layout \`$wide\` (another cluster)|1"
  "wide_selectN|the same, 10,000 per statement|$many")
mkdir -p "$(dirname "$json")" "$(dirname "$md")"
{
  echo "Run of $date: \`$cmd\` (\`make bench-pg\`)."
  echo "Machine: $machine; load average at the start: $load_avg. PostgreSQL $pg_version,"
  echo "\`synchronous_commit = off\`, layout \`$layout\`. Medians of $repeat runs, the functions in"
  echo "turn; absolute figures are this shared machine's: compare within a row."
  echo
  echo "| Measure | Clients | idgen_next() | nextval('s') | gen_random_uuid() | idgen_uuidv7() | idgen_next ÷ nextval | idgen_uuidv7 ÷ gen_random_uuid |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|"
  for m in "${measures[@]}"; do
    IFS='|' read -r key label clients <<<"$m"
    cells=()
    for k in idgen_next nextval uuid4 uuidv7; do
      if [[ -n "${samples[${key}_$k]:-}" ]]; then cells+=("$(fmt "$(med "${key}_$k")")"); else cells+=("—"); fi
    done
    r2="—"
    [[ -z "${samples[${key}_uuid4]:-}" ]] || r2=$(ratio "$(med "${key}_uuidv7")" "$(med "${key}_uuid4")")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$clients" "${cells[@]}" \
      "$(ratio "$(med "${key}_idgen_next")" "$(med "${key}_nextval")")" "$r2"
  done
  echo
  loop=$(med select1_loop)
  echo -n "Cost per call in the one-session SELECT, net of the bare loop ($(fmt "$loop") rows/s):"
  for k in "${keys[@]}"; do
    echo -n " ${expr[$k]} $(awk -v r="$(med "select1_$k")" -v l="$loop" \
      'BEGIN { printf "%.0f", 1e9 / r - 1e9 / l }') ns;"
  done
  echo
  echo "The generator waited for the next millisecond $(fmt "$seq_waits") times over $(fmt "$issued")"
  echo "IDs (layout \`$layout\`; one worker ID issues at most 4,096 per ms with \`snowflake\`)."
  if [[ -n "$wide" ]]; then
    loop=$(med wide_select1_loop)
    echo "With \`$wide\` it waited $(fmt "$wide_waits") times; cost per call net of the bare loop"
    echo -n "($(fmt "$loop") rows/s):"
    for k in idgen_next nextval; do
      echo -n " ${expr[$k]} $(awk -v r="$(med "wide_select1_$k")" -v l="$loop" \
        'BEGIN { printf "%.0f", 1e9 / r - 1e9 / l }') ns;"
    done
    echo
  fi
} >"$md"
{
  printf '{\n  "date": "%s",\n  "machine": "%s",\n  "command": "%s",\n  "postgres": "%s",\n' \
    "$date" "$machine" "$cmd" "$pg_version"
  printf '  "layout": "%s",\n  "repeat": %s,\n  "seq_waits": %s,\n  "issued": %s,\n  "medians": {\n' \
    "$layout" "$repeat" "$seq_waits" "$issued"
  first=1
  for name in $(printf '%s\n' "${!samples[@]}" | sort); do
    [[ $first -eq 1 ]] || printf ',\n'
    first=0
    printf '    "%s": %s' "$name" "$(med "$name")"
  done
  printf '\n  }\n}\n'
} >"$json"
echo
cat "$md"
bl_log "wrote $json and $md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" pg-results "$md"
  bl_log "updated docs/benchmarks.md"
fi
