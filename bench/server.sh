#!/usr/bin/env bash
# bench/server.sh: idgen serve against the limits of this machine, in one run on loopback:
# nginx serving a fixed body of the same size, the generator's per-worker ceiling, and
# redis-server INCR. Prints each figure next to its target, writes a JSON file.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/server.sh [options]
In one run on 127.0.0.1 (servers started here, stopped by PID), idgen serve --threads 1:
  1. GET /v1/id under wrk -t1 -c32 against nginx (one worker, keep-alive, a fixed 200 of
     the same body length), rounds alternating; target idgen >= 0.9x nginx's requests/s.
  2. p99 at half of idgen's measured maximum rate, open loop (bench_server_load, 32
     connections; latency counted from each request's due time), rounds alternating
     with nginx at the same rate as a control, median; target < 1 ms.
  3. GET /v1/ids?count=4096 under wrk -t1 -c8: IDs/s as a share of one worker's ceiling
     of 4,096,000 IDs/s (4,096 per ms); target >= 95%.
  4. RESP ID against redis-server INCR, redis-benchmark -c 50 at pipelines 1 and 16,
     rounds alternating; target >= 1.0x.
  5. idgen's resident memory after all of it; target < 16 MiB.
  --seconds S    length of each measurement (default 5)
  --rounds N     alternating rounds for 1 and 4, median reported (default 3)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen and bench_server_load (default: build)
  --json FILE    the result file (default bench/results/server.json)
  --md FILE      the markdown section (default bench/results/server.md)
  --docs         also replace the server section of docs/benchmarks.md
  -h, --help     this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bl_name="bench/server.sh"
# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_options server "seconds rounds idgen build json md docs" "$@"
load="$build_dir/bench_server_load"
bl_require "$idgen" "$load" -- wrk nginx redis-server redis-benchmark curl
bl_check_loopback
bl_init
machine=$(bl_machine)
date=$(date -u +%Y-%m-%dT%H:%MZ)
cmd="bench/server.sh --seconds $seconds --rounds $rounds"
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)
ceiling=4096000

bl_start_idgen "$idgen"
bl_start_redis
# nginx answers with the body idgen gives, byte for byte in length.
curl -s "http://127.0.0.1:$idgen_http/v1/id" | tr -d '\n' >"$bl_tmp/body"
bl_start_nginx "$bl_tmp/body"
idgen_url="http://127.0.0.1:$idgen_http/v1/id"
nginx_url="http://127.0.0.1:$nginx_port/v1/id"
idgen_bytes=$(curl -si "$idgen_url" | wc -c)
nginx_bytes=$(curl -si "$nginx_url" | wc -c)
bl_log "idgen pid $idgen_pid (HTTP $idgen_http, RESP $idgen_resp), nginx pid $nginx_pid ($nginx_port), redis pid $redis_pid ($redis_port)"
bl_log "response bytes (headers + body): idgen $idgen_bytes, nginx $nginx_bytes"

results="$bl_tmp/results.tsv" # name value target pass command
result() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; bl_log "$1: $2 (target $3: $4)"; }
pass() { awk "BEGIN { exit !($1) }" && echo pass || echo FAIL; }

# 1. Single-ID HTTP against nginx, rounds alternating.
wrk -t1 -c32 -d1s "$idgen_url" >/dev/null
wrk -t1 -c32 -d1s "$nginx_url" >/dev/null
i_rps=() n_rps=() i_p99=() n_p99=()
for ((r = 1; r <= rounds; r++)); do
  x=$(bl_wrk "$nginx_url" 32 "$seconds"); n_rps+=("$(bl_kv "$x" rps)"); n_p99+=("$(bl_kv "$x" p99_us)")
  bl_log "round $r nginx: $x"
  x=$(bl_wrk "$idgen_url" 32 "$seconds"); i_rps+=("$(bl_kv "$x" rps)"); i_p99+=("$(bl_kv "$x" p99_us)")
  bl_log "round $r idgen: $x"
