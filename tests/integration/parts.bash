# shellcheck shell=bash
# parts.bash: sourced by an integration script (or a tests/pg one) made of named parts,
# so that one part can run alone: scripts/mutants.sh names integration_X:PART (pg_X:PART)
# as a mutant's killer when the rest of X cannot see that mutant. The part is the same
# code the whole script runs.
# The script declares its parts and takes the ones asked for after the binary:
#   parts unique claims control range -- "${@:2}"
# then guards each with `if part claims; then ...; fi`. No part asked for: all of them
# run, in the script's order. A part that is not declared exits 2.
PARTS_DECLARED=() PARTS_RUN=()

parts() {
  while [[ $# -gt 0 && $1 != -- ]]; do PARTS_DECLARED+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  local p
  for p in "$@"; do
    [[ " ${PARTS_DECLARED[*]} " == *" $p "* ]] ||
      { echo "$0: no part '$p' (its parts: ${PARTS_DECLARED[*]})" >&2; exit 2; }
  done
  if [[ $# -eq 0 ]]; then PARTS_RUN=("${PARTS_DECLARED[@]}"); else PARTS_RUN=("$@"); fi
}

part() { # PART: 0 if it runs
  [[ " ${PARTS_DECLARED[*]} " == *" $1 "* ]] || { echo "$0: part '$1' is not declared" >&2; exit 2; }
  [[ " ${PARTS_RUN[*]} " == *" $1 "* ]]
}
