#!/usr/bin/env bash
# The deploy/ files name flags and variables that `idgen serve` accepts: the StatefulSet's
# args and env, and the systemd unit's command, each checked with --print-config.
set -euo pipefail
idgen=${1:?usage: deploy_config.sh path/to/idgen}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

yaml=$src/deploy/k8s/statefulset.yaml
# args: ["serve", "--http", ...] -> serve --http ...
args=$(sed -n 's/^ *args: *\[\(.*\)\]/\1/p' "$yaml" | tr -d '",')
[[ $args == serve* ]] || fail "no serve args in $yaml"
# shellcheck disable=SC2086
IDGEN_LEASE=k8s IDGEN_POD_INDEX=2 IDGEN_WORKER_ID_OFFSET=0 IDGEN_STATE_DIR=$dir \
  "$idgen" $args --print-config > "$dir/config" || fail "idgen $args rejected"
grep -q '^lease = "k8s"' "$dir/config" || fail "lease from env"
grep -q '^http = "0.0.0.0:8080"  # flag' "$dir/config" || fail "http from args"
# Read once: `idgen serve --help | grep -q` fails under pipefail once the text passes a
# pipe write (4 KiB), when grep exits before idgen has written the rest (SIGPIPE).
help=$("$idgen" serve --help)
for var in $(grep -o 'name: IDGEN_[A-Z_]*' "$yaml" | cut -d' ' -f2); do
  grep -q "$var" <<<"$help" || fail "$var in $yaml is not an idgen serve variable"
done

unit=$src/deploy/systemd/idgen.service
cmd=$(sed -n 's|^ExecStart=/usr/local/bin/idgen ||p' "$unit")
# shellcheck disable=SC2086
IDGEN_STATE_DIR=$dir "$idgen" $cmd --print-config > /dev/null || fail "unit command '$cmd'"
for var in $(grep -o 'IDGEN_[A-Z_]*' "$unit" | sort -u); do
  grep -q "$var" <<<"$help" || fail "$var in $unit is not an idgen serve variable"
done
echo "deploy_config.sh: all passed"
