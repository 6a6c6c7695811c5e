#!/usr/bin/env bash
# idgen decode and idgen collide from the outside: output, exit statuses, and that bad
# input prints one line to stderr and nothing to stdout.
set -uo pipefail
idgen=${1:?usage: cli_decode_collide.sh /path/to/idgen}
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

expect() { # want_status want_stdout args...
  local status=$1 want=$2; shift 2
  "$idgen" "$@" >"$out" 2>"$err"
  local got=$?
  if [[ $got -ne $status ]] || [[ "$(cat "$out")" != "$want" ]]; then
    echo "FAIL: idgen $*: status $got (want $status)"; echo "  stdout: $(cat "$out")"
    echo "  want:   $want"; echo "  stderr: $(cat "$err")"; fails=$((fails + 1))
  fi
}
expect_usage() { # args...: status 2, empty stdout, exactly one line on stderr
  "$idgen" "$@" >"$out" 2>"$err"
  local got=$?
  if [[ $got -ne 2 || -s "$out" || $(wc -l <"$err") -ne 1 ]] || ! grep -q '^idgen ' "$err"; then
    echo "FAIL: idgen $*: status $got, stdout '$(cat "$out")', stderr '$(cat "$err")'"
    fails=$((fails + 1))
  fi
}

# Discord's documented example, in decimal and in its other forms.
discord='{"id":"175928847299117063","layout":"discord","time":"2016-04-30T11:18:25.796Z","time_ms":1462015105796,"fields":{"worker":1,"process":0,"sequence":7}}'
expect 0 "$discord" decode --layout discord --json 175928847299117063
expect 0 "$discord" decode --layout discord --json 20160430111825796-1-0-7
expect 0 "$discord" decode --layout discord --json 0271065ac1020007
expect 0 "$discord" decode --layout discord --format hex --json 0271065ac1020007
expect 0 "$discord" decode --layout discord --json 0Czks0tP37X
expect 0 "$discord" decode --layout discord --json 04w86bb0g4007
expect 0 "$(printf '%s\n%s' "$discord" "$discord")" decode --layout discord --json \
  175928847299117063 0271065ac1020007
expect 0 "id         175928847299117063
form       decimal
layout     discord
time       2016-04-30T11:18:25.796Z
worker     1
process    0
sequence   7" decode --layout discord 175928847299117063
# Twitter: two node fields by name (Wikipedia's example tweet).
expect 0 '{"id":"1541815603606036480","layout":"twitter","time":"2022-06-28T16:07:40.105Z","time_ms":1656432460105,"fields":{"datacenter":11,"worker":26,"sequence":0}}' \
  decode --layout twitter --json 1541815603606036480

# What next writes in each form, decode reads back to the same ID.
for f in decimal base62 base32 hex friendly; do
  id=$("$idgen" next --format "$f" --worker 5) || { echo "FAIL: next --format $f"; fails=$((fails + 1)); continue; }
  dec=$("$idgen" decode --json "$id" | sed 's/^{"id":"\([0-9]*\)".*/\1/')
  again=$("$idgen" decode --format decimal --json "$dec" | sed 's/^{"id":"\([0-9]*\)".*/\1/')
  [[ -n "$dec" && "$dec" == "$again" ]] || { echo "FAIL: $f '$id' -> '$dec' -> '$again'"; fails=$((fails + 1)); }
  grep -q '"worker":5' <("$idgen" decode --json "$id") || { echo "FAIL: $f '$id' lost its worker"; fails=$((fails + 1)); }
done

expect_usage decode
expect_usage decode abc
expect_usage decode 007
expect_usage decode 9223372036854775808
expect_usage decode 000000000000O
expect_usage decode 1 abc            # one bad ID: nothing printed for the good one
expect_usage decode --format nope 1
expect_usage decode --format hex 1
expect_usage decode --layout nope 1
expect_usage decode --layout js53 9223372036854775807
expect_usage decode --bogus 1
"$idgen" decode --help >"$out" 2>"$err" && grep -q '^usage: idgen decode' "$out" ||
  { echo "FAIL: decode --help"; fails=$((fails + 1)); }

# collide: the figures the issue asks for.
one_in() { "$idgen" collide --scheme "$1" --rate 1e6 --years 1 | sed -n 's/.*about 1 in \(.*\)$/\1/p'; }
[[ "$(one_in uuidv4)" == "1.07e+10" ]] || { echo "FAIL: uuidv4 1 in $(one_in uuidv4)"; fails=$((fails + 1)); }
[[ "$(one_in ulid)" == "7.66e+07" ]] || { echo "FAIL: ulid 1 in $(one_in ulid)"; fails=$((fails + 1)); }
[[ "$(one_in uuidv7)" == "1.2e+06" ]] || { echo "FAIL: uuidv7 1 in $(one_in uuidv7)"; fails=$((fails + 1)); }
"$idgen" collide --scheme snowflake --rate 1e6 --years 1 | grep '^probability  0: ' >/dev/null ||
  { echo "FAIL: snowflake is not 0"; fails=$((fails + 1)); }
expect_usage collide --scheme uuidv5 --rate 1 --years 1
expect_usage collide --scheme ulid --rate -1 --years 1
expect_usage collide --scheme ulid --rate 1e6 --years 0
expect_usage collide --scheme ulid --rate abc --years 1
expect_usage collide --scheme ulid --years 1
expect_usage collide --rate 1 --years 1
expect_usage collide --scheme ulid --rate 1 --years 1 extra

if [[ $fails -gt 0 ]]; then echo "cli_decode_collide: $fails failed"; exit 1; fi
echo "cli_decode_collide: ok"
