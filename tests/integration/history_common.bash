# shellcheck shell=bash disable=SC2154 # fail comes from the caller
# history_common.bash: sourced by segment_common.bash and server_segment_common.bash.
# Reading the histories their clients write, one line per answer:
#   <unix ms> <process> <number> ...   or   <unix ms> <process> ERR <what>
# The caller defines fail (it may exit or only count the failure).

# wait_lines FILE N [PATTERN]: until FILE has N lines matching PATTERN (60 s at most).
wait_lines() {
  local n=0
  for _ in $(seq 600); do
    n=$(grep -c -- "${3:-.}" "$1" 2>/dev/null || true)
    [[ ${n:-0} -ge $2 ]] && return 0
    sleep 0.1
  done
  fail "$1: $n lines matching '${3:-.}' after 60 s, want $2"
  return 1
}
# The numbers of the histories, their largest and their smallest (awk: no sort of the
# whole history for one value).
numbers_of() { awk '$3 != "ERR" { print $3 }' "$@"; }
max_of() { awk '$3 != "ERR" && $3 > m { m = $3 } END { print m + 0 }' "$@"; }
min_of() { awk '$3 != "ERR" && (!n++ || $3 < m) { m = $3 } END { print m + 0 }' "$@"; }
