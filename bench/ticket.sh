#!/usr/bin/env bash
# bench/ticket.sh: a database sequence, Redis INCR and the Flickr ticket server next to
# idgen, in one run on loopback. Starts every server itself (temp dir, free ports), stops
# each by PID, prints a table of IDs/s and p50/p99 with ratios to idgen, writes a JSON file.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/ticket.sh [options]
In one run on 127.0.0.1, one ID per round trip unless said otherwise:
  PostgreSQL 15 SELECT nextval() (pgbench -M prepared, 1 and 8 clients),
  Redis INCR (redis-benchmark, 50 clients, pipelines 1 and 16), and beside it idgen's
  segment generator on that same Redis (backend redis: one INCRBY script per block;
  RESP ID rorders, the same settings),
  the Flickr ticket server on MariaDB (REPLACE INTO Tickets64 ...; SELECT LAST_INSERT_ID();
  MyISAM as Flickr published it, 1 and 8 clients; two servers with auto_increment_increment=2
  and offsets 1 and 2, clients alternating; InnoDB, durable, 8 clients),
  idgen serve --threads 1 over HTTP (wrk: /v1/id with 1 and 8 connections, /v1/ids?count=64
  and 4096) and over RESP (redis-benchmark ID, the same settings as Redis INCR), each for
  its default (snowflake) generator and for a segment generator on the same PostgreSQL
  (name=orders, ID orders), three runs of each interleaved, the median kept, with the
  backend calls per 10^6 IDs of each row.
Each idgen row is the peer of the rows with the same concurrency; "idgen ÷ this" is the
ratio of their IDs/s in this run. Below the table: segment ÷ snowflake per setting, and
the segment generator ÷ PostgreSQL nextval() with 8 clients.
  --seconds S    length of each measurement (default 5)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen and bench_ticket_client (default: build)
  --json FILE    the result file (default bench/results/ticket.json)
  --md FILE      the markdown section (default bench/results/ticket.md)
  --docs         also replace the ticket section of docs/benchmarks.md
  -h, --help     this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bl_name="bench/ticket.sh"
# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_options ticket "seconds idgen build json md docs" "$@"
client="$build_dir/bench_ticket_client"
bl_require "$idgen" "$client" -- wrk redis-server redis-benchmark mariadbd mariadb-install-db mariadb pgbench psql
bl_check_loopback
bl_init
machine=$(bl_machine)
date=$(date -u +%Y-%m-%dT%H:%MZ)
cmd="bench/ticket.sh --seconds $seconds"
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

# redis-benchmark takes a request count: a short probe (which also warms up) sizes it.
redis_run() { # PORT PIPELINE COMMAND...
  local port=$1 pipe=$2 probe rps n
  shift 2
  probe=$(bl_redis_bench "$port" 50 $((20000 * pipe)) "$pipe" "$@")
  rps=$(bl_kv "$probe" rps)
  n=$(awk -v r="$rps" -v s="$seconds" 'BEGIN { n = int(r * s); print n < 10000 ? 10000 : n }')
  bl_redis_bench "$port" 50 "$n" "$pipe" "$@"
}

# --- PostgreSQL (first: it is the segment generator's backend too) ----------------------
bl_start_pg
bl_log "PostgreSQL on port $pg_port"
pg_dsn="host=127.0.0.1 port=$pg_port dbname=postgres user=postgres"
psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE SEQUENCE ticket" postgres
"$idgen" segment init --backend postgres --dsn "$pg_dsn" orders >/dev/null ||
  bl_die "idgen segment init failed"

# --- idgen: the snowflake kind (the default generator) and a segment generator 'orders'
# on PostgreSQL (Leaf's table, the default steps: 1,000 doubling up to 100,000) -----------
cat >"$bl_tmp/generators.yaml" <<EOF
generators:
  orders: {kind: segment, backend: postgres, dsn: "$pg_dsn"}
EOF
bl_start_idgen "$idgen" --config "$bl_tmp/generators.yaml"
bl_log "idgen serve pid $idgen_pid, HTTP $idgen_http, RESP $idgen_resp"
url="http://127.0.0.1:$idgen_http"
# segment_counts: the segment generator's backend calls (blocks leased) and numbers
# handed out so far, from /metrics.
segment_counts() {
  curl -s "$url/metrics" | awk '
    /^idgen_segment_blocks_fetched_total\{generator="orders"\}/ { b = $2 }
    /^idgen_generator_ids_issued_total\{generator="orders"\}/ { n = $2 }
    END { print b + 0, n + 0 }'
}
wrk -t1 -c8 -d1s "$url/v1/id" >/dev/null # warm-up
# The segment generator's warm-up brings its step to the largest: blocks that last less
# than its period (15 minutes) double it, so a service drawing numbers settles there.
wrk -t1 -c8 -d2s "$url/v1/ids?count=4096&name=orders" >/dev/null

