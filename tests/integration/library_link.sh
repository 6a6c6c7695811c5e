#!/usr/bin/env bash
# library_link.sh: the libraries as a user gets them after `make install` into a prefix:
# - a static program from `pkg-config --static --libs idgen` alone (libc, pthreads: no
#   libcurl, no jansson) builds and runs;
# - a program on `pkg-config --libs idgen-etcd idgen` opens an etcd lease once it has
#   listed idgen_lease_etcd in its config's providers, and without it gets
#   IDGEN_ENOPROVIDER;
# - a CMake project finds the package (find_package(idgen)) and links idgen::idgen,
#   idgen::idgen_static and idgen::etcd.
set -euo pipefail
idgen=${1:?usage: library_link.sh path/to/idgen}
build=${IDGEN_BUILD_DIR:-$(dirname "$idgen")}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in cc pkg-config cmake file; do
  command -v $tool >/dev/null || { echo "FAIL: $tool not found" >&2; exit 1; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

prefix=$dir/prefix
cmake --install "$build" --prefix "$prefix" >"$dir/install.log" 2>&1 ||
  { cat "$dir/install.log"; echo "FAIL: cmake --install"; exit 1; }
pc=$(dirname "$(find "$prefix" -name idgen.pc -print -quit)")
libdir=$(dirname "$pc")
export PKG_CONFIG_PATH=$pc

static_libs=$(pkg-config --static --libs idgen)
[[ $static_libs != *curl* && $static_libs != *jansson* ]] &&
  ok "pkg-config --static --libs idgen: $static_libs" || fail "idgen needs more: $static_libs"

cat >"$dir/app.c" <<'C'
/* A worker ID from the file provider, a generator fed by the keeper, as an embedded user
 * would (short HWM steps: a fresh state dir makes the first holder wait past them). */
#include <idgen.h>
#include <stdio.h>
int main(int argc, char **argv) {
  char err[256] = "";
  idgen_lease_config lc;
  idgen_lease_config_init(&lc);
  if ((argc > 1 && idgen_lease_config_set(&lc, "state-dir", argv[1], err, sizeof err)) ||
      idgen_lease_config_set(&lc, "namespace", "library-link-test", err, sizeof err) ||
      idgen_lease_config_set(&lc, "hwm-ahead", "200", err, sizeof err) ||
      idgen_lease_config_set(&lc, "hwm-interval", "100", err, sizeof err))
    return 2;
  idgen_layout layout;
  idgen_layout_preset("snowflake", &layout);
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &clock.base);
  gc.armed = 0; /* the keeper arms it with the worker ID it wins */
  idgen_lease *lease = NULL;
  idgen_gen *gen = NULL;
  idgen_keeper *keeper = NULL;
  uint64_t id;
  if (idgen_lease_open(&lease, &lc, &layout, err, sizeof err) || idgen_gen_new(&gen, &gc)) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &lc);
  kc.lease = lease;
  kc.gen = gen;
  if (idgen_keeper_new(&keeper, &kc) || idgen_keeper_wait_ready(keeper, 10000) ||
      idgen_gen_next(gen, &id)) {
    fprintf(stderr, "keeper: %s\n", idgen_lease_why(lease));
    return 1;
  }
  printf("%llu %s\n", (unsigned long long)id, idgen_lease_name(lease));
  idgen_keeper_free(keeper); /* writes the last HWM, releases the worker ID */
  idgen_gen_free(gen);
  idgen_lease_free(lease);
  return 0;
}
C
# shellcheck disable=SC2046
if cc -o "$dir/app-static" "$dir/app.c" -static $(pkg-config --static --cflags --libs idgen) \
  2>"$dir/err"; then
  out=$("$dir/app-static" "$dir/state") && [[ $out =~ ^[0-9]+\ file$ ]] &&
    ok "a static program on pkg-config --static idgen runs: $out" || fail "static program: $out"
  file "$dir/app-static" | grep 'statically linked' >/dev/null && ok "it is statically linked" ||
    fail "not static: $(file "$dir/app-static")"
