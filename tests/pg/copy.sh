#!/usr/bin/env bash
# The static lease and a copy of the data directory started as a primary: pg_basebackup
# without -R, so crash recovery from backup_label keeps the system identifier and the
# timeline. The copy runs in a network namespace of its own (the host-wide claim, an
# abstract socket, does not reach it), with its settings as copied (worker ID 6), beside
# the original. It must refuse with SQLSTATE 55000 and say what to do, wherever it runs:
#   host     another host: its own UTS namespace, another host name
#   machine  another host with the same name: another /etc/machine-id (a mount namespace)
#   dir      this host, another directory
# and the original's own directory moved (same inode, another path), or replaced by a copy
# at its own path (a restore after a disk replacement: same path, another inode). Given an
# ID of its own, or with its record removed on purpose, a cluster issues again; a record
# of the older format (before these fields) is completed.
# Usage: tests/pg/copy.sh /path/to/idgen [PART...]   (ALL_CASES=1: a copy that issues is
# measured, and the run goes on to the next case; it still fails at the end). Its parts
# (tests/integration/parts.bash), each on a cluster of its own: host, machine, dir (the
# copy started as each says), own-id (given an ID of its own), moved, restored (and the
# record removed on purpose), old (a record of the older format).
source "$(dirname "$0")/pg_common.bash"
source "$(dirname "$0")/../integration/parts.bash"
parts host machine dir own-id moved restored old -- "${@:2}"
for tool in unshare nsenter ip; do command -v $tool >/dev/null || fail "$tool not found (util-linux, iproute2)"; done
[[ $(id -u) -eq 0 ]] || fail "namespaces need root"
N=200000
issued=0

start_cluster p "idgen.lease=static" "idgen.worker_id=6"
sql p "CREATE EXTENSION idgen"
wait_state p held

# The copy, as an operator makes one to start elsewhere: no -R, no standby.signal.
make_copy() {
  mkdir -p "$T/c"
  chmod 755 "$T/c"
  chown postgres: "$T/c"
  su postgres -s /bin/bash -c "'$PG_BIN/pg_basebackup' -h 127.0.0.1 -p $(port_of p) -U postgres -D '$T/c/data' -X stream" ||
    fail "pg_basebackup"
  [[ ! -f "$T/c/data/standby.signal" && -f "$T/c/data/pg_idgen/identity" ]] || fail "not a plain copy"
  echo "unix_socket_directories = '$T/c'" >>"$T/c/data/postgresql.conf"
  port_of p >"$T/c/port" # its own network: the original's port
  PORT_c=$(port_of p)
  CLUSTERS+=(c)
  NETNS[c]=1
  echo 0123456789abcdef0123456789abcdef >"$T/machine-id"
  chmod 644 "$T/machine-id"
}

# start_copy HOW: the copy started in namespaces of its own, as HOW says (see the top).
start_copy() {
  local unshare=(unshare --net) setup="ip link set lo up"
  case $1 in
    host) unshare+=(--uts) setup+=" && hostname '$(hostname)-copy'" ;;
    machine) unshare+=(--mount) setup+=" && mount --bind '$T/machine-id' /etc/machine-id" ;;
    dir) ;;
  esac
  "${unshare[@]}" bash -c "$setup && exec '$SRC/scripts/pg-cluster.sh' restart '$T/c'" ||
    fail "the copy ($1) did not start"
}

# settle NAME: until its lease is held or refused; prints which.
settle() {
  local got=""
  for _ in $(seq 300); do
    got=$(sql "$1" "SELECT state FROM idgen_status()" 2>/dev/null || true)
    [[ $got == held || $got == refused ]] && { echo "$got"; return 0; }
    sleep 0.1
  done
  fail "$1: lease state '$got' after 30 s"
}

# shared A B: N IDs from each at once; prints how many of B's are also A's.
shared() {
  sql "$1" "SELECT idgen_next() FROM generate_series(1, $N)" | sort >"$T/$1.ids" &
  local bg=$!
  sql "$2" "SELECT idgen_next() FROM generate_series(1, $N)" | sort >"$T/$2.ids"
  wait $bg || fail "$1 did not issue"
  comm -12 "$T/$1.ids" "$T/$2.ids" | wc -l
}

# refused NAME CASE FIELD: NAME's lease must be refused for FIELD, and a call must fail
# with 55000 and a detail that says what to do. If it holds worker 6 instead, measure.
refused() {
  local name=$1 case=$2 field=$3 state err
  state=$(settle "$name")
  if [[ $state == held ]]; then
    local msg
    msg="$case: the copy issues beside the original: $(sql p "SELECT state || '|' || worker FROM idgen_status()") and $(sql "$name" "SELECT state || '|' || worker FROM idgen_status()"), $(shared p "$name") of $N IDs the same"
    [[ -n ${ALL_CASES:-} ]] || fail "$msg"
    echo "FAIL: $msg" >&2
    issued=$((issued + 1))
    return 0
  fi
  err=$(PGOPTIONS="-c idgen.start_wait=0" sql_error "$name" "SELECT idgen_next()") || fail "$case: refused, yet it issued: $err"
  grep -q '^ERROR:  55000: idgen: no worker ID held' <<<"$err" || fail "$case: $err"
  grep -q "^DETAIL:  Lease static: refused; last error: this data directory was copied or moved: .*/pg_idgen/identity was written with $field \".*\", this is \".*\", and the cluster it was copied from may still issue under worker ID 6. Set idgen.worker_id to an ID of its own; or, if that cluster is gone for good, remove .*/pg_idgen/identity. Then restart.$" <<<"$err" ||
    fail "$case: $err"
  [[ $(sql p "SELECT state || '|' || worker FROM idgen_status()") == "held|6" ]] || fail "$case: the original lost its lease"
  ok "$case: refused: $(grep -o 'written with .*, and' <<<"$err" | sed 's/, and$//')"
}

