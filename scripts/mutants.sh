#!/usr/bin/env bash
# Mutation check of the fence and durability lines: applies each mutant of
# tests/mutants.txt, one at a time, to a scratch copy of the tree, rebuilds only what its
# tests need, runs those tests, and prints a table. Exit 0 only if every mutant is
# killed and every test run for it failed under it (killed it). A mutant whose text no
# longer matches the code, exactly once, is a failure too: the list must follow the code.
# The mutants are built one after another (Ninja, -O2 without debug info: a mutant's
# rebuild is a third of make's with -g); each one's binaries are copied aside, so its
# tests run from the copy while the next one builds, and up to --jobs tests run at once
# (most of them wait on real servers, not on the CPU). The table keeps the list's order.
# A mutant's killers run one after another, unit tests first, until one kills it; with
# --all-killers they all run and each must kill (the check that the list's killers are
# all still true).
# A test of the PostgreSQL extension (pg_X) needs the mutated extension installed into
# PostgreSQL's directories, which every cluster shares: those runs take turns (no two
# at once; other runs take the free places meanwhile), each installs its own idgen.so
# first (as root, or through sudo), and the unmutated one is installed again at the end.
# Usage: scripts/mutants.sh [--list FILE] [--jobs N] [--keep] [--all-killers]
#                           [--slow-passed] [MUTANT...]   (default: every mutant)
#   --list FILE    the list (default tests/mutants.txt; its header says the format)
#   --jobs N       tests run at once (default 2)
#   --keep         keep the scratch directory (kept anyway when something fails)
#   --all-killers  run every killer of a mutant: each one must kill it
#   --slow-passed  the slow killers (integration and pg tests) passed on this very tree
#                  just before, as in scripts/test.sh after its pg and integration
#                  stages: their baselines are not run again (the unit tests' still are)
set -uo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&' in a replacement is literal
cd "$(dirname "$0")/.." || exit 2
LIST=tests/mutants.txt KEEP=0 ONLY=() RUNS_AT_ONCE=2 SLOW_PASSED=0 ALL_KILLERS_MUST=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --list) LIST=${2:?--list needs a file}; shift 2 ;;
    --jobs) RUNS_AT_ONCE=${2:?--jobs needs a number}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --all-killers) ALL_KILLERS_MUST=1; shift ;;
    --slow-passed) SLOW_PASSED=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mutants.sh: unknown option $1" >&2; exit 2 ;;
    *) ONLY+=("$1"); shift ;;
  esac
