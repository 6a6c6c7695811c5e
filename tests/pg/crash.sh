#!/usr/bin/env bash
# kill -9 of the postmaster (and of the lease worker with it, as a host crash would: its
# graceful exit would lower the HWM to the last ID issued) under load, then a restart
# with the clock set back 3 s by libfaketime: no ID issued after the restart repeats, or
# falls below, one issued before, and the first is above the HWM the lease persisted.
# Usage: tests/pg/crash.sh /path/to/idgen
#
# libfaketime and PostgreSQL 15 (see PITFALLS.md): the postmaster sleeps in select(),
# which libfaketime runs with its faking switched off, and forks the lease worker from a
# signal handler that runs inside it; so the lease worker keeps the real time while the
# postmaster and the backends get the faked one. The lease worker then waits past the
# HWM on the real clock, and the backends, 3 s behind, find the floor it armed ahead of
# their clock: they refuse (clock behind, SQLSTATE 55000) until their clock passes it.
# The test retries those inserts; what it checks holds either way. Monotonic time is
# left alone (FAKETIME_DONT_FAKE_MONOTONIC) so that every process has the same one.
source "$(dirname "$0")/pg_common.bash"
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[[ -f $FAKETIME_LIB ]] || fail "libfaketime not installed (scripts/deps.sh test)"

start_cluster crash "idgen.lease=static" "idgen.worker_id=5" "synchronous_commit=off"
sql crash "CREATE EXTENSION idgen" \
  "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idgen_next(), phase int NOT NULL)"
wait_state crash held
hwm_file=$T/crash/data/pg_idgen/worker-5
hwm_of() { sed -n 's/.*"hwm_ms":"\([0-9]*\)".*/\1/p' "$hwm_file"; }

# Load from 4 sessions, then kill -9 the postmaster and the lease worker in the middle.
echo "INSERT INTO t (phase) SELECT 1 FROM generate_series(1, 50);" >"$T/insert.sql"
"$PG_BIN/pgbench" -h 127.0.0.1 -p "$(port_of crash)" -U postgres -n -c 4 -j 2 -T 60 \
  -f "$T/insert.sql" postgres >"$T/pgbench.log" 2>&1 &
bench=$!
EXTRA_CLEANUP="kill -KILL $bench 2>/dev/null"
for _ in $(seq 100); do
  [[ $(sql crash "SELECT count(*) FROM t") -ge 20000 ]] && break
  sleep 0.1
done
pm=$(cat "$T/crash/pid")
lease_pid=$(sql crash "SELECT pid FROM idgen_status()")
children=$(pgrep -P "$pm" | tr '\n' ' ')
kill -KILL "$pm" "$lease_pid"
wait "$bench" || true # its sessions break
# The other children end when they notice the postmaster gone; a new postmaster refuses
# to start while they still hold the old shared memory.
for _ in $(seq 100); do
  alive=0
  for c in $children; do kill -0 "$c" 2>/dev/null && alive=1; done
  [[ $alive -eq 0 ]] && break
  sleep 0.1
done
for c in $children; do kill -KILL "$c" 2>/dev/null || true; done
hwm=$(hwm_of)
[[ -n "$hwm" ]] || fail "no HWM in $hwm_file: $(cat "$hwm_file")"
ok "postmaster $pm and lease worker $lease_pid killed with SIGKILL; persisted HWM $hwm"

echo "-3" >"$T/faketime"
chmod 644 "$T/faketime"
"$SRC/scripts/pg-cluster.sh" restart "$T/crash" LD_PRELOAD=$FAKETIME_LIB \
  FAKETIME_TIMESTAMP_FILE="$T/faketime" FAKETIME_DONT_FAKE_MONOTONIC=1
faked=$(sql crash "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
behind=$(($(date +%s%3N) - faked))
[[ $behind -ge 2000 ]] || fail "the server's clock is only $behind ms behind: libfaketime not in effect"
ok "restarted with the server's clock $behind ms behind"

# Insert until it works: a refusal must be one of the lease's (class 55), nothing else.
refusals=0
for _ in $(seq 300); do
  if out=$(sql_error crash "INSERT INTO t (phase) SELECT 2 FROM generate_series(1, 20000)"); then
    grep -q '^ERROR:  55000: idgen: ' <<<"$out" || fail "insert failed: $out"
    refusals=$((refusals + 1))
    sleep 0.1
  else
    break
  fi
done
[[ $(sql crash "SELECT count(*) FROM t WHERE phase = 2") -eq 20000 ]] || fail "no insert after the restart: $out"
read -r before after first_time floor < <(sql crash "SELECT
    (SELECT max(id) FROM t WHERE phase = 1), (SELECT min(id) FROM t WHERE phase = 2),
    (SELECT (idgen_decode(min(id))).time_ms FROM t WHERE phase = 2),
    (SELECT (extract(epoch FROM floor) * 1000)::bigint FROM idgen_status())" |
  tr '|' ' ')
[[ $after -gt $before ]] || fail "after the restart $after, before the crash up to $before"
[[ $first_time -gt $hwm ]] || fail "first ID after the restart at $first_time ms, HWM $hwm"
[[ $floor -eq $hwm ]] || fail "the lease read floor $floor, the file held $hwm"
dups=$(sql crash "SELECT count(*) - count(DISTINCT id) FROM t")
[[ $dups -eq 0 ]] || fail "$dups duplicate IDs"
ok "no repeat: first ID after the restart $after > last before $before; its time $first_time > HWM $hwm ($refusals refused inserts first)"
