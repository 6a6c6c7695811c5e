#!/usr/bin/env bash
# idgen next, layout and bench from the command line: output, options, and one-line
# errors with exit status 2 and nothing on stdout.
set -euo pipefail
idgen=${1:?usage: cli_next_layout.sh path/to/idgen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$idgen" next -n 50000 --worker 9 > "$dir/ids"
[[ $(wc -l < "$dir/ids") -eq 50000 ]] || fail "next count"
sort -n -c -u "$dir/ids" || fail "next not strictly increasing"
"$idgen" decode --json "$(tail -1 "$dir/ids")" | grep '"worker":9' >/dev/null || fail "worker not in the ID"
for f in decimal base62 base32 hex friendly; do
  id=$("$idgen" next --format $f)
  "$idgen" decode --format $f "$id" > /dev/null || fail "next --format $f gave '$id', which decode rejects"
done
for l in snowflake twitter discord instagram sonyflake js53 "time:39@10ms,seq:8,machine:16,epoch:2014-09-01"; do
  "$idgen" next -n 3 --layout "$l" --policy logical > /dev/null || fail "next --layout $l"
  "$idgen" layout --layout "$l" > "$dir/layout" || fail "layout $l"
  grep -q '^IDs/s per worker:' "$dir/layout" && grep -q '^end of time field:' "$dir/layout" || fail "layout $l output"
done
"$idgen" layout | grep '^end of time field:    2095-09-07T15:47:35.552Z' >/dev/null || fail "default end date"
"$idgen" layout --layout js53 | grep 'passes 2^53:          never' >/dev/null || fail "js53 2^53"
"$idgen" next --help | grep -- '--policy' >/dev/null || fail "next --help"

# layout --svg: well-formed SVG, one rectangle per run of bits, each as wide as its bits
check_svg() { # check_svg LAYOUT "name:bits ..." (sign first, as drawn from bit 63 down)
  "$idgen" layout --svg --layout "$1" > "$dir/layout.svg" || fail "layout --svg --layout $1"
  /usr/bin/python3 - "$dir/layout.svg" "$2" <<'PY' || fail "layout --svg --layout $1: see above"
import sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()  # raises on malformed XML
assert root.tag == ns + "svg", root.tag
px = int(root.get("data-bit-px"))
boxes = [r for r in root.iter(ns + "rect") if r.get("class") == "field"]
got = [f"{r.get('data-name')}:{r.get('data-bits')}" for r in boxes]
assert got == sys.argv[2].split(), f"fields {got}, want {sys.argv[2]}"
x = float(boxes[0].get("x"))
for r in boxes:
    bits, w = int(r.get("data-bits")), float(r.get("width"))
    assert w == bits * px, f"{r.get('data-name')}: width {w} for {bits} bits at {px} px a bit"
    assert float(r.get("x")) == x, f"{r.get('data-name')}: at x {r.get('x')}, want {x}"
    x += w
assert sum(int(r.get("data-bits")) for r in boxes) == 64
labels = " ".join(t.text or "" for t in root.iter(ns + "text"))
for r in boxes:
    assert r.get("data-name") in labels, f"no label {r.get('data-name')}"
PY
}
check_svg snowflake "sign:1 time:41 worker:10 sequence:12"
check_svg sonyflake "sign:1 time:39 sequence:8 machine:16"
check_svg js53 "sign:1 unused:10 time:41 worker:3 sequence:9"
"$idgen" layout --help | grep -- '--svg' >/dev/null || fail "layout --help has no --svg"

# js53 IDs are exact in a JavaScript number
id=$("$idgen" next --layout js53)
[[ $id -le 9007199254740991 ]] || fail "js53 ID $id above 2^53 - 1"

"$idgen" bench --seconds 0.1 --json "$dir/bench.json" > "$dir/bench.txt" || fail "bench"
grep -q '"share_2_threads"' "$dir/bench.json" && grep -q 'next_batch(4096)' "$dir/bench.txt" || fail "bench output"

while IFS= read -r args; do
  status=0
  # shellcheck disable=SC2086
  "$idgen" $args > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || fail "'idgen $args': exit $status, want 2"
  [[ ! -s "$dir/out" ]] || fail "'idgen $args' wrote to stdout: $(cat "$dir/out")"
  [[ $(wc -l < "$dir/err") -eq 1 ]] || fail "'idgen $args': not one line: $(cat "$dir/err")"
done <<'ARGS'
next -n 0
next -n abc
next -n 100000001
next --worker 1024
next --worker -1
next --layout bogus
next --layout time:41,worker:10,seq:13
next --format octal
next --policy sometimes
next extra
next --bogus
next -n
layout --layout time:41,seq:12
layout extra
layout --svg --layout time:41,seq:12
bench --seconds 99
bench --seconds x
nonsense
ARGS
echo "cli_next_layout.sh: all passed"
