#!/usr/bin/env bash
# bench/instr.sh: the cost of one request in instructions, counted by callgrind (repeatable
# on this noisy machine, where wall-clock figures are not): idgen serve --threads 1 under
# valgrind --tool=callgrind, a fixed number of HTTP and RESP requests, the instructions the
# whole server ran for them divided by the count, and the functions they went to.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/instr.sh [options]
idgen serve --threads 1 under valgrind --tool=callgrind on 127.0.0.1 (started here,
stopped by PID); the counters are zeroed before each load and dumped after it:
  1. N pipelined GET /v1/id on one connection, 16 in flight (bench_http_pipeline);
     target <= 2,500 instructions a request.
  2. N RESP ID (redis-benchmark -P 16 -c 4); target <= 1,000 instructions a request.
Prints instructions per request and each load's top functions (callgrind_annotate,
self cost), writes a JSON and a markdown file. Tests never assert these figures.
  --requests N   requests of each load (default 20000)
  --config FILE  serve with this --config (a tokens: section, say)
  --token T      the token both loads present (Bearer, AUTH)
  --top N        functions listed per load (default 12)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen and bench_http_pipeline (default: build)
  --json FILE    the result file (default bench/results/instr.json)
  --md FILE      the markdown section (default bench/results/instr.md)
  --docs         also replace the instructions section of docs/benchmarks.md
  -h, --help     this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bl_name="bench/instr.sh"
# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
# --requests and --top are this script's own; the rest go to bl_options.
requests=20000 top=12 rest=() serve_args=() http_auth=() resp_auth=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --config | --token)
      [[ $# -ge 2 ]] || bl_usage_error "$1 needs a value"
      if [[ $1 == --config ]]; then serve_args=(--config "$2"); else
        http_auth=(--token "$2") resp_auth=(-a "$2"); fi
      shift 2 ;;
    --requests | --top)
      [[ $# -ge 2 ]] || bl_usage_error "$1 needs a value"
      [[ $2 =~ ^[1-9][0-9]*$ ]] || bl_usage_error "$1 must be a positive integer"
      if [[ $1 == --requests ]]; then requests=$2; else top=$2; fi
      shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
bl_options instr "idgen build json md docs" "${rest[@]+"${rest[@]}"}"
pipe="$build_dir/bench_http_pipeline"
bl_require "$idgen" "$pipe" -- valgrind callgrind_control callgrind_annotate redis-benchmark curl
bl_check_loopback
bl_init
date=$(date -u +%Y-%m-%dT%H:%MZ)
commit=$(git -C "$src_dir" rev-parse --short HEAD 2>/dev/null || echo '?')

# idgen serve under callgrind: a wrapper bl_start_idgen runs as its binary (exec keeps
# the PID, so bl_cleanup stops valgrind itself).
out="$bl_tmp/callgrind.out"
cat >"$bl_tmp/idgen-cg" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$out "$idgen" "\$@"
EOF
chmod +x "$bl_tmp/idgen-cg"
bl_start_idgen "$bl_tmp/idgen-cg" "${serve_args[@]+"${serve_args[@]}"}"
bl_log "idgen under callgrind: pid $idgen_pid, HTTP $idgen_http, RESP $idgen_resp"
# The lease is won at start; IDs come once the clock is past its high-water mark.
for _ in $(seq 1 300); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$idgen_http/readyz") == 200 ]] && break
  sleep 0.1
done
# A few requests of each before counting: first-use paths (lazy binding, buffers) aside.
"$pipe" --port "$idgen_http" --requests 200 "${http_auth[@]+"${http_auth[@]}"}" >/dev/null
redis-benchmark -p "$idgen_resp" "${resp_auth[@]+"${resp_auth[@]}"}" -c 4 -n 200 -P 16 ID >/dev/null 2>&1

# count NAME N COMMAND...: zero the counters, run the load, write dump N (callgrind
# names it OUT.N); prints its total.
count() {
  local name=$1 f="$out.$2"
  shift 2
  callgrind_control -z "$idgen_pid" >/dev/null
  "$@" >"$bl_tmp/$name.load" 2>&1 || { cat "$bl_tmp/$name.load" >&2; bl_die "$name load failed"; }
  callgrind_control -d "$name" "$idgen_pid" >/dev/null
  # The totals line is the dump's last.
  for _ in $(seq 1 100); do grep -q '^totals:' "$f" 2>/dev/null && break; sleep 0.1; done
  grep -q '^totals:' "$f" 2>/dev/null || bl_die "no callgrind dump $f"
  cp "$f" "$bl_tmp/$name.cg"
  awk '/^totals:/ { print $2 }' "$f"
}
http_ir=$(count http 1 "$pipe" --port "$idgen_http" --path /v1/id --requests "$requests" --depth 16 \
  "${http_auth[@]+"${http_auth[@]}"}")
resp_ir=$(count resp 2 redis-benchmark -p "$idgen_resp" "${resp_auth[@]+"${resp_auth[@]}"}" -c 4 \
  -n "$requests" -P 16 ID)
per() { awk -v i="$1" -v n="$requests" 'BEGIN { printf "%.0f", i / n }'; }
http_per=$(per "$http_ir")
resp_per=$(per "$resp_ir")
verdict() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? "pass" : "FAIL" }'; }

# The top functions by self cost, as "instructions-per-request file:function" (the file
# shows inlined code: buf.h:issue is buf.h's inline functions inside issue). The thread
# entry points (clone, start_thread) carry the zeroed-then-dumped costs of the whole
# thread in this valgrind's annotate: left out.
top_of() {
  callgrind_annotate --inclusive=no --threshold=100 "$bl_tmp/$1.cg" 2>/dev/null |
    awk -v n="$requests" -v top="$top" '
      /file:function/ { list = 1; next }
      list && k < top && $1 ~ /^[0-9,]+$/ && $2 ~ /^\(/ && !/clone\.S:|pthread_create\.c:/ {
        ir = $1; gsub(/,/, "", ir)
        fn = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", fn); sub(/ \[.*$/, "", fn)
        sub(/^.*\//, "", fn) # file:function, the file without its directories
        printf "%8.0f  %s\n", ir / n, fn
        k++
      }'
}

{
  echo "Run of $date at commit $commit: \`bench/instr.sh --requests $requests\`."
  echo "idgen serve --threads 1 under valgrind --tool=callgrind (valgrind $(valgrind --version | sed 's/valgrind-//')); every thread of the server"
  echo "counted between callgrind_control -z and -d around each load."
  echo
  echo "| Load | Instructions | Per request | Target | Verdict |"
  echo "|---|---|---|---|---|"
  echo "| $requests GET /v1/id, pipelined, 16 in flight (bench_http_pipeline) | $http_ir | $http_per | ≤ 2,500 | $(verdict "$http_per" 2500) |"
  echo "| $requests RESP ID (redis-benchmark -P 16 -c 4) | $resp_ir | $resp_per | ≤ 1,000 | $(verdict "$resp_per" 1000) |"
  for load in http resp; do
    echo
    echo "Top functions, $load (self instructions per request):"
    echo
    echo '```'
    top_of "$load"
    echo '```'
  done
} >"$md.tmp"
mkdir -p "$(dirname "$json")" "$(dirname "$md")"
mv "$md.tmp" "$md"
cat >"$json" <<EOF
{
  "date": "$date",
  "commit": "$commit",
  "command": "bench/instr.sh --requests $requests",
  "requests": $requests,
  "results": [
    {"name": "http_get_v1_id", "instructions": $http_ir, "per_request": $http_per, "target": 2500},
    {"name": "resp_id", "instructions": $resp_ir, "per_request": $resp_per, "target": 1000}
  ]
}
EOF
echo
cat "$md"
bl_log "wrote $json and $md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" instr-results "$md"
  bl_log "updated docs/benchmarks.md"
fi
