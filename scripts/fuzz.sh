#!/usr/bin/env bash
# Builds every fuzz/fuzz_*.c as a libFuzzer program (clang, ASan+UBSan; CMake's
# -DIDGEN_FUZZ=ON, target idgen_fuzz) in build-asan/ and runs each for a bounded time: the
# directory of scripts/test.sh's asan stage, whose flags these are, so that the suite
# builds the tree with ASan once.
# A crash, leak or failed check exits non-zero.
# Usage: scripts/fuzz.sh [SECONDS] [libFuzzer args...]   (SECONDS per target, default 30)
# Env: FUZZ_TARGETS="codec ..." runs only those; FUZZ_BUILD_DIR (default build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
[[ $# -gt 0 ]] && shift
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || {
  echo "fuzz.sh: SECONDS must be a whole number > 0, not '$seconds'" >&2; exit 2; }
build=${FUZZ_BUILD_DIR:-build-asan}
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/deps.sh test)" >&2; exit 1; }

# The fuzz targets are CMake's (-DIDGEN_FUZZ=ON: clang, every library instrumented for
# coverage, ASan and UBSan): one build path, the same flags as every other build.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DIDGEN_FUZZ=ON \
  -DIDGEN_SANITIZE=address,undefined -DIDGEN_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target idgen_fuzz >/dev/null

status=0
shopt -s nullglob
for src in fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  target=${name#fuzz_}
  if [[ -n "${FUZZ_TARGETS:-}" && " $FUZZ_TARGETS " != *" $target "* ]]; then continue; fi
  # Seeds from fuzz/corpus/<target>/ (kept in git); new finds go to the build dir only.
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  seeds=()
  [[ -d "fuzz/corpus/$target" ]] && seeds=("fuzz/corpus/$target")
  echo "== fuzz $target: ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$build/$name" -max_total_time="$seconds" -print_final_stats=0 \
      -artifact_prefix="$build/$name-" "$@" "$corpus" "${seeds[@]}" 2>"$build/$name.log"; then
    tail -n 40 "$build/$name.log" >&2
    echo "fuzz.sh: $name failed; the input is in $build/$name-*" >&2
    status=1
  else
    grep -E '^#[0-9]+ +DONE' "$build/$name.log" || tail -n 1 "$build/$name.log"
  fi
done
exit $status