done
[[ -f $LIST ]] || { echo "mutants.sh: no list $LIST" >&2; exit 2; }
[[ $RUNS_AT_ONCE =~ ^[1-9][0-9]*$ ]] || { echo "mutants.sh: --jobs needs a number > 0, not '$RUNS_AT_ONCE'" >&2; exit 2; }
BUILD_JOBS=$(nproc)
command -v ninja >/dev/null || { echo "mutants.sh: no ninja (scripts/deps.sh test installs ninja-build)" >&2; exit 1; }

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
      [[ ${ID[n]} =~ ^[A-Za-z0-9_.-]+$ && ${ID[n]} != baseline ]] ||
        bad_list "$lineno" "a mutant's id is letters, digits, '-', '_' and '.', and not 'baseline'"
      ;;
    file|find|replace|killers)
      [[ $n -ge 0 ]] || bad_list "$lineno" "'$key' before the first mutant"
      case "$key" in
        file) # compiled: the tests run the binaries built from it, never the file itself
          [[ $value == *.[ch] ]] || bad_list "$lineno" "a mutant's file is C source or a header, not '$value'"
          FILE[n]=$value ;;
        find)
          [[ -n $value ]] || bad_list "$lineno" "'find' needs text"
          FIND["$n,${NPAIRS[n]}"]=$value; NPAIRS[n]=$((NPAIRS[n] + 1)) ;;
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
# the test tools (integration_bench_X: and the benchmark bench_X); chaos:X: scenario X of
# the fault campaign, one phase second; pg_X: tests/pg/X.sh on the extension built from
# the tree (pg-extension: pg/idgen.so, by PGXS, against the scratch build's static
# libraries). integration_X:PART and pg_X:PART: only part PART of X
# (tests/integration/parts.bash).
TOOLS=()
for t in tests/tools/*.c; do TOOLS+=("$(basename "$t" .c)"); done
# The tools a script names, itself or in the files it sources (tests/integration/*.bash,
# followed): only those are built with a mutant (a third of a build's time each, most
# scripts need none). A mutant's binary directory starts as a copy of the unmutated one,
# so a tool named in some way this misses runs unmutated: at worst a mutant survives,
# which fails the run; it is never killed by a missing binary.
tools_named() { # script
  local files=("$1") seen=" " f t src
  while [[ ${#files[@]} -gt 0 ]]; do
    f=${files[0]} files=("${files[@]:1}")
    [[ $seen == *" $f "* || ! -f $f ]] && continue
    seen+="$f "
    for src in $(sed -n 's/^ *source "$(dirname "[^"]*")\/\([a-z_]*\.bash\)".*/\1/p' "$f"); do
      files+=("$(dirname "$f")/$src")
    done
  done
  for t in "${TOOLS[@]}"; do
    # shellcheck disable=SC2086 # the files seen, one word each
    grep -qw "$t" $seen && printf '%s ' "$t"
  done
}
targets_of() { # killer
  local script=tests/integration/${1#integration_}
  script=${script%%:*}.sh
  case "$1" in
    test_*) echo "$1" ;;
    integration_bench_*) echo "idgen $(tools_named "$script")bench_${1#integration_bench_}" ;; # bench smoke
    integration_*) echo "idgen $(tools_named "$script")" ;;
    chaos:*) echo "idgen $(tools_named tests/chaos/run.sh)" ;;
    pg_*) echo "idgen pg-extension" ;;
  esac
}
has_part() { # script part: the script declares that part (tests/integration/parts.bash)
  [[ -f $1 ]] && sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | grep -E "^parts( +[a-z0-9_-]+)* +$2( |$)" >/dev/null
}
check_killer() { # killer: known and present?
  local name=${1%%:*}
  case "$1" in
    test_*) [[ -f tests/unit/$1.c ]] ;;
    integration_*:*) has_part "tests/integration/${name#integration_}.sh" "${1#*:}" ;;
    integration_*) [[ -f tests/integration/${1#integration_}.sh ]] ;;
    chaos:*) grep -q "^ *${1#chaos:}) " tests/chaos/run.sh ;;
    pg_*:*) has_part "tests/pg/${name#pg_}.sh" "${1#*:}" ;;
    pg_*) [[ -f tests/pg/${1#pg_}.sh ]] ;;
    *) false ;;
  esac
}
# A killer's run needs only its first failure (tests/integration/server_common.bash stops
# there; the other helpers always do).
export IDGEN_TEST_FIRST_FAIL=1
# ... and every script starts with sleep as a builtin (see the file), as in scripts/test.sh.
[[ -f /usr/lib/bash/sleep ]] ||
  { echo "mutants.sh: no /usr/lib/bash/sleep (scripts/deps.sh test installs bash-builtins)" >&2; exit 1; }
export BASH_ENV=$PWD/tests/builtins.bash
run_killer() { # killer bindir log: the test's exit status (124 on a time out)
  local name=${1%%:*} part=() # X:PART: the test X, its part PART alone
  [[ $1 == *:* ]] && part=("${1#*:}")
  case "$1" in
    test_*) (cd "$2" && timeout -k 10 300 "./$1") ;;
    integration_*)
      IDGEN_SOURCE_DIR=$S IDGEN_BUILD_DIR=$2 \
        timeout -k 10 600 bash "$S/tests/integration/${name#integration_}.sh" "$2/idgen" "${part[@]}" ;;
    chaos:*) # its work dir inside ours: a killed run keeps it, and ours goes
      IDGEN_BUILD_DIR=$2 timeout -k 10 600 bash "$S/tests/chaos/run.sh" --idgen "$2/idgen" \
        --work "$(mktemp -d "$WORK/chaos.XXXXXX")" --phase 1 --ttl 4 --strict-liveness "${1#chaos:}" ;;
    pg_*) # one at a time: the installed extension is the machine's
      (
        flock 9
        install_pg_so "$2/idgen.so" &&
          IDGEN_SOURCE_DIR=$S IDGEN_BUILD_DIR=$2 timeout -k 10 600 bash "$S/tests/pg/${name#pg_}.sh" "$2/idgen" "${part[@]}"
      ) 9>"$WORK/pg.lock" ;;
  esac >"$3" 2>&1
}
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO=sudo
install_pg_so() { # idgen.so: into PostgreSQL's library directory (a new file: running
  # servers keep the one they mapped)
  $SUDO install -m 755 "$1" "$(pg_config --pkglibdir)/idgen.so"
}
ALL_KILLERS=() ALL_TARGETS=()
for i in "${SELECTED[@]}"; do
  for k in ${KILLERS[i]}; do
    check_killer "$k" || { echo "mutants.sh: mutant ${ID[i]}: unknown test '$k'" >&2; exit 2; }
    [[ " ${ALL_KILLERS[*]} " == *" $k "* ]] || ALL_KILLERS+=("$k")
  done
