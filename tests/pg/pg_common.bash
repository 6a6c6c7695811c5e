# tests/pg/pg_common.bash: sourced by tests/pg/*.sh, the tests of the PostgreSQL extension.
# Throwaway clusters with idgen preloaded (scripts/pg-cluster.sh: initdb and the server run
# as the postgres user, never root), psql, waits on the lease, cleanup of what it started.
# Usage of a test: tests/pg/NAME.sh /path/to/idgen (KEEP=1 leaves its temp dir in /tmp)
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: $0 /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
PG_BIN=$(pg_config --bindir)
T=$(mktemp -d /tmp/idgen-pgtest.XXXXXX)
chmod 755 "$T"
# Worker IDs are claimed host-wide per namespace: this run's own keeps other tests out.
NS=pgtest-$$-$RANDOM
CLUSTERS=()
declare -A NETNS=() # NAME -> 1: that cluster runs in a network namespace of its own
EXTRA_CLEANUP=:

cleanup() {
  local c
  for c in "${CLUSTERS[@]}"; do "$SRC/scripts/pg-cluster.sh" stop "$T/$c" || true; done
  eval "$EXTRA_CLEANUP" || true
  [[ -n "${KEEP:-}" ]] || rm -rf "$T"
}
trap cleanup EXIT

fail() {
  local c
  echo "FAIL: $*" >&2
  for c in "${CLUSTERS[@]}"; do
    echo "== $c: server.log ends" >&2
    tail -n 15 "$T/$c/server.log" >&2 2>/dev/null || true
  done
  exit 1
}
ok() { echo "ok - $*"; }

# The extension must be installed into PostgreSQL's directories (make pg-install, as root;
# scripts/test.sh's pg stage does it): its absence is a failure, not a skip.
[[ -f "$(pg_config --pkglibdir)/idgen.so" && -f "$(pg_config --sharedir)/extension/idgen.control" ]] ||
  fail "the idgen extension is not installed in $(pg_config --pkglibdir) (make pg-install)"

# start_cluster NAME [SETTING=VALUE...]: a new cluster in $T/NAME with idgen preloaded in
# this run's namespace; sets PORT_<NAME>.
start_cluster() {
  local name=$1 port
  shift
  port=$("$SRC/scripts/pg-cluster.sh" start "$T/$name" "shared_preload_libraries=idgen" \
    "idgen.namespace='$NS'" "$@" | cut -d' ' -f1) || fail "cluster $name did not start"
  CLUSTERS+=("$name")
  printf -v "PORT_$name" '%s' "$port"
}

port_of() { local v="PORT_$1"; echo "${!v}"; }

# psql_to NAME ARGS...: psql to that cluster's 127.0.0.1, entering its network
# namespace (the postmaster's) when it has one of its own.
psql_to() {
  local name=$1 pre=()
  shift
  [[ -z "${NETNS[$name]:-}" ]] || pre=(nsenter "--net=/proc/$(cat "$T/$name/pid")/ns/net")
  "${pre[@]}" psql -h 127.0.0.1 -p "$(port_of "$name")" -U postgres -d postgres -XAtq "$@"
}

# sql NAME QUERY...: unaligned, tuples only, stops at the first error.
sql() {
  local name=$1
  shift
  local args=()
  for q in "$@"; do args+=(-c "$q"); done
  psql_to "$name" -v ON_ERROR_STOP=1 "${args[@]}"
}

# sql_error NAME QUERY: runs a query that must fail; prints its error (verbose: with the
# SQLSTATE) and returns 0 only if it failed.
sql_error() {
  local out
  if out=$(psql_to "$1" -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$2" 2>&1); then
    echo "$out"
    return 1
  fi
  echo "$out"
}

# wait_state NAME STATE [SECONDS]: until idgen_status().state is STATE.
wait_state() {
  local name=$1 want=$2 secs=${3:-30} got=""
  for _ in $(seq $((secs * 10))); do
    got=$(sql "$name" "SELECT state FROM idgen_status()" 2>/dev/null || true)
    [[ "$got" == "$want" ]] && return 0
    sleep 0.1
  done
  fail "$name: lease state '$got' after ${secs}s, not '$want': $(sql "$name" \
    "SELECT last_error FROM idgen_status()" 2>&1 || true)"
}
