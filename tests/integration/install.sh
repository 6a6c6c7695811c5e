#!/usr/bin/env bash
# `make install PREFIX=/opt/idgen DESTDIR=...` puts everything in place: the binary,
# libraries, headers, .pc files (a program builds and runs with them), a man page for
# every command, the docs, and the systemd unit with its paths rewritten to the prefix,
# which `systemd-analyze verify` accepts with no complaint (run in a private mount
# namespace where the staged prefix is mounted at /opt/idgen, so that its ExecStart and
# man: links resolve). `make uninstall` then removes every file it installed.
set -euo pipefail
idgen=${1:?usage: install.sh path/to/idgen}
build=${IDGEN_BUILD_DIR:-$(dirname "$idgen")}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in systemd-analyze unshare pkg-config cc man; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found" >&2; exit 1; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix=/opt/idgen
root=$dir/root

make -C "$src" --no-print-directory install BUILD="$build" PREFIX=$prefix DESTDIR="$root" \
  >"$dir/install.log" 2>&1 || { tail -n 20 "$dir/install.log" >&2; fail "make install"; }
p=$root$prefix
[[ -x $p/bin/idgen ]] || fail "no bin/idgen"
libdir=$(dirname "$(find "$p" -name libidgen.so -print -quit)")
[[ -n $libdir && $libdir == "$p"/lib* ]] || fail "no libidgen.so under $prefix/lib"
for f in libidgen.a libidgen-opaque.so libidgen-opaque.a libidgen-etcd.so libidgen-etcd.a \
  libidgen-redis.so libidgen-redis.a pkgconfig/idgen-redis.pc \
  libidgen-zookeeper.so libidgen-zookeeper.a pkgconfig/idgen-zookeeper.pc \
  pkgconfig/idgen.pc pkgconfig/idgen-opaque.pc pkgconfig/idgen-etcd.pc cmake/idgen/idgenConfig.cmake \
  cmake/idgen/idgenConfigVersion.cmake cmake/idgen/idgenTargets.cmake; do
  [[ -e $libdir/$f ]] || fail "no ${libdir#"$root"}/$f"
done
for h in idgen.h $(cd "$src/include" && ls idgen/*.h); do
  cmp -s "$src/include/$h" "$p/include/$h" || fail "header $h not installed"
done
for cmd in "" $("$idgen" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}'); do
  [[ -f $p/share/man/man1/idgen${cmd:+-$cmd}.1 ]] || fail "no man page idgen${cmd:+-$cmd}(1)"
done
[[ -f $p/share/man/man3/idgen.3 ]] || fail "no idgen(3)"
for f in README.md $(cd "$src" && ls docs/*.md); do
  [[ -f $p/share/doc/idgen/$f ]] || fail "no share/doc/idgen/$f"
done
grep -rq '@IDGEN_DOCDIR@' "$p/share/man" && fail "a man page still holds @IDGEN_DOCDIR@"
grep -q "$prefix/share/doc/idgen" "$p/share/man/man1/idgen-serve.1" ||
  fail "idgen-serve(1) does not point at $prefix/share/doc/idgen"

# The .pc files: a program compiles against the staged headers and links the libraries.
cat >"$dir/app.c" <<'EOF'
#include <idgen.h>
#include <idgen/opaque.h>
#include <stdio.h>
int main(void) {
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config config;
  idgen_gen_config_init(&config, &clock.base);
  idgen_gen *gen;
  uint64_t id = 0, opaque = 0;
  unsigned char key[16] = {1};
  idgen_opaque *o;
  if (idgen_gen_new(&gen, &config) || idgen_gen_next(gen, &id) ||
      idgen_opaque_new(&o, key, sizeof key, NULL, 0) || idgen_opaque_encode(o, id, &opaque))
    return 1;
  printf("%llu\n", (unsigned long long)id);
  idgen_opaque_free(o);
  idgen_gen_free(gen);
  return 0;
}
EOF
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
# shellcheck disable=SC2046
cc -o "$dir/app" "$dir/app.c" $(pkg-config --cflags --libs idgen-opaque idgen) ||
  fail "a program does not build with pkg-config idgen-opaque idgen"
out=$(LD_LIBRARY_PATH=$libdir "$dir/app") || fail "the program failed"
[[ $out =~ ^[0-9]+$ ]] || fail "the program printed '$out'"
LD_LIBRARY_PATH=$libdir ldd "$dir/app" | grep "$libdir/libidgen.so" >/dev/null || fail "the program did not link the staged libidgen.so"

# The unit: paths rewritten, and verified where /opt/idgen is the staged prefix.
unit=$p/lib/systemd/system/idgen.service
[[ -f $unit ]] || fail "no lib/systemd/system/idgen.service"
grep -qx "ExecStart=$prefix/bin/idgen serve" "$unit" || fail "ExecStart: $(grep ExecStart "$unit")"
grep -qx "Documentation=man:idgen-serve(1) file://$prefix/share/doc/idgen/docs/server.md" "$unit" ||
  fail "Documentation: $(grep Documentation "$unit")"
grep -q '@[A-Z_]*@' "$unit" && fail "the unit still holds a @...@ placeholder"
unshare --mount --propagation private bash -c '
  set -e
  mount -t tmpfs tmpfs "$(dirname "$1")"
  mkdir "$1"
  mount --bind "$2" "$1"
  MANPATH=$1/share/man systemd-analyze verify "$1/lib/systemd/system/idgen.service"' \
  verify "$prefix" "$p" >"$dir/verify" 2>&1 || { cat "$dir/verify" >&2; fail "systemd-analyze verify"; }
[[ ! -s $dir/verify ]] || { cat "$dir/verify" >&2; fail "systemd-analyze verify complained"; }

# Uninstall: nothing of ours stays.
make -C "$src" --no-print-directory uninstall BUILD="$build" DESTDIR="$root" >/dev/null ||
  fail "make uninstall"
left=$(find "$root" -type f -o -type l)
[[ -z $left ]] || fail "left after make uninstall: $left"
echo "install.sh: all passed"
