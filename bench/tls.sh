#!/usr/bin/env bash
# bench/tls.sh: the cost of TLS in idgen serve, beside nginx and redis-server doing the same
# over TLS with the same certificate and key, in one run on loopback. Prints the table,
# writes a JSON file and a markdown section.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/tls.sh [options]
In one run on 127.0.0.1 (servers started here, stopped by PID), with one throwaway PKI
(scripts/tls-certs.sh: an ECDSA P-256 certificate for 127.0.0.1) shared by every server:
  1. HTTPS keep-alive GET /v1/id under wrk -t1 -c32: idgen serve --threads 1 --tls-cert
     --tls-key against nginx (one worker, `return 200` of the same body, TLS on the same
     pair); target idgen >= 1.0x nginx. The same over plain HTTP, and each server's
     TLS ÷ plain (the cost of TLS).
  2. RESP over TLS: idgen's ID against redis-server --tls-port INCR, redis-benchmark --tls
     -c 50 at pipelines 1 and 16; target >= 1.0x. The same in plain text, and each one's
     TLS ÷ plain.
  3. Handshakes per second, idgen against nginx, two ways: resumed, wrk -t1 -c32
     -H 'Connection: close' (a new TCP connection and TLS handshake per request; wrk
     offers the session ticket of its last connection, so nearly all resume), beside the
     same over plain HTTP; and full, openssl s_time -new (one connection at a time, no
     resumption: certificate signature and verification every time).
Each pair runs interleaved, round by round (nginx, idgen, nginx, idgen, ...); the median
of the rounds is reported. The machine's other jobs make every figure noisy: read the
ratios, and the rounds printed on stderr.
  --seconds S    length of each measurement (default 5)
  --rounds N     interleaved rounds, median reported (default 3)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen (default: build)
  --json FILE    the result file (default bench/results/tls.json)
  --md FILE      the markdown section (default bench/results/tls.md)
  --docs         also replace the TLS section of docs/benchmarks.md
  -h, --help     this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bl_name="bench/tls.sh"
# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_options tls "seconds rounds idgen build json md docs" "$@"
bl_require "$idgen" -- wrk nginx redis-server redis-benchmark curl openssl faketime
redis-benchmark --help 2>&1 | grep -q -- '--tls' || bl_die "redis-benchmark has no --tls"
bl_check_loopback
bl_init
machine=$(bl_machine)
date=$(date -u +%Y-%m-%dT%H:%MZ)
cmd="bench/tls.sh --seconds $seconds --rounds $rounds"
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

pki=$bl_tmp/pki
"$src_dir/scripts/tls-certs.sh" "$pki" || bl_die "scripts/tls-certs.sh failed"
cert=$pki/server.pem key=$pki/server.key ca=$pki/ca.pem

# Two idgen processes, one worker each: TLS is all or nothing per process.
bl_start_idgen "$idgen"
plain_pid=$idgen_pid plain_http=$idgen_http plain_resp=$idgen_resp
bl_start_idgen "$idgen" --tls-cert "$cert" --tls-key "$key"
tls_pid=$idgen_pid tls_http=$idgen_http tls_resp=$idgen_resp
# A new worker file waits past its HWM before the first ID: until both issue.
for u in "http://127.0.0.1:$plain_http" "https://127.0.0.1:$tls_http"; do
  for _ in $(seq 150); do
    [[ $(curl -s --cacert "$ca" -o /dev/null -w '%{http_code}' "$u/readyz") == 200 ]] && break
    sleep 0.1
  done
done
# One nginx and one redis-server each, serving both plain and TLS on two ports.
curl -s "http://127.0.0.1:$plain_http/v1/id" | tr -d '\n' >"$bl_tmp/body"
bl_start_nginx "$bl_tmp/body" "$cert" "$key"
bl_start_redis "$cert" "$key" "$ca"

declare -A url
url[idgen-tls]="https://127.0.0.1:$tls_http/v1/id"
url[nginx-tls]="https://127.0.0.1:$nginx_tls_port/v1/id"
url[idgen-plain]="http://127.0.0.1:$plain_http/v1/id"
url[nginx-plain]="http://127.0.0.1:$nginx_port/v1/id"
for k in "${!url[@]}"; do
  [[ $(curl -s --cacert "$ca" -o /dev/null -w '%{http_code}' "${url[$k]}") == 200 ]] ||
    bl_die "$k does not answer 200 at ${url[$k]}"
