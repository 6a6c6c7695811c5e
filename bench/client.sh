#!/usr/bin/env bash
# bench/client.sh: libidgen-client in one run on loopback: calls to next() per second of
# a segment name (ranges) with 1 and 2 threads, of a Snowflake name through 1 and 3
# servers, beside IDS 4096 pipelined by hand and one ID per round trip; p50/p99/p99.9 of
# next() in ns, refill stalls included. Starts its servers itself (temp dir, free ports),
# stops each by PID, prints a table, writes bench/results/client.md.
# Usage: bench/client.sh [--seconds S] [--build DIR] [--md FILE]
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=3 build=$src/build md=$src/bench/results/client.md
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --md) md=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/client.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
idgen=$build/idgen bench=$build/bench_client
for f in "$idgen" "$bench"; do
  [[ -x $f ]] || { echo "bench/client.sh: no $f (cmake --build $build --target idgen bench_client)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/idgen-bench-client.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
export IDGEN_NAMESPACE=bench-client-$$
# serve NAME ARGS...: sets PORT
serve() {
  local n=$1 i
  shift
  "$idgen" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --threads 1 --state-dir "$work/$n" "$@" 2>"$work/$n.log" &
  pids+=($!)
  for i in $(seq 1 200); do
    grep -q ' lease state=held' "$work/$n.log" 2>/dev/null && break
    sleep 0.05
  done
  PORT=$(grep -o ' resp=[^ ]*' "$work/$n.log" | head -1 | sed 's/.*://')
}
printf 'generators:\n  orders: {kind: segment, step: 100000, max_step: 1000000}\n' >"$work/g.yaml"
serve seg --lease static --worker-id 20 --config "$work/g.yaml"
SEG=127.0.0.1:$PORT
ALL=""
for i in 1 2 3; do
  serve "sf$i" --lease static --worker-id "$i"
  ALL+="${ALL:+,}127.0.0.1:$PORT"
done
ONE=${ALL%%,*}
sleep 1
row() { # label command...: runs, prints "label | value"
  local label=$1 out
  shift
  out=$("$@")
  printf '%s\t%s\n' "$label" "$out"
}
{
  row "range, 1 thread" "$bench" range "$SEG" orders 1 "$seconds"
  row "range, 2 threads" "$bench" range "$SEG" orders 2 "$seconds"
  row "in-process segment generator, 1 thread" "$build/bench_segment" --numbers 200000000 \
    --step 1000000 --max-step 1000000
  row "snowflake via client, 1 server" "$bench" ids "$ONE" default 1 "$seconds"
  row "snowflake via client, 3 servers" "$bench" ids "$ALL" default 1 "$seconds"
  row "IDS 4096 pipelined by hand (depth 4), 1 server" "$bench" pipelined "$ONE" default "$seconds" 4
  row "one ID per round trip, 1 server" "$bench" single "$ONE" default "$seconds"
  row "latency of next(), range" "$bench" latency "$SEG" orders "$seconds"
  row "latency of next(), snowflake, 3 servers" "$bench" latency "$ALL" default "$seconds"
} >"$work/rows"
cat "$work/rows"
val() { grep -F "$1" "$work/rows" | head -1 | awk -F'\t' '{split($2, a, " "); print a[2]}'; }
r1=$(val "range, 1 thread") r2=$(val "range, 2 threads") s1=$(val "client, 1 server") s3=$(val "client, 3 servers")
p=$(val "pipelined by hand") one=$(val "one ID per round trip")
seg_ns=$(grep -F "in-process segment" "$work/rows" | grep -o 'ns_per_number=[0-9.]*' | cut -d= -f2)
seg=$(awk -v n="$seg_ns" 'BEGIN {printf "%.0f", 1e9 / n}')
{
  echo "## libidgen-client (bench/client.sh, $(date -u +%Y-%m-%d), ${seconds} s per row, one run)"
  echo
  echo "| what | calls/s | ratio |"
  echo "| --- | ---: | --- |"
  echo "| range (segment), next(), 1 thread | $r1 | goal 200 M/s: $(awk -v a="$r1" 'BEGIN {printf "%.2f", a / 2e8}') × |"
  echo "| in-process segment generator (bench_segment, file backend, blocks of 10^6), 1 thread | $seg | client range, 1 thread ÷ this: $(awk -v a="$r1" -v b="$seg" 'BEGIN {printf "%.2f", a / b}') |"
  echo "| range (segment), next(), 2 threads | $r2 | $(awk -v a="$r2" -v b="$r1" 'BEGIN {printf "%.2f", a / b}') × 1 thread |"
  echo "| Snowflake through the client, 1 server | $s1 | $(awk -v a="$s1" 'BEGIN {printf "%.2f", a / 4.096e6}') × 4.096 M/s |"
  echo "| Snowflake through the client, 3 servers | $s3 | $(awk -v a="$s3" 'BEGIN {printf "%.2f", a / (3 * 4.096e6)}') × 3 × 4.096 M/s |"
  echo "| IDS 4096 pipelined by hand (depth 4), 1 server | $p | client, 1 server ÷ this: $(awk -v a="$s1" -v b="$p" 'BEGIN {printf "%.2f", a / b}') |"
  echo "| one ID per round trip, 1 server | $one | client, 1 server ÷ this: $(awk -v a="$s1" -v b="$one" 'BEGIN {printf "%.0f", a / b}') |"
  echo
  echo "Latency of next() in ns (refill stalls included):"
  echo
  grep -F latency "$work/rows" | sed 's/^/    /'
} >"$md"
cat "$md"
