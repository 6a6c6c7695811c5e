#!/usr/bin/env bash
# The deploy/ files name flags and variables that `idgen serve` accepts: the StatefulSet's
# args and env, and the systemd unit's command, each checked with --print-config. The
# StatefulSets of deploy/k8s/regions/ run with their whole env: each sets a datacenter
# its layout holds and a region, and no two share either.
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
# One StatefulSet per region: run with its env (name/value pairs; no valueFrom there).
declare -A dc_of region_of
for yaml in "$src"/deploy/k8s/regions/*.yaml; do
  name=$(basename "$yaml" .yaml)
  args=$(sed -n 's/^ *args: *\[\(.*\)\]/\1/p' "$yaml" | tr -d '",')
  mapfile -t envs < <(awk '/- name: IDGEN_/ {n = $3} /value:/ && n {v = $2; gsub(/"/, "", v); print n "=" v; n = ""}' "$yaml")
  # shellcheck disable=SC2086
  env "${envs[@]}" "$idgen" $args --print-config >"$dir/$name.config" || fail "$yaml: idgen $args rejected"
  for var in $(grep -o 'name: IDGEN_[A-Z_]*' "$yaml" | cut -d' ' -f2); do
    grep -q "$var" <<<"$help" || fail "$var in $yaml is not an idgen serve variable"
  done
  dc=$(sed -n 's/^datacenter = \([0-9]*\)  # env$/\1/p' "$dir/$name.config")
  region=$(sed -n 's/^region = "\(.*\)"  # env$/\1/p' "$dir/$name.config")
  layout=$(sed -n 's/^layout = "\(.*\)"  # env$/\1/p' "$dir/$name.config")
  [[ -n $dc && -n $region && -n $layout ]] || fail "$yaml: no datacenter, region or layout from its env"
  grep -q '^lease = "etcd"  # env' "$dir/$name.config" || fail "$yaml: not the etcd provider"
  # the datacenter fits the layout (a static look: no etcd needed)
  "$idgen" lease --layout "$layout" --lease static --worker-id 0 --datacenter "$dc" \
    --state-dir "$dir/$name.state" >/dev/null || fail "$yaml: datacenter $dc does not fit layout $layout"
  [[ -z ${dc_of[$dc]:-} ]] || fail "$yaml: datacenter $dc is ${dc_of[$dc]}'s too"
  [[ -z ${region_of[$region]:-} ]] || fail "$yaml: region $region is ${region_of[$region]}'s too"
  dc_of[$dc]=$name region_of[$region]=$name
done
[[ ${#dc_of[@]} -ge 2 ]] || fail "fewer than two regions in deploy/k8s/regions"
echo "deploy_config.sh: all passed"
