#!/usr/bin/env bash
# Mutation check of the fence and durability lines: applies each mutant of
# tests/mutants.txt, one at a time, to a scratch copy of the tree, rebuilds only what its
# tests need, runs those tests, and prints a table. Exit 0 only if every test named for
# a mutant fails under it (kills it). A mutant whose text no longer matches the code,
# exactly once, is a failure too: the list must follow the code.
# Usage: scripts/mutants.sh [--list FILE] [--keep] [MUTANT...]   (default: every mutant)
#   --list FILE  the list (default tests/mutants.txt; its header says the format)
#   --keep       keep the scratch directory (kept anyway when something fails)
set -uo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&' in a replacement is literal
cd "$(dirname "$0")/.." || exit 2
LIST=tests/mutants.txt KEEP=0 ONLY=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --list) LIST=${2:?--list needs a file}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mutants.sh: unknown option $1" >&2; exit 2 ;;
    *) ONLY+=("$1"); shift ;;
  esac
done
[[ -f $LIST ]] || { echo "mutants.sh: no list $LIST" >&2; exit 2; }
JOBS=$(nproc)

# ---- the list -----------------------------------------------------------------------
# Mutant i: ID[i], WHAT[i], FILE[i], KILLERS[i]; its find/replace pairs are
# FIND["i,k"] / REPL["i,k"] for k < NPAIRS[i].
ID=() WHAT=() FILE=() KILLERS=() NPAIRS=()
declare -A FIND REPL
bad_list() { echo "mutants.sh: $LIST:$1: $2" >&2; exit 2; }
n=-1 lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  key=${line%% *} value=""
  [[ $line == *" "* ]] && { value=${line#* }; value=${value#"${value%%[! ]*}"}; }
  case "$key" in
    mutant)
      n=$((n + 1))
      ID[n]=${value%% *} WHAT[n]=${value#* } FILE[n]="" KILLERS[n]="" NPAIRS[n]=0
      [[ -n ${ID[n]} && ${WHAT[n]} != "${ID[n]}" ]] || bad_list "$lineno" "mutant needs an id and a description"
      ;;
    file|find|replace|killers)
      [[ $n -ge 0 ]] || bad_list "$lineno" "'$key' before the first mutant"
      case "$key" in
        file) FILE[n]=$value ;;
        find) FIND["$n,${NPAIRS[n]}"]=$value; NPAIRS[n]=$((NPAIRS[n] + 1)) ;;
        replace)
          [[ ${NPAIRS[n]} -gt 0 && -z ${REPL["$n,$((NPAIRS[n] - 1))"]+set} ]] ||
            bad_list "$lineno" "'replace' must follow its 'find'"
          REPL["$n,$((NPAIRS[n] - 1))"]=$value ;;
        killers) KILLERS[n]=$value ;;
      esac ;;
    *) bad_list "$lineno" "unknown key '$key' (mutant, file, find, replace, killers)" ;;
  esac
done <"$LIST"
for ((i = 0; i <= n; i++)); do
  [[ -n ${FILE[i]} && -n ${KILLERS[i]} && ${NPAIRS[i]} -gt 0 ]] ||
    bad_list "-" "mutant ${ID[i]} needs a file, a find and killers"
  [[ -n ${REPL["$i,$((NPAIRS[i] - 1))"]+set} ]] || bad_list "-" "mutant ${ID[i]}: a find has no replace"
