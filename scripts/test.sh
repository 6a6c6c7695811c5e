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
# Stages that are one command each run alongside a stage that mostly waits, when both
# are asked for: model (SPIN wants one core) during integration, whose tests wait on
# servers and TTLs; image and deb, one after the other, during mutants, whose test runs
# wait too. Each one's output prints at its own turn, and it counts there.
# With pg and integration passed in this run, the mutants' slow killers are not run
# again on the unmutated tree (scripts/mutants.sh --slow-passed). With both asked for,
# the pg stage builds and installs the extension and its tests run in the integration
# stage's run (they wait on their clusters, as those do).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
jobs=$(nproc)
[[ -f /usr/lib/bash/sleep ]] ||
  { echo "test.sh: no /usr/lib/bash/sleep (scripts/deps.sh test installs bash-builtins)" >&2; exit 1; }
export BASH_ENV=$PWD/tests/builtins.bash
# The integration tests and the mutants' test runs mostly wait on servers and TTLs (the
# cores are about 45% busy at one test per core): one more than the cores runs at once.
waiting_jobs=$((jobs + 1))
# The integration stage, two more: at three at once it was bound by its slots (a clean
# clone's run: 3,000 s of tests in 990 s), the cores 47-88% busy once the model was done.
integration_jobs=$((jobs + 2))
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(asan tsan pg integration model mutants image deb)
passed=0 failed=0
pg_with_integration=0 # 1: the pg stage left its tests to the integration stage's run
declare -A stage_ok # stage -> 1 when it ran in this run and nothing of it failed
# The stages that are one command, one pass or fail; and which of them run alongside
# which stage (in this order, one after another).
declare -A one_command=([model]=scripts/model.sh [image]=scripts/image-test.sh [deb]=scripts/deb-test.sh)
declare -A alongside=([integration]="model" [mutants]="image deb")
aside=$(mktemp -d) # aside/NAME.log, aside/NAME.rc: a stage run alongside; its output, its status
aside_pids=()
stop_aside() {
  local pid
  for pid in "${aside_pids[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$aside"
}
trap stop_aside EXIT
declare -A begun aside_of # stage -> 1 once it began; -> the stage it runs alongside
start_aside() { # host stage: starts its companions that this run asks for, still to come
  local c todo=()
  for c in ${alongside[$1]:-}; do
    [[ " ${stages[*]} " != *" $c "* || -n ${begun[$c]:-} ]] || { todo+=("$c"); begun[$c]=1 aside_of[$c]=$1; }
  done
  [[ ${#todo[@]} -gt 0 ]] || return 0
  (
    for c in "${todo[@]}"; do
      t0=$SECONDS
      # Below the host stage's priority: its tests are the critical path, and this
      # finished with room to spare (a clean clone's run: the model 639 s into an
      # integration stage of 1105 s, image and deb 524 s into mutants' 1139 s).
      nice -n 5 ${one_command[$c]} >"$aside/$c.log" 2>&1
      echo "$? $((SECONDS - t0))" >"$aside/$c.rc.tmp" && mv "$aside/$c.rc.tmp" "$aside/$c.rc"
    done
  ) &
  aside_pids+=($!)
  echo "(${todo[*]} runs alongside, PID $!)"
}
# outcome_of LOG RC: waits for the file RC ("status seconds", written by a job in the
# background), prints LOG, and sets rc and secs (the caller's locals).
outcome_of() {
  while [[ ! -f $2 ]]; do sleep 1; done
  cat "$1"
  read -r rc secs <"$2"
}
run_one_command() { # stage: its command, here or alongside; 0 if it passed
  local rc secs
  if [[ -n ${aside_of[$1]:-} ]]; then
    outcome_of "$aside/$1.log" "$aside/$1.rc"
    echo "($1 ran alongside ${aside_of[$1]}: $secs s)"
  else
    ${one_command[$1]}; rc=$?
  fi
  [[ $rc -eq 0 ]]
}

# make.sh test installs the test group's packages past the unit group while the first
# stages run: IDGEN_DEPS_PENDING is a directory that gets rc ("status seconds") and log
# when that is done. A stage other than those waits for it (once).
packages_installed() {
  [[ -n ${IDGEN_DEPS_PENDING:-} ]] || return 0
  local dir=$IDGEN_DEPS_PENDING rc secs
  unset IDGEN_DEPS_PENDING
  outcome_of "$dir/log" "$dir/rc"
  rm -rf "$dir"
  [[ $rc -eq 0 ]] || { echo "test.sh: scripts/deps.sh test failed (exit $rc)" >&2; return 1; }
  echo "(the test packages installed alongside the first stages: $secs s)"
}

# configure DIR [CMAKE ARG...] [-- TARGET...]: configures DIR and builds the targets
# (default: every one). A target @LABEL stands for the tests labelled LABEL: a unit test
# is the program of its name, so a stage that runs only those builds no more.
configure() {
  local dir=$1 args=() targets=() t
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do args+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  # A new build directory gets Ninja: Make's generator runs a cmake process for each
  # progress line and each target's dependency scan (a clean clone's run: 2,550 cmake
  # processes, 89 CPU-s). One made before (make build) keeps its generator.
  [[ -f $dir/CMakeCache.txt ]] || args=(-G Ninja "${args[@]}")
  cmake -S . -B "$dir" -DIDGEN_WERROR=ON "${args[@]}" >/dev/null || return 1
  for t in "$@"; do
    if [[ $t == @* ]]; then
      mapfile -t -O "${#targets[@]}" targets < <(cd "$dir" && ctest -N -L "${t#@}" | sed -n 's/^ *Test *#[0-9]*: //p')
    else
      targets+=("$t")
    fi
  done
  [[ $# -eq 0 || ${#targets[@]} -gt 0 ]] || { echo "test.sh: no target in $dir for: $*" >&2; return 1; }
  cmake --build "$dir" -j "$jobs" ${targets[@]:+--target "${targets[@]}"} 2>&1 |
    grep -vE '^\[ *[0-9]+%\]|^\[[0-9]+/[0-9]+\] |^(Consolidate|Scanning|Built target)' || true
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
  begun[$stage]=1
  case "$stage" in
    unit|check|asan|tsan) ;;
    *) packages_installed || { failed=$((failed + 1)); break; } ;;
  esac
  start_aside "$stage"
  case "$stage" in
    unit)
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      run_ctest build -j "$jobs" -L unit ;;
    check) # the inner loop (make check): unit and concurrency tests, one smoke per family
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      run_ctest build -j "$waiting_jobs" -L '^(unit|concurrency|smoke)$' ;;
    asan) # scripts/fuzz.sh's build too (the same flags): fuzz_smoke builds nothing more
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DIDGEN_FUZZ=ON \
        -DIDGEN_SANITIZE=address,undefined -- @unit idgen_fuzz || { failed=$((failed + 1)); continue; }
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_ctest build-asan -j "$jobs" -L unit ;;
    tsan)
      configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
        -DIDGEN_SANITIZE=thread -- @concurrency || { failed=$((failed + 1)); continue; }
      TSAN_OPTIONS=halt_on_error=1 run_ctest build-tsan -j "$jobs" -L concurrency ;;
    pg) # the extension links build/libidgen.a; bench/btree.sh (integration) uses it too
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      scripts/pg-install.sh build WERROR=1 || { failed=$((failed + 1)); continue; }
      # With the integration stage still to come, the pg tests run among its tests: they
      # mostly wait on their clusters, and the cores have room there.
      if [[ " ${stages[*]} " == *" integration "* && -z ${begun[integration]:-} ]]; then
        pg_with_integration=1
        echo "(the pg tests run in the integration stage)"
      else
        run_ctest build -j "$jobs" -L pg
      fi ;;
    integration)
      configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo || { failed=$((failed + 1)); continue; }
      labels='^integration$'
      [[ $pg_with_integration -eq 0 ]] || labels='^(integration|pg)$'
      # ctest starts the costliest tests first when it knows their times, which a new
      # build does not: it gets those of tests/ctest-costs.txt (a clean clone's run's
      # CTestCostData.txt), so that no long test starts last and runs on alone. A build
      # whose ctest has timed integration tests itself keeps its own.
      costs=build/Testing/Temporary/CTestCostData.txt
      grep -qs '^integration_' "$costs" || { mkdir -p "${costs%/*}" && cp tests/ctest-costs.txt "$costs"; }
      run_ctest build -j "$integration_jobs" -L "$labels" ;;
    model|image|deb) # one pass or fail each: the model, the image, the packages
      if run_one_command "$stage"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
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