# median_run RESULT...: of wrk or redis-benchmark results ("rps=.. p50_us=.. p99_us=.."),
# the one with the median rps.
median_run() {
  printf '%s\n' "$@" | awk '{ split($1, a, "="); print a[2] "\t" $0 }' | sort -g |
    awk -F'\t' '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }'
}
ROUNDS=3 # runs of each side of a pair, interleaved: other work on this shared machine
         # moves both sides alike, and the median of each side is kept
# pair KEY LABEL-A LABEL-B CONNS PIPELINE COUNT CMD-A CMD-B RUN...: the snowflake kind
# (LABEL-A, running RUN... with argument A) and the segment generator (B), ROUNDS times
# each, interleaved; one row each, the segment row with its backend calls per 10^6 IDs
# over all its runs.
pair() {
  local key=$1 la=$2 lb=$3 c=$4 p=$5 n=$6 ca=$7 cb=$8 a=$9 b=${10} run=${11}
  local ra=() rb=() before after calls=0 issued=0 r i
  for ((i = 0; i < ROUNDS; i++)); do
    ra+=("$($run "$a")")
    before=$(segment_counts)
    rb+=("$($run "$b")")
    after=$(segment_counts)
    calls=$((calls + ${after% *} - ${before% *}))
    issued=$((issued + ${after#* } - ${before#* }))
  done
  for side in a b; do
    if [[ $side == a ]]; then r=$(median_run "${ra[@]}"); else r=$(median_run "${rb[@]}"); fi
    local ids
    ids=$(awk -v r="$(bl_kv "$r" rps)" -v n="$n" 'BEGIN { printf "%.1f", r * n }')
    if [[ $side == a ]]; then
      bl_row "idgen_$key" "$la" "$c" "$p" "$n" "$ids" "$(bl_kv "$r" p50_us)" \
        "$(bl_kv "$r" p99_us)" "" "$ca" "—"
    else
      bl_row "segment_$key" "$lb" "$c" "$p" "$n" "$ids" "$(bl_kv "$r" p50_us)" \
        "$(bl_kv "$r" p99_us)" "idgen_$key" "$cb" \
        "$(awk -v c="$calls" -v n="$issued" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }')"
    fi
  done
}
wrk_run() { bl_wrk "$url$1" "$wrk_conns" "$seconds"; }
resp_run() { redis_run "$idgen_resp" "$resp_pipe" $1; }
http_pair() { # KEY CONNS COUNT: /v1/id (COUNT 1) or /v1/ids?count=COUNT, then with name=orders
  local key=$1 c=$2 n=$3 pa=/v1/id pb="/v1/id?name=orders"
  if [[ $n -gt 1 ]]; then pa="/v1/ids?count=$n" pb="/v1/ids?count=$n&name=orders"; fi
  wrk_conns=$c
  pair "$key" "idgen HTTP $pa" "idgen segment HTTP $pb" "$c" 1 "$n" \
    "wrk -t1 -c$c -d${seconds}s '$url$pa'" "wrk -t1 -c$c -d${seconds}s '$url$pb'" \
    "$pa" "$pb" wrk_run
}
http_pair http_c1 1 1
http_pair http_c8 8 1
http_pair http_batch64 8 64
http_pair http_batch4096 8 4096
for p in 1 16; do
  resp_pipe=$p
  pair "resp_p$p" "idgen RESP ID" "idgen segment RESP ID orders" 50 "$p" 1 \
    "redis-benchmark -p PORT -c 50 -P $p ID" "redis-benchmark -p PORT -c 50 -P $p ID orders" \
    ID "ID orders" resp_run
done

# --- Redis INCR ----------------------------------------------------------------------------
bl_start_redis
bl_log "redis-server pid $redis_pid, port $redis_port"
for p in 1 16; do
  r=$(redis_run "$redis_port" "$p" INCR ticket)
  bl_row "redis_incr_p$p" "Redis INCR" 50 "$p" 1 "$(bl_kv "$r" rps)" \
    "$(bl_kv "$r" p50_us)" "$(bl_kv "$r" p99_us)" "idgen_resp_p$p" \
    "redis-benchmark -p PORT -c 50 -P $p INCR ticket" 1000000
done

# --- idgen's segment generator on the same Redis (backend redis: a script with INCRBY per
# block), beside INCR per ID: a second idgen serve (the first one is done) -------------
kill "$idgen_pid" 2>/dev/null || true
wait "$idgen_pid" 2>/dev/null || true
redis_dsn="redis://127.0.0.1:$redis_port"
"$idgen" segment init --backend redis --dsn "$redis_dsn" rorders >/dev/null ||
  bl_die "idgen segment init --backend redis failed"
cat >"$bl_tmp/generators-redis.yaml" <<EOF
generators:
  rorders: {kind: segment, backend: redis, dsn: "$redis_dsn"}
EOF
bl_start_idgen "$idgen" --config "$bl_tmp/generators-redis.yaml"
url="http://127.0.0.1:$idgen_http"
rsegment_counts() {
  curl -s "$url/metrics" | awk '
    /^idgen_segment_blocks_fetched_total\{generator="rorders"\}/ { b = $2 }
    /^idgen_generator_ids_issued_total\{generator="rorders"\}/ { n = $2 }
    END { print b + 0, n + 0 }'
}
wrk -t1 -c8 -d2s "$url/v1/ids?count=4096&name=rorders" >/dev/null # warm-up: the step grows
for p in 1 16; do
  before=$(rsegment_counts)
  r=$(redis_run "$idgen_resp" "$p" ID rorders)
  after=$(rsegment_counts)
  calls=$((${after% *} - ${before% *})) issued=$((${after#* } - ${before#* }))
  bl_row "segment_redis_p$p" "idgen segment (backend redis) RESP ID rorders" 50 "$p" 1 \
    "$(bl_kv "$r" rps)" "$(bl_kv "$r" p50_us)" "$(bl_kv "$r" p99_us)" "" \
    "redis-benchmark -p PORT -c 50 -P $p ID rorders" \
    "$(awk -v c="$calls" -v n="$issued" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }')"
done

# --- PostgreSQL nextval --------------------------------------------------------------------
echo "SELECT nextval('ticket');" >"$bl_tmp/nextval.sql"
for c in 1 8; do
  j=$((c < 2 ? 1 : 2))
  rm -rf "$bl_tmp/pgbench"
  mkdir "$bl_tmp/pgbench"
  out=$(cd "$bl_tmp/pgbench" && pgbench -h 127.0.0.1 -p "$pg_port" -U postgres -n -M prepared \
        -f "$bl_tmp/nextval.sql" -c "$c" -j "$j" -T "$seconds" -l postgres 2>&1) ||
    { echo "$out" >&2; bl_die "pgbench failed"; }
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
  # The per-transaction log: client, transaction, latency in us, ...
  read -r p50 p99 < <(cat "$bl_tmp/pgbench"/pgbench_log.* | awk '{ print $3 }' | sort -n |
    awk '{ v[NR] = $1 } END { print v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1] }')
  bl_row "pg_nextval_c$c" "PostgreSQL SELECT nextval()" "$c" 1 1 "$tps" "$p50" "$p99" \
    "idgen_http_c$c" "pgbench -n -M prepared -f nextval.sql -c $c -j $j -T $seconds -l" 1000000
done

# --- MariaDB: the Flickr ticket server -----------------------------------------------------
bl_start_ticket_servers
bl_log "mariadbd on ports $mdb1 and $mdb2"
for p in "$mdb1" "$mdb2"; do
  mariadb --no-defaults -h 127.0.0.1 -P "$p" -u root test -e "
    CREATE TABLE Tickets64 (id bigint unsigned NOT NULL auto_increment,
      stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM;
    CREATE TABLE Tickets64i (id bigint unsigned NOT NULL auto_increment,
      stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=InnoDB;"
done
ticket_run() { # KEY LABEL CLIENTS PEER TABLE PORT...
  local key=$1 label=$2 c=$3 peer=$4 table=$5 args=() p r
  shift 5
  for p in "$@"; do args+=(--server "127.0.0.1:$p"); done
  r=$("$client" "${args[@]}" --clients "$c" --seconds "$seconds" --table "$table") ||
    bl_die "bench_ticket_client failed ($label)"
  [[ $(bl_kv "$r" distinct) == yes ]] || bl_die "$label: an ID came back twice"
  local tries
  tries=$(bl_kv "$r" retries)
  if [[ "$tries" != 0 ]]; then
    echo "- $label, $c clients: $tries requests deadlocked and were retried (counted once, their latency includes the retries)." >>"$bl_tmp/notes.md"
  fi
  bl_row "$key" "$label" "$c" 1 1 "$(bl_kv "$r" rate)" "$(bl_kv "$r" p50_us)" \
    "$(bl_kv "$r" p99_us)" "$peer" \
    "bench_ticket_client ${args[*]//127.0.0.1:[0-9]*/127.0.0.1:PORT} --clients $c --seconds $seconds --table $table" \
    "$(awk -v n="$(bl_kv "$r" ids)" -v t="$tries" 'BEGIN { printf "%.0f", (n + t) * 1e6 / n }')"
}
ticket_run flickr_c1 "Flickr ticket, MyISAM, 1 server" 1 idgen_http_c1 Tickets64 "$mdb1"
ticket_run flickr_c8 "Flickr ticket, MyISAM, 1 server" 8 idgen_http_c8 Tickets64 "$mdb1"
ticket_run flickr2_c8 "Flickr ticket, MyISAM, 2 servers" 8 idgen_http_c8 Tickets64 "$mdb1" "$mdb2"
ticket_run flickr_innodb_c8 "Flickr ticket, InnoDB, 1 server" 8 idgen_http_c8 Tickets64i "$mdb1"

# --- Output --------------------------------------------------------------------------------
# bl_targets: the issue's two targets, from this run's rows: each segment row against the
# snowflake row of the same setting (>= 0.95x), and against PostgreSQL nextval() with 8
# clients (>= 10x).
bl_targets() {
  awk -F'\t' '
    function fmt(x,   s, out) { s = sprintf("%.0f", x); out = ""
      while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
      return s out }
    { ids[$1] = $6; lab[$1] = $2; cl[$1] = $3; pl[$1] = $4; keys[NR] = $1 }
    END {
      print "| Setting | Snowflake kind IDs/s | Segment IDs/s | Segment ÷ snowflake | Segment ÷ PostgreSQL nextval() (8 clients) |"
      print "|---|--:|--:|--:|--:|"
      met = 0; n = 0; low = 0
      for (i = 1; i <= NR; i++) {
        k = keys[i]
        if (k !~ /^segment_/) continue
        peer = "idgen_" substr(k, 9)
        if (!(peer in ids) || ids[peer] <= 0) continue
        r = ids[k] / ids[peer]; n++; met += r >= 0.95; if (n == 1 || r < low) low = r
        pg = ("pg_nextval_c8" in ids && ids["pg_nextval_c8"] > 0) ? sprintf("%.1f×", ids[k] / ids["pg_nextval_c8"]) : "—"
        setting = lab[peer]; sub(/^idgen /, "", setting)
        printf "| %s, %s clients, pipeline %s | %s | %s | %.2f× | %s |\n", setting, cl[k], pl[k], fmt(ids[peer]), fmt(ids[k]), r, pg
      }
      printf "\nSegment ÷ snowflake ≥ 0.95× in %d of %d settings (lowest %.2f×).\n", met, n, low
    }' "$bl_tmp/rows.tsv"
}

mkdir -p "$(dirname "$json")" "$(dirname "$md")"
bl_json "$json" "$date" "$machine" "$cmd"
pg_version=$(psql -h 127.0.0.1 -p "$pg_port" -U postgres -Atc "SHOW server_version" postgres | cut -d' ' -f1)
{
  echo "Run of $date: \`$cmd\` (each row ${seconds} s; \`make bench-ticket\`)."
  echo "Machine: $machine. Absolute figures are this shared machine's;"
  echo "compare rows within the run. Loopback qdisc: \`$bl_qdisc\`; load average at the start: $load_avg."
  echo "Versions: $("$idgen" --version 2>/dev/null | head -n 1 || echo 'idgen ?') (\`serve --threads 1\`),"
  echo "$(redis-server --version | cut -d' ' -f1-3), PostgreSQL $pg_version,"
  echo "$(mariadbd --version | sed 's/.*Ver \([^ ]*\).*/MariaDB \1/'), $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2)."
  echo
  bl_table
  echo
  bl_targets
  echo
  awk -F'\t' '{ ids[$1] = $6 } END { for (p = 1; p <= 16; p += 15) {
      a = ids["segment_redis_p" p]; b = ids["redis_incr_p" p]
      if (a > 0 && b > 0) printf "Segment generator on Redis (backend redis, a block per script) ÷ Redis INCR (a call per ID), 50 clients, pipeline %d: %.2f×.\n", p, a / b } }' \
    "$bl_tmp/rows.tsv"
  echo "(The bench's Redis runs without persistence; idgen warns so, and such a Redis can repeat numbers after a restart: docs/segment.md.)"
  echo
  echo "p50/p99 are per request (a batch request carries all its IDs). wrk and"
  echo "redis-benchmark are closed-loop: each connection sends its next request when the last"
  echo "one returns. Each idgen row is the peer of the rows with the same client count and"
  echo "pipeline; \"idgen ÷ this\" divides their IDs/s, measured minutes apart in this run."
  echo "Backend calls per 10^6 IDs: what a sequence, counter or ticket server pays per ID"
  echo "(one round trip each, a deadlock's retries counted), against the segment generator's"
  echo "blocks leased during its row (from its /metrics); the snowflake kind calls nothing per"
  echo "ID (its lease keeper writes one high-water mark a second, whatever the rate)."
  if [[ -s "$bl_tmp/notes.md" ]]; then echo; cat "$bl_tmp/notes.md"; fi
} >"$md"
echo
cat "$md"
bl_log "wrote $json and $md"
# The plot: IDs/s per setup, log scale, idgen's rows in their own colour. One copy: the
# docs' with --docs, else next to the JSON (git ignores bench/results/*.png).
png="$(dirname "$json")/ticket_ids.png"
if [[ $docs -eq 1 ]]; then png="$src_dir/docs/img/ticket_ids.png"; fi
if command -v gnuplot >/dev/null 2>&1; then
  awk -F'\t' '{ l = $2 " (" $3 "c" ($4 > 1 ? ", P" $4 : "") ")"; sub(/^Flickr ticket, /, "Flickr ", l)
                 sub(/PostgreSQL SELECT nextval\(\)/, "PG nextval()", l)
                 sub(/idgen HTTP \/v1\/ids\?count=/, "idgen HTTP batch ", l); sub(/ server/, " srv", l)
                 sub(/idgen segment HTTP \/v1\/ids\?count=/, "segment HTTP batch ", l)
                 sub(/idgen segment HTTP \/v1\/id\?name=orders/, "segment HTTP /v1/id", l)
                 sub(/idgen segment RESP ID orders/, "segment RESP ID", l); sub(/&name=orders/, "", l)
                 if ($1 ~ /^(idgen|segment)_/) print l "\t" $6 "\t?"; else print l "\t?\t" $6 }' \
    "$bl_tmp/rows.tsv" >"$bl_tmp/plot.tsv"
  gnuplot <<EOF || bl_log "gnuplot failed: no plot"
set terminal pngcairo size 1100,620 font "DejaVu Sans,10" noenhanced
set output "$png"
set datafile separator "\t"
set title "IDs per second on loopback, one run ($date; this machine: $(nproc) cores)"
set datafile missing "?"
set style fill solid 0.85 border -1
set boxwidth 0.75
set xrange [-0.6:*]
set logscale y
set yrange [1000:*]
set offsets 0, 0, graph 0.08, 0
set ylabel "IDs/s (log scale)"
set format y "%.0s%c"
set grid ytics
set xtics rotate by -35 left nomirror
set key outside top center horizontal
set bmargin 10
set rmargin 14
plot "$bl_tmp/plot.tsv" using 0:2:xtic(1) with boxes title "idgen serve (1 thread): snowflake and segment" lc rgb "#2a7fbf", \
     "" using 0:3 with boxes title "sequence / counter / ticket server" lc rgb "#d9822b"
EOF
fi
if [[ $docs -eq 1 ]]; then
  { cat "$md"; echo; echo "![IDs per second per setup](img/ticket_ids.png)"; } >"$bl_tmp/md_docs.md"
  bl_docs_section "$src_dir/docs/benchmarks.md" ticket-results "$bl_tmp/md_docs.md"
  bl_log "updated docs/benchmarks.md and docs/img/ticket_ids.png"
fi
