#!/usr/bin/env bash
# idgen check: it passes clean histories, and it fails where real processes collide
# (two generators given the same worker ID: the negative control) or IDs go backwards.
set -euo pipefail
idgen=${1:?usage: check.sh path/to/idgen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Histories from real processes: <ms> <replica> <id>.
record() { # worker, replica name, file
  "$idgen" next -n 2000000 --worker "$1" | awk -v r="$2" '{ print NR, r, $1 }' > "$3"
}

# Distinct workers drawing at once: no duplicate, in order.
record 1 a "$dir/a.log" & p1=$!
record 2 b "$dir/b.log" & p2=$!
wait $p1 $p2
"$idgen" check "$dir/a.log" "$dir/b.log" > "$dir/out" || fail "clean histories did not pass: $(cat "$dir/out")"
grep -q '^duplicates: 0$' "$dir/out" || fail "no duplicate count in: $(cat "$dir/out")"
grep -q '^verdict: PASS$' "$dir/out" || fail "no PASS verdict"
grep -q '^histories: 2, IDs: 4000000, errors: 0$' "$dir/out" || fail "wrong totals: $(head -1 "$dir/out")"

# Negative control: the same worker ID in two processes at once collides, and the
# checker must say so (exit 1, duplicates listed with their replicas).
record 7 a "$dir/c.log" & p1=$!
record 7 b "$dir/d.log" & p2=$!
wait $p1 $p2
status=0
"$idgen" check "$dir/c.log" "$dir/d.log" > "$dir/out" || status=$?
[[ $status -eq 1 ]] || fail "colliding histories: exit $status, want 1: $(cat "$dir/out")"
dups=$(sed -n 's/^duplicates: //p' "$dir/out")
[[ $dups -gt 0 ]] || fail "no duplicates reported for a shared worker ID"
grep -q 'replica a' "$dir/out" && grep -q 'replica b' "$dir/out" || fail "replicas not named"
"$idgen" check --json "$dir/c.log" "$dir/d.log" > "$dir/json" || true
grep -q '"pass":false' "$dir/json" || fail "json: $(cat "$dir/json")"
echo "negative control: $dups duplicates found"

# Ordering: one worker's IDs going backwards in one client's history is a violation.
head -3 "$dir/a.log" > "$dir/e.log"
sed -n 2p "$dir/a.log" >> "$dir/e.log"
status=0
"$idgen" check "$dir/e.log" > "$dir/out" || status=$?
[[ $status -eq 1 ]] || fail "disorder passed"
grep -q '^ordering violations: 1$' "$dir/out" || fail "violation not counted: $(cat "$dir/out")"

# Errors and unavailability: an outage from the last ID before an error to the next ID.
id1=$(sed -n 1p "$dir/a.log" | cut -d' ' -f3); id2=$(sed -n 2p "$dir/a.log" | cut -d' ' -f3)
printf '1000 r %s\n1100 r ERR timeout\n1500 r ERR ECLOCKBACK\n1700 r %s\n' "$id1" "$id2" > "$dir/f.log"
"$idgen" check "$dir/f.log" > "$dir/out" || fail "errors alone must not fail the check"
grep -q 'longest unavailability 700 ms' "$dir/out" || fail "outage: $(cat "$dir/out")"
grep -q 'error timeout: 1' "$dir/out" || fail "error kinds"
# An outage still open at the end counts up to the last error.
printf '1000 r %s\n1100 r ERR timeout\n9100 r ERR refused\n' "$id1" > "$dir/h.log"
"$idgen" check "$dir/h.log" > "$dir/out" || fail "open outage must not fail the check"
grep -q 'longest unavailability 8100 ms' "$dir/out" || fail "open outage: $(cat "$dir/out")"

# Bad input: exit 2, one line on stderr, nothing on stdout.
printf '1000 r notanid\n' > "$dir/g.log"
status=0
"$idgen" check "$dir/g.log" > "$dir/out" 2> "$dir/err" || status=$?
[[ $status -eq 2 && ! -s "$dir/out" && $(wc -l < "$dir/err") -eq 1 ]] || fail "malformed history: exit $status"
status=0
"$idgen" check "$dir/missing.log" > "$dir/out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "missing file: exit $status"
# --integers: segment numbers are unique per name (the same number in two names is
# fine) and rise within one history per (process, name), not across processes.
printf '1 p1 1 orders\n2 p1 2 orders\n3 p2 7 orders\n4 p1 1 events\n5 p1 4 orders\n' > "$dir/i1.log"
printf '1 p3 5 orders\n2 p3 2 events\n3 p3 6 orders\n4 p1 1\n' > "$dir/i2.log"
"$idgen" check --integers "$dir/i1.log" "$dir/i2.log" > "$dir/out" || fail "integers: $(cat "$dir/out")"
grep -q '^  sequence orders: 6 numbers$' "$dir/out" || fail "integers: per-name count: $(cat "$dir/out")"
grep -q '^  sequence -: 1 numbers$' "$dir/out" || fail "integers: unnamed sequence: $(cat "$dir/out")"
printf '9 p4 7 orders\n' > "$dir/i3.log" # p2 had 7 of orders already
status=0
"$idgen" check --integers "$dir/i1.log" "$dir/i3.log" > "$dir/out" || status=$?
[[ $status -eq 1 ]] || fail "integers: duplicate passed (exit $status)"
grep -q '^  7 of orders from .*replica p2 at 3 ms, .*replica p4 at 9 ms$' "$dir/out" ||
  fail "integers: duplicate not described: $(cat "$dir/out")"
printf '1 p1 5 orders\n2 p2 3 orders\n3 p1 4 orders\n' > "$dir/i4.log" # p1 goes back
status=0
"$idgen" check --integers "$dir/i4.log" > "$dir/out" || status=$?
[[ $status -eq 1 ]] && grep -q '^ordering violations: 1$' "$dir/out" ||
  fail "integers: a process going back: $(cat "$dir/out")"
status=0
"$idgen" check --integers --layout js53 "$dir/i1.log" 2> "$dir/err" || status=$?
[[ $status -eq 2 && $(wc -l < "$dir/err") -eq 1 ]] || fail "--integers with --layout: exit $status"
echo "check.sh: all passed"