done
idgen_rps=$(bl_median "${i_rps[@]}")
nginx_rps=$(bl_median "${n_rps[@]}")
ratio=$(awk -v a="$idgen_rps" -v b="$nginx_rps" 'BEGIN { printf "%.3f", a / b }')
result "HTTP /v1/id requests/s, idgen ÷ nginx (wrk -t1 -c32)" "${ratio}× ($idgen_rps vs $nginx_rps req/s)" \
  "≥ 0.9×" "$(pass "$ratio >= 0.9")" "wrk -t1 -c32 -d${seconds}s URL/v1/id, $rounds rounds alternating, median"
result "closed-loop p99 under wrk -t1 -c32 (idgen / nginx)" \
  "$(bl_median "${i_p99[@]}") µs / $(bl_median "${n_p99[@]}") µs" "—" "—" "as above"

# 2. Open loop at half of idgen's maximum rate, idgen and nginx alternating; median p99.
half=$(awk -v r="$idgen_rps" 'BEGIN { printf "%.0f", r / 2 }')
declare -A ol_p50 ol_p99 ol_p999
for who in idgen nginx; do ol_p50[$who]=""; ol_p99[$who]=""; ol_p999[$who]=""; done
for ((r = 1; r <= rounds; r++)); do
  for who in idgen nginx; do
    port=$idgen_http
    [[ $who == nginx ]] && port=$nginx_port
    x=$("$load" --port "$port" --path /v1/id --rate "$half" --conns 32 --seconds "$seconds" --warmup 1) ||
      bl_die "bench_server_load failed against $who"
    bl_log "round $r open loop $who: $x"
    ol_p50[$who]+=" $(bl_kv "$x" p50_us)"
    ol_p99[$who]+=" $(bl_kv "$x" p99_us)"
    ol_p999[$who]+=" $(bl_kv "$x" p999_us)"
  done
done
# shellcheck disable=SC2086 # the lists split on purpose
ip99=$(bl_median ${ol_p99[idgen]})
# shellcheck disable=SC2086
result "idgen p99 at half its max rate ($half req/s, open loop)" \
  "$ip99 µs (p50 $(bl_median ${ol_p50[idgen]}), p99.9 $(bl_median ${ol_p999[idgen]}); rounds:${ol_p99[idgen]})" \
  "< 1,000 µs" "$(pass "$ip99 < 1000")" \
  "bench_server_load --port PORT --path /v1/id --rate $half --conns 32 --seconds $seconds --warmup 1, $rounds rounds alternating with nginx, median"
# shellcheck disable=SC2086
result "nginx p99 at the same rate, open loop (control)" \
  "$(bl_median ${ol_p99[nginx]}) µs (p50 $(bl_median ${ol_p50[nginx]}), p99.9 $(bl_median ${ol_p999[nginx]}); rounds:${ol_p99[nginx]})" \
  "—" "—" "as above"

# 3. Batches of 4,096 against the per-worker ceiling.
x=$(bl_wrk "http://127.0.0.1:$idgen_http/v1/ids?count=4096" 8 "$seconds")
bl_log "batches: $x"
ids=$(awk -v r="$(bl_kv "$x" rps)" 'BEGIN { printf "%.0f", r * 4096 }')
share=$(awk -v i="$ids" -v c="$ceiling" 'BEGIN { printf "%.1f", 100 * i / c }')
result "HTTP /v1/ids?count=4096, IDs/s as a share of 4,096,000" \
  "${share}% ($ids IDs/s, p99 $(bl_kv "$x" p99_us) µs per request)" "≥ 95%" "$(pass "$share >= 95")" \
  "wrk -t1 -c8 -d${seconds}s 'URL/v1/ids?count=4096'"

