#!/usr/bin/env bash
# idgen uuid7 / uuid4 / ulid from the command line: shapes, order, uniqueness, errors.
set -euo pipefail
idgen=${1:?usage: cli_uuid.sh path/to/idgen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$idgen" uuid7 -n 100000 > "$dir/v7"
[[ $(wc -l < "$dir/v7") -eq 100000 ]] || fail "uuid7 count"
grep -vqE '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$dir/v7" && fail "uuid7 shape"
LC_ALL=C sort -c -u "$dir/v7" || fail "uuid7 not strictly increasing"

"$idgen" uuid4 -n 100000 > "$dir/v4"
grep -vqE '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$dir/v4" && fail "uuid4 shape"
[[ $(LC_ALL=C sort -u "$dir/v4" | wc -l) -eq 100000 ]] || fail "uuid4 repeats"

"$idgen" ulid -n 100000 --monotonic > "$dir/ulid"
grep -vqE '^[0-7][0-9A-HJKMNP-TV-Z]{25}$' "$dir/ulid" && fail "ulid shape"
LC_ALL=C sort -c -u "$dir/ulid" || fail "monotonic ulid not strictly increasing"
"$idgen" ulid -n 1000 > "$dir/ulid_plain"
[[ $(sort -u "$dir/ulid_plain" | wc -l) -eq 1000 ]] || fail "ulid repeats"

# decode reads them back, with the time of v7 and ULID
v7=$(head -1 "$dir/v7")
"$idgen" decode --json "$v7" > "$dir/json"
grep -q '"scheme":"uuidv7"' "$dir/json" && grep -q '"version":7' "$dir/json" || fail "decode v7: $(cat "$dir/json")"
"$idgen" decode "$(head -1 "$dir/ulid")" | grep '^time ' >/dev/null || fail "decode ulid"

# bad input: exit 2, one line on stderr, nothing on stdout
for args in "uuid7 -n 0" "uuid4 -n abc" "ulid --bogus" "uuid7 extra" "decode 01ARZ3NDEKTSV4RRFFQ69G5FAVX"; do
  status=0
  # shellcheck disable=SC2086
  "$idgen" $args > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || fail "'idgen $args': exit $status, want 2"
  [[ ! -s "$dir/out" && $(wc -l < "$dir/err") -eq 1 ]] || fail "'idgen $args': output $(cat "$dir/out" "$dir/err")"
done
echo "cli_uuid.sh: all passed"