done
idgen_bytes=$(curl -si --cacert "$ca" "${url[idgen-tls]}" | wc -c)
nginx_bytes=$(curl -si --cacert "$ca" "${url[nginx-tls]}" | wc -c)
proto=$(curl -sv --cacert "$ca" -o /dev/null "${url[idgen-tls]}" 2>&1 | sed -n 's/.*SSL connection using \([^ ]*\) \/ \([^ ]*\).*/\1 \2/p' | head -1)
nproto=$(curl -sv --cacert "$ca" -o /dev/null "${url[nginx-tls]}" 2>&1 | sed -n 's/.*SSL connection using \([^ ]*\) \/ \([^ ]*\).*/\1 \2/p' | head -1)
bl_log "idgen plain pid $plain_pid (HTTP $plain_http, RESP $plain_resp), TLS pid $tls_pid (HTTPS $tls_http, RESP $tls_resp)"
bl_log "nginx pid $nginx_pid (HTTP $nginx_port, HTTPS $nginx_tls_port), redis pid $redis_pid ($redis_port, TLS $redis_tls_port)"
bl_log "response bytes (headers + body): idgen $idgen_bytes, nginx $nginx_bytes; TLS: idgen $proto, nginx $nproto"

results="$bl_tmp/results.tsv" # name value target verdict command
result() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; bl_log "$1: $2 (target $3: $4)"; }
pass() { awk "BEGIN { exit !($1) }" && echo pass || echo FAIL; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# wrk_rounds NAME CONNS [wrk header]: the four URLs interleaved for --rounds rounds (nginx
# then idgen, TLS then plain); sets med[NAME/KEY] to each one's median requests/s and
# rounds[NAME/KEY] to the list of rounds.
declare -A med rounds_of
wrk_rounds() {
  local name=$1 conns=$2 r k x
  shift 2
  local -A list
  for ((r = 1; r <= rounds; r++)); do
    for k in nginx-tls idgen-tls nginx-plain idgen-plain; do
      if [[ $# -gt 0 ]]; then
        x=$(wrk_close "${url[$k]}" "$conns" "$seconds")
      else
        x=$(bl_wrk "${url[$k]}" "$conns" "$seconds")
      fi
      [[ $(bl_kv "$x" errors) == 0 ]] || bl_log "round $r $name $k: errors in $x"
      list[$k]+=" $(bl_kv "$x" rps)"
      bl_log "round $r $name $k: $x"
    done
  done
  for k in "${!list[@]}"; do
    # shellcheck disable=SC2086 # the list splits on purpose
    med[$name/$k]=$(bl_median ${list[$k]})
    rounds_of[$name/$k]=${list[$k]}
  done
}
# wrk_close URL CONNS SECONDS: bl_wrk with Connection: close on every request.
wrk_close() {
  local out line
  out=$(wrk -t1 -c"$2" -d"$3s" -H 'Connection: close' -s "$bl_src/bench/server_wrk.lua" "$1" 2>&1) || true
  line=$(grep '^WRKRESULT' <<<"$out") || { echo "$out" >&2; bl_die "wrk failed on $1"; }
  echo "${line#WRKRESULT }"
}

# 1. HTTPS keep-alive against nginx, and plain HTTP.
for k in "${!url[@]}"; do wrk -t1 -c32 -d1s "${url[$k]}" >/dev/null; done
wrk_rounds http 32
a=${med[http/idgen-tls]} b=${med[http/nginx-tls]} r=$(ratio "$a" "$b")
result "HTTPS keep-alive /v1/id req/s, idgen ÷ nginx (wrk -t1 -c32)" "${r}× ($a vs $b; rounds idgen:${rounds_of[http/idgen-tls]}, nginx:${rounds_of[http/nginx-tls]})" \
  "≥ 1.0×" "$(pass "$r >= 1.0")" "wrk -t1 -c32 -d${seconds}s https://127.0.0.1:PORT/v1/id, $rounds rounds interleaved with the three others, median"
a=${med[http/idgen-plain]} b=${med[http/nginx-plain]} r=$(ratio "$a" "$b")
result "plain HTTP keep-alive /v1/id req/s, idgen ÷ nginx (same run)" "${r}× ($a vs $b)" "—" "—" "as above"
for s in idgen nginx; do
  r=$(ratio "${med[http/$s-tls]}" "${med[http/$s-plain]}")
  result "cost of TLS, keep-alive: $s HTTPS ÷ its plain HTTP" "${r}× (${med[http/$s-tls]} vs ${med[http/$s-plain]})" "—" "—" "as above"
done

# 2. RESP over TLS against redis-server's tls-port, and plain text.
declare -A resp_port resp_cmd resp_tls
resp_port[idgen-tls]=$tls_resp resp_port[idgen-plain]=$plain_resp
resp_port[redis-tls]=$redis_tls_port resp_port[redis-plain]=$redis_port
for k in idgen-tls idgen-plain; do resp_cmd[$k]=ID; done
for k in redis-tls redis-plain; do resp_cmd[$k]="INCR ticket"; done
for k in idgen-tls redis-tls; do resp_tls[$k]="--tls $ca"; done
for k in idgen-plain redis-plain; do resp_tls[$k]=""; done
resp() { # KEY N PIPELINE
  # shellcheck disable=SC2086 # --tls CA and the command split on purpose
  bl_redis_bench ${resp_tls[$1]} "${resp_port[$1]}" 50 "$2" "$3" ${resp_cmd[$1]}
}
for p in 1 16; do
  # A probe (and warm-up) of each sizes the request count to about --seconds, on the
  # slower side (TLS).
  resp idgen-tls $((20000 * p)) "$p" >/dev/null
  x=$(resp redis-tls $((20000 * p)) "$p")
  n=$(awk -v r="$(bl_kv "$x" rps)" -v s="$seconds" 'BEGIN { n = int(r * s); print n < 10000 ? 10000 : n }')
  declare -A list=()
  for ((r = 1; r <= rounds; r++)); do
    for k in redis-tls idgen-tls redis-plain idgen-plain; do
      x=$(resp "$k" "$n" "$p"); list[$k]+=" $(bl_kv "$x" rps)"
      bl_log "round $r RESP P$p $k: $x"
    done
  done
  for k in "${!list[@]}"; do
    # shellcheck disable=SC2086
    med[resp$p/$k]=$(bl_median ${list[$k]}); rounds_of[resp$p/$k]=${list[$k]}
  done
  a=${med[resp$p/idgen-tls]} b=${med[resp$p/redis-tls]} r=$(ratio "$a" "$b")
  result "RESP over TLS, ID ÷ redis-server INCR, pipeline $p (-c 50)" "${r}× ($a vs $b; rounds idgen:${rounds_of[resp$p/idgen-tls]}, redis:${rounds_of[resp$p/redis-tls]})" \
    "≥ 1.0×" "$(pass "$r >= 1.0")" \
    "redis-benchmark --tls --cacert ca.pem -p PORT -c 50 -n $n -P $p ID (INCR ticket), $rounds rounds interleaved with plain, median"
  a=${med[resp$p/idgen-plain]} b=${med[resp$p/redis-plain]} r=$(ratio "$a" "$b")
  result "plain RESP, ID ÷ INCR, pipeline $p (same run)" "${r}× ($a vs $b)" "—" "—" "as above"
  for s in idgen redis; do
    r=$(ratio "${med[resp$p/$s-tls]}" "${med[resp$p/$s-plain]}")
    result "cost of TLS, RESP pipeline $p: $s TLS ÷ plain" "${r}× (${med[resp$p/$s-tls]} vs ${med[resp$p/$s-plain]})" "—" "—" "as above"
  done
done

# 3. Handshakes per second: a new connection per request.
wrk_rounds close 32 close
a=${med[close/idgen-tls]} b=${med[close/nginx-tls]} r=$(ratio "$a" "$b")
result "resumed TLS handshakes/s (one request per connection), idgen ÷ nginx" "${r}× ($a vs $b; rounds idgen:${rounds_of[close/idgen-tls]}, nginx:${rounds_of[close/nginx-tls]})" \
  "beside nginx" "—" "wrk -t1 -c32 -d${seconds}s -H 'Connection: close' https://127.0.0.1:PORT/v1/id, $rounds rounds interleaved with plain, median"
for s in idgen nginx; do
  r=$(ratio "${med[close/$s-tls]}" "${med[close/$s-plain]}")
  result "connections/s, $s: TLS ÷ plain HTTP (Connection: close)" "${r}× (${med[close/$s-tls]} vs ${med[close/$s-plain]})" "—" "—" "as above"
done

# Full handshakes: openssl s_time -new, one connection at a time; connections per wall second.
s_time() { # PORT
  local t0 t1 out n
  t0=$(date +%s%N)
  out=$(openssl s_time -connect "127.0.0.1:$1" -new -time "$seconds" -CAfile "$ca" -www /v1/id 2>&1) ||
    { echo "$out" >&2; bl_die "openssl s_time failed on port $1"; }
  t1=$(date +%s%N)
  n=$(sed -n 's/^\([0-9]*\) connections in [0-9.]*s;.*/\1/p' <<<"$out" | head -1)
  [[ -n $n ]] || { echo "$out" >&2; bl_die "openssl s_time gave no count on port $1"; }
  awk -v n="$n" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ns / 1e9) }'
}
declare -A full=()
for ((r = 1; r <= rounds; r++)); do
  for k in nginx idgen; do
    port=$tls_http
    [[ $k == nginx ]] && port=$nginx_tls_port
    x=$(s_time "$port"); full[$k]+=" $x"
    bl_log "round $r full handshakes $k: $x/s"
  done
done
# shellcheck disable=SC2086 # the lists split on purpose
a=$(bl_median ${full[idgen]}) b=$(bl_median ${full[nginx]})
r=$(ratio "$a" "$b")
result "full TLS handshakes/s (no resumption, one at a time), idgen ÷ nginx" "${r}× ($a vs $b; rounds idgen:${full[idgen]}, nginx:${full[nginx]})" \
  "beside nginx" "—" "openssl s_time -connect 127.0.0.1:PORT -new -time $seconds -CAfile ca.pem -www /v1/id, $rounds rounds interleaved, median"

rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$tls_pid/status")
result "idgen (TLS) peak resident memory after the runs" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }') MiB" "—" "—" "VmHWM in /proc/PID/status"