else
  cat "$dir/err"; fail "cc -static \$(pkg-config --static --libs idgen)"
fi

cat >"$dir/etcd.c" <<'C'
/* Opens an etcd lease on a port where no etcd listens: with the provider registered the
 * failure is etcd's; without it, IDGEN_ENOPROVIDER. */
#include <idgen.h>
#include <idgen/etcd.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  static const idgen_lease_provider *const providers[] = {&idgen_lease_etcd, NULL};
  idgen_lease_config lc;
  idgen_lease_config_init(&lc);
  if (argc > 1 && strcmp(argv[1], "register") == 0)
    lc.providers = providers;
  char err[256] = "";
  idgen_lease_config_set(&lc, "lease", "etcd", err, sizeof err);
  idgen_lease_config_set(&lc, "etcd", "http://127.0.0.1:1", err, sizeof err);
  idgen_lease_config_set(&lc, "etcd-timeout", "500", err, sizeof err);
  idgen_layout layout;
  idgen_layout_preset("snowflake", &layout);
  idgen_lease *lease;
  int rc = idgen_lease_open(&lease, &lc, &layout, err, sizeof err);
  printf("%s: %s\n", idgen_err_name(rc), err);
  return 0;
}
C
# shellcheck disable=SC2046
if cc -o "$dir/etcd" "$dir/etcd.c" $(pkg-config --cflags --libs idgen-etcd idgen) 2>"$dir/err"; then
  out=$(LD_LIBRARY_PATH=$libdir "$dir/etcd")
  [[ $out == "IDGEN_ENOPROVIDER: the etcd provider is not in this program"* ]] &&
    ok "etcd not in the config's providers: $out" || fail "unregistered: $out"
  out=$(LD_LIBRARY_PATH=$libdir "$dir/etcd" register)
  [[ $out == IDGEN_EUNAVAIL:*127.0.0.1:1* ]] && ok "etcd registered: etcd's own error: $out" ||
    fail "registered: $out"
  LD_LIBRARY_PATH=$libdir ldd "$dir/etcd" | grep "=> $libdir/libidgen-etcd.so" >/dev/null &&
    ok "it links the installed libidgen-etcd.so" || fail "no libidgen-etcd.so in ldd"
else
  cat "$dir/err"; fail "cc \$(pkg-config --libs idgen-etcd idgen)"
fi

mkdir -p "$dir/consumer"
cp "$dir/app.c" "$dir/etcd.c" "$dir/consumer/"
cat >"$dir/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(idgen 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE idgen::idgen)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE idgen::idgen_static)
add_executable(etcd etcd.c)
target_link_libraries(etcd PRIVATE idgen::etcd)
CM
if cmake -S "$dir/consumer" -B "$dir/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$dir/cm.log" 2>&1 && cmake --build "$dir/consumer/build" >>"$dir/cm.log" 2>&1; then
  ok "find_package(idgen) and a build against idgen::idgen, idgen::idgen_static, idgen::etcd"
  out=$("$dir/consumer/build/app" "$dir/state") && [[ $out =~ ^[0-9]+\ file$ ]] &&
    ok "idgen::idgen program runs: $out" || fail "idgen::idgen program: $out"
  out=$("$dir/consumer/build/app_static" "$dir/state") && [[ $out =~ ^[0-9]+\ file$ ]] &&
    ok "idgen::idgen_static program runs: $out" || fail "idgen::idgen_static program: $out"
  out=$("$dir/consumer/build/etcd" register)
  [[ $out == IDGEN_EUNAVAIL:* ]] && ok "idgen::etcd program: $out" || fail "idgen::etcd program: $out"
else
  cat "$dir/cm.log"; fail "find_package(idgen) consumer"
fi
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
