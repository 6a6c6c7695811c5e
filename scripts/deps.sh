#!/usr/bin/env bash
# Installs the Debian packages a task needs, by name; quiet and quick when all are there.
# Usage: scripts/deps.sh build|run|unit|test|bench ...
# (unit: what the unit tests need, sanitizers too; make.sh test installs the rest of the
# test group while those run)
set -euo pipefail

build=(gcc make cmake pkg-config libc6-dev libjansson-dev libcurl4-openssl-dev libhiredis-dev python3 help2man
       libh2o-evloop-dev uuid-dev libssl-dev libpq-dev libmariadb-dev libyaml-dev libzookeeper-mt-dev)
unit=(libcmocka-dev clang libclang-rt-14-dev ninja-build bash-builtins)
test=("${unit[@]}" curl redis-tools redis-server etcd-server etcd-client faketime
      procps iproute2 nodejs jq postgresql postgresql-contrib gnuplot-nox mariadb-server
      mariadb-client python3-cryptography python3-yaml podman mmdebstrap prometheus
      python3-prometheus-client chromium postgresql-server-dev-15 spin python3-redis
      file zookeeper debhelper dpkg-dev lintian systemd openssl)
bench=(postgresql postgresql-contrib redis-server redis-tools nginx-light wrk gnuplot-nox
       mariadb-server mariadb-client valgrind)

want=()
for group in "$@"; do
  case "$group" in
    build|run) want+=("${build[@]}") ;;
    unit) want+=("${build[@]}" "${unit[@]}") ;;
    test) want+=("${build[@]}" "${test[@]}") ;;
    bench) want+=("${build[@]}" "${test[@]}" "${bench[@]}") ;;
    *) echo "deps.sh: unknown group '$group' (build, run, unit, test, bench)" >&2; exit 2 ;;
  esac
done

# npm installs the Node clients of tests/clients (npm ci). Some nodejs builds carry their
# own npm: Debian's package is only wanted where there is none.
if [[ " ${want[*]} " == *" nodejs "* ]] && ! command -v npm >/dev/null 2>&1; then
  want+=(npm)
fi

missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine are empty: update once, then install.
if [[ ! -d /var/lib/apt/lists ]] || ! compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
  $sudo apt-get update -qq
fi
if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts some servers on install; the project starts its own on loopback ports.
for svc in redis-server nginx postgresql mariadb etcd prometheus zookeeper; do
  if [[ " ${missing[*]} " == *" ${svc}"* ]] && command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
