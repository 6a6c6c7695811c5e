#!/usr/bin/env bash
# bench/abuse.sh: the attacks of issue 11 at full scale against one idgen build, on
# 127.0.0.1 (the server started here on free ports, stopped by its PID): prints the
# server's RSS and CPU figures. tests/integration/server_abuse.sh checks the outcomes at a
# smaller scale; this prints the numbers docs/server.md quotes.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/abuse.sh [options]
  1. N connections each send a request line and 99 headers of 4,000 bytes, never the
     blank line; RSS before, as they leave (after 3 s), and 1 s after.
  2. N RESP connections each pipeline IDS 4096 three times and read the replies, then
     stay idle; RSS before, idle, and after they closed.
  3. one multibulk of 2,300 one-byte arguments (16 KB) in 10,000 writes 100 us apart;
     the server's CPU time (/proc/PID/stat, --threads 1).
  4. 1,000,000 wrong AUTHs pipelined on one connection: how many were answered.
  --conns N      connections for 1 and 2 (default 1000)
  --idgen PATH   the idgen binary (default BUILD/idgen)
  --build DIR    the build dir with idgen and server_poke (default: build)
  -h, --help     this text
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$src_dir/build"
idgen=""
conns=1000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --conns) conns=$2; shift 2 ;;
    --idgen) idgen=$2; shift 2 ;;
    --build) build_dir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/abuse.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ "$conns" =~ ^[0-9]+$ && "$conns" -gt 0 ]] || { echo "bench/abuse.sh: --conns wants a whole number > 0" >&2; exit 2; }
idgen=${idgen:-$build_dir/idgen}
poke=$build_dir/server_poke
for f in "$idgen" "$poke"; do
  [[ -x "$f" ]] || { echo "bench/abuse.sh: $f not found (make)" >&2; exit 1; }
done
ulimit -n $((conns * 2 + 200)) 2>/dev/null || { echo "bench/abuse.sh: cannot raise ulimit -n for $conns connections" >&2; exit 1; }

work=$(mktemp -d /tmp/idgen-bench-abuse.XXXXXX)
# Worker IDs are claimed host-wide per namespace: one of this run's own.
export IDGEN_NAMESPACE=${IDGEN_NAMESPACE:-bench-abuse-$$}
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

start() { # [serve options...]: sets pid, http_port, resp_port
  rm -rf "$work/state"
  "$idgen" serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --state-dir "$work/state" "$@" \
    2>"$work/log" &
  pid=$!
  for _ in $(seq 1 200); do grep -q ' lease state=held' "$work/log" 2>/dev/null && break; sleep 0.05; done
  http_port=$(grep -o ' http=[^ ]*' "$work/log" | head -1 | sed 's/.*://')
  resp_port=$(grep -o ' resp=[^ ]*' "$work/log" | head -1 | sed 's/.*://')
}
stop() { kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }

start
r0=$(rss)
"$poke" heads "$http_port" "$conns" 99 4000 3000 -p "$pid" >"$work/heads"
sleep 1
res=$(tail -1 "$work/heads")
echo "heads x$conns: RSS $r0 KiB before, ${res##*rss_kib=} KiB as they leave, $(rss) KiB 1 s after; ${res% rss_kib=*}"
stop

start
r0=$(rss)
"$poke" fetch "$resp_port" "$conns" 3000 "IDS 4096" "IDS 4096" "IDS 4096" >"$work/fetch" &
fp=$!
for _ in $(seq 1 1200); do [[ -s "$work/fetch" ]] && break; sleep 0.05; done
sleep 1
r1=$(rss)
wait "$fp"
sleep 1
echo "fetch x$conns (IDS 4096 x3, then idle): RSS $r0 KiB before, $r1 KiB idle ($(((r1 - r0) / conns)) KiB per connection), $(rss) KiB after; $(tr '\n' ' ' <"$work/fetch")"
stop

start --threads 1
{ printf '*2300\r\n'; for _ in $(seq 1 2300); do printf '$1\r\nx\r\n'; done; } >"$work/frame"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
"$poke" trickle "$resp_port" 10000 100 <"$work/frame" >"$work/trickle"
t1=$(ticks)
echo "a $(wc -c <"$work/frame")-byte frame in 10,000 writes: server CPU $(((t1 - t0) * 1000 / $(getconf CLK_TCK))) ms; reply: $(head -c 40 "$work/trickle" | tr -d '\r\n')"
stop

printf 'bench-abuse-token-0123456789\n' >"$work/token"
start --auth-token-file "$work/token"
(set +o pipefail; yes 'AUTH wrong-guess-0123456789' | head -n 1000000 | sed 's/$/\r/' >"$work/guesses")
"$poke" send "$resp_port" -e -t 3000 <"$work/guesses" >"$work/guesses.out" 2>"$work/guesses.err" || true
echo "1,000,000 wrong AUTHs: $(grep -c WRONGPASS "$work/guesses.out" || true) answered, then $(cat "$work/guesses.err")"
stop