done
# the baseline has every tool, which each mutant's directory starts from (tools_named)
for k in "${ALL_KILLERS[@]}"; do
  for t in $(targets_of "$k") $([[ $k == test_* ]] || echo "${TOOLS[@]}"); do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || ALL_TARGETS+=("$t")
  done
done

# ---- the scratch copy ---------------------------------------------------------------
WORK=$(mktemp -d /tmp/idgen-mutants.XXXXXX)
S=$WORK/src B=$WORK/build LOGS=$WORK/logs
BINS=$WORK/bin     # BINS/ID: the binaries built with mutant ID (BINS/baseline: without)
DONE=$WORK/done    # DONE/ID.TEST: a finished run's exit status (ID.built: a build's)
mkdir -p "$S" "$LOGS" "$BINS" "$DONE"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [[ -e $f ]] && printf '%s\0' "$f"
done | xargs -0 cp --parents -t "$S"
START_S=$SECONDS
log() { printf '[%3ds] %s\n' $((SECONDS - START_S)) "$*" >&2; }
failures=0
builder="" RUNNING=() # the builder's PID while it builds; the PIDs of the tests running
finish() {
  local pid ninja
  if [[ -n $builder ]] && kill -0 "$builder" 2>/dev/null; then
    ninja=$(pgrep -P "$builder")
    kill "$builder" 2>/dev/null
    # shellcheck disable=SC2086 # one PID or none
    [[ -z $ninja ]] || kill $ninja 2>/dev/null
  fi
  # A test's timeout passes the signal on to the test, whose cleanup stops its servers;
  # the run ends with it.
  for pid in "${RUNNING[@]}"; do pkill -TERM -P "$pid"; done
  wait 2>/dev/null
  [[ ! -f $BINS/baseline/idgen.so ]] || install_pg_so "$BINS/baseline/idgen.so" ||
    echo "mutants.sh: the unmutated extension was not installed again (scripts/pg-install.sh)" >&2
  if [[ $failures -eq 0 && $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "mutants.sh: logs in $LOGS" >&2; fi
}
trap finish EXIT
build() { # log targets...: 0 if they build
  local out=$1 t cm=() pg=0; shift
  for t in "$@"; do
    if [[ $t == pg-extension ]]; then
      pg=1 cm+=(idgen_static idgen_etcd_static idgen_opaque_static)
    else
      cm+=("$t")
    fi
  done
  # ninja itself: `cmake --build` is one more cmake process around it, at each of 243 builds
  ninja -C "$B" -j "$BUILD_JOBS" "${cm[@]}" >"$out" 2>&1 &&
    { [[ $pg -eq 0 ]] || make -s -C "$S/pg" IDGEN_BUILD="$B" >>"$out" 2>&1; }
}
keep_binaries() { # dir targets...: copies the targets just built; they link statically
  local dir=$1 t; shift
  mkdir -p "$dir" || return
  # the unmutated binaries first (tools_named); none yet when dir is the baseline's
  [[ ! -d $BINS/baseline || $dir == "$BINS/baseline" ]] || cp -a "$BINS/baseline/." "$dir/" || return
  for t in "$@"; do
    if [[ $t == pg-extension ]]; then cp "$S/pg/idgen.so" "$dir/"; else cp "$B/$t" "$dir/"; fi || return
  done
}
safe() { echo "${1//[:\/]/_}"; } # a test's name as part of a file name

# Each mutant's file as it will be, now: a stale entry fails before anything is built.
RESULT=() RUN=()
mkdir -p "$WORK/mutated" "$WORK/original"
for i in "${SELECTED[@]}"; do
  f=${FILE[i]} stale=""
  if [[ -f $S/$f ]]; then
    IFS= read -r -d '' mutated <"$S/$f"
    for ((k = 0; k < NPAIRS[i]; k++)); do
      find=${FIND["$i,$k"]} rest=${mutated//"$find"/}
      c=$(((${#mutated} - ${#rest}) / ${#find})) # how many times it occurs
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
  # RelWithDebInfo's optimisation and assertions, without its debug info; linked by gold
  # (binutils'), a third faster than ld.bfd at the relinks that most of a rebuild is
  # (idgen and four tools after a library file changed: 1.17 -> 0.82 s here).
  # Archives indexed by ar itself, with no ranlib after it: one process less at each of the
  # about 300 archive updates (a clean clone's run: 289 ranlib processes, 30 CPU-s).
  cmake -S "$S" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold \
    "-DCMAKE_C_ARCHIVE_CREATE=<CMAKE_AR> qcs <TARGET> <LINK_FLAGS> <OBJECTS>" -DCMAKE_C_ARCHIVE_FINISH= \
    >"$LOGS/cmake.log" 2>&1 &&
    build "$LOGS/build.log" "${ALL_TARGETS[@]}" &&
    keep_binaries "$BINS/baseline" "${ALL_TARGETS[@]}" &&
    { [[ " ${ALL_TARGETS[*]} " != *" pg-extension "* ]] ||
      $SUDO make -s -C "$S/pg" IDGEN_BUILD="$B" install >>"$LOGS/build.log" 2>&1; } ||
    { echo "mutants.sh: the unmutated tree does not build (see $LOGS)" >&2; failures=1; exit 1; }
fi

# ---- the order of the runs ------------------------------------------------------------
# Every test must pass on the unmutated tree, or its failures would prove nothing: the
# baselines run first, the slow ones (integration scripts, chaos scenarios) ahead of the
# unit tests, and a failed one stops everything (with --slow-passed the slow ones have
# just passed in the caller's stages, on the same sources: only the unit tests' run).
# Then the mutants that a slow test must kill, then the others: the long runs start
# early, the short ones fill in at the end. A mutant's killers are tried unit tests
# first (KORDER); with --all-killers all of them are queued at once.
unit() { [[ $1 == test_* ]]; } # killer
declare -A KORDER # per mutant: its killers, unit tests first, then the list's order
for i in "${RUN[@]}"; do
  KORDER[$i]=""
  for k in ${KILLERS[i]}; do unit "$k" && KORDER[$i]+="$k "; done
  for k in ${KILLERS[i]}; do unit "$k" || KORDER[$i]+="$k "; done
done
ORDER=() QUEUE=() # ORDER: the mutants in build order; QUEUE: "i killer" (i = baseline)
if [[ $SLOW_PASSED -eq 0 ]]; then
  for k in "${ALL_KILLERS[@]}"; do unit "$k" || QUEUE+=("baseline $k"); done
fi
for k in "${ALL_KILLERS[@]}"; do unit "$k" && QUEUE+=("baseline $k"); done
# The mutants of one file one after another (in the list's order of files): a file put
# back is compiled again only by the build of a mutant in another file (243 mutants: 105
# such builds in the list's order, 54 this way).
BY_FILE=() files_seen=" "
for i in "${RUN[@]}"; do
  [[ $files_seen == *" ${FILE[i]} "* ]] && continue
  files_seen+="${FILE[i]} "
  for j in "${RUN[@]}"; do [[ ${FILE[j]} != "${FILE[i]}" ]] || BY_FILE+=("$j"); done
done
for slow in 1 0; do
  for i in "${BY_FILE[@]}"; do
    s=0
    for k in ${KILLERS[i]}; do unit "$k" || s=1; done
    [[ $s -eq $slow ]] || continue
    ORDER+=("$i")
    for k in ${KORDER[$i]}; do
      QUEUE+=("$i $k")
      [[ $ALL_KILLERS_MUST -eq 1 ]] || break
    done
  done
done
[[ ${#RUN[@]} -gt 0 ]] || QUEUE=()
# ---- the builder: each mutant in turn, in the background ------------------------------
# Applies the mutant, builds what its tests need, keeps those binaries in BINS/ID and
# puts the file back (a new mtime: the next build recompiles it) unless the next mutant
# writes the same file whole. DONE/ID.built says how it went (0 built) and how long it
# took. The builder is the stage's critical path (a clean clone's run: 1059 s of builds
# in a 1139 s stage, a build that takes 2.8 s alone taking 4.4 s among the test runs),
# so it runs at a higher priority than they do where it may (root).
build_mutants() {
  local n i f t k t0 targets next
  for ((n = 0; n < ${#ORDER[@]}; n++)); do
    i=${ORDER[n]} next=${ORDER[n + 1]:-}
    t0=$SECONDS f=${FILE[i]} targets=()
    for k in ${KILLERS[i]}; do
      for t in $(targets_of "$k"); do [[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t"); done
    done
    cp "$WORK/mutated/${ID[i]}" "$S/$f"
    if build "$LOGS/${ID[i]}.build.log" "${targets[@]}" && keep_binaries "$BINS/${ID[i]}" "${targets[@]}"; then
      rm -f "$LOGS/${ID[i]}.build.log"
      echo "0 $((SECONDS - t0))" >"$DONE/${ID[i]}.built.tmp"
    else
      echo "1 $((SECONDS - t0))" >"$DONE/${ID[i]}.built.tmp"
    fi
    [[ -n $next && ${FILE[next]} == "$f" ]] || cp "$WORK/original/${ID[i]}" "$S/$f"
    mv "$DONE/${ID[i]}.built.tmp" "$DONE/${ID[i]}.built"
  done
}
if [[ ${#ORDER[@]} -gt 0 ]]; then
  build_mutants &
  builder=$!
  [[ $(id -u) -ne 0 ]] || renice -n -5 -p "$builder" >/dev/null
fi

# ---- the runs: up to RUNS_AT_ONCE at a time ------------------------------------------
declare -A LEFT STARTED # per mutant: runs not finished yet; when its first run started
declare -A TRIED        # per mutant: how many of its killers have been started
for i in "${RUN[@]}"; do
  LEFT[$i]=1 TRIED[$i]=1
  [[ $ALL_KILLERS_MUST -eq 0 ]] || LEFT[$i]=$(wc -w <<<"${KILLERS[i]}")
done
FOLLOW=() # "i killer": a built mutant's next killer, the last one having missed it
run_name() { # i -> the name its runs and binaries go by
  if [[ $1 == baseline ]]; then echo baseline; else echo "${ID[$1]}"; fi
}
start_run() { # i killer
  local name; name=$(run_name "$1")
  local out; out=$DONE/$name.$(safe "$2")
  [[ $1 == baseline ]] || [[ -n ${STARTED[$1]:-} ]] || STARTED[$1]=$SECONDS
  (
    t0=$SECONDS
    run_killer "$2" "$BINS/$name" "$LOGS/$name.$(safe "$2").log"
    echo "$? $((SECONDS - t0))" >"$out.tmp" && mv "$out.tmp" "$out"
  ) &
  RUNNING+=($!)
}
# The mutant's result once its runs are in: killed, or SURVIVED, and by which test. Every
# test that ran must have killed it (a killer that no longer does is a stale list).
judge() { # i
  local i=$1 k rc secs killed=() missed=()
  for k in ${KORDER[$i]}; do
    [[ -f $DONE/${ID[i]}.$(safe "$k") ]] || continue # not tried: an earlier one killed
    read -r rc secs <"$DONE/${ID[i]}.$(safe "$k")"
    case $rc in
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
  rm -rf "${BINS:?}/${ID[i]}"
  read -r rc secs <"$DONE/${ID[i]}.built"
  log "${ID[i]}: ${RESULT[i]} (build $secs s, tests $((SECONDS - STARTED[$i])) s)"
}
# After one of a mutant's runs: judged when all are in (--all-killers), when this one
# killed it, or when it was the last; else its next killer is tried.
run_done() { # i rc
  local i=$1 rc=$2 next_k
  LEFT[$i]=$((LEFT[$i] - 1))
  if [[ $ALL_KILLERS_MUST -eq 0 && $rc -eq 0 && ${TRIED[$i]} -lt $(wc -w <<<"${KORDER[$i]}") ]]; then
    read -r -a next_k <<<"${KORDER[$i]}"
    FOLLOW+=("$i ${next_k[${TRIED[$i]}]}")
    TRIED[$i]=$((TRIED[$i] + 1)) LEFT[$i]=$((LEFT[$i] + 1))
    return
  fi
  [[ ${LEFT[$i]} -gt 0 ]] || judge "$i"
}
# Takes in the runs that ended: a failed baseline ends the whole check.
reap() {
  local pid still=() entry i k rc secs
  for pid in "${RUNNING[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then still+=("$pid"); else wait "$pid"; fi
  done
  RUNNING=("${still[@]}")
  for entry in "${!PENDING[@]}"; do
    read -r i k <<<"${PENDING[$entry]}"
    [[ -f $DONE/$(run_name "$i").$(safe "$k") ]] || continue
    unset "PENDING[$entry]"
    read -r rc secs <"$DONE/$(run_name "$i").$(safe "$k")"
    if [[ $i == baseline ]]; then
      if [[ $rc -ne 0 ]]; then
        echo "mutants.sh: $k fails without any mutant (see $LOGS/baseline.$(safe "$k").log)" >&2
        failures=1
        exit 1
      fi
      log "baseline: $k passes ($secs s)"
    else
      run_done "$i" "$rc"
    fi
  done
}
pg_running() { # a test of the extension is running (they take turns: see the top)
  local entry
  for entry in "${PENDING[@]}"; do [[ ${entry#* } != pg_* ]] || return 0; done
  return 1
}
# Starts the runs of the array named $1 that can start, in its order, while places are
# free: a pg run waits while another one runs (the others pass it), and a mutant not
# built yet ends the pass (the ones after it are not built either). A mutant that did
# not build is DOES NOT BUILD, and its runs are dropped.
declare -A PENDING # the runs started and not yet taken in, by number: "i killer"
started=0
dispatch() { # array name
  local -n runs=$1
  local idx i k rc secs
  for idx in "${!runs[@]}"; do
    [[ ${#RUNNING[@]} -lt $RUNS_AT_ONCE ]] || return 0
    read -r i k <<<"${runs[idx]}"
    [[ $k != pg_* ]] || ! pg_running || continue
    if [[ $i != baseline ]]; then
      if [[ ! -f $DONE/${ID[i]}.built ]]; then
        kill -0 "$builder" 2>/dev/null || [[ -f $DONE/${ID[i]}.built ]] ||
          { echo "mutants.sh: the builder stopped before ${ID[i]}" >&2; failures=1; exit 1; }
        return 0
      fi
      read -r rc secs <"$DONE/${ID[i]}.built"
      if [[ $rc -ne 0 ]]; then
        unset "runs[$idx]"
        if [[ -z ${RESULT[i]:-} ]]; then
          RESULT[i]="DOES NOT BUILD (see ${ID[i]}.build.log)"; failures=$((failures + 1))
          log "${ID[i]}: ${RESULT[i]}"
        fi
        continue
      fi
    fi
    start_run "$i" "$k"
    PENDING[$started]="$i $k"
    started=$((started + 1))
    unset "runs[$idx]"
  done
}
while [[ ${#QUEUE[@]} -gt 0 || ${#FOLLOW[@]} -gt 0 || ${#PENDING[@]} -gt 0 ]]; do
  reap
  dispatch FOLLOW
  dispatch QUEUE
  sleep 0.2
done
[[ -z $builder ]] || wait "$builder"
builder=""

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
