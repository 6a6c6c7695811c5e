#!/usr/bin/env bash
# Segment generators on the file backend (one host): two processes sharing one name,
# kill -9 mid-block, the file gone and back under load, the step adapting, bad
# configuration. Usage: segment_file.sh /path/to/idgen
source "$(dirname "$0")/segment_common.bash"

B=file
DSN=$T/state
mkdir -p "$DSN"
# The file "backend" goes away when its file does, and comes back with it.
backend_stop() { mv "$DSN/segment-outage" "$T/segment-outage.away"; }
backend_start() { mv "$T/segment-outage.away" "$DSN/segment-outage"; }

scenario_two_processes
scenario_kill9
scenario_outage
scenario_step
scenario_start_after
scenario_bad_config "$T/no/such/dir/file"
# The max is in the file before a number of its block is handed out.
max=$(sed -n 's/^0*\([0-9][0-9]*\) shared$/\1/p' "$DSN/segment-shared")
last=$(max_of "$T/p1.log" "$T/p2.log")
[[ $max -ge $last ]] || fail "file max $max below the last number handed out $last"
ok "the file's max ($max) covers every number handed out (last $last)"
echo "segment_file.sh: all passed"