# 4. RESP against redis-server INCR, the same redis-benchmark settings, rounds alternating.
for p in 1 16; do
  # A probe (and warm-up) of each sizes the request count to about --seconds.
  bl_redis_bench "$idgen_resp" 50 $((20000 * p)) "$p" ID >/dev/null
  x=$(bl_redis_bench "$redis_port" 50 $((20000 * p)) "$p" INCR ticket)
  n=$(awk -v r="$(bl_kv "$x" rps)" -v s="$seconds" 'BEGIN { n = int(r * s); print n < 10000 ? 10000 : n }')
  i_rps=() r_rps=()
  for ((r = 1; r <= rounds; r++)); do
    x=$(bl_redis_bench "$redis_port" 50 "$n" "$p" INCR ticket); r_rps+=("$(bl_kv "$x" rps)")
    bl_log "round $r redis P$p: $x"
    x=$(bl_redis_bench "$idgen_resp" 50 "$n" "$p" ID); i_rps+=("$(bl_kv "$x" rps)")
    bl_log "round $r idgen P$p: $x"
  done
  a=$(bl_median "${i_rps[@]}")
  b=$(bl_median "${r_rps[@]}")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
  result "RESP ID ÷ redis-server INCR, pipeline $p (-c 50)" "${ratio}× ($a vs $b req/s)" "≥ 1.0×" \
    "$(pass "$ratio >= 1.0")" "redis-benchmark -p PORT -c 50 -n $n -P $p ID (INCR ticket), $rounds rounds alternating, median"
done

# 5. Memory after the runs.
rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$idgen_pid/status")
hwm_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$idgen_pid/status")
rss_mib=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
result "idgen resident memory after the runs" \
  "${rss_mib} MiB (peak $(awk -v k="$hwm_kb" 'BEGIN { printf "%.1f", k / 1024 }') MiB)" "< 16 MiB" \
  "$(pass "$rss_kb < 16384")" "VmRSS and VmHWM in /proc/PID/status"

# --- Output --------------------------------------------------------------------------------
mkdir -p "$(dirname "$json")" "$(dirname "$md")"
awk -F'\t' -v date="$date" -v machine="$machine" -v cmd="$cmd" -v qdisc="$bl_qdisc" \
    -v ib="$idgen_bytes" -v nb="$nginx_bytes" '
  function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
  { rows[NR] = $0 }
  END {
    printf "{\n  \"date\": %s,\n  \"machine\": %s,\n  \"loopback_qdisc\": %s,\n  \"command\": %s,\n", q(date), q(machine), q(qdisc), q(cmd)
    printf "  \"response_bytes\": {\"idgen\": %d, \"nginx\": %d},\n  \"results\": [\n", ib, nb
    for (i = 1; i <= NR; i++) {
      split(rows[i], f, "\t")
      printf "    {\"name\": %s, \"value\": %s, \"target\": %s, \"verdict\": %s, \"command\": %s}%s\n",
             q(f[1]), q(f[2]), q(f[3]), q(f[4]), q(f[5]), i < NR ? "," : ""
    }
    print "  ]\n}"
  }' "$results" >"$json"
{
  echo "Run of $date: \`$cmd\` (\`make bench-server\`)."
  echo "Machine: $machine. Absolute figures are this shared machine's; the"
  echo "load generator and the server share its cores. Loopback qdisc: \`$bl_qdisc\`;"
  echo "load average at the start: $load_avg."
  echo "$("$idgen" --version 2>/dev/null | head -n 1 || echo 'idgen ?') \`serve --threads 1\`; nginx $(nginx -v 2>&1 | sed 's|.*/||') (one worker,"
  echo "\`return 200\` of the same body); $(redis-server --version | cut -d' ' -f1-3). Response bytes,"
  echo "headers and body: idgen $idgen_bytes, nginx $nginx_bytes."
  echo
  echo "| Figure | Measured | Target | Verdict |"
  echo "|---|---|---|---|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$results"
  echo
  echo "Commands (PORT and URL are the ones the script picked):"
  echo
  awk -F'\t' '$5 != "as above" { printf "- %s: `%s`\n", $1, $5 }' "$results"
} >"$md"
echo
cat "$md"
bl_log "wrote $json and $md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" server-results "$md"
  bl_log "updated docs/benchmarks.md"
fi