if part host || part machine || part dir || part own-id; then make_copy; fi
if part host; then
  start_copy host
  [[ $(sql c "SELECT pg_is_in_recovery()") == f ]] || fail "the copy is in recovery"
  [[ $(sql c "SELECT system_identifier FROM pg_control_system()") == $(sql p "SELECT system_identifier FROM pg_control_system()") &&
     $(sql c "SELECT timeline_id FROM pg_control_checkpoint()") == 1 ]] || fail "the copy is not the same system on timeline 1"
  refused c "another host" "host name"
  "$SRC/scripts/pg-cluster.sh" stop "$T/c"
fi
if part machine; then
  start_copy machine
  refused c "another host of the same name" "machine ID"
  "$SRC/scripts/pg-cluster.sh" stop "$T/c"
fi
if part dir; then
  start_copy dir
  refused c "this host, another directory" "data directory"
  "$SRC/scripts/pg-cluster.sh" stop "$T/c"
fi

# Given an ID of its own, the copy on another host issues beside the original.
if part own-id; then
  echo "idgen.worker_id = 7" >>"$T/c/data/postgresql.conf"
  start_copy host
  [[ $(settle c) == held ]] || fail "with worker 7: $(sql c "SELECT last_error FROM idgen_status()")"
  [[ $(shared p c) == 0 ]] || fail "worker 7 and 6 share IDs"
  ok "given idgen.worker_id = 7 the copy issues; the original goes on with 6: 0 of $N IDs the same"
  "$SRC/scripts/pg-cluster.sh" stop "$T/c"
fi

# The original itself, its data directory moved (renamed: the same inode): refused too,
# as a copy would be. Moved back, it holds again.
if part moved; then
  "$SRC/scripts/pg-cluster.sh" stop "$T/p"
  mv "$T/p/data" "$T/p/moved"
  ln -s moved "$T/p/data"
  "$SRC/scripts/pg-cluster.sh" restart "$T/p"
  state=$(settle p)
  why=$(sql p "SELECT last_error FROM idgen_status()")
  [[ $state == refused ]] || fail "moved: $state"
  grep -q "written with data directory \"$T/p/data\", this is \"$T/p/moved\"" <<<"$why" || fail "moved: $why"
  ok "moved to another path: refused: ${why%%, and*}"
  "$SRC/scripts/pg-cluster.sh" stop "$T/p"
  rm "$T/p/data"
  mv "$T/p/moved" "$T/p/data"
  "$SRC/scripts/pg-cluster.sh" restart "$T/p"
  [[ $(settle p) == held ]] || fail "moved back: $(sql p "SELECT last_error FROM idgen_status()")"
fi

# Replaced at its own path by a copy of itself (a restore after a disk replacement):
# another inode, refused. The operator who knows the original is gone removes the record.
if part restored; then
  "$SRC/scripts/pg-cluster.sh" stop "$T/p"
  mv "$T/p/data" "$T/p/data.orig"
  cp -a "$T/p/data.orig" "$T/p/data"
  "$SRC/scripts/pg-cluster.sh" restart "$T/p"
  state=$(settle p)
  why=$(sql p "SELECT last_error FROM idgen_status()")
  [[ $state == refused ]] || fail "restored in place: $state"
  grep -q "written with data directory inode \"[0-9]*\", this is \"[0-9]*\"" <<<"$why" || fail "restored in place: $why"
  ok "restored at its own path: refused: ${why%%, and*}"
  rm "$T/p/data/pg_idgen/identity"
  lease_pid=$(sql p "SELECT pid FROM idgen_status()")
  sql p "SELECT pg_terminate_backend($lease_pid)" >/dev/null
  for _ in $(seq 100); do
    [[ $(sql p "SELECT pid FROM idgen_status()") != "$lease_pid" ]] && break
    sleep 0.1
  done
  [[ $(settle p) == held ]] || fail "after the reset: $(sql p "SELECT last_error FROM idgen_status()")"
  [[ $(sql p "SELECT (idgen_decode(idgen_next())).worker") == 6 ]] || fail "after the reset: worker"
  grep -q "^data_directory_inode $(stat -c %i "$T/p/data")$" "$T/p/data/pg_idgen/identity" ||
    fail "record: $(cat "$T/p/data/pg_idgen/identity")"
  ok "record removed on purpose, lease worker restarted: held again under 6"
fi

# A record of the older format (three fields) is taken as it is and completed.
if part old; then
  "$SRC/scripts/pg-cluster.sh" stop "$T/p"
  head -n 3 "$T/p/data/pg_idgen/identity" >"$T/old"
  cat "$T/old" >"$T/p/data/pg_idgen/identity" # keeps its owner
  "$SRC/scripts/pg-cluster.sh" restart "$T/p"
  [[ $(settle p) == held ]] || fail "old record: $(sql p "SELECT last_error FROM idgen_status()")"
  [[ $(head -n 3 "$T/p/data/pg_idgen/identity") == "$(cat "$T/old")" &&
     $(grep -c '^hostname \|^machine_id \|^data_directory \|^data_directory_inode ' "$T/p/data/pg_idgen/identity") == 4 ]] ||
    fail "old record not completed: $(cat "$T/p/data/pg_idgen/identity")"
  ok "a record of the older format: held, and completed"
fi

[[ $issued -eq 0 ]] || fail "$issued copies issued beside the original"
