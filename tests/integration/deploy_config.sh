#!/usr/bin/env bash
# The deploy/ files name flags and variables that `idgen serve` accepts: the StatefulSet's
# args and env (with the Containerfile it runs), and the systemd unit's command, each
# checked with --print-config.
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
echo "deploy_config.sh: all passed"
