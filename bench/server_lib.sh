# shellcheck shell=bash disable=SC2154,SC2034 # bl_name comes from, and the *_port/_pid globals go to, the caller
# bench/server_lib.sh: sourced by bench/ticket.sh and bench/server.sh. Starts the servers
# they measure (idgen, redis-server, nginx, MariaDB, PostgreSQL) on 127.0.0.1, on free
# ports, in one temp dir; stops each by the PID it started, on exit; and runs the load
# tools (wrk, redis-benchmark, pgbench, bench_*), each printing one line of key=value.
# The caller sets bl_name (for messages) and a usage() function, parses its options with
# bl_options, checks its programs with bl_require, and calls bl_init before starting any.

bl_pids=()     # servers we started, stopped in reverse order
bl_pg_dirs=()  # PostgreSQL clusters, stopped through scripts/pg-cluster.sh
bl_mdb_dirs=() # MariaDB servers, stopped through scripts/mariadb-cluster.sh
bl_tmp=""
bl_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bl_log() { echo "$bl_name: $*" >&2; }
bl_die() { echo "$bl_name: $*" >&2; exit 1; }
bl_usage_error() { echo "$bl_name: $*" >&2; exit 2; }

# bl_options RESULT "OPTION..." "$@": parses the options the benchmarks share, those named
# in the second argument from: seconds rounds idgen build json md docs. Sets seconds (5),
# rounds (3), build_dir (build), idgen (BUILD/idgen), json and md
# (bench/results/RESULT.json, .md), docs (0). -h/--help prints the caller's usage(); bad
# usage exits 2 with one line.
bl_options() {
  local result=$1 accepted=" $2 " opt name
  shift 2
  seconds=5 rounds=3 build_dir="$bl_src/build" idgen="" docs=0
  json="$bl_src/bench/results/$result.json" md="$bl_src/bench/results/$result.md"
  while [[ $# -gt 0 ]]; do
    opt=$1 name=${1#--}
    if [[ $opt == -h || $opt == --help ]]; then usage; exit 0; fi
    [[ $opt == --* && $accepted == *" $name "* ]] || bl_usage_error "unknown option '$opt' (see --help)"
    if [[ $name == docs ]]; then docs=1; shift; continue; fi
    [[ $# -ge 2 ]] || bl_usage_error "$opt needs a value"
    case $name in
      seconds) seconds=$2 ;;
      rounds) rounds=$2 ;;
      idgen) idgen=$2 ;;
      build) build_dir=$2 ;;
      json) json=$2 ;;
      md) md=$2 ;;
    esac
    shift 2
  done
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || bl_usage_error "--seconds must be a positive integer"
  [[ $rounds =~ ^[1-9][0-9]*$ ]] || bl_usage_error "--rounds must be a positive integer"
  [[ -n $idgen ]] || idgen="$build_dir/idgen"
  return 0
}