# --- Output --------------------------------------------------------------------------------
mkdir -p "$(dirname "$json")" "$(dirname "$md")"
awk -F'\t' -v date="$date" -v machine="$machine" -v cmd="$cmd" -v qdisc="$bl_qdisc" \
    -v ib="$idgen_bytes" -v nb="$nginx_bytes" -v proto="$proto" '
  function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
  { rows[NR] = $0 }
  END {
    printf "{\n  \"date\": %s,\n  \"machine\": %s,\n  \"loopback_qdisc\": %s,\n  \"command\": %s,\n", q(date), q(machine), q(qdisc), q(cmd)
    printf "  \"tls\": %s,\n  \"response_bytes\": {\"idgen\": %d, \"nginx\": %d},\n  \"results\": [\n", q(proto), ib, nb
    for (i = 1; i <= NR; i++) {
      split(rows[i], f, "\t")
      printf "    {\"name\": %s, \"value\": %s, \"target\": %s, \"verdict\": %s, \"command\": %s}%s\n",
             q(f[1]), q(f[2]), q(f[3]), q(f[4]), q(f[5]), i < NR ? "," : ""
    }
    print "  ]\n}"
  }' "$results" >"$json"
{
  echo "Run of $date: \`$cmd\` (\`make bench-tls\`)."
  echo "Machine: $machine, shared with other jobs: figures are noisy, the"
  echo "load generator and the servers share its cores. Loopback qdisc: \`$bl_qdisc\`;"
  echo "load average at the start: $load_avg."
  echo "$("$idgen" --version 2>/dev/null | head -n 1 || echo 'idgen ?') \`serve --threads 1\`; nginx $(nginx -v 2>&1 | sed 's|.*/||') (one worker,"
  echo "\`return 200\` of the same body); $(redis-server --version | cut -d' ' -f1-3) (\`--tls-port\`)."
  echo "One ECDSA P-256 certificate and key for all three; negotiated: idgen $proto, nginx $nproto."
  echo "Response bytes, headers and body: idgen $idgen_bytes, nginx $nginx_bytes."
  echo
  echo "| Figure | Measured (median of $rounds interleaved rounds) | Target | Verdict |"
  echo "|---|---|---|---|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$results"
  echo
  echo "Commands (PORT is the one the script picked):"
  echo
  awk -F'\t' '$5 != "as above" { printf "- %s: `%s`\n", $1, $5 }' "$results"
} >"$md"
echo
cat "$md"
bl_log "wrote $json and $md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" tls-results "$md"
  bl_log "updated docs/benchmarks.md"
fi
