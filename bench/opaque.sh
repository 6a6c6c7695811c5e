#!/usr/bin/env bash
# bench/opaque.sh: what opaque IDs cost. build/bench_opaque (ns per ID next to plain
# formatting and one AES block), then idgen serve over HTTP with format=opaque-base62
# against format=base62 in one run, rounds alternating. Writes bench/results/opaque.*.
set -euo pipefail

usage() {
  cat <<'EOF2'
usage: bench/opaque.sh [options]
  1. build/bench_opaque: ns per opaque ID (FF1, 10 AES blocks) next to plain base62
     formatting and one AES block, same run, one core; target <= 2 us per ID.
  2. idgen serve --threads 1 --opaque-key-file K on 127.0.0.1: GET /v1/id?format=
     opaque-base62 against ?format=base62 under wrk -t1 -c32, rounds alternating,
     median; target opaque >= 0.8x plain. Then /v1/ids?count=4096 both ways (wrk -t1
     -c8, rounds alternating, median), where the per-ID cost shows in full (no target).
     Each also reports the server's CPU time per request (utime + stime in /proc).
  --seconds S    length of each HTTP measurement (default 5)
  --rounds N     alternating rounds (default 3)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen and bench_opaque (default: build)
  --docs         also replace the opaque section of docs/benchmarks.md
  -h, --help     this text
Result files: bench/results/opaque.{txt,json} (bench_opaque) and opaque.md (all of it).
EOF2
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
results="$src_dir/bench/results"
bl_name="bench/opaque.sh"
# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_options opaque "seconds rounds idgen build docs" "$@"
bl_require "$idgen" "$build_dir/bench_opaque" -- wrk
bl_check_loopback
bl_init
mkdir -p "$results"
date=$(date -u +%Y-%m-%dT%H:%MZ)
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. The library, one core.
"$build_dir/bench_opaque" --json "$results/opaque.json" | tee "$results/opaque.txt"

# 2. Over HTTP, one server thread; plain and opaque alternate within each round. Besides
# requests/s, the server's own CPU time per request (utime + stime from /proc), which
# other jobs on the machine disturb less.
"$idgen" opaque keygen "$bl_tmp/key"
bl_start_idgen "$idgen" --opaque-key-file "$bl_tmp/key"
base="http://127.0.0.1:$idgen_http"
tick_us=$((1000000 / $(getconf CLK_TCK)))
server_cpu_us() { awk -v t="$tick_us" '{ print ($14 + $15) * t }' "/proc/$idgen_pid/stat"; }
# measure URL CONNS: bl_wrk's line plus cpu_us=<server CPU µs per request>
measure() {
  local c0 c1 x
  c0=$(server_cpu_us)
  x=$(bl_wrk "$1" "$2" "$seconds")
  c1=$(server_cpu_us)
  echo "$x cpu_us=$(awk -v c=$((c1 - c0)) -v n="$(bl_kv "$x" requests)" 'BEGIN { printf "%.2f", c / n }')"
}
# alternate NAME_A URL_A NAME_B URL_B CONNS: rounds of each, A first; fills the arrays
# <NAME>_rps, <NAME>_p99 and <NAME>_cpu.
alternate() {
  local r x who url
  for ((r = 1; r <= rounds; r++)); do
    for who in "$1" "$3"; do
      [[ $who == "$1" ]] && url=$2 || url=$4
      x=$(measure "$url" "$5")
      bl_log "round $r $who: $x"
      eval "${who}_rps+=(\"$(bl_kv "$x" rps)\") ${who}_p99+=(\"$(bl_kv "$x" p99_us)\") ${who}_cpu+=(\"$(bl_kv "$x" cpu_us)\")"
    done
  done
}
for f in base62 opaque-base62; do wrk -t1 -c32 -d1s "$base/v1/id?format=$f" >/dev/null; done
plain_rps=() plain_p99=() plain_cpu=() opaque_rps=() opaque_p99=() opaque_cpu=()
alternate plain "$base/v1/id?format=base62" opaque "$base/v1/id?format=opaque-base62" 32
bplain_rps=() bplain_p99=() bplain_cpu=() bopaque_rps=() bopaque_p99=() bopaque_cpu=()
alternate bplain "$base/v1/ids?count=4096&format=base62" bopaque "$base/v1/ids?count=4096&format=opaque-base62" 8
med() { bl_median "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
p=$(med "${plain_rps[@]}") o=$(med "${opaque_rps[@]}")
pc=$(med "${plain_cpu[@]}") oc=$(med "${opaque_cpu[@]}")
bp=$(med "${bplain_rps[@]}") bo=$(med "${bopaque_rps[@]}")
bpc=$(med "${bplain_cpu[@]}") boc=$(med "${bopaque_cpu[@]}")
verdict=$(awk -v r="$(ratio "$o" "$p")" 'BEGIN { print (r >= 0.8) ? "pass" : "FAIL" }')
rounds_of() { printf '%.0f ' "$@" | sed 's/ $//'; }
ids_s() { awk -v r="$1" 'BEGIN { printf "%.0f", r * 4096 }'; }

{
  echo "Run of $date: \`bench/opaque.sh --seconds $seconds --rounds $rounds\`."
  echo "Machine: $(bl_machine); load average at the start: $load_avg. Absolute figures"
  echo "are this shared machine's; wrk and the server share its cores."
  echo
  echo "\`build/bench_opaque --json bench/results/opaque.json\`:"
  echo
  echo '```'
  cat "$results/opaque.txt"
  echo '```'
  echo
  echo "\`idgen serve --threads 1 --opaque-key-file K\`, wrk -t1, $rounds rounds alternating, median:"
  echo
  echo "| Measure | plain (format=base62) | opaque (format=opaque-base62) | opaque ÷ plain | Target |"
  echo "|---|--:|--:|--:|---|"
  echo "| GET /v1/id, 32 connections: requests/s | $p (p99 $(med "${plain_p99[@]}") µs) | $o (p99 $(med "${opaque_p99[@]}") µs) | $(ratio "$o" "$p")× | ≥ 0.8×: $verdict |"
  echo "| GET /v1/id: server CPU µs per request | $pc | $oc | $(ratio "$pc" "$oc")× as a rate | — |"
  echo "| GET /v1/ids?count=4096, 8 connections: IDs/s | $(ids_s "$bp") | $(ids_s "$bo") | $(ratio "$bo" "$bp")× | — |"
  echo "| GET /v1/ids?count=4096: server CPU µs per request | $bpc | $boc | $(ratio "$bpc" "$boc")× as a rate | — |"
  echo
  echo "Requests/s of each round, in order: /v1/id plain $(rounds_of "${plain_rps[@]}"); opaque"
  echo "$(rounds_of "${opaque_rps[@]}"). /v1/ids plain $(rounds_of "${bplain_rps[@]}"); opaque $(rounds_of "${bopaque_rps[@]}")."
} >"$results/opaque.md"
echo
cat "$results/opaque.md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" opaque-results "$results/opaque.md"
  bl_log "updated docs/benchmarks.md"
fi
