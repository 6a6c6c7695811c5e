#!/usr/bin/env bash
# headers.sh: the public headers compile as C++11 and as pedantic C99, whole and one by
# one, with gcc and clang, warnings as errors; idgen.h, the umbrella, links against
# -lidgen alone; they hold no _Atomic and no internals; and
# libidgen.so exports no test hook (fake clock, fake random) and no internal symbol but
# those libidgen-etcd needs (idgen__*, marked IDGEN__EXPORT).
set -euo pipefail
idgen=${1:?usage: headers.sh path/to/idgen}
build=${IDGEN_BUILD_DIR:-$(dirname "$idgen")}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
for tool in gcc g++ clang clang++ nm; do
  command -v $tool >/dev/null || { echo "FAIL: $tool not found (scripts/deps.sh test)"; exit 1; }
done

headers=(idgen.h $(cd "$src/include" && ls idgen/*.h))
for h in "${headers[@]}"; do
  printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$dir/t.c"
  cp "$dir/t.c" "$dir/t.cc"
  for cc in gcc clang; do
    $cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$src/include" -c "$dir/t.c" -o "$dir/t.o" 2>"$dir/err" &&
      ok "$cc -std=c99 -pedantic: $h" || { cat "$dir/err"; fail "$cc -std=c99 -pedantic: $h"; }
  done
  for cxx in g++ clang++; do
    $cxx -std=c++11 -Wall -Wextra -Werror -I"$src/include" -c "$dir/t.cc" -o "$dir/t.o" 2>"$dir/err" &&
      ok "$cxx -std=c++11: $h" || { cat "$dir/err"; fail "$cxx -std=c++11: $h"; }
  done
done

# A C++ program that uses the API (the README's calls, and a lease) links and runs.
cat >"$dir/app.cc" <<'CC'
#include <idgen.h>
#include <cstdio>
int main() {
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config config;
  idgen_gen_config_init(&config, &clock.base);
  config.worker = 7;
  idgen_gen *gen;
  uint64_t id = 0;
  if (idgen_gen_new(&gen, &config) != 0 || idgen_gen_next(gen, &id) != 0)
    return 1;
  char text[IDGEN_FORMAT_MAX];
  if (idgen_id_format(id, IDGEN_FORMAT_BASE62, &config.layout, text, sizeof text) < 0)
    return 1;
  std::printf("%s\n", text);
  idgen_gen_free(gen);
  return 0;
}
CC
if g++ -std=c++11 -Wall -Wextra -Werror -I"$src/include" "$dir/app.cc" -o "$dir/app" \
  "$build/libidgen.a" -lpthread 2>"$dir/err" && out=$("$dir/app") && [[ $out =~ ^[0-9A-Za-z]{11}$ ]]; then
  ok "a C++ program builds on libidgen.a and runs ($out)"
else
  cat "$dir/err"; fail "a C++ program on libidgen.a"
fi

# The umbrella header is libidgen's alone: a program that takes the address of every
# function it declares links against -lidgen and nothing else (an add-on's header in it,
# idgen/etcd.h or idgen/opaque.h, would leave references -lidgen cannot resolve).
funcs=$(gcc -E -P -I"$src/include" "$src/include/idgen.h" | tr '\n' ' ' |
  grep -oE '\b(idgen_[a-z0-9_]+) *\(' | grep -oE 'idgen_[a-z0-9_]+' | sort -u)
{
  echo '#include <idgen.h>'
  echo 'static void *const used[] = {'
  for f in $funcs; do echo "  (void *)&$f,"; done
  echo '};'
  echo 'int main(void) { return used[0] == 0; }'
} >"$dir/umbrella.c"
if gcc -std=c11 -Wall -Werror -Wno-pedantic -I"$src/include" "$dir/umbrella.c" -o "$dir/umbrella" \
  -L"$build" -lidgen 2>"$dir/err" && LD_LIBRARY_PATH=$build "$dir/umbrella"; then
  ok "idgen.h links against -lidgen alone ($(wc -w <<<"$funcs") functions)"
else
  head -20 "$dir/err"; fail "idgen.h declares what -lidgen does not define"
fi

if grep -n '_Atomic\|idgen__\|stdatomic' "$src/include/idgen.h" "$src"/include/idgen/*.h; then
  fail "a public header names _Atomic or an internal (idgen__)"
else
  ok "no _Atomic, stdatomic.h or idgen__ in the public headers"
fi
exported=$(nm -D --defined-only "$build/libidgen.so" | awk '{print $3}')
if grep -E 'fake' <<<"$exported"; then fail "libidgen.so exports a test hook"; else ok "no test hook exported"; fi
internal=$(grep -E '^idgen__' <<<"$exported" | sort | tr '\n' ' ' || true)
marked=$(grep -rhoE 'IDGEN__EXPORT [^(]*\b(idgen__[a-z0-9_]+)' "$src/src" | grep -oE 'idgen__[a-z0-9_]+$' | sort -u | tr '\n' ' ' || true)
[[ "$internal" == "$marked" ]] && ok "internal exports are the IDGEN__EXPORT ones: $internal" ||
  fail "internal exports [$internal] != marked [$marked]"
others=$(grep -vE '^(idgen_|idgen__)' <<<"$exported" | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' || true)
[[ -z $others ]] && ok "every exported name starts with idgen_" || fail "exported: $others"
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