# bl_require BUILT... -- TOOL...: exit 1 naming the first program of the build (a path)
# or tool (on PATH, from scripts/deps.sh bench) that is missing; idgen must serve.
bl_require() {
  while [[ $# -gt 0 && $1 != -- ]]; do
    [[ -x $1 ]] || bl_die "$1 not built (scripts/deps.sh bench, then make)"
    shift
  done
  [[ $# -gt 0 ]] && shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || bl_die "$tool not found (scripts/deps.sh bench)"
  done
  "$idgen" serve --help >/dev/null 2>&1 || bl_die "$idgen has no serve command"
}

bl_cleanup() {
  local i pid d
  for d in "${bl_pg_dirs[@]}"; do "$bl_src/scripts/pg-cluster.sh" stop "$d" || true; done
  for d in "${bl_mdb_dirs[@]}"; do "$bl_src/scripts/mariadb-cluster.sh" stop "$d" || true; done
  for ((i = ${#bl_pids[@]} - 1; i >= 0; i--)); do
    pid=${bl_pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  [[ -n "$bl_tmp" && -z "${BL_KEEP_TMP:-}" ]] && rm -rf "$bl_tmp"
  return 0
}

bl_init() {
  bl_tmp=$(mktemp -d "/tmp/idgen-bench-$(basename "$bl_name" .sh).XXXXXX")
  chmod 755 "$bl_tmp" # PostgreSQL and MariaDB may run as their own users
  trap bl_cleanup EXIT
  trap 'exit 130' INT TERM
}

bl_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
bl_free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999)
    if bl_port_free "$p"; then echo "$p"; return 0; fi
  done
  bl_die "no free port"
}

# bl_wait_port PORT PID: until PORT accepts connections (10 s), or PID dies.
bl_wait_port() {
  for _ in $(seq 1 200); do
    kill -0 "$2" 2>/dev/null || return 1
    bl_port_free "$1" || return 0
    sleep 0.05
  done
  return 1
}

# bl_kv LINE KEY: the value of KEY=VALUE in a result line.
bl_kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p" | head -n 1; }

# bl_start_idgen IDGEN [serve options...]: `idgen serve` with one event-loop thread and its
# default lease (the file provider, state in the temp dir). Sets idgen_pid,
# idgen_http, idgen_resp (ports).
bl_start_idgen() {
  local bin=$1 log="$bl_tmp/idgen.log"
  shift
  idgen_http=$(bl_free_port)
  idgen_resp=$(bl_free_port)
  mkdir -p "$bl_tmp/idgen-state"
  "$bin" serve --http "127.0.0.1:$idgen_http" --resp "127.0.0.1:$idgen_resp" --threads 1 \
    --state-dir "$bl_tmp/idgen-state" "$@" >"$log" 2>&1 &
  idgen_pid=$!
  bl_pids+=("$idgen_pid")
  bl_wait_port "$idgen_http" "$idgen_pid" && bl_wait_port "$idgen_resp" "$idgen_pid" ||
    { cat "$log" >&2; bl_die "idgen serve did not start"; }
}

# bl_start_redis [CERT KEY CA]: Debian's redis-server, no persistence. Sets redis_pid,
# redis_port. With CERT, KEY and CA it also speaks TLS on redis_tls_port (the same
# process; client certificates not asked for).
bl_start_redis() {
  local tls=()
  redis_port=$(bl_free_port)
  if [[ $# -ge 3 ]]; then
    redis_tls_port=$(bl_free_port)
    tls=(--tls-port "$redis_tls_port" --tls-cert-file "$1" --tls-key-file "$2"
      --tls-ca-cert-file "$3" --tls-auth-clients no)
  fi
  mkdir -p "$bl_tmp/redis"
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
    --dir "$bl_tmp/redis" --daemonize no --logfile "$bl_tmp/redis/log" "${tls[@]}" &
  redis_pid=$!
  bl_pids+=("$redis_pid")
  bl_wait_port "$redis_port" "$redis_pid" || bl_die "redis-server did not start"
  [[ ${#tls[@]} -eq 0 ]] || bl_wait_port "$redis_tls_port" "$redis_pid" ||
    { cat "$bl_tmp/redis/log" >&2; bl_die "redis-server did not open its TLS port"; }
}

# bl_start_nginx BODY_FILE [CERT KEY]: nginx, one worker, keep-alive, GET /v1/id answers
# 200 with the file's bytes as application/json. Sets nginx_pid, nginx_port. With CERT
# and KEY the same worker also serves HTTPS on nginx_tls_port (TLS 1.2 and 1.3, session
# cache and tickets, as idgen resumes sessions).
bl_start_nginx() {
  local body=$1 d="$bl_tmp/nginx" user="" tls_server=""
  nginx_port=$(bl_free_port)
  mkdir -p "$d/tmp"
  [[ $(id -u) -eq 0 ]] && user="user root;"
  # `return 200 "text"` serves a fixed body from memory, as idgen serves one from memory.
  local text
  text=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$body")
  if [[ $# -ge 3 ]]; then
    nginx_tls_port=$(bl_free_port)
    tls_server="server {
    listen 127.0.0.1:$nginx_tls_port ssl;
    ssl_certificate $2;
    ssl_certificate_key $3;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:TLS:1m;
    location = /v1/id {
      default_type application/json;
      return 200 \"$text\\n\";
    }
  }"
  fi
  cat >"$d/nginx.conf" <<EOF
$user
worker_processes 1;
daemon off;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  keepalive_timeout 60s;
  keepalive_requests 100000000;
  client_body_temp_path $d/tmp/body;
  proxy_temp_path $d/tmp/proxy;
  fastcgi_temp_path $d/tmp/fastcgi;
  uwsgi_temp_path $d/tmp/uwsgi;
  scgi_temp_path $d/tmp/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    location = /v1/id {
      default_type application/json;
      return 200 "$text\n";
    }
  }
  $tls_server
}
EOF
  nginx -c "$d/nginx.conf" -p "$d" &
  nginx_pid=$!
  bl_pids+=("$nginx_pid")
  bl_wait_port "$nginx_port" "$nginx_pid" || { cat "$d/error.log" >&2; bl_die "nginx did not start"; }
  [[ -z $tls_server ]] || bl_wait_port "$nginx_tls_port" "$nginx_pid" ||
    { cat "$d/error.log" >&2; bl_die "nginx did not open its TLS port"; }
}

# bl_start_ticket_servers: Flickr's two ticket servers (scripts/mariadb-cluster.sh): MariaDB
# with auto_increment_increment 2 and offsets 1 and 2, database `test`. Sets mdb1, mdb2 (ports).
bl_start_ticket_servers() {
  local eps
  eps=$("$bl_src/scripts/mariadb-cluster.sh" start "$bl_tmp/mariadb" 2) || bl_die "MariaDB did not start"
  bl_mdb_dirs+=("$bl_tmp/mariadb")
  mdb1=${eps%%,*} mdb2=${eps##*,}
  mdb1=${mdb1##*:} mdb2=${mdb2##*:}
}

# bl_start_pg [SETTING=VALUE ...]: a PostgreSQL cluster (scripts/pg-cluster.sh). Sets pg_port.
bl_start_pg() {
  local out
  out=$("$bl_src/scripts/pg-cluster.sh" start "$bl_tmp/pg" "$@") || bl_die "PostgreSQL did not start"
  bl_pg_dirs+=("$bl_tmp/pg")
  pg_port=${out%% *}
}

# bl_wrk URL CONNS SECONDS: wrk -t1 with bench/server_wrk.lua. Prints
# "rps=.. p50_us=.. p99_us=.. errors=..".
bl_wrk() {
  local out line
  out=$(wrk -t1 -c"$2" -d"$3s" -s "$bl_src/bench/server_wrk.lua" "$1" 2>&1) || true
  line=$(grep '^WRKRESULT' <<<"$out") || { echo "$out" >&2; bl_die "wrk failed on $1"; }
  echo "${line#WRKRESULT }"
}

# bl_redis_bench [--tls CAFILE] PORT CLIENTS N PIPELINE COMMAND...: redis-benchmark --csv
# (over TLS, verifying the server against CAFILE, with --tls). Prints
# "rps=.. p50_us=.. p99_us=..".
bl_redis_bench() {
  local tls=()
  if [[ $1 == --tls ]]; then tls=(--tls --cacert "$2"); shift 2; fi
  local port=$1 clients=$2 n=$3 pipe=$4 out
  shift 4
  out=$(redis-benchmark -h 127.0.0.1 -p "$port" "${tls[@]}" -c "$clients" -n "$n" -P "$pipe" --csv "$@" \
        2>/dev/null) || bl_die "redis-benchmark failed on port $port"
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
  # "p99_latency_ms","max_latency_ms"
  tail -n 1 <<<"$out" | tr -d '"' |
    awk -F, '{ printf "rps=%s p50_us=%.0f p99_us=%.0f\n", $2, $5 * 1000, $7 * 1000 }'
}

# Results: one TSV row per measurement in $bl_tmp/rows.tsv:
#   key label clients pipeline ids_per_request ids_per_s p50_us p99_us peer command calls
# where peer is the key of the idgen row this one is compared with (or empty), and calls
# the backend calls per 10^6 IDs ("—": none per ID; empty: not measured).
bl_row() {
  local IFS=$'\t' args=("$@")
  args[5]=$(awk -v x="${args[5]}" 'BEGIN { printf "%.1f", x }')
  set -- "${args[@]}"
  echo "$*" >>"$bl_tmp/rows.tsv"
  bl_log "$(printf '%-34s %12s IDs/s  p50 %6s us  p99 %6s us' "$2" "$6" "$7" "$8")"
}

bl_machine() {
  local cpu mem
  cpu=$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')
  mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
  echo "$(nproc) cores ($cpu), $mem RAM, $(uname -sr)"
}

# bl_check_loopback: warn when something shapes loopback traffic (a tc qdisc other than
# the default), as it turns every figure into that shaper's.
bl_qdisc=unknown
bl_check_loopback() {
  local q
  q=$(tc qdisc show dev lo 2>/dev/null | head -n 1 || true)
  bl_qdisc=$(sed 's/ *$//' <<<"${q:-unknown}")
  if [[ -n "$q" && "$q" != *noqueue* ]]; then
    bl_log "WARNING: loopback is shaped ($q): figures will measure the shaper"
    [[ -n "${BL_ALLOW_SHAPED:-}" ]] || bl_die "refusing to run; set BL_ALLOW_SHAPED=1 to run anyway"
  fi
}

# bl_median V...: the median of the values (the lower middle one for an even count).
bl_median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bl_table: the markdown table of rows.tsv, with each row's ratio to its idgen peer.
bl_table() {
  awk -F'\t' '
    function fmt(x,   s, out) { s = sprintf("%.0f", x); out = ""
      while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
      return s out }
    { key[NR] = $1; lab[NR] = $2; cl[NR] = $3; pl[NR] = $4; per[NR] = $5; ids[NR] = $6
      p50[NR] = $7; p99[NR] = $8; peer[NR] = $9; calls[NR] = $11; rate[$1] = $6; name[$1] = $2 }
    END {
      print "| Setup | Clients | Pipeline | IDs/request | IDs/s (this machine) | p50 µs | p99 µs | Backend calls per 10^6 IDs | idgen peer | idgen ÷ this |"
      print "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|"
      for (i = 1; i <= NR; i++) {
        r = "—"; pn = "—"
        if (peer[i] != "" && (peer[i] in rate) && ids[i] > 0) {
          r = sprintf("%.2f×", rate[peer[i]] / ids[i]); pn = name[peer[i]]
        }
        c = calls[i] == "" ? "?" : calls[i] ~ /^[0-9]+$/ ? fmt(calls[i]) : calls[i]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", lab[i], cl[i], pl[i], per[i],
               fmt(ids[i]), p50[i], p99[i], c, pn, r
      }
    }' "$bl_tmp/rows.tsv"
}

# bl_json FILE DATE MACHINE COMMAND: rows.tsv as JSON.
bl_json() {
  awk -F'\t' -v date="$2" -v machine="$3" -v cmd="$4" -v qdisc="$bl_qdisc" '
    function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
    { rows[NR] = $0; rate[$1] = $6 }
    END {
      printf "{\n  \"date\": %s,\n  \"machine\": %s,\n  \"loopback_qdisc\": %s,\n  \"command\": %s,\n  \"rows\": [\n",
             q(date), q(machine), q(qdisc), q(cmd)
      for (i = 1; i <= NR; i++) {
        split(rows[i], f, "\t")
        ratio = (f[9] != "" && (f[9] in rate) && f[6] > 0) ? sprintf("%.4f", rate[f[9]] / f[6]) : "null"
        calls = f[11] ~ /^[0-9.]+$/ ? f[11] : f[11] == "—" ? 0 : "null"
        printf "    {\"key\": %s, \"label\": %s, \"clients\": %s, \"pipeline\": %s, \"ids_per_request\": %s, \"ids_per_s\": %s, \"p50_us\": %s, \"p99_us\": %s, \"backend_calls_per_million\": %s, \"idgen_peer\": %s, \"idgen_over_this\": %s, \"command\": %s}%s\n",
               q(f[1]), q(f[2]), f[3], f[4], f[5], f[6], f[7], f[8], calls, f[9] == "" ? "null" : q(f[9]), ratio, q(f[10]), i < NR ? "," : ""
      }
      print "  ]\n}"
    }' "$bl_tmp/rows.tsv" >"$1"
}

# bl_docs_section FILE TAG CONTENT_FILE: replace the block between
# "<!-- TAG begin -->" and "<!-- TAG end -->" in FILE, or append it.
bl_docs_section() {
  local doc=$1 tag=$2 content=$3 begin="<!-- $2 begin: written by a script, do not edit -->"
  local end="<!-- $2 end -->"
  { echo "$begin"; cat "$content"; echo "$end"; } >"$bl_tmp/section.md"
  if [[ -f "$doc" ]] && grep -qF "<!-- $tag begin" "$doc"; then
    awk -v f="$bl_tmp/section.md" -v b="<!-- $tag begin" -v e="$end" '
      index($0, b) == 1 { while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$doc" >"$bl_tmp/doc.md"
    cat "$bl_tmp/doc.md" >"$doc"
  else
    { echo; cat "$bl_tmp/section.md"; } >>"$doc"
  fi
}
