#!/usr/bin/env bash
# bench/gen_instr.sh: instructions per idgen_gen_next, counted by callgrind (repeatable
# on this noisy machine, unlike a timer). A tiny driver, linked statically against
# BUILD/libidgen.a, draws N IDs from bench_gen's wide layout (its sequence never runs out,
# so no call waits) on the monotonic clock; callgrind counts inside idgen_gen_next only,
# its clock read included. Prints the total, the figure per call and the clock's share.
set -euo pipefail

build=build n=200000
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    -n) n=${2:?-n needs a count}; shift 2 ;;
    -h|--help)
      echo "usage: bench/gen_instr.sh [--build DIR] [-n CALLS]   (default: build, 200000)"
      exit 0 ;;
    *) echo "bench/gen_instr.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/gen_instr.sh: -n '$n' is not a count" >&2; exit 2; }
src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=$build/libidgen.a
[[ -f $lib ]] || { echo "bench/gen_instr.sh: no $lib (build first)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "bench/gen_instr.sh: valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/driver.c" <<'C'
#include <idgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config config;
  idgen_gen_config_init(&config, &clock.base);
  const char *spec = "time:41@1ms,worker:1,seq:21,name:wide"; /* as bench_gen's */
  idgen_gen *gen;
  if (idgen_layout_parse(spec, strlen(spec), 0, &config.layout, NULL, 0) < 0 ||
      idgen_gen_new(&gen, &config) < 0)
    return 1;
  uint64_t id, sink = 0;
  for (long i = 0; i < n; i++) {
    if (idgen_gen_next(gen, &id) < 0)
      return 1;
    sink ^= id;
  }
  printf("%llx\n", (unsigned long long)sink);
  idgen_gen_free(gen);
  return 0;
}
C
cc -O2 -I"$src_dir/include" "$work/driver.c" "$lib" -lpthread -lm -o "$work/driver"
valgrind --tool=callgrind --callgrind-out-file="$work/cg" --toggle-collect=idgen_gen_next \
  "$work/driver" "$n" > /dev/null 2> "$work/valgrind.log" ||
  { cat "$work/valgrind.log" >&2; exit 1; }
callgrind_annotate --inclusive=yes "$work/cg" > "$work/annotate"
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/annotate")
clock=$(awk '/:mono_now / { gsub(",", "", $1); print $1; exit }' "$work/annotate")
awk -v t="$total" -v c="${clock:-0}" -v n="$n" 'BEGIN {
  printf "idgen_gen_next: %d calls, %d instructions, %.1f a call (%.1f of them the clock read)\n",
    n, t, t / n, c / n }'
