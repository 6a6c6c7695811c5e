#!/usr/bin/env bash
# Runs the test suite in stages; with no argument, all of them. Prints one closing count line.
# Stages: unit (release, -Werror), check (unit, concurrency and the smoke-labelled
# integration tests: make check, the inner loop), asan (ASan+UBSan), tsan (concurrency tests), pg (the
# PostgreSQL extension built, installed into PostgreSQL's directories, and its tests/pg/*.sh
# run on throwaway clusters), integration, model (scripts/model.sh: SPIN checks model/*.pml
# and their negative controls), image (scripts/image-test.sh: the container image built
# from a local Debian base and run as its non-root user), deb (scripts/deb-test.sh: the
# Debian packages built, linted and used in a fresh Debian root), mutants (scripts/mutants.sh: each
# fence and durability line broken in turn must fail its tests).
# With both integration and model, SPIN runs during the integration stage: the
# integration tests wait on servers and TTLs (the two cores are about 45% busy), and SPIN
# wants one core. The model's table prints at its turn.
# With pg and integration passed in this run, the mutants' slow killers are not run
# again on the unmutated tree (scripts/mutants.sh --slow-passed).
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# The integration tests and the mutants' test runs mostly wait on servers and TTLs (the
# cores are about 45% busy at one test per core): one more than the cores runs at once.
waiting_jobs=$((jobs + 1))
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(asan tsan pg integration model image deb mutants)
passed=0 failed=0
declare -A stage_ok # stage -> 1 when it ran in this run and nothing of it failed
model_pid="" model_log=""
trap '[[ -z $model_pid ]] || kill -- "$model_pid" 2>/dev/null; [[ -z $model_log ]] || rm -f "$model_log"' EXIT

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DIDGEN_WERROR=ON "$@" >/dev/null || return 1
  cmake --build "$dir" -j "$jobs" 2>&1 | grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)' || true
  [[ ${PIPESTATUS[0]} -eq 0 ]]
}

run_ctest() { # dir, ctest args...
  local dir=$1; shift
  local log; log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
  local p f
  p=$(grep -cE 'Test +#[0-9]+: .* Passed' "$log")
  f=$(grep -cE 'Test +#[0-9]+: .*(\*\*\*|Failed|Not Run|Timeout)' "$log")
  rm -f "$log"
  passed=$((passed + p)); failed=$((failed + f))
}

for stage in "${stages[@]}"; do
  echo "== test stage: $stage"
  stage_start=$SECONDS failed_before=$failed
  case "$stage" in
    unit)
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      run_ctest build -j "$jobs" -L unit ;;
    check) # the inner loop (make check): unit and concurrency tests, one smoke per family
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      run_ctest build -j "$waiting_jobs" -L '^(unit|concurrency|smoke)$' ;;
    asan)
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
        -DIDGEN_SANITIZE=address,undefined || { failed=$((failed + 1)); continue; }
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_ctest build-asan -j "$jobs" -L unit ;;
    tsan)
      configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
        -DIDGEN_SANITIZE=thread || { failed=$((failed + 1)); continue; }
      TSAN_OPTIONS=halt_on_error=1 run_ctest build-tsan -j "$jobs" -L concurrency ;;
    pg) # the extension links build/libidgen.a; bench/btree.sh (integration) uses it too
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      scripts/pg-install.sh build WERROR=1 || { failed=$((failed + 1)); continue; }
      run_ctest build -j "$jobs" -L pg ;;
    integration)
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      if [[ " ${stages[*]} " == *" model "* ]]; then
        model_log=$(mktemp)
        scripts/model.sh >"$model_log" 2>&1 &
        model_pid=$!
        echo "(scripts/model.sh runs alongside, PID $model_pid)"
      fi
      run_ctest build -j "$waiting_jobs" -L integration ;;
    image) # one pass or fail for the image
      if scripts/image-test.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    deb) # one pass or fail for the packages
      if scripts/deb-test.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    model)
      if [[ -n $model_pid ]]; then
        wait "$model_pid"; rc=$?
        model_pid=""
        cat "$model_log"
      else
        scripts/model.sh; rc=$?
      fi
      if [[ $rc -eq 0 ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    mutants) # one pass or fail for the whole list
      slow_passed=()
      [[ ${stage_ok[pg]:-0} -eq 1 && ${stage_ok[integration]:-0} -eq 1 ]] && slow_passed=(--slow-passed)
      if scripts/mutants.sh --jobs "$waiting_jobs" "${slow_passed[@]}"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    *) echo "test.sh: unknown stage '$stage' (unit, asan, tsan, pg, integration, model, image, deb, mutants)" >&2; exit 2 ;;
  esac
  [[ $failed -eq $failed_before ]] && stage_ok[$stage]=1
  echo "== test stage: $stage took $((SECONDS - stage_start)) s"
done

echo "tests: ${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
