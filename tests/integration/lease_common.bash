# shellcheck shell=bash disable=SC2034 # HOLDER, pids and T are the caller's to use
# lease_common.bash: sourced by the lease tests (lease_etcd*.sh) first thing. Strict mode,
# the idgen binary ($1), the source and build dirs, lease_holder, a scratch dir $T, the
# holder processes in pids (killed, after a SIGCONT, at exit), and what every such test
# reads off a holder's stderr. The caller defines stop_servers (the coordinator it
# started, stopped by PID at exit).
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: $0 /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
HOLDER=$BUILD/lease_holder
[[ -x $HOLDER ]] || { echo "lease_holder not built at $HOLDER" >&2; exit 1; }
T=$(mktemp -d)
pids=()
stop_servers() { :; }
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  stop_servers || true
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "$T"/*.err; do [[ -f $f ]] && { echo "== $f" >&2; tail -5 "$f" >&2; }; done
  exit 1
}
ok() { echo "ok - $*"; }
now_ms() { date +%s%3N; }
worker_of() { sed -n 's/^# acquired worker=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
floor_of() { sed -n 's/^# acquired worker=[0-9]* floor=\([0-9]*\).*/\1/p' "$1" | sed -n 1p; }
wait_held() { # errfile
  for _ in $(seq 150); do grep -qs '^# state held' "$1" && return 0; sleep 0.1; done
  fail "no 'held' in $1"
}