done
SELECTED=()
for ((i = 0; i <= n; i++)); do
  if [[ ${#ONLY[@]} -eq 0 || " ${ONLY[*]} " == *" ${ID[i]} "* ]]; then SELECTED+=("$i"); fi
done
[[ ${#SELECTED[@]} -gt 0 ]] || { echo "mutants.sh: no mutant selected" >&2; exit 2; }

# ---- tests: what each needs built, and how it runs ------------------------------------
# test_X: the unit test binary; integration_X: tests/integration/X.sh on the binary and
# the test tools; chaos:X: scenario X of the fault campaign, one phase second.
TOOLS=()
for t in tests/tools/*.c; do TOOLS+=("$(basename "$t" .c)"); done
targets_of() { # killer
  case "$1" in
    test_*) echo "$1" ;;
    integration_*) echo "idgen ${TOOLS[*]}" ;;
    chaos:*) echo "idgen chaos_client chaos_delay" ;;
  esac
}
check_killer() { # killer: known and present?
  case "$1" in
    test_*) [[ -f tests/unit/$1.c ]] ;;
    integration_*) [[ -f tests/integration/${1#integration_}.sh ]] ;;
    chaos:*) grep -q "^ *${1#chaos:}) " tests/chaos/run.sh ;;
    *) false ;;
  esac
}
run_killer() { # killer log: the test's exit status (124 on a time out)
  case "$1" in
    test_*) (cd "$B" && timeout -k 10 300 "./$1") ;;
    integration_*)
      IDGEN_SOURCE_DIR=$S IDGEN_BUILD_DIR=$B \
        timeout -k 10 600 bash "$S/tests/integration/${1#integration_}.sh" "$B/idgen" ;;
    chaos:*) # its work dir inside ours: a killed run keeps it, and ours goes
      IDGEN_BUILD_DIR=$B timeout -k 10 600 bash "$S/tests/chaos/run.sh" --idgen "$B/idgen" \
        --work "$(mktemp -d "$WORK/chaos.XXXXXX")" --phase 1 --ttl 4 --strict-liveness "${1#chaos:}" ;;
  esac >"$2" 2>&1
}
ALL_KILLERS=() ALL_TARGETS=()
for i in "${SELECTED[@]}"; do
  for k in ${KILLERS[i]}; do
    check_killer "$k" || { echo "mutants.sh: mutant ${ID[i]}: unknown test '$k'" >&2; exit 2; }
    [[ " ${ALL_KILLERS[*]} " == *" $k "* ]] || ALL_KILLERS+=("$k")
  done
done
for k in "${ALL_KILLERS[@]}"; do
  for t in $(targets_of "$k"); do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || ALL_TARGETS+=("$t")
  done
done

# ---- the scratch copy ---------------------------------------------------------------
WORK=$(mktemp -d /tmp/idgen-mutants.XXXXXX)
S=$WORK/src B=$WORK/build LOGS=$WORK/logs
mkdir -p "$S" "$LOGS"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [[ -e $f ]] && printf '%s\0' "$f"
done | xargs -0 cp --parents -t "$S"
START_S=$SECONDS
log() { printf '[%3ds] %s\n' $((SECONDS - START_S)) "$*" >&2; }
failures=0
slow_baselines="" # the background job of the slow tests' baselines, while it runs
finish() {
  if [[ -n $slow_baselines ]] && kill -0 "$slow_baselines" 2>/dev/null; then
    pkill -TERM -P "$slow_baselines" # its test under timeout, which stops the test's group
    kill "$slow_baselines" 2>/dev/null
    wait "$slow_baselines" 2>/dev/null
  fi
  if [[ $failures -eq 0 && $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "mutants.sh: logs in $LOGS" >&2; fi
}
trap finish EXIT
build() { # targets...: 0 if they build
  cmake --build "$B" -j "$JOBS" --target "$@" >"$LOGS/build.log" 2>&1
}

# Each mutant's file as it will be, now: a stale entry fails before anything is built.
occurrences() { # text needle -> count
  local rest=$1 count=0
  while [[ $rest == *"$2"* ]]; do rest=${rest#*"$2"}; count=$((count + 1)); done
  echo "$count"
}
RESULT=() RUN=()
mkdir -p "$WORK/mutated" "$WORK/original"
for i in "${SELECTED[@]}"; do
  f=${FILE[i]} stale=""
  if [[ -f $S/$f ]]; then
    IFS= read -r -d '' mutated <"$S/$f"
    for ((k = 0; k < NPAIRS[i]; k++)); do
      find=${FIND["$i,$k"]}
      c=$(occurrences "$mutated" "$find")
      if [[ $c -ne 1 ]]; then stale="STALE: '$find' found $c times in $f"; break; fi
      mutated=${mutated/"$find"/"${REPL["$i,$k"]}"}
    done
  else
    stale="STALE: no file $f"
  fi
  if [[ -n $stale ]]; then
    RESULT[i]=$stale; failures=$((failures + 1)); log "${ID[i]}: $stale"
  else
    printf '%s' "$mutated" >"$WORK/mutated/${ID[i]}"
    cp "$S/$f" "$WORK/original/${ID[i]}"
    RUN+=("$i")
  fi
done

# Warnings are not errors here: a mutant may leave a variable unused.
if [[ ${#RUN[@]} -gt 0 ]]; then
  log "scratch copy in $S; building ${ALL_TARGETS[*]}"
  cmake -S "$S" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$LOGS/cmake.log" 2>&1 &&
    build "${ALL_TARGETS[@]}" || { echo "mutants.sh: the unmutated tree does not build (see $LOGS)" >&2; failures=1; exit 1; }
fi

# Every test must pass on the unmutated tree, or its failures would prove nothing. The
# unit tests' baselines run now. The slow ones (integration scripts, chaos scenarios)
# run one after another in the background while the mutants that only unit tests kill
# are tried: those rebuild test binaries only, never the binary and tools the slow tests
# run. The mutants that need a slow test come after the slow baselines passed.
baseline() { # killer: 0 if it passes on the unmutated tree
  local t0=$SECONDS log="$LOGS/baseline.${1//[:\/]/_}.log"
  if ! run_killer "$1" "$log"; then
    echo "mutants.sh: $1 fails without any mutant (see $log)" >&2
    return 1
  fi
  log "baseline: $1 passes ($((SECONDS - t0)) s)"
}
unit() { [[ $1 == test_* ]]; } # killer
SLOW=() UNIT_ONLY=() NEEDS_SLOW=()
for k in "${ALL_KILLERS[@]}"; do
  [[ ${#RUN[@]} -gt 0 ]] || break
  if unit "$k"; then
    baseline "$k" || { failures=1; exit 1; }
  else
    SLOW+=("$k")
  fi
done
for i in "${RUN[@]}"; do
  slow=0
  for k in ${KILLERS[i]}; do unit "$k" || slow=1; done
  if [[ $slow -eq 1 ]]; then NEEDS_SLOW+=("$i"); else UNIT_ONLY+=("$i"); fi
done
if [[ ${#SLOW[@]} -gt 0 ]]; then
  (for k in "${SLOW[@]}"; do baseline "$k" || exit 1; done) &
  slow_baselines=$!
fi

# ---- each mutant --------------------------------------------------------------------
for i in "${UNIT_ONLY[@]}" wait-for-slow-baselines "${NEEDS_SLOW[@]}"; do
  if [[ $i == wait-for-slow-baselines ]]; then
    ok=0
    [[ -z $slow_baselines ]] || wait "$slow_baselines" || ok=$?
    slow_baselines="" # reaped: its PID is no longer ours to signal
    [[ $ok -eq 0 ]] || { failures=1; exit 1; }
    continue
  fi
  t0=$SECONDS
  f=${FILE[i]}
  cp "$WORK/mutated/${ID[i]}" "$S/$f"
  targets=()
  for k in ${KILLERS[i]}; do
    for t in $(targets_of "$k"); do [[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t"); done
  done
  if ! build "${targets[@]}"; then
    cp "$LOGS/build.log" "$LOGS/${ID[i]}.build.log"
    RESULT[i]="DOES NOT BUILD (see ${ID[i]}.build.log)"; failures=$((failures + 1))
  else
    killed=() missed=()
    for k in ${KILLERS[i]}; do
      run_killer "$k" "$LOGS/${ID[i]}.${k//[:\/]/_}.log"
      case $? in
        0) missed+=("$k") ;;
        124|137) killed+=("$k (time out)") ;;
        *) killed+=("$k") ;;
      esac
    done
    if [[ ${#killed[@]} -eq 0 ]]; then
      RESULT[i]="SURVIVED"
    else
      RESULT[i]="killed by $(printf '%s, ' "${killed[@]}")" RESULT[i]=${RESULT[i]%, }
    fi
    if [[ ${#missed[@]} -gt 0 ]]; then
      [[ ${#killed[@]} -gt 0 ]] && RESULT[i]+="; NOT by $(printf '%s, ' "${missed[@]}")" RESULT[i]=${RESULT[i]%, }
      failures=$((failures + 1))
    fi
  fi
  cp "$WORK/original/${ID[i]}" "$S/$f" # a new mtime: the next build recompiles it
  log "${ID[i]}: ${RESULT[i]} ($((SECONDS - t0)) s)"
done

# ---- the table ----------------------------------------------------------------------
echo
w=6
for i in "${SELECTED[@]}"; do [[ ${#ID[i]} -le $w ]] || w=${#ID[i]}; done
printf "%-${w}s  %s\n" mutant result
for i in "${SELECTED[@]}"; do
  printf "%-${w}s  %s\n%-${w}s    (%s)\n" "${ID[i]}" "${RESULT[i]}" "" "${WHAT[i]}"
done
echo
echo "mutants: ${#SELECTED[@]}, failed: $failures, in $((SECONDS - START_S)) s"
[[ $failures -eq 0 ]]
