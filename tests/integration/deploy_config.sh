#!/usr/bin/env bash
# The deploy/ files name flags and variables that `idgen serve` accepts: the StatefulSet's
# args and env (with the Containerfile it runs), and the systemd unit's command, each
# checked with --print-config. The StatefulSets of deploy/k8s/regions/ run with their
# whole env: each sets a datacenter its layout holds and a region, and no two share
# either.
set -euo pipefail
idgen=${1:?usage: deploy_config.sh path/to/idgen}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The StatefulSet: its structure against the Containerfile (deploy_k8s.py), then the
# container's command and environment through `idgen serve --print-config`.
yaml=$src/deploy/k8s/statefulset.yaml
version=$(awk '/^project/ {print $3}' "$src/CMakeLists.txt")
/usr/bin/python3 "$src/tests/integration/deploy_k8s.py" "$yaml" "$src/Containerfile" "$version" \
  > "$dir/k8s" || fail "$yaml"
mapfile -t args < <(sed -n 1p "$dir/k8s" | jq -r '.[]')
mapfile -t env < <(sed -n 2p "$dir/k8s" | jq -r 'to_entries[] | "\(.key)=\(.value)"')
[[ ${args[0]} == serve ]] || fail "the image's entrypoint is not 'idgen serve'"
env -i "${env[@]}" "$idgen" "${args[@]}" --print-config > "$dir/config" ||
  fail "idgen ${args[*]} with the StatefulSet's env was rejected"
# Read once: `idgen serve --help | grep -q` fails under pipefail once the text passes a
# pipe write (4 KiB), when grep exits before idgen has written the rest (SIGPIPE).
help=$("$idgen" serve --help)
for var in "${env[@]%%=*}"; do
  grep -q "$var" <<<"$help" || fail "$var in $yaml is not an idgen serve variable"
done
value() { sed -n "s/^$1 = \"\{0,1\}\([^\"]*\)\"\{0,1\}  #.*/\1/p" "$dir/config"; }
[[ $(value lease) == k8s ]] || fail "lease in the StatefulSet: $(value lease)"
[[ $(value auth-token-file) == /etc/idgen/token ]] || fail "auth-token-file: $(value auth-token-file)"
for listener in http resp; do
  want=$(sed -n 3p "$dir/k8s" | jq -r ".$listener")
  [[ $(value $listener) == "0.0.0.0:$want" ]] ||
    fail "$listener listens on $(value $listener), the container port is $want"
done

# The unit's template (install.sh checks the installed unit with systemd-analyze).
unit=$src/deploy/systemd/idgen.service.in
cmd=$(sed -n 's|^ExecStart=@CMAKE_INSTALL_FULL_BINDIR@/idgen ||p' "$unit")
[[ $cmd == serve* ]] || fail "no ExecStart=@CMAKE_INSTALL_FULL_BINDIR@/idgen serve in $unit"
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
