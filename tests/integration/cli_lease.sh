#!/usr/bin/env bash
# `idgen lease` only reads: it makes no state directory and writes nothing into one (the
# serving providers' open makes the directory and writes a probe file), yet shows the
# worker IDs that a running server holds there.
source "$(dirname "$0")/server_common.bash"

missing=$WORK/missing/state
out=$("$IDGEN" lease --state-dir "$missing" 2>&1) || fail "lease on a missing dir: $out"
check_match "a missing state dir holds nothing" '^holders: 0$' "$(grep '^holders:' <<<"$out")"
check "a missing state dir is not made" "no" "$([[ -e $WORK/missing ]] && echo yes || echo no)"

mkdir "$WORK/empty"
before=$(stat -c '%y %h' "$WORK/empty")
"$IDGEN" lease --state-dir "$WORK/empty" >/dev/null || fail "lease on an empty dir"
"$IDGEN" lease --lease static --worker-id 5 --state-dir "$WORK/empty" >/dev/null ||
  fail "lease --lease static on an empty dir"
check "nothing written to the state dir" "$before" "$(stat -c '%y %h' "$WORK/empty")"
check "no entry in the state dir" "" "$(ls -A "$WORK/empty")"

start_server held
out=$("$IDGEN" lease --state-dir "$WORK/held-state")
check "the server's worker ID is listed live" "1 yes" \
  "$(awk '$1 ~ /^[0-9]+$/ {n++; live = $2} END {print n, live}' <<<"$out")"
finish
