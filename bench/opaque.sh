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
     -c8), where the per-ID cost shows in full (no target).
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
seconds=5
rounds=3
build_dir="$src_dir/build"
idgen=""
docs=0
results="$src_dir/bench/results"
bl_name="bench/opaque.sh"
die() { echo "$bl_name: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; seconds=$2; shift 2 ;;
    --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --idgen) [[ $# -ge 2 ]] || die "--idgen needs a value"; idgen=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; build_dir=$2; shift 2 ;;
    --docs) docs=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || die "--seconds must be a positive integer"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
[[ -n "$idgen" ]] || idgen="$build_dir/idgen"
[[ -x "$idgen" ]] || { echo "$bl_name: $idgen not built" >&2; exit 1; }
[[ -x "$build_dir/bench_opaque" ]] || { echo "$bl_name: $build_dir/bench_opaque not built" >&2; exit 1; }
command -v wrk >/dev/null 2>&1 || { echo "$bl_name: wrk not found (scripts/deps.sh bench)" >&2; exit 1; }

# shellcheck source=bench/server_lib.sh
source "$src_dir/bench/server_lib.sh"
bl_check_loopback
bl_init
mkdir -p "$results"
date=$(date -u +%Y-%m-%dT%H:%MZ)
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. The library, one core.
"$build_dir/bench_opaque" --json "$results/opaque.json" | tee "$results/opaque.txt"

# 2. Over HTTP, one server thread; plain and opaque alternate within each round.
"$idgen" opaque keygen "$bl_tmp/key"
bl_start_idgen "$idgen" --opaque-key-file "$bl_tmp/key"
base="http://127.0.0.1:$idgen_http"
for f in base62 opaque-base62; do wrk -t1 -c32 -d1s "$base/v1/id?format=$f" >/dev/null; done
plain=() opaque=() plain_p99=() opaque_p99=()
for ((r = 1; r <= rounds; r++)); do
  x=$(bl_wrk "$base/v1/id?format=base62" 32 "$seconds"); plain+=("$(bl_kv "$x" rps)"); plain_p99+=("$(bl_kv "$x" p99_us)")
  bl_log "round $r plain: $x"
  x=$(bl_wrk "$base/v1/id?format=opaque-base62" 32 "$seconds"); opaque+=("$(bl_kv "$x" rps)"); opaque_p99+=("$(bl_kv "$x" p99_us)")
  bl_log "round $r opaque: $x"
done
p=$(bl_median "${plain[@]}")
o=$(bl_median "${opaque[@]}")
ratio=$(awk -v a="$o" -v b="$p" 'BEGIN { printf "%.3f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.8) ? "pass" : "FAIL" }')
x=$(bl_wrk "$base/v1/ids?count=4096&format=base62" 8 "$seconds"); bp=$(bl_kv "$x" rps)
bl_log "batch plain: $x"
x=$(bl_wrk "$base/v1/ids?count=4096&format=opaque-base62" 8 "$seconds"); bo=$(bl_kv "$x" rps)
bl_log "batch opaque: $x"
bratio=$(awk -v a="$bo" -v b="$bp" 'BEGIN { printf "%.3f", a / b }')
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
  echo "| Request | plain (format=base62) | opaque (format=opaque-base62) | opaque ÷ plain | Target |"
  echo "|---|--:|--:|--:|---|"
  echo "| GET /v1/id, 32 connections, requests/s | $p (p99 $(bl_median "${plain_p99[@]}") µs) | $o (p99 $(bl_median "${opaque_p99[@]}") µs) | ${ratio}× | ≥ 0.8×: $verdict |"
  echo "| GET /v1/ids?count=4096, 8 connections, IDs/s (one round) | $(ids_s "$bp") | $(ids_s "$bo") | ${bratio}× | — |"
} >"$results/opaque.md"
echo
cat "$results/opaque.md"
if [[ $docs -eq 1 ]]; then
  bl_docs_section "$src_dir/docs/benchmarks.md" opaque-results "$results/opaque.md"
  bl_log "updated docs/benchmarks.md"
fi
